"""`sotto eval SCRIPT.json... [--json]`: memory scripts through monologue, reply and TTS.

Per turn: {"script", "turn", "user", "state", "reply", "first_answer_ms"}; last line:
{"scripts", "turns", "entity_retention", "correction_accuracy", "reply_leak_rate",
"stale_reply_rate", "state_noise", "context_overflows", "json_failures",
"first_answer_ms_p50", "llm"} (DESIGN.md).
first_answer_ms runs from the final words to the first answer sentence synthesised.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from sotto.metrics import percentile
from sotto.engines.base import SpeechSynthesizer
from sotto.agent.reply import OPEN_ANSWER_DEADLINE_MS
from sotto.memory.evaluation import Script, ScriptScorer, load_script, ratio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scripts", nargs="+", metavar="SCRIPT.json", help="memory scripts (DESIGN.md format)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line on stdout")
    parser.add_argument("--model", metavar="GGUF", help="a GGUF model (default: the embedded SmolLM2-135M)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="model context window in tokens (default 2048)")
    parser.add_argument(
        "--update", choices=("after_reply", "before_reply", "off"), default="after_reply",
        help="when the model's state patch runs (default: after the reply starts, see sotto.agent)",
    )
    parser.add_argument("--reply", choices=("auto", "composed"), default="auto",
                        help="auto: each turn routed, the model answers open questions when it passed its probe; composed: never the model")
    parser.add_argument(
        "--deadline-ms", type=float, default=OPEN_ANSWER_DEADLINE_MS,
        help="an open answer's first checked sentence must be ready by then, else \"I don't know that one.\" (0: no deadline)",
    )
    parser.add_argument("--knowledge", metavar="FILE", help="system knowledge file for the reply (default: $SOTTO_KNOWLEDGE)")
    parser.add_argument("--no-tts", action="store_true", help="skip speech synthesis (first_answer_ms then excludes it)")
    parser.add_argument("--keep", action="store_true", help="keep the eval sessions in the real store")
    parser.add_argument("--verbose", action="store_true", help="per-turn timings and misses on stderr")


@dataclass
class EvalTotals:
    turns: int = 0
    retention_checks: int = 0
    retention_present: int = 0
    correction_turns: int = 0
    corrections_ok: int = 0
    replies: int = 0
    leaks: int = 0
    context_overflows: int = 0
    json_failures: int = 0
    first_answer_ms: list[float] = field(default_factory=list)
    first_sentence_ms: list[float] = field(default_factory=list)
    model_update_ms: list[float] = field(default_factory=list)
    mention_checks: int = 0
    mentions_ok: int = 0
    stale_checks: int = 0
    stale_replies: int = 0
    states: int = 0
    noisy_states: int = 0
    misses: list[str] = field(default_factory=list)
    routes: dict[str, int] = field(default_factory=dict)  # which route answered, per turn


def run_scripts(
    scripts: list[Script],
    agent: Any,
    synthesizer: SpeechSynthesizer | None,
    emit: Callable[[dict[str, Any]], None],
    *,
    synth_sentence: Callable[[str], Any] | None = None,
) -> EvalTotals:
    """Run every script through `agent` (sotto.agent.Agent); `emit` gets each turn line."""
    totals = EvalTotals()
    run_id = uuid.uuid4().hex[:6]
    for index, script in enumerate(scripts):
        session = f"eval-{run_id}-{index}"
        scorer = ScriptScorer(script)
        for number, step in enumerate(script.turns):
            started = time.perf_counter()
            turn = agent.start_turn(session, step.user, turn=number + 1, lang=script.lang or None)
            first_answer: float | None = None
            try:
                for sentence in turn.sentences():
                    if first_answer is None:
                        if synthesizer is not None:
                            _synthesize_first(synthesizer, sentence, synth_sentence)
                        first_answer = (time.perf_counter() - started) * 1000
            finally:
                result = turn.finish()
            scorer.observe(number, result.state, result.reply)
            totals.turns += 1
            totals.routes[result.route] = totals.routes.get(result.route, 0) + 1
            totals.json_failures += result.json_failures
            totals.context_overflows += result.context_overflows
            if first_answer is not None:
                totals.first_answer_ms.append(first_answer)
            if result.first_sentence_ms is not None:
                totals.first_sentence_ms.append(result.first_sentence_ms)
            if result.model_update_ms:
                totals.model_update_ms.append(result.model_update_ms)
            emit(
                {
                    "script": script.name,
                    "turn": number + 1,
                    "user": step.user,
                    "state": result.state.public_dict(),
                    "reply": result.reply,
                    "first_answer_ms": None if first_answer is None else round(first_answer, 1),
                    "route": result.route,
                    "_detail": {
                        "route_reason": result.route_reason,
                        "reply_source": result.reply_source,
                        "first_sentence_ms": result.first_sentence_ms,
                        "model_update_ms": round(result.model_update_ms, 1),
                        "rules_ms": round(result.rules_ms, 2),
                        "rejected": result.rejected,
                    },
                }
            )
        s = scorer.score
        totals.retention_checks += s.retention_checks
        totals.retention_present += s.retention_present
        totals.correction_turns += s.correction_turns
        totals.corrections_ok += s.corrections_ok
        totals.replies += s.replies
        totals.leaks += s.leaks
        totals.mention_checks += s.mention_checks
        totals.mentions_ok += s.mentions_ok
        totals.stale_checks += s.stale_checks
        totals.stale_replies += s.stale_replies
        totals.states += s.states
        totals.noisy_states += s.noisy_states
        totals.misses += [f"{script.name}: {m}" for m in s.misses]
    return totals


def _synthesize_first(synthesizer: SpeechSynthesizer, sentence: str, synth_sentence: Callable[[str], Any] | None) -> None:
    if synth_sentence is not None:
        synth_sentence(sentence)
        return
    chunks: Iterator[Any] = iter(synthesizer.synthesize(sentence))
    next(chunks, None)  # the first sentence's audio is ready: that is the moment measured


def summary(totals: EvalTotals, scripts: int, llm: str, llm_jobs: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "scripts": scripts,
        "turns": totals.turns,
        "entity_retention": ratio(totals.retention_present, totals.retention_checks),
        "correction_accuracy": ratio(totals.corrections_ok, totals.correction_turns),
        "reply_leak_rate": ratio(totals.leaks, totals.replies),
        "stale_reply_rate": ratio(totals.stale_replies, totals.stale_checks),
        "state_noise": ratio(totals.noisy_states, totals.states),
        "context_overflows": totals.context_overflows,
        "json_failures": totals.json_failures,
        "first_answer_ms_p50": percentile(totals.first_answer_ms, 50),
        "llm": llm,
        "reply_mentions_rate": ratio(totals.mentions_ok, totals.mention_checks),
        "routes": dict(sorted(totals.routes.items())),
        "llm_jobs": llm_jobs or {},
    }


def run(args: argparse.Namespace) -> int:
    from sotto.agent import Agent, AgentConfig
    from sotto.engines import llm as llm_engine
    from sotto.memory.store import Store

    scripts = [load_script(p) for p in args.scripts]
    model = llm_engine.load(args.model, n_ctx=args.n_ctx)
    synthesizer: SpeechSynthesizer | None = None
    synth_sentence = None
    if not args.no_tts:
        from sotto.engines import tts

        engine = tts.load()
        synthesizer = engine
        synth_sentence = getattr(engine, "synthesize_sentence", None)
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="sotto-eval-")
    store = Store(Path(tmp.name) / "eval.db") if tmp else Store()
    from sotto.knowledge import load_configured_knowledge

    from sotto.agent.capability import capabilities_for

    from sotto.backfill.lexicon import default_lexicon

    default_lexicon()  # loaded before the first turn, as the voice pipeline does (sotto.pipeline)
    capabilities = capabilities_for(model)  # cached per model file; probed the first time
    agent = Agent(model, store, config=AgentConfig(
            model_update=args.update, reply_mode=args.reply, open_answer_deadline_ms=args.deadline_ms or None
        ), knowledge=load_configured_knowledge(args.knowledge), capabilities=capabilities)
    out: TextIO = sys.stdout

    def emit(line: dict[str, Any]) -> None:
        detail = line.pop("_detail")
        if args.verbose:
            print(f"[{line['script']} #{line['turn']}] {json.dumps(detail, ensure_ascii=False)}", file=sys.stderr)
        if args.json:
            print(json.dumps(line, ensure_ascii=False), file=out, flush=True)
        else:
            print(f"{line['script']} #{line['turn']}: {line['user']}\n  -> {line['reply']}  ({line['first_answer_ms']} ms)", file=out)

    try:
        totals = run_scripts(scripts, agent, synthesizer, emit, synth_sentence=synth_sentence)
    finally:
        store.close()
        if tmp:
            tmp.cleanup()
    result = summary(totals, len(scripts), model.name, capabilities.summary())
    if args.verbose or not args.json:
        p50 = lambda xs: percentile(xs, 50)  # noqa: E731
        print(
            f"first_sentence_ms_p50={p50(totals.first_sentence_ms)} model_update_ms_p50={p50(totals.model_update_ms)} "
            f"reply_mentions={totals.mentions_ok}/{totals.mention_checks}",
            file=sys.stderr,
        )
        for miss in totals.misses:
            print(f"  miss: {miss}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False) if args.json else json.dumps(result, ensure_ascii=False, indent=1), file=out)
    return 0
