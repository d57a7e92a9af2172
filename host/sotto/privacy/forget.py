"""Deleting personal data everywhere: a session, a profile, or everything past retention.

"Everywhere" is the SQLite store (session row, every state version with its diff, the
trace rows, the profile binding), the session's JSON-lines trace file under
`sotto.paths.traces_dir()`, and the long-term profiles: the items a session was the
first to promote into a profile are taken out of it (and the session out of its list
of sources), and so are the copies of those items that the profile seeded into other
sessions' memory. After deleting, the store is compacted: the WAL is checkpointed into
the main file and truncated, then VACUUM rewrites the file so the deleted text is not
left in free pages (secure_delete is also on, see store.py).

Retention runs here too, from the commands (`apply_retention`), never from opening a
store: opening a file must not delete anything.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from sotto import paths
from sotto.errors import InvalidSessionId
from sotto.ids import SessionId
from sotto.memory.store import Store
from sotto.memory.profile import without_items

RETENTION_ENV = "SOTTO_RETENTION_DAYS"
DEFAULT_RETENTION_DAYS = 30.0


@dataclass
class Forgotten:
    sessions: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    trace_files: list[str] = field(default_factory=list)
    profiles_cleaned: list[str] = field(default_factory=list)  # profiles that kept other sessions' items
    sessions_cleaned: list[str] = field(default_factory=list)  # sessions whose seeded copies were removed

    def add(self, other: "Forgotten") -> None:
        self.sessions += other.sessions
        self.profiles += [p for p in other.profiles if p not in self.profiles]
        self.trace_files += other.trace_files
        self.profiles_cleaned += [p for p in other.profiles_cleaned if p not in self.profiles_cleaned]
        self.sessions_cleaned += [s for s in other.sessions_cleaned if s not in self.sessions_cleaned]


def retention_days(flag: float | None = None) -> float | None:
    """--retention-days, else SOTTO_RETENTION_DAYS, else 30; 0 or less (or "off") keeps everything."""
    if flag is not None:
        return flag if flag > 0 else None
    raw = os.environ.get(RETENTION_ENV, "").strip().lower()
    if raw in ("off", "never", "none"):
        return None
    try:
        days = float(raw) if raw else DEFAULT_RETENTION_DAYS
    except ValueError:
        days = DEFAULT_RETENTION_DAYS
    return days if days > 0 else None


def apply_retention(store: Store, *, folder: Path | None = None) -> Forgotten:
    """What every command that opens the store runs first: delete what is past the retention."""
    return expire(store, retention_days(), folder=folder)


def _trace_files(session_id: SessionId, folder: Path) -> list[Path]:
    exact = session_id.file_in(folder, ".jsonl")
    return [exact] if exact.is_file() else []


def forget_session(store: Store, session_id: str, *, folder: Path | None = None, vacuum: bool = True) -> Forgotten:
    """The session everywhere, and its contributions to the profiles (InvalidSessionId for a bad id)."""
    out = _forget(store, SessionId(session_id), folder)
    if vacuum:
        store.compact()
    return out


def _forget(store: Store, session_id: str, folder: Path | None) -> Forgotten:
    """`session_id` is checked by the caller, or comes from the store itself (a store made
    before ids were checked may hold one outside today's alphabet: its rows go, and no
    file can carry such a name)."""
    out = Forgotten()
    _forget_contributions(store, session_id, out)
    if store.delete_session(session_id):
        out.sessions.append(session_id)
    if isinstance(session_id, SessionId):
        for path in _trace_files(session_id, folder or paths.traces_dir()):
            path.unlink(missing_ok=True)
            out.trace_files.append(str(path))
    return out


def _forget_contributions(store: Store, session_id: str, out: Forgotten) -> None:
    """Take the session's items out of every profile (a profile left with nothing is deleted)
    and out of the sessions that profile seeded."""
    contributed = store.profile_items(session_id=session_id)
    keys = {item.profile_key for item in contributed}
    for key, _ in store.profiles():
        listed = store.profile(key)
        if listed is not None and session_id in listed.sessions:
            keys.add(key)
    for key in sorted(keys):
        profile = store.profile(key)
        if profile is None:
            continue
        cleaned = without_items(profile, [(i.field, i.item) for i in contributed if i.profile_key == key], session_id)
        if cleaned.is_empty():  # nothing but the session's own items: the profile goes with it
            store.delete_profile(key)
            out.profiles.append(key)
        else:
            store.put_profile(cleaned)
            out.profiles_cleaned.append(key)
    copies = store.remove_profile_items_from_sessions([(i.field, i.item) for i in contributed])
    out.sessions_cleaned += [s for s in copies if s != session_id]


def _checked_or_stored(session_id: str) -> str:
    """A SessionId when the stored id is one; else the raw stored id (its rows only)."""
    try:
        return SessionId(session_id)
    except InvalidSessionId:
        return session_id


def forget_profile(store: Store, key: str, *, folder: Path | None = None) -> Forgotten:
    """The profile, the sessions bound to it or that contributed to it (their memory holds the
    same personal data), and the copies of its items in any other session."""
    out = Forgotten()
    profile = store.profile(key)
    items = store.profile_items(profile_key=key)
    sources = {i.session_id for i in items if i.session_id}
    bound = store.delete_profile(key)
    if profile is not None:
        out.profiles.append(key)
    for sid in sorted(set(bound) | sources | set(profile.sessions if profile else [])):
        out.add(_forget(store, _checked_or_stored(sid), folder))
    listed = [(name, value) for name in ("names", "preferences", "constraints")
              for value in (getattr(profile, name) if profile else [])]
    out.sessions_cleaned += [s for s in store.remove_profile_items_from_sessions(listed) if s not in out.sessions_cleaned]
    store.compact()
    return out


def expire(store: Store, days: float | None, *, folder: Path | None = None, now: float | None = None) -> Forgotten:
    """Delete sessions (with their profile contributions), profiles, trace rows and trace files
    not updated for `days` days."""
    out = Forgotten()
    if days is None:
        return out
    cutoff = (now if now is not None else time.time()) - days * 86400.0
    old_sessions, old_profiles = store.older_than(cutoff)
    for sid in old_sessions:
        out.add(_forget(store, _checked_or_stored(sid), folder))
    for key in old_profiles:
        if store.profile(key) is not None:
            store.delete_profile(key)
            out.profiles.append(key)
    trace_rows = store.delete_traces_before(cutoff)
    trace_dir = folder or paths.traces_dir()
    for path in trace_dir.glob("*.jsonl"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                out.trace_files.append(str(path))
        except OSError:
            continue  # removed meanwhile
    if out.sessions or out.profiles or out.trace_files or trace_rows or out.profiles_cleaned:
        store.compact()
    return out
