"""Forgetting: nothing of a forgotten session or profile stays in the database files or traces."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from sotto import paths
from sotto.agent import Agent, AgentConfig
from sotto.cli import main
from sotto.memory.store import Store
from sotto.privacy.forget import expire
from sotto.text.redact import redact_event
from sotto.voice.trace import TraceLog

MARKER = "Zyxquorbian"


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    monkeypatch.delenv("SOTTO_REDACT", raising=False)
    monkeypatch.delenv("SOTTO_RETENTION_DAYS", raising=False)
    return tmp_path


def _all_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())


def _session_with_marker(store: Store, sid: str, marker: str = MARKER) -> None:
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.run_turn(sid, f"Book a table at {marker} for four.")
    agent.run_turn(sid, f"I prefer {marker} tea.")
    log = TraceLog(sid)
    log.emit("final_transcript", 1, text=f"book {marker}")
    log.close()


def test_forget_session_leaves_no_bytes_behind(home: Path) -> None:
    store = Store()
    _session_with_marker(store, "gone")
    _session_with_marker(store, "kept", marker="Keepme")
    store.close()
    assert MARKER.encode() in _all_bytes(home)
    assert main(["forget", "gone"]) == 0
    data = _all_bytes(home)
    assert MARKER.encode() not in data and MARKER.lower().encode() not in data
    assert b"Keepme" in data  # the other session is untouched
    assert not (paths.traces_dir() / "gone.jsonl").exists()
    wal = Path(str(paths.database_path()) + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed and truncated
    assert main(["forget", "gone"]) == 1


def test_forget_profile_removes_it_and_its_sessions(home: Path) -> None:
    store = Store()
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.open_session("p1", profile="Ana")
    agent.run_turn("p1", f"I like {MARKER} cake.")
    agent.end_session("p1")
    store.close()
    assert main(["forget", "--profile", "Ana"]) == 0
    assert MARKER.encode() not in _all_bytes(home)
    assert main(["forget", "--profile", "Ana"]) == 1


def test_retention_expires_old_sessions_profiles_and_traces(home: Path) -> None:
    store = Store()
    _session_with_marker(store, "old")
    old_file = paths.traces_dir() / "old.jsonl"
    past = time.time() - 40 * 86400
    os.utime(old_file, (past, past))
    done = expire(store, 30, now=time.time() + 31 * 86400)  # everything is "old" 31 days from now
    assert "old" in done.sessions and str(old_file) in done.trace_files
    store.close()
    assert MARKER.encode() not in _all_bytes(home)
    # Opening a store deletes nothing; a command that opens it runs the retention first.
    store = Store()
    _session_with_marker(store, "again")
    store.close()
    os.environ["SOTTO_RETENTION_DAYS"] = "0.000001"
    try:
        time.sleep(0.2)
        Store().close()
        assert MARKER.encode() in _all_bytes(home)
        assert main(["state"]) == 0
    finally:
        del os.environ["SOTTO_RETENTION_DAYS"]
    assert MARKER.encode() not in _all_bytes(home)


def test_write_time_redaction_in_jsonl_and_store(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOTTO_REDACT", "1")
    store = Store()
    _session_with_marker(store, "r")
    store.close()
    data = _all_bytes(home)
    assert MARKER.encode() not in b"".join(p.read_bytes() for p in paths.traces_dir().glob("*.jsonl"))
    events = Store().traces("r")
    assert events and all(MARKER not in json.dumps(e) for e in events)
    assert any("[redacted" in json.dumps(e) for e in events)
    assert b"[redacted" in data
    event = redact_event({"type": "agent_turn", "user": "hello", "first_sentence_ms": 12.0, "changes": [{"field": "facts", "op": "add", "new": "x"}]})
    assert event["first_sentence_ms"] == 12.0 and event["changes"][0]["field"] == "facts" and event["user"].startswith("[redacted 5 chars")


def test_forget_needs_exactly_one_target(home: Path) -> None:
    assert main(["forget"]) == 2
    assert main(["forget", "x", "--expired"]) == 2
