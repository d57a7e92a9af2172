"""`sotto trace`: shows a stored session trace, as text or JSON lines; clear error when missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.cli import main
from sotto.voice import events as ev
from sotto.voice.trace import TraceLog, read_trace
from sotto.errors import StoreError


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    return tmp_path


def write_trace(session: str) -> None:
    log = TraceLog(session)
    log.emit(ev.PARTIAL_TRANSCRIPT, 1, text="hel")
    log.emit(ev.FINAL_TRANSCRIPT, 1, text="hello")
    log.emit(ev.VOICE_TIMING, 1, metric="first_byte_ms", value_ms=1300.0, target_ms=700, limit_ms=1200, over_target=True, code="voice_first_byte_ms")
    log.emit(ev.SESSION_CLOSED, None, status="completed", reason="input ended", usage={"turns": 1})
    log.close()


def test_trace_json_lines(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_trace("s1")
    assert main(["trace", "s1", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines] == [ev.PARTIAL_TRANSCRIPT, ev.FINAL_TRANSCRIPT, ev.VOICE_TIMING, ev.SESSION_CLOSED]
    assert lines[2]["code"] == "voice_first_byte_ms" and lines[1]["session"] == "s1"


def test_trace_text_and_redaction(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_trace("s2")
    assert main(["trace", "latest"]) == 0
    out = capsys.readouterr().out
    assert "'hello'" in out and "voice_first_byte_ms" in out and "summary: turns=1" in out
    assert main(["trace", "s2", "--redact", "--type", ev.FINAL_TRANSCRIPT]) == 0
    out = capsys.readouterr().out
    assert "hello" not in out and "[redacted]" in out and out.count("\n") == 1


def test_missing_trace_and_bad_ids_are_clear_errors(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "nope"]) != 0
    assert "error[session_not_found]" in capsys.readouterr().err
    assert main(["trace", "../etc/passwd"]) != 0
    assert "invalid session id" in capsys.readouterr().err


def test_unreadable_trace_line_is_a_store_error(home: Path) -> None:
    write_trace("s3")
    path = home / "traces" / "s3.jsonl"
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(StoreError, match="unreadable trace line"):
        list(read_trace("s3"))
