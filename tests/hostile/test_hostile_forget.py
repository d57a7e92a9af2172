"""Forget means forget: after `sotto forget`, nothing of the session's words is left in the data folder.

Issue 15, item 3: the long-term profiles (`user:…`, `board:…`) kept a forgotten session's
words ("I love zarquonberry jam") and listed the forgotten session ids. Each test here
greps every file of the data folder (database, WAL, traces, profiles) for a distinctive
word after forgetting, for `forget SESSION`, `--profile` and `--expired`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest

from sotto import paths
from sotto.agent import Agent, AgentConfig
from sotto.cli import main
from sotto.memory.store import Store
from sotto.voice.trace import TraceLog

WORD = b"zarquonberry"


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sotto-home"
    monkeypatch.setenv("SOTTO_HOME", str(folder))
    monkeypatch.delenv("SOTTO_REDACT", raising=False)
    monkeypatch.delenv("SOTTO_RETENTION_DAYS", raising=False)
    return folder


def grep_data_folder(home: Path, word: bytes) -> list[str]:
    """Every file under the data folder that holds `word`, case-insensitively (like grep -ri)."""
    return [str(p) for p in home.rglob("*") if p.is_file() and word.lower() in p.read_bytes().lower()]


def session(agent: Agent, sid: str, profile: str, *lines: str) -> None:
    """A session as a board or chat would run it: turns, a trace file, then promotion at its end."""
    agent.open_session(sid, profile=profile)
    log = TraceLog(sid)
    for number, line in enumerate(lines, 1):
        log.emit("final_transcript", number, text=line)
        agent.run_turn(sid, line)
    log.close()
    agent.end_session(sid)


def memory_agent(store: Store) -> Agent:
    return Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))


def test_forget_session_takes_its_words_out_of_the_profiles(home: Path) -> None:
    store = Store()
    agent = memory_agent(store)
    session(agent, "kiosk-a", "board:kiosk-1", "My name is Zed.", "I love zarquonberry jam.")
    # A later session on the same board is seeded from the board's profile: it holds a copy.
    session(agent, "kiosk-b", "board:kiosk-1", "I prefer window seats.")
    store.close()
    assert grep_data_folder(home, WORD)

    assert main(["forget", "kiosk-a"]) == 0

    assert grep_data_folder(home, WORD) == []
    assert grep_data_folder(home, b"window seats")  # the other session keeps its own words
    store = Store()
    try:
        board = store.profile("board:kiosk-1")
        assert board is not None and "kiosk-a" not in board.sessions
        assert board.preferences == ["I prefer window seats"]
        # kiosk-b was seeded with the name, so it promoted its own item to user:zed too: that stays.
        named = store.profile("user:zed")
        assert named is not None and named.sessions == ["kiosk-b"] and named.preferences == ["I prefer window seats"]
    finally:
        store.close()


def test_forget_profile_takes_the_user_out_of_every_session_and_profile(home: Path) -> None:
    store = Store()
    agent = memory_agent(store)
    # The user says their name on a kiosk: the session is bound to the board's profile and
    # also promotes to user:ana.
    session(agent, "kiosk-a", "board:kiosk-1", "My name is Ana.", "I love zarquonberry jam.")
    session(agent, "kiosk-c", "board:kiosk-1", "I prefer window seats.")
    store.close()
    assert main(["forget", "--profile", "Ana"]) == 0
    assert grep_data_folder(home, WORD) == []
    assert grep_data_folder(home, b"user:ana") == []


def test_forget_expired_takes_old_words_out_of_a_recent_profile(home: Path) -> None:
    store = Store()
    agent = memory_agent(store)
    session(agent, "old-a", "board:kiosk-1", "I love zarquonberry jam.")
    session(agent, "new-b", "board:kiosk-1", "I prefer window seats.")
    store.close()
    long_ago = time.time() - 90 * 86400
    with sqlite3.connect(paths.database_path()) as db:  # the first session is 90 days old
        db.execute("UPDATE sessions SET updated_at=? WHERE session_id='old-a'", (long_ago,))
    os.utime(paths.traces_dir() / "old-a.jsonl", (long_ago, long_ago))

    assert main(["forget", "--expired", "--retention-days", "30", "--json"]) == 0

    assert grep_data_folder(home, WORD) == []
    assert grep_data_folder(home, b"window seats")  # the board's profile stays, with the recent session's items


def test_a_profile_that_lists_a_forgotten_session_no_longer_names_it(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store()
    agent = memory_agent(store)
    session(agent, "kiosk-a", "board:kiosk-1", "I love zarquonberry jam.")
    session(agent, "kiosk-b", "board:kiosk-1", "I prefer window seats.")
    store.close()
    assert main(["forget", "kiosk-a"]) == 0
    capsys.readouterr()
    assert main(["profile", "board:kiosk-1", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["sessions"] == ["kiosk-b"] and "zarquonberry" not in json.dumps(shown)
