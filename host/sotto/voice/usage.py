"""Per-turn records and the run's usage record (the summary the demo prints)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sotto.metrics import percentile
from sotto.voice.budgets import BARGE_IN, FIRST_ANSWER, FIRST_BYTE, TOTAL_TURN, MetricVerdict

# Stop reasons of a turn.
COMPLETED = "completed"
INTERRUPTED = "interrupted"  # barge-in: not a failure
DEFERRED = "deferred"  # the ladder deferred the answer and said so
FAILED = "failed"  # the reply or the speech failed: counted in failed_attempts
CANCELLED = "cancelled"  # the session closed under it


@dataclass
class TurnRecord:
    turn_id: int
    user: str  # the committed final transcript
    reply: str = ""  # what entered the conversation ("" when interrupted)
    spoken_prefix: str = ""  # text the board actually played (audit trail only)
    stop_reason: str = ""
    first_byte_ms: float | None = None
    first_answer_ms: float | None = None
    total_turn_ms: float | None = None
    barge_in_ms: float | None = None
    degrade_actions: list[str] = field(default_factory=list)
    actions_done: list[str] = field(default_factory=list)
    actions_cancelled: list[str] = field(default_factory=list)
    actions_not_sent: list[str] = field(default_factory=list)  # decided, but the turn was cancelled first
    verdicts: list[MetricVerdict] = field(default_factory=list)
    error: str | None = None
    route: str = ""  # which route answered (sotto.agent.router) and why
    route_reason: str = ""
    predicted_first_answer_ms: float | None = None  # what the degradation ladder acted on

    @property
    def interrupted(self) -> bool:
        return self.stop_reason == INTERRUPTED

    @property
    def degraded(self) -> bool:
        return bool(self.degrade_actions)

    def over_budget_without_degradation(self) -> list[str]:
        """Metrics over target in a turn where no degradation action fired: a defect to report."""
        if self.degraded:
            return []
        return [v.metric for v in self.verdicts if v.over_target and v.metric != BARGE_IN]

    def to_json_dict(self) -> dict[str, Any]:
        return {
            "turn": self.turn_id,
            "user": self.user,
            "final_transcript": self.user,
            "reply": self.reply,
            "spoken_prefix": self.spoken_prefix,
            "stop_reason": self.stop_reason,
            FIRST_BYTE: _r(self.first_byte_ms),
            FIRST_ANSWER: _r(self.first_answer_ms),
            TOTAL_TURN: _r(self.total_turn_ms),
            BARGE_IN: _r(self.barge_in_ms),
            "interrupted": self.interrupted,
            "degraded": self.degraded,
            "degrade_actions": list(self.degrade_actions),
            "actions_done": list(self.actions_done),
            "actions_cancelled": list(self.actions_cancelled),
            "actions_not_sent": list(self.actions_not_sent),
            "over_limit": [v.code for v in self.verdicts if v.code],
            "over_budget_without_degradation": self.over_budget_without_degradation(),
            "error": self.error,
            "route": self.route,
            "route_reason": self.route_reason,
            "predicted_first_answer_ms": _r(self.predicted_first_answer_ms),
        }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


@dataclass
class UsageRecord:
    session_id: str
    status: str = "open"  # open | completed | cancelled
    turns: list[TurnRecord] = field(default_factory=list)
    failed_attempts: int = 0
    barge_ins: int = 0
    close_reason: str = ""

    def metric_values(self, name: str) -> list[float]:
        return [v for t in self.turns if (v := getattr(t, name)) is not None]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "summary": True,
            "session": self.session_id,
            "status": self.status,
            "close_reason": self.close_reason,
            "turns": len(self.turns),
            "interrupted_turns": sum(t.interrupted for t in self.turns),
            "degraded_turns": sum(t.degraded for t in self.turns),
            "failed_attempts": self.failed_attempts,
            "barge_ins": self.barge_ins,
            "defects": [t.turn_id for t in self.turns if t.over_budget_without_degradation()],
        }
        for metric in (FIRST_BYTE, FIRST_ANSWER, TOTAL_TURN, BARGE_IN):
            values = self.metric_values(metric)
            out[f"{metric}_p50"] = _r(percentile(values, 50))
            out[f"{metric}_p95"] = _r(percentile(values, 95))
        return out
