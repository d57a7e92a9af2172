"""`sotto eval SCRIPT.json... [--json]`: memory scripts through monologue, reply and TTS.

Per turn: {"script", "turn", "user", "state", "reply", "first_answer_ms"}; last line:
{"scripts", "turns", "entity_retention", "correction_accuracy", "reply_leak_rate",
"stale_reply_rate", "state_noise", "context_overflows", "json_failures",
"first_answer_ms_p50", "llm"} (docs/DESIGN.md).
first_answer_ms runs from the final words to the first answer sentence synthesised.

With `--speech`, each user turn is synthesised with Piper, recognised (a Vosk model for
the script's language, else pocketsphinx for English), its numbers and times normalised,
and the words then go to the agent (which backfills known entities) as a voice final
would. Each turn line adds "heard" (the recognised words), "final_transcript" (after
normalisation) and "wer"; the summary adds "wer" (all scripts), "wer_per_script" and
"asr". WER counts the words of the normalised recognition against the script's, both
normalised the same way (`sotto.engines.normalize.comparable_words`). `--no-backfill`
turns the entity backfill off, to measure what it adds.

When the agent asks an unsure value back ("Was that 8 8 4 2 1?", sotto.agent.confirm),
the simulated user answers from the script: the script's words aligned (by the word
error rate's alignment) to the recognised words asked about; "Yes." when they are the
same, else "No, it's <the script's words>." (a number of three digits or more read
digit by digit). The answer is synthesised and recognised like any turn, so it can be
misheard too; it is not a script turn (not scored; the next turn sees its effect). The
asking turn's line adds "confirm" (what was asked, said, heard and what the answer did);
the summary adds "confirmations". `--no-confirm` turns the questions off.
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
from sotto.engines.transcribe import Recognised
from sotto.memory.evaluation import Script, ScriptScorer, load_script, ratio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scripts", nargs="+", metavar="SCRIPT.json", help="memory scripts (docs/DESIGN.md format)")
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
    parser.add_argument("--speech", action="store_true",
                        help="synthesise each user turn, recognise it, and give the memory the recognised words")
    parser.add_argument("--asr-model", metavar="DIR", help="with --speech: a Vosk model folder (default: resolution order)")
    parser.add_argument("--no-backfill", action="store_true", help="turn the ASR entity backfill off")
    parser.add_argument("--no-confirm", action="store_true",
                        help="never ask back a value recognised with low confidence (sotto.agent.confirm)")
    parser.add_argument("--confirm-below", type=float, metavar="C",
                        help="ask back values recognised with a word confidence under C (default: the agent's)")
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
    # --speech: word errors and reference words, overall and per script
    word_errors: int = 0
    reference_words: int = 0
    script_words: dict[str, tuple[int, int]] = field(default_factory=dict)
    corrections: int = 0  # entity backfill corrections applied
    confirmations: dict[str, int] = field(default_factory=dict)  # "asked" and each answer's outcome


class SpeechInput:
    """`--speech`: the words the memory gets are recognised from the user turn's synthesised audio.

    `answer_recognizer_for`: the recognizer for the simulated answers to confirmations (default:
    the turns' own). `sotto eval` gives them one of their own: pocketsphinx adapts to what it
    heard before, so on a shared one the answers would change how the script's next turns are
    heard, and runs with and without confirmations would not compare."""

    def __init__(self, voice_for: Callable[[str], SpeechSynthesizer], recognizer_for: Callable[[str], tuple[Any, str]],
                 answer_recognizer_for: Callable[[str], tuple[Any, str]] | None = None) -> None:
        self._voice_for = voice_for
        self._recognizer_for = recognizer_for
        self._answer_recognizer_for = answer_recognizer_for or recognizer_for
        self._turn_ids: dict[tuple[str, bool], int] = {}
        self.labels: list[str] = []

    def hear(self, text: str, lang: str, *, answer: bool = False) -> Recognised:
        from sotto.demo.script import synthesize_texts
        from sotto.engines.transcribe import transcribe

        (utterance,), _ = synthesize_texts([text], self._voice_for(lang))
        recognizer, label = (self._answer_recognizer_for if answer else self._recognizer_for)(lang)
        if label not in self.labels:
            self.labels.append(label)
        channel = (lang, answer and self._answer_recognizer_for is not self._recognizer_for)
        heard = transcribe(recognizer, utterance.pcm, utterance.sample_rate, turn_id=self._turn_ids.get(channel, 1))
        self._turn_ids[channel] = heard.next_turn_id
        return heard


def run_scripts(
    scripts: list[Script],
    agent: Any,
    synthesizer: SpeechSynthesizer | None,
    emit: Callable[[dict[str, Any]], None],
    *,
    synth_sentence: Callable[[str], Any] | None = None,
    speech: SpeechInput | None = None,
) -> EvalTotals:
    """Run every script through `agent` (sotto.agent.Agent); `emit` gets each turn line.
    With `speech`, the agent gets the words recognised from each turn's audio."""
    from sotto.agent.stats import ANSWER_COUNTS
    from sotto.engines.normalize import comparable_words
    from sotto.metrics import word_errors

    totals = EvalTotals()
    run_id = uuid.uuid4().hex[:6]
    for index, script in enumerate(scripts):
        session = f"eval-{run_id}-{index}"
        scorer = ScriptScorer(script)
        lang = script.lang or "en"
        agent_turn = 0  # the agent's turn numbers: the script's turns and the answers to its questions
        for number, step in enumerate(script.turns):
            heard_line: dict[str, Any] = {}
            words = step.user
            heard: Recognised | None = None
            if speech is not None:
                heard = speech.hear(step.user, lang)
                reference = comparable_words(step.user, lang)
                errors = word_errors(reference, comparable_words(heard.text, lang))
                totals.word_errors += errors
                totals.reference_words += len(reference)
                done_errors, done_words = totals.script_words.get(script.name, (0, 0))
                totals.script_words[script.name] = (done_errors + errors, done_words + len(reference))
                words = heard.text
                heard_line = {"heard": heard.heard, "final_transcript": heard.text,
                              "wer": ratio(errors, len(reference))}
            if not words.strip():  # recognition heard nothing: no turn reaches the memory
                state = agent.state(session)
                scorer.observe(number, state, "")
                totals.turns += 1
                emit({"script": script.name, "turn": number + 1, "user": step.user, **heard_line,
                      "state": state.public_dict(), "reply": "", "first_answer_ms": None, "_detail": {"heard_nothing": True}})
                continue
            started = time.perf_counter()
            agent_turn += 1
            turn = agent.start_turn(session, words, turn=agent_turn, lang=script.lang or None,
                                    heard=heard.words if heard is not None else ())
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
            totals.corrections += len(result.corrections)
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
            if speech is not None:
                heard_line["corrections"] = [{"heard": c.heard, "entity": c.entity} for c in result.corrections]
            if result.confirm_asked is not None and speech is not None and heard is not None:
                # The simulated user answers the question; the answer is no script turn.
                totals.confirmations["asked"] = totals.confirmations.get("asked", 0) + 1
                said = simulated_answer(step.user, heard.text, result.confirm_asked["heard"], lang)
                answer_heard = speech.hear(said, lang, answer=True)
                outcome, reply = "unheard", ""  # recognition heard nothing: the next turn lapses the question
                if answer_heard.text.strip():
                    agent_turn += 1
                    answered = agent.run_turn(session, answer_heard.text, turn=agent_turn, lang=script.lang or None,
                                              heard=answer_heard.words)
                    outcome, reply = answered.confirm_answer, answered.reply
                counted = ANSWER_COUNTS.get(outcome, outcome)  # named as `sotto stats` names them
                totals.confirmations[counted] = totals.confirmations.get(counted, 0) + 1
                heard_line["confirm"] = {"asked": result.reply, "confidence": result.confirm_asked["confidence"],
                                         "said": said, "heard": answer_heard.text,
                                         "answer": outcome, "reply": reply}
            emit(
                {
                    "script": script.name,
                    "turn": number + 1,
                    "user": step.user,
                    **heard_line,
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


def simulated_answer(reference: str, recognised: str, asked: str, lang: str) -> str:
    """What the script's user answers to "Was that <asked>?": the script's words aligned to the
    recognised words asked about; "Yes." when they are the same, else "No, it's <them>." (a
    bare "No." when the asked words stand for nothing the user said)."""
    from sotto.engines.normalize import comparable_words
    from sotto.metrics import word_alignment

    ref, hyp, wanted = comparable_words(reference, lang), comparable_words(recognised, lang), comparable_words(asked, lang)
    start = next((j for j in range(len(hyp) - len(wanted), -1, -1) if hyp[j:j + len(wanted)] == wanted), None)
    if not wanted or start is None:
        return "对。" if lang == "zh" else "Yes."  # nothing of it was recognised: nothing to put right
    end = start + len(wanted)
    pairs = word_alignment(ref, hyp)
    inside = [k for k, (_, h) in enumerate(pairs) if h is not None and start <= h < end]
    said = [ref[r] for r, _ in pairs[inside[0]:inside[-1] + 1] if r is not None]
    zh = lang == "zh"
    if [w.removesuffix("s") for w in said] == [w.removesuffix("s") for w in wanted]:  # "saturdays" for "saturday" is right
        return "对。" if zh else "Yes."
    if not said:
        return "不是。" if zh else "No."
    spoken = [" ".join(w) if w.isdigit() and len(w) >= 3 else w for w in said]  # a number read digit by digit
    return f"不是，是{''.join(spoken)}。" if zh else f"No, it's {' '.join(spoken)}."


def _synthesize_first(synthesizer: SpeechSynthesizer, sentence: str, synth_sentence: Callable[[str], Any] | None) -> None:
    if synth_sentence is not None:
        synth_sentence(sentence)
        return
    chunks: Iterator[Any] = iter(synthesizer.synthesize(sentence))
    next(chunks, None)  # the first sentence's audio is ready: that is the moment measured


def summary(totals: EvalTotals, scripts: int, llm: str, *, asr: str | None = None,
            llm_jobs: dict[str, str] | None = None) -> dict[str, Any]:
    """The DESIGN.md summary, plus reply_mentions_rate, routes and the model's jobs; with
    `asr` (a --speech run), plus wer, wer_per_script and asr."""
    result: dict[str, Any] = {
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
    if asr is not None:
        result["wer"] = ratio(totals.word_errors, totals.reference_words)
        result["wer_per_script"] = {name: ratio(errors, words) for name, (errors, words) in totals.script_words.items()}
        result["asr"] = asr
        result["confirmations"] = dict(totals.confirmations)
    return result


def run(args: argparse.Namespace) -> int:
    from sotto.agent import AgentConfig
    from sotto.knowledge import load_configured_knowledge
    from sotto.memory.store import Store
    from sotto.runtime import EngineOptions, Runtime, RuntimeOptions, load_engines

    scripts = [load_script(p) for p in args.scripts]
    knowledge = load_configured_knowledge(args.knowledge)  # a bad file fails before the models load
    engines = load_engines(EngineOptions(model=args.model, n_ctx=args.n_ctx), voice=not args.no_tts)
    model = engines.llm
    synthesizer: SpeechSynthesizer | None = engines.tts
    synth_sentence = getattr(synthesizer, "synthesize_sentence", None)
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="sotto-eval-")
    store = Store(Path(tmp.name) / "eval.db") if tmp else Store()
    config = AgentConfig(model_update=args.update, reply_mode=args.reply,
                         open_answer_deadline_ms=args.deadline_ms or None, entity_backfill=not args.no_backfill,
                         confirm_below=_confirm_below(args))
    agent = Runtime(engines, store, RuntimeOptions(knowledge=knowledge, agent=config)).agent
    speech = _speech_input(args, synthesizer, scripts) if args.speech else None
    out: TextIO = sys.stdout

    def emit(line: dict[str, Any]) -> None:
        detail = line.pop("_detail")
        if args.verbose:
            print(f"[{line['script']} #{line['turn']}] {json.dumps(detail, ensure_ascii=False)}", file=sys.stderr)
        if args.json:
            print(json.dumps(line, ensure_ascii=False), file=out, flush=True)
        else:
            heard = f"\n  heard: {line['final_transcript']}" if "final_transcript" in line else ""
            print(f"{line['script']} #{line['turn']}: {line['user']}{heard}\n  -> {line['reply']}  "
                  f"({line['first_answer_ms']} ms)", file=out)

    try:
        totals = run_scripts(scripts, agent, synthesizer, emit, synth_sentence=synth_sentence, speech=speech)
    finally:
        store.close()
        if tmp:
            tmp.cleanup()
    jobs = engines.capabilities.summary() if engines.capabilities is not None else None
    result = summary(totals, len(scripts), model.name, asr=", ".join(speech.labels) if speech is not None else None,
                     llm_jobs=jobs)
    if args.verbose or not args.json:
        p50 = lambda xs: percentile(xs, 50)  # noqa: E731
        print(
            f"first_sentence_ms_p50={p50(totals.first_sentence_ms)} model_update_ms_p50={p50(totals.model_update_ms)} "
            f"reply_mentions={totals.mentions_ok}/{totals.mention_checks} backfill_corrections={totals.corrections}",
            file=sys.stderr,
        )
        for miss in totals.misses:
            print(f"  miss: {miss}", file=sys.stderr)
    print(json.dumps(result, ensure_ascii=False) if args.json else json.dumps(result, ensure_ascii=False, indent=1), file=out)
    return 0


def _confirm_below(args: argparse.Namespace) -> float:
    from sotto.agent.core import CONFIRM_BELOW

    if args.no_confirm:
        return 0.0
    return float(args.confirm_below) if args.confirm_below is not None else CONFIRM_BELOW


def _speech_input(args: argparse.Namespace, reply_voice: SpeechSynthesizer | None, scripts: list[Script]) -> SpeechInput:
    """Piper voices and recognizers per language, loaded when a script of that language first needs them;
    a language nothing recognises fails here, with the fetch hint, before any turn runs."""
    from sotto.engines import tts
    from sotto.models.resolve import resolve_asr, resolve_voice
    from sotto.runtime import make_recognizer

    for script_lang in {s.lang or "en" for s in scripts}:
        resolve_asr(script_lang, args.asr_model)
    voices: dict[str, SpeechSynthesizer] = {}
    recognizers: dict[str, tuple[Any, str]] = {}

    def voice_for(lang: str) -> SpeechSynthesizer:
        if lang not in voices:
            resolved = resolve_voice(lang=lang)
            if reply_voice is not None and getattr(reply_voice, "model_path", None) == resolved.path:
                voices[lang] = reply_voice
            else:
                voices[lang] = tts.load(resolved.path)
        return voices[lang]

    def recognizer_for(lang: str, *, answers: bool = False) -> tuple[Any, str]:
        key = f"{lang}:answers" if answers else lang
        if key not in recognizers:
            recognizers[key] = make_recognizer(lang, asr_model=args.asr_model)
        return recognizers[key]

    return SpeechInput(voice_for, recognizer_for, lambda lang: recognizer_for(lang, answers=True))
