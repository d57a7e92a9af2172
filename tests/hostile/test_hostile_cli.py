"""The command line on hostile input: a clear error and a non-zero exit, never a traceback.

Issue 15, items 8 and 9, each run as a user would: `python -m sotto ...` in a subprocess
with its own data folder, arguments as raw bytes (invalid UTF-8 from a terminal or a
script), files of garbage, a damaged database.
"""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

from sotto.memory.store import Store

REPO = Path(__file__).resolve().parents[2]


def sotto(home: Path, *args: str | bytes, stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SOTTO_HOME=str(home), PYTHONPATH=os.pathsep.join([str(REPO / "host"), str(REPO / "device")]))
    env.pop("SOTTO_RETENTION_DAYS", None)

    def limit_memory() -> None:  # a command that reads without bound fails fast instead of eating the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    argv: Sequence[str | bytes] = [sys.executable, "-m", "sotto", *args]
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=timeout, preexec_fn=limit_memory)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(errors="replace"),
                                       done.stderr.decode(errors="replace"))


def refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    """A clear error (error[code] or the command's own message) and a non-zero exit, no traceback."""
    shown = result.stdout + result.stderr
    assert "Traceback" not in shown, shown
    assert result.returncode != 0, shown
    for word in words:
        assert word in shown, (word, shown)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    store = Store(folder / "sotto.db")
    store.ensure_session("s1")
    store.close()
    return folder


def test_invalid_utf8_in_arguments_is_refused(home: Path) -> None:
    refused(sotto(home, "state", "s1", "--set", b"facts+=a\xffb"), "error[input_refused]", "not valid UTF-8")
    refused(sotto(home, "profile", "ana", "--set", b"preferences=jam \xed\xa0\x80"), "error[input_refused]")
    refused(sotto(home, "chat", "--session", b"s\xff"), "error[input_refused]")
    refused(sotto(home, "forget", b"..\xff/victim"), "error[input_refused]")


def test_chat_skips_a_line_that_is_not_utf8(home: Path) -> None:
    result = sotto(home, "chat", "--session", "c1", stdin=b"hello \xff there\n/quit\n", timeout=120)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert "not UTF-8" in result.stdout and result.returncode == 0


def test_an_eval_script_with_a_lone_surrogate_or_deep_nesting_is_refused(home: Path, tmp_path: Path) -> None:
    surrogate = tmp_path / "surrogate.json"
    surrogate.write_text('{"name": "x", "turns": [{"user": "hi \\udc80 there"}]}')
    refused(sotto(home, "eval", str(surrogate)), "surrogate")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000)
    refused(sotto(home, "eval", str(deep)), "deeper")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    refused(sotto(home, "eval", str(binary)), "not UTF-8")


def test_eval_of_dev_zero_stops_at_the_size_limit(home: Path) -> None:
    result = sotto(home, "eval", "/dev/zero", timeout=60)
    refused(result, "larger than")


def test_a_list_index_of_5000_digits_is_an_error(home: Path) -> None:
    refused(sotto(home, "state", "s1", "--set", "facts[" + "9" * 5000 + "]=x"), "not an index")
    refused(sotto(home, "state", "s1", "--set", "facts[²]=x"))


@pytest.mark.parametrize("content", [
    b"\xff\xfe\x00\x01 binary garbage\n",
    b'{"type": "turn_completed", "session": "s", "turn": [1], "t_ms": 1}\n',
    b'{"type": 5, "session": "s", "turn": 1, "t_ms": 1}\n',
    b'{"type": "x", "session": "s", "turn": 1, "t_ms": "soon"}\n',
    b'{"type": "x", "session": "s", "turn": 1, "t_ms": 1e999}\n',
    b"[" * 100_000 + b"\n",
    b'{"type": "x", "session": "s", "turn": 1, "t_ms": 1, "text": "\\ud800"}\n',
    b'[1, 2]\n',
])
def test_trace_of_a_hostile_file_is_a_clear_error(home: Path, tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "hostile.jsonl"
    path.write_bytes(content)
    refused(sotto(home, "trace", str(path)), "unreadable trace line")
    refused(sotto(home, "trace", str(path), "--json"), "unreadable trace line")


def test_trace_with_odd_extra_fields_shows_them_without_a_traceback(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    path.write_text('{"type": "turn_completed", "session": "s", "turn": 1, "t_ms": 1, "degraded": true, '
                    '"degrade_actions": 5}\n'
                    '{"type": "session_closed", "session": "s", "turn": null, "t_ms": 2, "usage": 5}\n')
    result = sotto(home, "trace", str(path))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "degrade_actions=5" in result.stdout


# ---------------------------------------------------------------- storage faults


def _damage_last_page(db: Path) -> None:
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    data[-page:] = bytes((i * 37 + 11) % 256 for i in range(page))
    db.write_bytes(bytes(data))


def test_a_damaged_database_is_a_clear_error_that_says_what_to_do(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "sotto.db")
    for i in range(40):
        store.ensure_session(f"s{i}")
        store.append_trace(f"s{i}", {"type": "note", "text": "x" * 3000})
    store.close()
    with sqlite3.connect(home / "sotto.db") as db:  # everything in the main file, nothing in the WAL
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _damage_last_page(home / "sotto.db")
    for command in (["state"], ["state", "s1"], ["forget", "s1"], ["profile"], ["stats"], ["forget", "--expired"]):
        result = sotto(home, *command)
        refused(result, "error[store_damaged]", str(home / "sotto.db"), "mv ", "backup")


def test_a_zero_length_database_is_refused_unless_new(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    empty = home / "sotto.db"
    empty.write_bytes(b"")
    os.utime(empty, (1_700_000_000, 1_700_000_000))  # it has been there a while: not one being created
    result = sotto(home, "state")
    refused(result, "error[store_damaged]", "empty file", str(empty))
    assert empty.stat().st_size == 0  # left as it was
    new_home = tmp_path / "new"
    new_home.mkdir()
    fresh = sotto(new_home, "state")  # no file yet: a new store is made
    assert fresh.returncode == 0 and (new_home / "sotto.db").stat().st_size > 0, fresh.stderr


def test_opening_the_store_deletes_nothing(tmp_path: Path) -> None:
    """Retention runs from the commands (their first step), not from opening a store."""
    path = tmp_path / "old.db"
    store = Store(path)
    store.ensure_session("ancient")
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET updated_at=0")
    os.environ["SOTTO_RETENTION_DAYS"] = "1"
    try:
        store = Store(path)
        assert store.latest("ancient") is not None
        store.close()
    finally:
        del os.environ["SOTTO_RETENTION_DAYS"]
