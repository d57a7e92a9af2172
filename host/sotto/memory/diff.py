"""What changed between two states, as a list of small records for the store and the REPL."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sotto.memory.items import Item
from sotto.memory.state import SessionState


@dataclass(frozen=True)
class Change:
    field: str  # "facts", "user_profile.names", "current_task", ...
    op: str  # "add" | "remove" | "set"
    old: str = ""
    new: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        if self.op == "add":
            return f"+ {self.field}: {self.new}"
        if self.op == "remove":
            return f"- {self.field}: {self.old}"
        return f"~ {self.field}: {self.old!r} -> {self.new!r}"


def _label(item: str | Item) -> str:
    if isinstance(item, Item):
        return f"{item.key}: {item.value}" if item.key and item.kind != "note" else item.value
    return item


def _list_changes(name: str, old_items: list[str] | list[Item], new_items: list[str] | list[Item]) -> list[Change]:
    old = [_label(v) for v in old_items]
    new = [_label(v) for v in new_items]
    out: list[Change] = []
    removed = [v for v in old if v not in new]
    added = [v for v in new if v not in old]
    # Pair an edited item with its old text when the counts line up (a replacement).
    if len(removed) == len(added):
        for before, after in zip(removed, added):
            out.append(Change(name, "set", before, after))
        return out
    out += [Change(name, "remove", old=v) for v in removed]
    out += [Change(name, "add", new=v) for v in added]
    return out


def diff_states(old: SessionState, new: SessionState) -> list[Change]:
    changes: list[Change] = []
    for name in ("current_task", "last_topic"):
        a, b = getattr(old, name), getattr(new, name)
        if a != b:
            changes.append(Change(name, "set", a, b))
    for name in ("pending_steps", "completed_steps", "facts"):
        changes += _list_changes(name, getattr(old, name), getattr(new, name))
    for name in ("names", "preferences", "constraints"):
        changes += _list_changes(f"user_profile.{name}", getattr(old.user_profile, name), getattr(new.user_profile, name))
    return changes
