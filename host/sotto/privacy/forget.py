"""Deleting personal data everywhere: a session, a profile, or everything past retention.

"Everywhere" is the SQLite store (session row, every state version with its diff, the
trace rows, the profile binding) and the session's JSON-lines trace files under
`sotto.paths.traces_dir()`. After deleting, the store is compacted: the WAL is
checkpointed into the main file and truncated, then VACUUM rewrites the file so the
deleted text is not left in free pages (secure_delete is also on, see store.py).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from sotto import paths
from sotto.memory.store import Store

RETENTION_ENV = "SOTTO_RETENTION_DAYS"
DEFAULT_RETENTION_DAYS = 30.0


@dataclass
class Forgotten:
    sessions: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    trace_files: list[str] = field(default_factory=list)


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


def _trace_files(session_id: str, folder: Path) -> list[Path]:
    exact = folder / f"{session_id}.jsonl"
    return [exact] if exact.is_file() else []


def compact(store: Store) -> None:
    store.compact()


def forget_session(store: Store, session_id: str, *, folder: Path | None = None, vacuum: bool = True) -> Forgotten:
    out = Forgotten()
    if store.delete_session(session_id):
        out.sessions.append(session_id)
    for path in _trace_files(session_id, folder or paths.traces_dir()):
        path.unlink(missing_ok=True)
        out.trace_files.append(str(path))
    if vacuum:
        store.compact()
    return out


def forget_profile(store: Store, key: str, *, folder: Path | None = None) -> Forgotten:
    """The profile and the sessions bound to it (their memory holds the same personal data)."""
    out = Forgotten()
    existed = store.profile(key) is not None
    sessions = store.delete_profile(key)
    if existed:
        out.profiles.append(key)
    for sid in sessions:
        done = forget_session(store, sid, folder=folder, vacuum=False)
        out.sessions += done.sessions
        out.trace_files += done.trace_files
    store.compact()
    return out


def expire(store: Store, days: float | None, *, folder: Path | None = None, now: float | None = None) -> Forgotten:
    """Delete sessions, profiles, trace rows and trace files not updated for `days` days."""
    out = Forgotten()
    if days is None:
        return out
    cutoff = (now if now is not None else time.time()) - days * 86400.0
    old_sessions, old_profiles = store.older_than(cutoff)
    for sid in old_sessions:
        done = forget_session(store, sid, folder=folder, vacuum=False)
        out.sessions += done.sessions
        out.trace_files += done.trace_files
    for key in old_profiles:
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
    if out.sessions or out.profiles or out.trace_files or trace_rows:
        store.compact()
    return out
