"""Session ids from outside: one rule at every entry, and no file outside the data folder.

Issue 15, item 2: `sotto forget ../../victim` and `sotto forget /some/path` deleted
`victim.jsonl` wherever it was. Item 7: ids the server accepted but the session refused
(`a:b`, `..`): a binary board got WELCOME, then silence. Here every surface (command line,
server path, store, trace files) must accept the same ids and refuse the same ids.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from fakes_llm import FakeLanguageModel
from fakes_serve import FakeSynthesizer
from sotto import paths
from sotto.agent import Agent
from sotto.cli import main
from sotto.memory.store import Store
from sotto.server.app import ServeOptions, SottoServer
from sotto.server.turns import TurnService
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.trace import TraceLog

REFUSED = ["kiosk:1", "a:b", "..", ".", ".hidden", "-x", "a/b", "a\\b", "²", "kiosk\x00", "x" * 65, "", "a b", "ä"]
ACCEPTED = ["kiosk-1", "kiosk_1.b", "a..b", "x" * 64, "demo-20261130-101500-ab12", "7"]


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "sotto-home"
    monkeypatch.setenv("SOTTO_HOME", str(folder))
    monkeypatch.delenv("SOTTO_RETENTION_DAYS", raising=False)
    return folder


def test_forget_refuses_a_path_and_deletes_nothing_outside_the_data_folder(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "victims"
    outside.mkdir()
    victim = outside / "victim.jsonl"
    victim.write_text("precious\n")
    relative = os.path.relpath(outside / "victim", paths.traces_dir())  # ../../victims/victim
    for given in (relative, str(outside / "victim"), "../victims/victim"):
        status = main(["forget", given])
        assert status != 0, given
        assert victim.read_text() == "precious\n", f"forget {given!r} deleted a file outside the data folder"
        assert "invalid session id" in capsys.readouterr().err


@pytest.mark.parametrize("command", [
    ["forget", "{id}"], ["state", "{id}"], ["trace", "{id}"], ["stats", "--session", "{id}"],
    ["chat", "--session", "{id}", "--model", "/nonexistent.gguf"],
    ["run", "--port", "/nonexistent-port", "--session", "{id}"],
])
def test_every_command_refuses_the_same_ids_with_the_same_error(
        home: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("kiosk:1", "..", "a:b"):
        status = main([part.replace("{id}", bad) for part in command])
        err = capsys.readouterr().err
        assert status == 2 and "error[session_id_invalid]" in err, (command, bad, status, err)
        assert "Traceback" not in err


def test_the_id_rule_is_one_and_the_same_for_store_traces_and_the_type(home: Path) -> None:
    from sotto.errors import InvalidSessionId
    from sotto.ids import SessionId

    store = Store()
    try:
        for bad in REFUSED:
            for surface in (SessionId, store.ensure_session, TraceLog):
                with pytest.raises(InvalidSessionId):
                    surface(bad)
        for good in ACCEPTED:
            assert SessionId(good) == good
            store.ensure_session(good)
            log = TraceLog(good)
            log.close()
            assert log.path is not None and log.path.parent == paths.traces_dir()
    finally:
        store.close()


def test_a_board_name_becomes_a_valid_id() -> None:
    from sotto.ids import SessionId

    assert SessionId.derive("../../etc/passwd-20261130") == "etc_passwd-20261130"
    assert SessionId.derive("kiosk:1 ²") == "kiosk_1"
    assert SessionId.derive("::..::") == "session"
    assert len(SessionId.derive("b" * 300)) == 64


def _server(tmp_path: Path) -> SottoServer:
    agent = Agent(FakeLanguageModel(replies=("Sure.",)), Store(tmp_path / "ids.db"))
    return SottoServer(TurnService(TurnRunner(agent, FakeSynthesizer())), None, ServeOptions(port=0))


def test_the_server_refuses_the_ids_the_session_would_refuse(home: Path, tmp_path: Path) -> None:
    async def body() -> dict[str, Any]:
        server = _server(tmp_path)
        await server.start()
        try:
            statuses: dict[str, Any] = {}
            for bad in ("a:b", "kiosk:1", "..", ".hidden", "%2E%2E", "-x"):
                try:
                    async with connect(f"{server.url}/ws/{bad}"):
                        statuses[bad] = 101
                except InvalidStatus as exc:
                    statuses[bad] = (exc.response.status_code, exc.response.body.decode())
            async with connect(f"{server.url}/ws/kiosk-1.b") as ws:
                await ws.send('{"type": "ping"}')
                statuses["kiosk-1.b"] = await asyncio.wait_for(ws.recv(), 10)
            return statuses
        finally:
            await server.close()

    statuses = asyncio.run(asyncio.wait_for(body(), 60))
    for bad in ("a:b", "kiosk:1", "..", ".hidden", "%2E%2E", "-x"):
        assert statuses[bad] != 101, f"the server accepted {bad!r}"
        assert statuses[bad][0] == 400 and "invalid session id" in statuses[bad][1]
    assert '"pong"' in statuses["kiosk-1.b"]
