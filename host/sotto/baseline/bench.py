"""Run memory scripts (the `sotto eval` format) through the seed-article baseline.

`run_baseline(paths)` returns every turn's record and a summary with
`first_audio_ms_p50`, so a combined benchmark can run sotto's eval and this baseline
in one process on the same engines and compare them side by side.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from sotto.baseline.agent import BaselineAgent
from sotto.engines.base import LanguageModel, SpeechSynthesizer
from sotto.metrics import percentile
from sotto.errors import ConfigError

MAX_TURNS_PER_SCRIPT = 200
MAX_USER_CHARS = 2000


@dataclass(frozen=True)
class MemoryScript:
    name: str
    lang: str
    turns: tuple[str, ...]  # the user's words per turn
    path: Path


def load_script(path: Path) -> MemoryScript:
    """Read a memory script; only the fields the baseline needs are checked here."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"memory script {path} does not exist") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read memory script {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list) or not data["turns"]:
        raise ConfigError(f"{path}: a memory script is an object with a non-empty `turns` list")
    if len(data["turns"]) > MAX_TURNS_PER_SCRIPT:
        raise ConfigError(f"{path}: more than {MAX_TURNS_PER_SCRIPT} turns")
    users: list[str] = []
    for index, turn in enumerate(data["turns"]):
        user = turn.get("user") if isinstance(turn, dict) else None
        if not isinstance(user, str) or not user.strip():
            raise ConfigError(f"{path}: turns[{index}].user must be a non-empty string")
        users.append(user[:MAX_USER_CHARS])
    return MemoryScript(
        name=str(data.get("name") or Path(path).stem),
        lang=str(data.get("lang") or "en"),
        turns=tuple(users),
        path=Path(path),
    )


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
    scripts: Sequence[Path | MemoryScript],
    *,
    llm: LanguageModel | None = None,
    tts: SpeechSynthesizer | None = None,
    on_turn: Callable[[dict[str, Any]], None] | None = None,
) -> BaselineResult:
    """Run each script from an empty state; engines default to the embedded models.

    Pass the same `llm`/`tts` objects that sotto's eval uses to compare the designs on
    identical engines. `on_turn` receives each record as soon as the turn finishes.
    """
    loaded = [s if isinstance(s, MemoryScript) else load_script(s) for s in scripts]
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
        for index, user in enumerate(script.turns):
            turn = agent.turn(user)
            record = {"script": script.name, "turn": index + 1, **turn.record()}
            records.append(record)
            if on_turn is not None:
                on_turn(record)
    return BaselineResult(
        records,
        summarize(records, scripts=len(loaded), llm=llm.name, tts=tts.name, state_max_tokens=agent.state_max_tokens),
    )
