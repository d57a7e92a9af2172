"""Monitoring over stored traces: latency percentiles, tokens, failure and degradation rates.

Sources: the voice harness's JSON-lines traces (`turn_completed`, `barge_in`, `degrade`
events under `sotto.paths.traces_dir()`) and the store's trace table (`agent_turn`,
`reply_interrupted`, `state_update_failed`, `state_update_skipped`, `confirm_asked`,
`confirm_answered`). Unreadable lines
are counted, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from sotto.agent.capability import ModelCapabilities
from sotto.agent.confirm import CORRECTED, LAPSED, NO, YES
from sotto.errors import InputRefused
from sotto.ids import SessionId
from sotto.memory.store import Store
from sotto.metrics import percentile
from sotto.untrusted import load_json

LATENCY_METRICS = ("first_byte_ms", "first_answer_ms", "total_turn_ms", "barge_in_ms")
CONFIRMATION_COUNTS = ("asked", "confirmed", "corrected", "denied", "lapsed")
ANSWER_COUNTS = {YES: "confirmed", CORRECTED: "corrected", NO: "denied", LAPSED: "lapsed"}  # answer -> its count


@dataclass
class Stats:
    sessions: set[str] = field(default_factory=set)
    voice_turns: int = 0
    degraded_turns: int = 0
    interrupted_turns: int = 0
    barge_ins: int = 0
    degrade_actions: dict[str, int] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in LATENCY_METRICS})
    agent_turns: int = 0
    state_update_failures: int = 0
    state_updates_skipped: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reply_tokens: int = 0
    unreadable_lines: int = 0
    routes: dict[str, int] = field(default_factory=dict)  # which route answered the agent turns
    route_reasons: dict[str, int] = field(default_factory=dict)  # "route: reason" -> turns
    model_jobs: dict[str, dict[str, str]] = field(default_factory=dict)  # model -> job -> verdict (start-up probe)
    # Unsure values asked back (sotto.agent.confirm) and what the answers said.
    confirmations: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CONFIRMATION_COUNTS, 0))

    def add_voice_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if event.get("session"):
            self.sessions.add(str(event["session"]))
        if kind == "turn_completed":
            self.voice_turns += 1
            self.degraded_turns += bool(event.get("degraded"))
            self.interrupted_turns += bool(event.get("interrupted"))
            for metric in LATENCY_METRICS:
                value = event.get(metric)
                if isinstance(value, (int, float)):
                    self.latencies[metric].append(float(value))
        elif kind == "barge_in":
            self.barge_ins += 1
        elif kind == "degrade":
            action = str(event.get("action", "?"))
            self.degrade_actions[action] = self.degrade_actions.get(action, 0) + 1

    def add_agent_event(self, session_id: str, event: dict[str, Any]) -> None:
        kind = event.get("type")
        self.sessions.add(session_id)
        if kind in ("agent_turn", "reply_interrupted"):
            self.agent_turns += 1
            self.state_update_failures += int(event.get("json_failures", 0) or 0)
            self.prompt_tokens += int(event.get("update_prompt_tokens", 0) or 0)
            self.completion_tokens += int(event.get("update_completion_tokens", 0) or 0)
            self.reply_tokens += int(event.get("reply_tokens", 0) or 0)
            route = event.get("route")
            if route:
                self.routes[str(route)] = self.routes.get(str(route), 0) + 1
                why = f"{route}: {event.get('route_reason', '')}"
                self.route_reasons[why] = self.route_reasons.get(why, 0) + 1
        elif kind == "state_update_skipped":
            self.state_updates_skipped += 1
        elif kind == "confirm_asked":
            self.confirmations["asked"] += 1
        elif kind == "confirm_answered":
            outcome = ANSWER_COUNTS.get(str(event.get("answer", "")))
            if outcome is not None:
                self.confirmations[outcome] += 1

    def summary(self) -> dict[str, Any]:
        def rate(n: int, d: int) -> float | None:
            return round(n / d, 4) if d else None

        out: dict[str, Any] = {
            "sessions": len(self.sessions),
            "voice_turns": self.voice_turns,
            "agent_turns": self.agent_turns,
        }
        for metric in LATENCY_METRICS:
            values = self.latencies[metric]
            out[f"{metric}_p50"] = percentile(values, 50)
            out[f"{metric}_p95"] = percentile(values, 95)
        out.update(
            {
                "barge_ins": self.barge_ins,
                "interrupted_turns": self.interrupted_turns,
                "degraded_turns": self.degraded_turns,
                "degradation_rate": rate(self.degraded_turns, self.voice_turns),
                "degrade_actions": dict(sorted(self.degrade_actions.items())),
                "state_update_failures": self.state_update_failures,
                "state_update_failure_rate": rate(self.state_update_failures, self.agent_turns),
                "state_updates_skipped": self.state_updates_skipped,
                "update_prompt_tokens": self.prompt_tokens,
                "update_completion_tokens": self.completion_tokens,
                "reply_tokens": self.reply_tokens,
                "unreadable_lines": self.unreadable_lines,
                "routes": dict(sorted(self.routes.items())),
                "route_reasons": dict(sorted(self.route_reasons.items())),
                "model_jobs": self.model_jobs,
                "confirmations": dict(self.confirmations),
            }
        )
        return out


MAX_TRACE_LINE = 1_000_000  # a longer line is not an event sotto wrote: counted unreadable


def trace_files(folder: Path, session: str | None = None) -> list[Path]:
    if session is not None:
        path = SessionId(session).file_in(folder, ".jsonl")
        return [path] if path.is_file() else []
    return sorted(folder.glob("*.jsonl"))


def collect(folder: Path, store: Store | None, *, session: str | None = None,
            capabilities: Iterable[ModelCapabilities] = ()) -> Stats:
    """`capabilities`: the models' start-up probe verdicts (`CapabilityCache().all()`)."""
    stats = Stats()
    for caps in capabilities:
        stats.model_jobs[caps.model] = caps.summary()
    for path in trace_files(folder, session):
        for line in _lines(path):
            try:
                event = load_json(line, what="trace line", max_bytes=MAX_TRACE_LINE)
            except InputRefused:
                stats.unreadable_lines += 1
                continue
            if isinstance(event, dict):
                stats.add_voice_event(event)
            else:
                stats.unreadable_lines += 1
    if store is not None:
        ids: Iterable[str] = [session] if session is not None else [sid for sid, _, _ in store.sessions()]
        for sid in ids:
            for event in store.traces(sid):
                stats.add_agent_event(sid, event)
    return stats


def _lines(path: Path) -> Iterable[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    yield line
    except OSError:
        return
