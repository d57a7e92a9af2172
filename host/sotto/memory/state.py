"""SessionState: the agent's working memory for one session, and its bounds.

Every string and list is capped (declared once with `limit()`); `bounded()` enforces
the caps and compacts completed steps, so the state, and every prompt built from it,
stays small however long the session runs.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from sotto.memory.schema import SchemaViolation, field_limit, json_schema, limit, parse_strict

NAME_LEN = 60
ITEM_LEN = 200
TOPIC_LEN = 80
FACTS_MAX = 24
STEPS_MAX = 8
COMPLETED_MAX = 6
PROFILE_MAX = 6


@dataclass
class UserProfile:
    names: list[str] = field(default_factory=list, metadata=limit(max_len=NAME_LEN, max_items=4))
    preferences: list[str] = field(default_factory=list, metadata=limit(max_len=ITEM_LEN, max_items=PROFILE_MAX))
    constraints: list[str] = field(default_factory=list, metadata=limit(max_len=ITEM_LEN, max_items=PROFILE_MAX))


@dataclass
class SessionState:
    session_id: str = field(default="", metadata=limit(max_len=64))
    user_profile: UserProfile = field(default_factory=UserProfile)
    current_task: str = field(default="", metadata=limit(max_len=ITEM_LEN))
    pending_steps: list[str] = field(default_factory=list, metadata=limit(max_len=ITEM_LEN, max_items=STEPS_MAX))
    completed_steps: list[str] = field(default_factory=list, metadata=limit(max_len=ITEM_LEN, max_items=COMPLETED_MAX))
    facts: list[str] = field(default_factory=list, metadata=limit(max_len=ITEM_LEN, max_items=FACTS_MAX))
    last_topic: str = field(default="", metadata=limit(max_len=TOPIC_LEN))
    updated_at: str = field(default="", metadata=limit(max_len=40))

    # -------------------------------------------------------------- (de)serialisation

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Any) -> "SessionState":
        """Strict: raises SchemaViolation for anything that is not a valid stored state."""
        state = parse_strict(cls, data)
        if not isinstance(state, SessionState):  # pragma: no cover - parse_strict returns cls
            raise SchemaViolation("not a SessionState")
        return state

    @classmethod
    def from_json(cls, text: str) -> "SessionState":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaViolation(f"stored state is not JSON: {exc}") from exc
        return cls.from_dict(data)

    def memory_view(self) -> dict[str, Any]:
        """The state without session_id and updated_at (what eval matches and prompts show)."""
        data = self.to_dict()
        data.pop("session_id", None)
        data.pop("updated_at", None)
        return data

    def memory_text(self) -> str:
        return json.dumps(self.memory_view(), ensure_ascii=False)

    def copy(self) -> "SessionState":
        return copy.deepcopy(self)

    def touch(self) -> None:
        self.updated_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")

    def all_strings(self) -> list[str]:
        p = self.user_profile
        return [
            *p.names,
            *p.preferences,
            *p.constraints,
            self.current_task,
            *self.pending_steps,
            *self.completed_steps,
            *self.facts,
            self.last_topic,
        ]

    @staticmethod
    def json_schema() -> dict[str, Any]:
        return json_schema(SessionState)


def clip(text: str, max_len: int) -> str:
    """Cut at a word boundary when possible; never returns more than max_len characters."""
    text = " ".join(text.split())
    if len(text) <= max_len:
        return text
    cut = text[:max_len]
    space = cut.rfind(" ")
    return cut[:space] if space > max_len // 2 else cut


def _cap_field(owner: Any, name: str) -> list[str]:
    """Clip strings and drop the oldest items over the cap; returns what was dropped."""
    f = next(x for x in dataclasses.fields(owner) if x.name == name)
    lim = field_limit(f)
    value = getattr(owner, name)
    if isinstance(value, str):
        setattr(owner, name, clip(value, lim.max_len or ITEM_LEN))
        return []
    items = [clip(v, lim.max_len or ITEM_LEN) for v in value if v.strip()]
    dropped: list[str] = []
    if lim.max_items is not None and len(items) > lim.max_items:
        dropped = items[: len(items) - lim.max_items]
        items = items[len(items) - lim.max_items :]
    setattr(owner, name, items)
    return dropped


def bounded(state: SessionState) -> tuple[SessionState, list[str]]:
    """The state within its caps, and notes of what was compacted or dropped.

    Completed steps beyond the cap are compacted into one "earlier: ..." line (clipped),
    so the record of work done shrinks instead of vanishing at once. Facts over the cap
    drop the oldest: the working memory favours what the user said last.
    """
    out = state.copy()
    notes: list[str] = []
    if len(out.completed_steps) > COMPLETED_MAX:
        keep = COMPLETED_MAX - 1
        old = out.completed_steps[: len(out.completed_steps) - keep]
        merged = "earlier: " + "; ".join(s.removeprefix("earlier: ") for s in old)
        out.completed_steps = [clip(merged, ITEM_LEN)] + out.completed_steps[len(out.completed_steps) - keep :]
        notes.append(f"compacted {len(old)} completed steps")
    for name in ("names", "preferences", "constraints"):
        for d in _cap_field(out.user_profile, name):
            notes.append(f"dropped {name}: {d}")
    for name in ("current_task", "pending_steps", "completed_steps", "facts", "last_topic", "session_id"):
        for d in _cap_field(out, name):
            notes.append(f"dropped {name}: {d}")
    return out, notes


STATE_FIELD_NAMES: frozenset[str] = frozenset(
    {f.name for f in dataclasses.fields(SessionState)} | {f.name for f in dataclasses.fields(UserProfile)}
)
