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

from sotto.memory.items import VALUE_LEN, Item
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
    preferences: list[Item] = field(default_factory=list, metadata=limit(max_items=PROFILE_MAX))
    constraints: list[Item] = field(default_factory=list, metadata=limit(max_items=PROFILE_MAX))


@dataclass
class SessionState:
    session_id: str = field(default="", metadata=limit(max_len=64))
    user_profile: UserProfile = field(default_factory=UserProfile)
    current_task: str = field(default="", metadata=limit(max_len=ITEM_LEN))
    pending_steps: list[Item] = field(default_factory=list, metadata=limit(max_items=STEPS_MAX))
    completed_steps: list[Item] = field(default_factory=list, metadata=limit(max_items=COMPLETED_MAX))
    facts: list[Item] = field(default_factory=list, metadata=limit(max_items=FACTS_MAX))
    last_topic: str = field(default="", metadata=limit(max_len=TOPIC_LEN))
    updated_at: str = field(default="", metadata=limit(max_len=40))

    # -------------------------------------------------------------- (de)serialisation

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=False)

    @classmethod
    def from_dict(cls, data: Any) -> "SessionState":
        """Strict: raises SchemaViolation for anything that is not a valid stored state.

        A state stored by an earlier version (plain strings where items now stand) is
        read with each string as a note item, so an existing database keeps working."""
        state = parse_strict(cls, _upgrade_legacy(data))
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

    def public_dict(self) -> dict[str, Any]:
        """The state as shown (demo, eval, `sotto state`): every field, items without
        their turn numbers (provenance, kept in the store's history, never said by the user)."""
        return _without_turns(self.to_dict())

    def memory_view(self) -> dict[str, Any]:
        """The state without session_id and updated_at (what eval matches and prompts show)."""
        data = self.public_dict()
        data.pop("session_id", None)
        data.pop("updated_at", None)
        return data

    def memory_text(self) -> str:
        return json.dumps(self.memory_view(), ensure_ascii=False)

    def copy(self) -> "SessionState":
        return copy.deepcopy(self)

    def touch(self) -> None:
        self.updated_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")

    def all_items(self) -> list[Item]:
        p = self.user_profile
        return [*p.preferences, *p.constraints, *self.facts, *self.pending_steps, *self.completed_steps]

    def all_strings(self) -> list[str]:
        p = self.user_profile
        return [
            *p.names,
            *(i.value for i in p.preferences),
            *(i.value for i in p.constraints),
            self.current_task,
            *(i.value for i in self.pending_steps),
            *(i.value for i in self.completed_steps),
            *(i.value for i in self.facts),
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


_ITEM_LISTS = ("facts", "pending_steps", "completed_steps")
_PROFILE_ITEM_LISTS = ("preferences", "constraints")


def _upgrade_legacy(data: Any) -> Any:
    if not isinstance(data, dict):
        return data

    def upgrade(values: Any) -> Any:
        if isinstance(values, list) and any(isinstance(v, str) for v in values):
            return [{"key": "", "value": v, "kind": "note", "turn": 0} if isinstance(v, str) else v for v in values]
        return values

    out = dict(data)
    for name in _ITEM_LISTS:
        if name in out:
            out[name] = upgrade(out[name])
    profile = out.get("user_profile")
    if isinstance(profile, dict):
        profile = dict(profile)
        for name in _PROFILE_ITEM_LISTS:
            if name in profile:
                profile[name] = upgrade(profile[name])
        out["user_profile"] = profile
    return out


def _without_turns(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_turns(v) for k, v in value.items() if not (k == "turn" and "value" in value)}
    if isinstance(value, list):
        return [_without_turns(v) for v in value]
    return value


def _cap_field(owner: Any, name: str) -> list[str]:
    """Clip strings and drop the oldest items over the cap; returns what was dropped."""
    f = next(x for x in dataclasses.fields(owner) if x.name == name)
    lim = field_limit(f)
    value = getattr(owner, name)
    if isinstance(value, str):
        setattr(owner, name, clip(value, lim.max_len or ITEM_LEN))
        return []
    if value and isinstance(value[0], Item):
        items: list[Any] = []
        for item in value:
            if not item.value.strip():
                continue
            item.value = clip(item.value, VALUE_LEN)
            item.key = clip(item.key, 60)
            items.append(item)
    else:
        items = [clip(v, lim.max_len or ITEM_LEN) for v in value if v.strip()]
    dropped: list[Any] = []
    if lim.max_items is not None and len(items) > lim.max_items:
        dropped = items[: len(items) - lim.max_items]
        items = items[len(items) - lim.max_items :]
    setattr(owner, name, items)
    return [d.value if isinstance(d, Item) else d for d in dropped]


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
        merged = "earlier: " + "; ".join(s.value.removeprefix("earlier: ") for s in old)
        summary = Item(key="earlier", value=clip(merged, ITEM_LEN), kind="note", turn=old[-1].turn)
        out.completed_steps = [summary] + out.completed_steps[len(out.completed_steps) - keep :]
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
# Field names of an item: words like "key" and "value" are ordinary English, so only the
# state's own field names count as a leak in a reply.
ITEM_FIELD_NAMES: frozenset[str] = frozenset(f.name for f in dataclasses.fields(Item))
