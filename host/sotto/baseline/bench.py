"""Run memory scripts (the `sotto eval` format) through the seed-article baseline.

`run_baseline(paths)` returns every turn's record and a summary with
`first_audio_ms_p50`, so a combined benchmark can run sotto's eval and this baseline
in one process on the same engines and compare them side by side.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from sotto.baseline.agent import BaselineAgent
from sotto.engines.base import LanguageModel, SpeechSynthesizer
from sotto.memory.evaluation import Script, load_script
from sotto.metrics import percentile


@dataclass
class BaselineResult:
    records: list[dict[str, Any]]
    summary: dict[str, Any]


def summarize(records: list[dict[str, Any]], *, scripts: int, llm: str, tts: str, state_max_tokens: int | None = None) -> dict[str, Any]:
    first_audio = [r["first_audio_ms"] for r in records]
    p50 = percentile(first_audio, 50)
    p95 = percentile(first_audio, 95)
    return {
        "summary": True,
        "design": "baseline",
        "scripts": scripts,
        "turns": len(records),
        "first_audio_ms_p50": None if p50 is None else round(p50, 1),
        "first_audio_ms_p95": None if p95 is None else round(p95, 1),
        "first_audio_ms_mean": round(statistics.fmean(first_audio), 1) if first_audio else None,
        "state_ms_p50": _p50(records, "state_ms"),
        "reply_ms_p50": _p50(records, "reply_ms"),
        "tts_ms_p50": _p50(records, "tts_ms"),
        "json_failures": sum(1 for r in records if not r["json_ok"]),
        "llm": llm,
        "tts": tts,
        "state_max_tokens": state_max_tokens,
    }


def _p50(records: list[dict[str, Any]], key: str) -> float | None:
    value = percentile([r[key] for r in records], 50)
    return None if value is None else round(value, 1)


def run_baseline(
    scripts: Sequence[Path | Script],
    *,
    llm: LanguageModel | None = None,
    tts: SpeechSynthesizer | None = None,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
) -> BaselineResult:
    """Run each script from an empty state; engines default to the embedded models.

    Pass the same `llm`/`tts` objects that sotto's eval uses to compare the designs on
    identical engines. `on_turn` receives each record as soon as the turn finishes.
    """
    loaded = [s if isinstance(s, Script) else load_script(s) for s in scripts]
    if llm is None:
        from sotto.engines import llm as llm_engine

        llm = llm_engine.load()
    if tts is None:
        from sotto.engines import tts as tts_engine

        tts = tts_engine.load()
    agent = BaselineAgent(llm=llm, tts=tts)
    records: list[dict[str, Any]] = []
    for script in loaded:
        agent.reset()
        for index, user in enumerate(t.user for t in script.turns):
            turn = agent.turn(user)
            record = {"script": script.name, "turn": index + 1, **turn.record()}
            records.append(record)
            if on_turn is not None:
                on_turn(record)
    return BaselineResult(
        records,
        summarize(records, scripts=len(loaded), llm=llm.name, tts=tts.name, state_max_tokens=agent.state_max_tokens),
    )
