"""User edits of a stored state: `FIELD=VALUE`, `FIELD[i]=VALUE`, `FIELD+=VALUE` (validated).

FIELD is a state field (current_task, last_topic, facts, pending_steps,
completed_steps) or a profile field (names, preferences, constraints, also written
user_profile.names ...). A list field takes an index (0-based; an empty value deletes
the item) or `+=` to append; a string field takes `=`. The result is checked against
the schema (types and length limits), so an edit can never store an invalid state.
"""

from __future__ import annotations

import re

from sotto.errors import StoreError
from sotto.memory.items import KIND_NOTE
from sotto.memory.schema import SchemaViolation
from sotto.memory.state import SessionState
from sotto.untrusted import ascii_int

STRING_FIELDS = ("current_task", "last_topic")
LIST_FIELDS = ("facts", "pending_steps", "completed_steps")
PROFILE_FIELDS = ("names", "preferences", "constraints")
_EDIT = re.compile(r"^(?P<field>[a-z_.]+)(?:\[(?P<index>-?[0-9]+)\])?(?P<op>\+?=)(?P<value>.*)$", re.S | re.ASCII)


def edit_state(state: SessionState, assignment: str) -> SessionState:
    """The state with one assignment applied; StoreError with a clear message when invalid."""
    m = _EDIT.match(assignment.strip())
    if not m:
        raise StoreError(f"--set {assignment!r}: expected FIELD=VALUE, FIELD[i]=VALUE or FIELD+=VALUE")
    name = m.group("field").removeprefix("user_profile.")
    index, op, value = m.group("index"), m.group("op"), " ".join(m.group("value").split())
    fields = STRING_FIELDS + LIST_FIELDS + PROFILE_FIELDS
    if name not in fields:
        raise StoreError(f"--set: unknown field {name!r}", hint=f"fields: {', '.join(fields)}")
    data = state.to_dict()
    owner = data["user_profile"] if name in PROFILE_FIELDS else data
    if name in STRING_FIELDS:
        if index is not None or op != "=":
            raise StoreError(f"--set: {name} is a text field: use {name}=VALUE")
        owner[name] = value
    else:
        items: list = owner[name]  # type: ignore[type-arg]  # names: strings; the rest: items
        if op == "+=":
            if index is not None or not value:
                raise StoreError(f"--set: append with {name}+=VALUE (a non-empty value)")
            items.append(value if name == "names" else {"key": "", "value": value, "kind": KIND_NOTE, "turn": 0})
        elif index is None:
            raise StoreError(f"--set: {name} is a list: use {name}[i]=VALUE or {name}+=VALUE", hint=f"{len(items)} item(s) now")
        else:
            magnitude = ascii_int(index.removeprefix("-"), max_digits=6)
            if magnitude is None:
                raise StoreError(f"--set: {name}[{index[:12]}...] is not an index ({len(items)} item(s))")
            i = -magnitude if index.startswith("-") else magnitude
            if not -len(items) <= i < len(items):
                raise StoreError(f"--set: {name}[{i}] does not exist ({len(items)} item(s))")
            if value:
                if name == "names":
                    items[i] = value
                else:
                    items[i] = dict(items[i], value=value)
            else:
                del items[i]
    try:
        return SessionState.from_dict(data)
    except SchemaViolation as exc:
        raise StoreError(f"--set {assignment[:60]!r}: {exc}") from exc
