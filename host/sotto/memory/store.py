"""SQLite persistence for sessions, every state version with its diff, and traces.

WAL journal: a version is one INSERT in one transaction, so a host killed mid-turn
restarts with the last committed version and never sees a half-written one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from sotto import paths
from sotto.errors import SessionNotFound, StoreError
from sotto.memory.diff import Change
from sotto.memory.schema import SchemaViolation
from sotto.memory.state import SessionState

if TYPE_CHECKING:
    from sotto.memory.profile import Profile

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    lang TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS state_versions (
    session_id TEXT NOT NULL REFERENCES sessions(session_id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    source TEXT NOT NULL,          -- "rules" | "model" | "user-edit" | "create"
    state_json TEXT NOT NULL,
    diff_json TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (session_id, version)
);
CREATE TABLE IF NOT EXISTS trace_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    ts REAL NOT NULL,
    type TEXT NOT NULL,
    event_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trace_by_session ON trace_events(session_id, id);
CREATE TABLE IF NOT EXISTS profiles (
    profile_key TEXT PRIMARY KEY,
    profile_json TEXT NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS session_profiles (
    session_id TEXT PRIMARY KEY,
    profile_key TEXT NOT NULL
);
"""
MAX_SESSION_ID = 64
MAX_EVENT_BYTES = 16_000


@dataclass(frozen=True)
class StateVersion:
    version: int
    turn: int
    source: str
    state: SessionState
    changes: list[dict[str, Any]]
    created_at: float
    note: str = ""  # for "user-edit": the command that made it


def check_session_id(session_id: str) -> str:
    if not session_id or len(session_id) > MAX_SESSION_ID or not all(c.isalnum() or c in "-_.:" for c in session_id):
        raise StoreError(f"invalid session id {session_id[:80]!r}", hint="letters, digits and - _ . : only, at most 64")
    return session_id


class Store:
    """Thread-safe: one connection guarded by a lock (the voice harness and the agent share it)."""

    def __init__(self, path: Path | str | None = None, *, apply_retention: bool = True, redact: bool | None = None) -> None:
        """`apply_retention`: delete what is older than the retention (SOTTO_RETENTION_DAYS,
        default 30 days) now. `redact`: store trace text as length+hash (default SOTTO_REDACT)."""
        from sotto.text.redact import redaction_enabled

        self.path = Path(path) if path is not None else paths.database_path()
        self.redact = redaction_enabled() if redact is None else redact
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=10)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA secure_delete=ON")  # deleted rows are zeroed, not left in free pages
            self._db.executescript(SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(state_versions)")}
            if "note" not in columns:  # stores made before edits were annotated
                self._db.execute("ALTER TABLE state_versions ADD COLUMN note TEXT NOT NULL DEFAULT ''")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        if apply_retention:
            from sotto.privacy.forget import expire, retention_days

            expire(self, retention_days())

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ sessions

    def ensure_session(self, session_id: str, *, lang: str = "") -> SessionState:
        """The latest committed state, creating the session (version 0) when new."""
        check_session_id(session_id)
        latest = self.latest(session_id)
        if latest is not None:
            return latest.state
        state = SessionState(session_id=session_id)
        state.touch()
        now = time.time()
        with self._lock, self._tx():
            self._db.execute(
                "INSERT OR IGNORE INTO sessions(session_id, created_at, updated_at, lang) VALUES (?,?,?,?)",
                (session_id, now, now, lang),
            )
            self._db.execute(
                "INSERT OR IGNORE INTO state_versions(session_id, version, turn, source, state_json, diff_json, created_at) "
                "VALUES (?,?,?,?,?,?,?)",
                (session_id, 0, 0, "create", state.to_json(), "[]", now),
            )
        return state

    def sessions(self) -> list[tuple[str, float, int]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT s.session_id, s.updated_at, MAX(v.version) FROM sessions s "
                "JOIN state_versions v USING(session_id) GROUP BY s.session_id ORDER BY s.updated_at DESC"
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def delete_session(self, session_id: str) -> bool:
        with self._lock, self._tx():
            cur = self._db.execute("DELETE FROM sessions WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM state_versions WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM trace_events WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM session_profiles WHERE session_id=?", (session_id,))
        return cur.rowcount > 0

    def older_than(self, cutoff: float) -> tuple[list[str], list[str]]:
        """Sessions and profiles last updated before `cutoff` (epoch seconds)."""
        with self._lock:
            sessions = [r[0] for r in self._db.execute("SELECT session_id FROM sessions WHERE updated_at < ?", (cutoff,))]
            profiles = [r[0] for r in self._db.execute("SELECT profile_key FROM profiles WHERE updated_at < ?", (cutoff,))]
        return sessions, profiles

    def delete_traces_before(self, cutoff: float) -> int:
        with self._lock, self._tx():
            cur = self._db.execute("DELETE FROM trace_events WHERE ts < ?", (cutoff,))
        return cur.rowcount

    def compact(self) -> None:
        """Checkpoint and truncate the WAL, then VACUUM: deleted text leaves the files."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ------------------------------------------------------------------ profiles

    def profile(self, key: str) -> "Profile | None":
        from sotto.memory.profile import Profile

        with self._lock:
            row = self._db.execute("SELECT profile_json FROM profiles WHERE profile_key=?", (key,)).fetchone()
        return None if row is None else Profile.from_json(row[0])

    def put_profile(self, profile: "Profile") -> None:
        with self._lock, self._tx():
            self._db.execute(
                "INSERT INTO profiles(profile_key, profile_json, updated_at) VALUES (?,?,?) "
                "ON CONFLICT(profile_key) DO UPDATE SET profile_json=excluded.profile_json, updated_at=excluded.updated_at",
                (profile.key, profile.to_json(), time.time()),
            )

    def profiles(self) -> list[tuple[str, float]]:
        with self._lock:
            rows = self._db.execute("SELECT profile_key, updated_at FROM profiles ORDER BY updated_at DESC").fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    def delete_profile(self, key: str) -> list[str]:
        """Delete the profile; returns the sessions that were bound to it (not deleted here)."""
        with self._lock, self._tx():
            sessions = [r[0] for r in self._db.execute("SELECT session_id FROM session_profiles WHERE profile_key=?", (key,))]
            self._db.execute("DELETE FROM profiles WHERE profile_key=?", (key,))
            self._db.execute("DELETE FROM session_profiles WHERE profile_key=?", (key,))
        return sessions

    def bind_profile(self, session_id: str, key: str) -> None:
        with self._lock, self._tx():
            self._db.execute(
                "INSERT INTO session_profiles(session_id, profile_key) VALUES (?,?) "
                "ON CONFLICT(session_id) DO UPDATE SET profile_key=excluded.profile_key",
                (session_id, key),
            )

    def session_profile(self, session_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT profile_key FROM session_profiles WHERE session_id=?", (session_id,)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ versions

    def commit(self, state: SessionState, *, turn: int, source: str, changes: Iterable[Change], note: str = "") -> int:
        """Store a new version (one transaction); returns its number."""
        check_session_id(state.session_id)
        diff = json.dumps([c.to_dict() for c in changes], ensure_ascii=False)
        now = time.time()
        with self._lock, self._tx():
            row = self._db.execute(
                "SELECT COALESCE(MAX(version), -1) FROM state_versions WHERE session_id=?", (state.session_id,)
            ).fetchone()
            version = int(row[0]) + 1
            if version == 0:
                self._db.execute(
                    "INSERT OR IGNORE INTO sessions(session_id, created_at, updated_at) VALUES (?,?,?)",
                    (state.session_id, now, now),
                )
            self._db.execute(
                "INSERT INTO state_versions(session_id, version, turn, source, state_json, diff_json, created_at, note) "
                "VALUES (?,?,?,?,?,?,?,?)",
                (state.session_id, version, turn, source, state.to_json(), diff, now, note[:300]),
            )
            self._db.execute("UPDATE sessions SET updated_at=? WHERE session_id=?", (now, state.session_id))
        return version

    def latest(self, session_id: str) -> StateVersion | None:
        with self._lock:
            row = self._db.execute(
                "SELECT version, turn, source, state_json, diff_json, created_at, note FROM state_versions "
                "WHERE session_id=? ORDER BY version DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return None if row is None else self._version(row)

    def history(self, session_id: str) -> list[StateVersion]:
        with self._lock:
            rows = self._db.execute(
                "SELECT version, turn, source, state_json, diff_json, created_at, note FROM state_versions "
                "WHERE session_id=? ORDER BY version",
                (session_id,),
            ).fetchall()
        if not rows:
            raise SessionNotFound(f"no session {session_id!r}", hint="`sotto state` lists the sessions")
        return [self._version(r) for r in rows]

    def last_turn(self, session_id: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(MAX(turn), 0) FROM state_versions WHERE session_id=?", (session_id,)).fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ traces

    def append_trace(self, session_id: str, event: dict[str, Any]) -> None:
        """Append one trace event (a JSON object with a string "type"); bounded in size."""
        kind = str(event.get("type", "event"))[:64]
        if self.redact:
            from sotto.text.redact import redact_event

            event = redact_event(event)
        text = json.dumps(event, ensure_ascii=False, default=str)
        if len(text.encode()) > MAX_EVENT_BYTES:
            text = json.dumps({"type": kind, "truncated": True, "preview": text[:2000]}, ensure_ascii=False)
        with self._lock, self._tx():
            self._db.execute(
                "INSERT INTO trace_events(session_id, ts, type, event_json) VALUES (?,?,?,?)",
                (session_id, float(event.get("ts", time.time())), kind, text),
            )

    def traces(self, session_id: str, *, kind: str | None = None) -> list[dict[str, Any]]:
        query = "SELECT event_json FROM trace_events WHERE session_id=?"
        args: tuple[Any, ...] = (session_id,)
        if kind:
            query += " AND type=?"
            args += (kind,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [json.loads(r[0]) for r in rows]

    # ------------------------------------------------------------------ internals

    def _tx(self) -> "_Transaction":
        return _Transaction(self._db)

    @staticmethod
    def _version(row: tuple[Any, ...]) -> StateVersion:
        try:
            state = SessionState.from_json(row[3])
        except SchemaViolation as exc:
            raise StoreError(f"stored state version {row[0]} is unreadable: {exc}") from exc
        return StateVersion(int(row[0]), int(row[1]), str(row[2]), state, json.loads(row[4]), float(row[5]), str(row[6] or ""))


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self._db.execute("COMMIT")
        else:
            self._db.execute("ROLLBACK")
