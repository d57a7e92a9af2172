"""Trace event types of a voice session (stable strings, relied on by tools and tests)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

PARTIAL_TRANSCRIPT = "partial_transcript"
FINAL_TRANSCRIPT = "final_transcript"
AGENT_SPEECH_STARTED = "agent_speech_started"
AGENT_SPEECH_CHUNK = "agent_speech_chunk"
BARGE_IN = "barge_in"
VOICE_TIMING = "voice_timing"
SESSION_CLOSED = "session_closed"
# Additional, also stable:
TURN_COMPLETED = "turn_completed"  # the turn record (metrics, degradation, stop reason)
DEGRADE = "degrade"  # one degradation action fired
ACTION = "action"  # a board action ran (done), failed, was cancelled in flight or not sent (reason)
LINK_STATUS = "link_status"  # board attached / detached / reset

EVENT_TYPES = (
    PARTIAL_TRANSCRIPT, FINAL_TRANSCRIPT, AGENT_SPEECH_STARTED, AGENT_SPEECH_CHUNK, BARGE_IN,
    VOICE_TIMING, SESSION_CLOSED, TURN_COMPLETED, DEGRADE, ACTION, LINK_STATUS,
)


@dataclass(frozen=True)
class TraceEvent:
    type: str
    session_id: str
    turn_id: int | None
    t_ms: float  # host monotonic milliseconds since the session started
    data: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        return {"type": self.type, "session": self.session_id, "turn": self.turn_id, "t_ms": round(self.t_ms, 3), **self.data}

    @classmethod
    def from_json_dict(cls, obj: Any) -> "TraceEvent":
        """The event of a stored trace line; ValueError when its fields have the wrong types."""
        if not isinstance(obj, dict):
            raise ValueError("not an event object")
        kind, session, turn, t_ms = obj.get("type"), obj.get("session"), obj.get("turn"), obj.get("t_ms", 0.0)
        if not isinstance(kind, str) or not isinstance(session, str):
            raise ValueError('"type" and "session" must be strings')
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise ValueError('"turn" must be a whole number or null')
        if isinstance(t_ms, bool) or not isinstance(t_ms, (int, float)) or not math.isfinite(t_ms):
            raise ValueError('"t_ms" must be a finite number')
        data = {k: v for k, v in obj.items() if k not in ("type", "session", "turn", "t_ms")}
        return cls(kind, session, turn, float(t_ms), data)
