"""SQLite persistence for sessions, every state version with its diff, and traces.

WAL journal: a version is one INSERT in one transaction, so a host killed mid-turn
restarts with the last committed version and never sees a half-written one.

Opening a store reads nothing but its schema and changes nothing: retention (deleting
what is old) is run by the commands (`sotto.privacy.forget.apply_retention`). A file
that is not a readable database (a damaged page, a zero-length file that was not just
created) is refused with `StoreDamaged`, which names the file and says how to move it
aside or restore a backup; every query turns SQLite's corruption errors into it too.

Profiles remember where their items came from (`profile_items`: the session an item
was first promoted from), so forgetting a session can take its words out of them.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from sotto import paths
from sotto.errors import SessionNotFound, StoreDamaged, StoreError
from sotto.ids import SessionId
from sotto.memory.diff import Change
from sotto.memory.schema import SchemaViolation
from sotto.memory.state import SessionState
from sotto.memory.text import norm_key

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
CREATE TABLE IF NOT EXISTS profile_items (
    profile_key TEXT NOT NULL,
    field TEXT NOT NULL,           -- names | preferences | constraints
    item_key TEXT NOT NULL,        -- the item, normalised (memory.text.norm_key)
    item TEXT NOT NULL,
    session_id TEXT NOT NULL,      -- the session it was first promoted from; '' for a user edit
    PRIMARY KEY (profile_key, field, item_key)
);
CREATE INDEX IF NOT EXISTS profile_items_by_session ON profile_items(session_id);
CREATE TABLE IF NOT EXISTS pending_confirmations (
    session_id TEXT PRIMARY KEY,   -- at most one open question per session
    turn INTEGER NOT NULL,         -- the turn that asked
    pending_json TEXT NOT NULL     -- the agent's record of what it asked (bounded)
);
"""
MAX_PENDING_BYTES = 2_000
MAX_EVENT_BYTES = 16_000
PROFILE_LIST_FIELDS = ("names", "preferences", "constraints")


@dataclass(frozen=True)
class StateVersion:
    version: int
    turn: int
    source: str
    state: SessionState
    changes: list[dict[str, Any]]
    created_at: float
    note: str = ""  # for "user-edit": the command that made it


@dataclass(frozen=True)
class ProfileItem:
    """One item of a long-term profile and the session it was first promoted from."""

    profile_key: str
    field: str
    item: str
    session_id: str


# SQLite's own names for "this file is not (or no longer) a readable database".
_DAMAGED = {"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT_SEQUENCE", "SQLITE_CORRUPT_VTAB"}


def damaged_store(path: Path, detail: str) -> StoreDamaged:
    return StoreDamaged(
        f"the store {path} is damaged and cannot be read ({detail})",
        hint=f"stop sotto, then move it aside: mv {path} {path}.damaged (with {path.name}-wal and {path.name}-shm if "
             f"present); sotto starts a new empty store there, or copy a backup of {path.name} in its place. "
             f"`sqlite3 {path}.damaged .recover` may rescue some of it",
    )


class Store:
    """Thread-safe: one connection guarded by a lock (the voice harness and the agent share it)."""

    def __init__(self, path: Path | str | None = None, *, redact: bool | None = None) -> None:
        """`redact`: store trace text as length+hash (default SOTTO_REDACT)."""
        from sotto.text.redact import redaction_enabled

        self.path = Path(path) if path is not None else paths.database_path()
        self.redact = redaction_enabled() if redact is None else redact
        self._check_file()
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=10)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from exc
        try:
            with self._sql():
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA foreign_keys=ON")
                self._db.execute("PRAGMA secure_delete=ON")  # deleted rows are zeroed, not left in free pages
                # Every page once (a 70 MB store: 90 ms, median of 7 opens here): a damaged page
                # is found now, with advice, not in the middle of a turn.
                problems = [str(r[0]) for r in self._db.execute("PRAGMA quick_check(3)")]
                if problems != ["ok"]:
                    raise damaged_store(self.path, "; ".join(problems)[:300])
                self._db.executescript(SCHEMA)
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(state_versions)")}
                if "note" not in columns:  # stores made before edits were annotated
                    self._db.execute("ALTER TABLE state_versions ADD COLUMN note TEXT NOT NULL DEFAULT ''")
        except BaseException:
            self._db.close()
            raise

    def _check_file(self) -> None:
        """A zero-length file where the store should be is not a store: refused, unless it is new
        (SQLite creates the file empty and writes its first page a moment later)."""
        try:
            size = self.path.stat().st_size
            age_s = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc.strerror or exc}") from exc
        if self.path.is_dir():
            raise StoreError(f"the store {self.path} is a folder, not a database file")
        wal = self.path.with_name(self.path.name + "-wal")
        if size == 0 and age_s > 5.0 and not (wal.is_file() and wal.stat().st_size > 0):
            raise StoreDamaged(
                f"the store {self.path} is an empty file (0 bytes), not a sotto database",
                hint=f"if it should hold your sessions, restore a backup copy to {self.path}; "
                     f"to start a new store, remove it: rm {self.path}",
            )

    @contextlib.contextmanager
    def _sql(self) -> Iterator[None]:
        """SQLite errors as store errors: corruption as StoreDamaged (with what to do), the rest as StoreError."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", "") in _DAMAGED or "malformed" in str(exc) or "not a database" in str(exc):
                raise damaged_store(self.path, str(exc)) from exc
            raise StoreError(f"the store {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ sessions

    def ensure_session(self, session_id: str, *, lang: str = "") -> SessionState:
        """The latest committed state, creating the session (version 0) when new."""
        session_id = SessionId(session_id)
        latest = self.latest(session_id)
        if latest is not None:
            return latest.state
        state = SessionState(session_id=session_id)
        state.touch()
        now = time.time()
        with self._writing():
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
        with self._reading():
            rows = self._db.execute(
                "SELECT s.session_id, s.updated_at, MAX(v.version) FROM sessions s "
                "JOIN state_versions v USING(session_id) GROUP BY s.session_id ORDER BY s.updated_at DESC"
            ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def delete_session(self, session_id: str) -> bool:
        """Every row of the session. Not checked against the id alphabet: a store made before
        ids were checked may hold one outside it, and deleting it must still work."""
        with self._writing():
            cur = self._db.execute("DELETE FROM sessions WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM state_versions WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM trace_events WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM session_profiles WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM profile_items WHERE session_id=?", (session_id,))
            self._db.execute("DELETE FROM pending_confirmations WHERE session_id=?", (session_id,))
        return cur.rowcount > 0

    def older_than(self, cutoff: float) -> tuple[list[str], list[str]]:
        """Sessions and profiles last updated before `cutoff` (epoch seconds)."""
        with self._reading():
            sessions = [r[0] for r in self._db.execute("SELECT session_id FROM sessions WHERE updated_at < ?", (cutoff,))]
            profiles = [r[0] for r in self._db.execute("SELECT profile_key FROM profiles WHERE updated_at < ?", (cutoff,))]
        return sessions, profiles

    def delete_traces_before(self, cutoff: float) -> int:
        with self._writing():
            cur = self._db.execute("DELETE FROM trace_events WHERE ts < ?", (cutoff,))
        return cur.rowcount

    def compact(self) -> None:
        """Checkpoint and truncate the WAL, then VACUUM: deleted text leaves the files."""
        with self._reading():
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # ------------------------------------------------------------------ profiles

    def profile(self, key: str) -> "Profile | None":
        from sotto.memory.profile import Profile

        with self._reading():
            row = self._db.execute("SELECT profile_json FROM profiles WHERE profile_key=?", (key,)).fetchone()
        return None if row is None else Profile.from_json(row[0])

    def put_profile(self, profile: "Profile", *, source_session: str = "") -> None:
        """Store the profile; its items not there before are recorded as coming from
        `source_session` ('' for an edit by the user), items no longer in it are forgotten."""
        source = SessionId(source_session) if source_session else ""
        with self._writing():
            self._db.execute(
                "INSERT INTO profiles(profile_key, profile_json, updated_at) VALUES (?,?,?) "
                "ON CONFLICT(profile_key) DO UPDATE SET profile_json=excluded.profile_json, updated_at=excluded.updated_at",
                (profile.key, profile.to_json(), time.time()),
            )
            for name in PROFILE_LIST_FIELDS:
                items = {norm_key(item): item for item in getattr(profile, name)}
                known = {str(r[0]) for r in self._db.execute(
                    "SELECT item_key FROM profile_items WHERE profile_key=? AND field=?", (profile.key, name))}
                self._db.executemany("DELETE FROM profile_items WHERE profile_key=? AND field=? AND item_key=?",
                                     [(profile.key, name, k) for k in known - items.keys()])
                self._db.executemany(
                    "INSERT INTO profile_items(profile_key, field, item_key, item, session_id) VALUES (?,?,?,?,?)",
                    [(profile.key, name, k, items[k], source) for k in items.keys() - known])

    def profile_items(self, *, session_id: str | None = None, profile_key: str | None = None) -> list[ProfileItem]:
        """Profile items with where they came from: those one session contributed, or one profile's."""
        query = "SELECT profile_key, field, item, session_id FROM profile_items WHERE "
        args: tuple[str, ...]
        if session_id is not None:
            query, args = query + "session_id=?", (session_id,)
        elif profile_key is not None:
            query, args = query + "profile_key=?", (profile_key,)
        else:
            raise ValueError("profile_items: give session_id or profile_key")
        with self._reading():
            rows = self._db.execute(query, args).fetchall()
        return [ProfileItem(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def remove_profile_items_from_sessions(self, items: Iterable[tuple[str, str]]) -> list[str]:
        """Take the given (field, item) pairs out of every stored version of every session's
        user_profile (copies a profile seeded into them) and out of their diffs. Returns the
        sessions changed."""
        wanted: dict[str, set[str]] = {}
        for name, item in items:
            wanted.setdefault(name, set()).add(norm_key(item))
        needles = {json.dumps(item, ensure_ascii=False)[1:-1] for _, item in items}
        if not needles:
            return []
        changed: set[str] = set()
        with self._writing():
            where = " OR ".join("instr(state_json, ?) OR instr(diff_json, ?)" for _ in needles)
            args = [n for n in needles for _ in (0, 1)]
            rows = self._db.execute(f"SELECT session_id, version, state_json, diff_json FROM state_versions WHERE {where}",
                                    args).fetchall()
            for session_id, version, state_json, diff_json in rows:
                state_data = json.loads(state_json)
                profile = state_data.get("user_profile") or {}
                for name, keys in wanted.items():
                    if isinstance(profile.get(name), list):
                        profile[name] = [v for v in profile[name] if norm_key(_item_text(v)) not in keys]
                diff = [c for c in json.loads(diff_json) if not _mentions(c, wanted)]
                new_state, new_diff = json.dumps(state_data, ensure_ascii=False), json.dumps(diff, ensure_ascii=False)
                if (new_state, new_diff) != (state_json, diff_json):
                    self._db.execute("UPDATE state_versions SET state_json=?, diff_json=? WHERE session_id=? AND version=?",
                                     (new_state, new_diff, session_id, version))
                    changed.add(str(session_id))
        return sorted(changed)

    def profiles(self) -> list[tuple[str, float]]:
        with self._reading():
            rows = self._db.execute("SELECT profile_key, updated_at FROM profiles ORDER BY updated_at DESC").fetchall()
        return [(str(r[0]), float(r[1])) for r in rows]

    def delete_profile(self, key: str) -> list[str]:
        """Delete the profile; returns the sessions that were bound to it (not deleted here)."""
        with self._writing():
            sessions = [r[0] for r in self._db.execute("SELECT session_id FROM session_profiles WHERE profile_key=?", (key,))]
            self._db.execute("DELETE FROM profiles WHERE profile_key=?", (key,))
            self._db.execute("DELETE FROM session_profiles WHERE profile_key=?", (key,))
            self._db.execute("DELETE FROM profile_items WHERE profile_key=?", (key,))
        return sessions

    def bind_profile(self, session_id: str, key: str) -> None:
        session_id = SessionId(session_id)
        with self._writing():
            self._db.execute(
                "INSERT INTO session_profiles(session_id, profile_key) VALUES (?,?) "
                "ON CONFLICT(session_id) DO UPDATE SET profile_key=excluded.profile_key",
                (session_id, key),
            )

    def session_profile(self, session_id: str) -> str | None:
        with self._reading():
            row = self._db.execute("SELECT profile_key FROM session_profiles WHERE session_id=?", (session_id,)).fetchone()
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ versions

    def commit(self, state: SessionState, *, turn: int, source: str, changes: Iterable[Change], note: str = "") -> int:
        """Store a new version (one transaction); returns its number."""
        SessionId(state.session_id)
        diff = json.dumps([c.to_dict() for c in changes], ensure_ascii=False)
        now = time.time()
        with self._writing():
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
        with self._reading():
            row = self._db.execute(
                "SELECT version, turn, source, state_json, diff_json, created_at, note FROM state_versions "
                "WHERE session_id=? ORDER BY version DESC LIMIT 1",
                (session_id,),
            ).fetchone()
        return None if row is None else self._version(row)

    def history(self, session_id: str) -> list[StateVersion]:
        session_id = SessionId(session_id)
        with self._reading():
            rows = self._db.execute(
                "SELECT version, turn, source, state_json, diff_json, created_at, note FROM state_versions "
                "WHERE session_id=? ORDER BY version",
                (session_id,),
            ).fetchall()
        if not rows:
            raise SessionNotFound(f"no session {session_id!r}", hint="`sotto state` lists the sessions")
        return [self._version(r) for r in rows]

    def last_turn(self, session_id: str) -> int:
        with self._reading():
            row = self._db.execute("SELECT COALESCE(MAX(turn), 0) FROM state_versions WHERE session_id=?", (session_id,)).fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ an open confirmation

    def set_pending_confirmation(self, session_id: str, pending: dict[str, Any] | None, *, turn: int = 0) -> None:
        """The question the agent asked and waits an answer for (None: no longer waiting).
        Kept beside the state, not in it: it is about the talk, not something the user said."""
        session_id = SessionId(session_id)
        with self._writing():
            self._db.execute("DELETE FROM pending_confirmations WHERE session_id=?", (session_id,))
            if pending is not None:
                text = json.dumps(pending, ensure_ascii=False)
                if len(text.encode()) > MAX_PENDING_BYTES:
                    raise StoreError(f"a pending confirmation over {MAX_PENDING_BYTES} bytes")
                self._db.execute("INSERT INTO pending_confirmations(session_id, turn, pending_json) VALUES (?,?,?)",
                                 (session_id, turn, text))

    def pending_confirmation(self, session_id: str) -> dict[str, Any] | None:
        with self._reading():
            row = self._db.execute("SELECT pending_json FROM pending_confirmations WHERE session_id=?", (session_id,)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
        except json.JSONDecodeError:
            return None  # unreadable: as if nothing were asked (the next turn is handled normally)
        return data if isinstance(data, dict) else None

    # ------------------------------------------------------------------ traces

    def append_trace(self, session_id: str, event: dict[str, Any]) -> None:
        """Append one trace event (a JSON object with a string "type"); bounded in size."""
        session_id = SessionId(session_id)
        kind = str(event.get("type", "event"))[:64]
        if self.redact:
            from sotto.text.redact import redact_event

            event = redact_event(event)
        text = json.dumps(event, ensure_ascii=False, default=str)
        if len(text.encode()) > MAX_EVENT_BYTES:
            text = json.dumps({"type": kind, "truncated": True, "preview": text[:2000]}, ensure_ascii=False)
        with self._writing():
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
        with self._reading():
            rows = self._db.execute(query + " ORDER BY id", args).fetchall()
        return [json.loads(r[0]) for r in rows]

    # ------------------------------------------------------------------ internals

    def _tx(self) -> "_Transaction":
        return _Transaction(self._db)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock, self._sql():
            yield

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        with self._lock, self._sql(), self._tx():
            yield

    @staticmethod
    def _version(row: tuple[Any, ...]) -> StateVersion:
        try:
            state = SessionState.from_json(row[3])
        except SchemaViolation as exc:
            raise StoreError(f"stored state version {row[0]} is unreadable: {exc}") from exc
        return StateVersion(int(row[0]), int(row[1]), str(row[2]), state, json.loads(row[4]), float(row[5]), str(row[6] or ""))


def _item_text(item: Any) -> str:
    """A stored list item's words: a plain string, or an item object's verbatim value."""
    return str(item.get("value", "")) if isinstance(item, dict) else str(item)


def _mentions(change: dict[str, Any], wanted: dict[str, set[str]]) -> bool:
    """Whether a stored diff entry adds or removes one of the wanted profile items."""
    name = str(change.get("field", "")).removeprefix("user_profile.")
    keys = wanted.get(name, set())
    return any(isinstance(change.get(side), (str, dict)) and norm_key(_item_text(change[side])) in keys
               for side in ("old", "new"))


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
