"""The long-term profile: what the agent keeps of a user between sessions.

Key: `user:<name>` once the user's name is known (a name in the working memory), else
the session owner `board:<id>` (the board or terminal the session runs on). A profile
holds only stable things, copied from the working memory's `user_profile` (names,
preferences, fixed constraints) and settings the user edited (`sotto profile --set`).
The session's current_task, pending steps and facts are never promoted: a new session
starts with the profile and an empty task.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from sotto.errors import StoreError
from sotto.memory.items import KIND_NOTE, Item
from sotto.memory.state import NAME_LEN, PROFILE_MAX, SessionState, bounded, clip
from sotto.memory.text import norm_key

MAX_KEY = 80
MAX_SETTINGS = 12
SETTING_KEY_LEN = 40
SETTING_VALUE_LEN = 120
LIST_FIELDS = ("names", "preferences", "constraints")
_KEY_CHARS = re.compile(r"[^\w.:-]+")


def profile_key(name_or_key: str, *, kind: str = "user") -> str:
    """`user:ana` for "Ana"; a key that already has a kind prefix is checked and kept."""
    text = " ".join(name_or_key.split())
    if not text:
        raise StoreError("empty profile name", hint="a user name, or a key like board:kiosk-1")
    if ":" in text:
        kind, _, text = text.partition(":")
    key = f"{kind.lower()}:{_KEY_CHARS.sub('-', text.lower()).strip('-')}"
    if len(key) > MAX_KEY or key.endswith(":"):
        raise StoreError(f"invalid profile key {name_or_key[:80]!r}", hint="letters, digits, - _ . only, at most 80")
    return key


@dataclass
class Profile:
    key: str
    names: list[str] = field(default_factory=list)
    preferences: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)  # the sessions it was promoted from (latest last)
    updated_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Profile":
        try:
            data = json.loads(text)
            profile = cls(
                key=str(data["key"]),
                names=[str(v) for v in data.get("names", [])],
                preferences=[str(v) for v in data.get("preferences", [])],
                constraints=[str(v) for v in data.get("constraints", [])],
                settings={str(k): str(v) for k, v in dict(data.get("settings", {})).items()},
                sessions=[str(v) for v in data.get("sessions", [])],
                updated_at=float(data.get("updated_at", 0.0)),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"stored profile is unreadable: {exc}") from exc
        return profile.bounded()

    def bounded(self) -> "Profile":
        out = dataclasses.replace(self)
        out.names = _merge([], self.names, 4, NAME_LEN)
        out.preferences = _merge([], self.preferences, PROFILE_MAX, 200)
        out.constraints = _merge([], self.constraints, PROFILE_MAX, 200)
        items = list(self.settings.items())[-MAX_SETTINGS:]
        out.settings = {clip(k, SETTING_KEY_LEN): clip(v, SETTING_VALUE_LEN) for k, v in items}
        out.sessions = self.sessions[-8:]
        return out

    def is_empty(self) -> bool:
        return not (self.names or self.preferences or self.constraints or self.settings)


def _merge(old: list[str], new: list[str], cap: int, max_len: int) -> list[str]:
    """Old items then new ones, de-duplicated (a re-said item moves to the end), newest kept."""
    out: list[str] = []
    for item in [*old, *new]:
        item = clip(item, max_len)
        if not item:
            continue
        out = [o for o in out if norm_key(o) != norm_key(item)] + [item]
    return out[-cap:]


def promote(profile: Profile, state: SessionState) -> Profile:
    """The profile with the session's stable items (user_profile only) merged in."""
    p = state.user_profile
    out = dataclasses.replace(
        profile,
        names=_merge(profile.names, p.names, 4, NAME_LEN),
        preferences=_merge(profile.preferences, [i.value for i in p.preferences], PROFILE_MAX, 200),
        constraints=_merge(profile.constraints, [i.value for i in p.constraints], PROFILE_MAX, 200),
        sessions=[s for s in profile.sessions if s != state.session_id] + [state.session_id],
        updated_at=time.time(),
    )
    return out.bounded()


def without_items(profile: Profile, items: Sequence[tuple[str, str]], session_id: str) -> Profile:
    """The profile without the given (field, item) pairs and without `session_id` among its
    sources: what forgetting that session leaves of it."""
    out = dataclasses.replace(profile, sessions=[s for s in profile.sessions if s != session_id])
    for name in LIST_FIELDS:
        gone = {norm_key(item) for field_name, item in items if field_name == name}
        setattr(out, name, [v for v in getattr(profile, name) if norm_key(v) not in gone])
    return out


def setting_lines(profile: Profile) -> list[str]:
    return [f"{k}: {v}" for k, v in profile.settings.items()]


def seed_state(state: SessionState, profile: Profile) -> SessionState:
    """The state's user_profile with the profile merged in (settings become preferences).

    Only user_profile is touched: the task, steps and facts of the new session stay its own.
    """
    out = state.copy()
    up = out.user_profile
    up.names = _merge(profile.names, up.names, 4, NAME_LEN)
    up.preferences = _merge_items(profile.preferences + setting_lines(profile), up.preferences)
    up.constraints = _merge_items(profile.constraints, up.constraints)
    return bounded(out)[0]


def _merge_items(remembered: list[str], current: list[Item]) -> list[Item]:
    """The profile's remembered notes first (as items of no turn), then the session's own."""
    known = {norm_key(i.value) for i in current}
    seeded = [Item(key="profile", value=clip(v, 200), kind=KIND_NOTE) for v in remembered if v and norm_key(v) not in known]
    return (seeded + list(current))[-PROFILE_MAX:]


def edit(profile: Profile, *, set_items: Sequence[str] = (), remove: Sequence[str] = ()) -> Profile:
    """`KEY=VALUE`: names/preferences/constraints append VALUE, any other KEY is a setting.
    Remove `KEY` (a setting or a whole list) or `KEY=VALUE` (one list item)."""
    out = dataclasses.replace(profile, names=list(profile.names), preferences=list(profile.preferences),
                              constraints=list(profile.constraints), settings=dict(profile.settings))
    for item in set_items:
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise StoreError(f"--set {item!r}: expected KEY=VALUE", hint="e.g. --set preferences='window seats' or --set volume=30")
        if key in LIST_FIELDS:
            setattr(out, key, _merge(getattr(out, key), [value], 4 if key == "names" else PROFILE_MAX, 200))
        else:
            if len(out.settings) >= MAX_SETTINGS and key not in out.settings:
                raise StoreError(f"at most {MAX_SETTINGS} settings", hint="remove one with --remove KEY")
            out.settings[clip(key, SETTING_KEY_LEN)] = clip(value, SETTING_VALUE_LEN)
    for item in remove:
        key, sep, value = item.partition("=")
        key = key.strip()
        if key in LIST_FIELDS:
            kept = [v for v in getattr(out, key) if sep and norm_key(v) != norm_key(value)]
            if len(kept) == len(getattr(out, key)):
                raise StoreError(f"--remove {item!r}: no such item in {key}")
            setattr(out, key, kept)
        elif key in out.settings:
            del out.settings[key]
        else:
            raise StoreError(f"--remove {item!r}: no setting {key!r}", hint=f"settings: {', '.join(out.settings) or 'none'}")
    out.updated_at = time.time()
    return out.bounded()
