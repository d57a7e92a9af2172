"""Hostile clients of `sotto serve`: each is refused or dropped, and another client's turns go on.

Issue 15, items 1, 4-7 as a client or a Wi-Fi board would try them: the one valid ERROR
frame over a binary session; "remind me at \\u0000 6 pm" (a NUL that then broke every
recall turn inside Piper); `[` x 1000 (RecursionError, close 1011); clients that never
read (kept for 90 s); one client holding every session slot; ids the session refuses.
The agent and store are real; LLM, TTS and ASR are fakes. The TTS fake refuses a NUL
the way Piper does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from pathlib import Path
from typing import Any, Iterator

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from fakes_llm import FakeLanguageModel
from fakes_serve import FakeRecognizerSource, FakeSynthesizer
from sotto.engines.base import SpeechAudio
from sotto.link import messages as m
from sotto.memory.store import Store
from sotto.server.app import ServeOptions, SottoServer
from sotto.server.limits import ServeLimits
from sotto.server.turns import TurnService
from sotto.runtime import LoadedEngines, Runtime
from sotto.server.wsboard import board_bridges
from sotto_fw import wire

KILLER_FRAME = bytes.fromhex("0003010c01020311616374696f6e20c2b23a2078bcf6750700")
GOOD_CLIENT_ADDRESS = "127.0.0.2"  # loopback too, but another client address than the hostile ones


class PiperLikeSynthesizer(FakeSynthesizer):
    """Refuses an embedded NUL like Piper; `ms_per_char` makes replies as large as a test needs."""

    def __init__(self, ms_per_char: int = 10) -> None:
        super().__init__()
        self.ms_per_char = ms_per_char

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        if "\x00" in text:
            raise ValueError("embedded null character")
        for audio in super().synthesize(text):
            yield SpeechAudio(audio.text, audio.pcm * (self.ms_per_char // 10), audio.sample_rate)


def make_server(tmp_path: Path, limits: ServeLimits | None = None, *, ms_per_char: int = 10,
                boards: bool = False) -> tuple[SottoServer, Store]:
    store = Store(tmp_path / "hostile.db")
    engines = LoadedEngines(FakeLanguageModel(replies=("Sure thing.",)), PiperLikeSynthesizer(ms_per_char),
                            "fake-llm.gguf", "piper-like")
    runtime = Runtime(engines, store)  # sotto serve's composition root, on fake engines
    recognizers = FakeRecognizerSource({"en": "hello"})
    bridges = board_bridges(runtime, recognizers, "en") if boards else None
    server = SottoServer(TurnService(runtime.runner), recognizers, ServeOptions(port=0, limits=limits or ServeLimits()),
                         board_bridges=bridges)
    return server, store


async def turn(ws: ClientConnection, text: str, *, want_state: bool = False) -> dict[str, Any]:
    """One text turn; the reply or error message that ends it (acknowledgements skipped)."""
    await ws.send(json.dumps({"type": "text", "text": text, "state": want_state}))
    for _ in range(20):
        message = json.loads(await asyncio.wait_for(ws.recv(), 20))
        if message["type"] in ("reply", "error"):
            return dict(message)
    raise AssertionError("no reply")


async def still_answers(ws: ClientConnection) -> bool:
    await ws.send('{"type": "ping"}')
    for _ in range(5):
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == "pong":
            return True
    return False


def good_client(server: SottoServer, session: str = "good-1") -> Any:
    return connect(f"{server.url}/ws/{session}", local_addr=(GOOD_CLIENT_ADDRESS, 0), max_size=None)


def run(coro: Any, timeout: float = 90.0) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


# ---------------------------------------------------------------- one attack at a time


def test_deeply_nested_json_gets_an_error_and_the_connection_stays(tmp_path: Path) -> None:
    async def body() -> tuple[dict[str, Any], bool]:
        server, store = make_server(tmp_path)
        await server.start()
        try:
            async with connect(f"{server.url}/ws/nest") as ws:
                await ws.send("[" * 1000)
                error = json.loads(await asyncio.wait_for(ws.recv(), 10))
                await ws.send('{"type": "text", "text": ' + "[" * 100 + "1" + "]" * 100 + "}")
                json.loads(await asyncio.wait_for(ws.recv(), 10))
                return error, await still_answers(ws)
        finally:
            await server.close()
            store.close()

    error, alive = run(body())
    assert error["type"] == "error" and error["code"] == "invalid_json" and "deeper" in error["message"]
    assert alive


def test_a_message_whose_handler_raises_is_dropped_with_an_error_and_the_connection_stays(tmp_path: Path) -> None:
    """The server's guard itself: an exception nobody expected costs that message only."""

    async def body() -> tuple[dict[str, Any], bool, int]:
        server, store = make_server(tmp_path)
        on_text = server._on_text

        async def breaks_on_boom(writer: Any, session: Any, raw: str) -> Any:
            if "boom" in raw:
                raise RecursionError("a case nobody thought of")
            return await on_text(writer, session, raw)

        server._on_text = breaks_on_boom  # type: ignore[method-assign]
        await server.start()
        try:
            async with connect(f"{server.url}/ws/guarded") as ws:
                await ws.send('{"type": "text", "text": "boom"}')
                error = json.loads(await asyncio.wait_for(ws.recv(), 10))
                return error, await still_answers(ws), server.guard.failures
        finally:
            await server.close()
            store.close()

    error, alive, failures = run(body())
    assert error["type"] == "error" and error["code"] == "internal" and alive and failures == 1


def test_a_nul_never_reaches_the_memory_or_the_voice(tmp_path: Path) -> None:
    async def body() -> tuple[dict[str, Any], dict[str, Any]]:
        server, store = make_server(tmp_path)
        await server.start()
        try:
            async with connect(f"{server.url}/ws/nul") as ws:
                first = await turn(ws, "remind me at \u0000 6 pm\u0007", want_state=True)
                recall = await turn(ws, "when is my reminder?")
                return first, recall
        finally:
            await server.close()
            store.close()

    first, recall = run(body())
    assert first["type"] == "reply" and "\x00" not in json.dumps(first["state"], ensure_ascii=False)
    assert "\\u0000" not in json.dumps(first["state"]) and "\\u0007" not in json.dumps(first["state"])
    assert "6 pm" in json.dumps(first["state"])
    assert recall["type"] == "reply" and recall["audio"] and not recall.get("errors"), recall


def test_a_lone_surrogate_is_refused_with_an_error(tmp_path: Path) -> None:
    async def body() -> tuple[dict[str, Any], bool]:
        server, store = make_server(tmp_path)
        await server.start()
        try:
            async with connect(f"{server.url}/ws/surrogate") as ws:
                await ws.send('{"type": "text", "text": "my name is \\ud800 Bob"}')
                error = json.loads(await asyncio.wait_for(ws.recv(), 10))
                return error, await still_answers(ws)
        finally:
            await server.close()
            store.close()

    error, alive = run(body())
    assert error["type"] == "error" and error["code"] == "invalid_json" and "surrogate" in error["message"]
    assert alive


def hello(boot_id: int = 7) -> m.Hello:
    return m.Hello("test-1.0", "wifi-test", "board-42", boot_id, wire.FMT_PCM16, wire.FMT_PCM16, (16000,), (16000,),
                   32768)


async def welcomes_after(ws: ClientConnection, decoder_messages: list[Any], decoder: wire.FrameDecoder,
                         count: int, timeout_s: float) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while loop.time() < deadline:
        if sum(isinstance(x, m.Welcome) for x in decoder_messages) >= count:
            return True
        try:
            data = await asyncio.wait_for(ws.recv(), 0.25)
        except asyncio.TimeoutError:
            continue
        if isinstance(data, bytes):
            decoder.feed(bytearray(data))
    return False


def test_a_wifi_board_link_survives_the_frame_from_the_issue(tmp_path: Path) -> None:
    async def body() -> tuple[bool, bool]:
        server, store = make_server(tmp_path, boards=True)
        await server.start()
        received: list[Any] = []
        decoder = wire.FrameDecoder(lambda t, s, p: received.append(m.decode_message(t, bytes(p))))
        encoder = wire.FrameEncoder()
        try:
            async with connect(f"{server.url}/ws/wifi-board") as ws:
                await ws.send(m.encode_message(encoder, hello()))
                first = await welcomes_after(ws, received, decoder, 1, 10)
                await ws.send(KILLER_FRAME)
                await asyncio.sleep(0.3)
                await ws.send(m.encode_message(encoder, hello()))  # the same board says HELLO again
                again = await welcomes_after(ws, received, decoder, 2, 5)
                return first, again
        finally:
            await server.close()
            store.close()

    first, again = run(body())
    assert first
    assert again, "after one valid ERROR frame the host no longer answers the board"


def test_a_client_that_does_not_read_is_closed_with_a_logged_reason(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """Default limits: closed within the write timeout (10 s), where it used to stay for good."""

    async def body() -> bool:
        server, store = make_server(tmp_path, ms_per_char=400)  # replies of ~1 MB of base64 audio
        await server.start()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        try:
            # max_queue=1: the client library stops reading the socket after one message, as a stuck client would.
            async with connect(f"{server.url}/ws/never-reads", sock=sock, max_queue=1, max_size=None) as ws:
                loop = asyncio.get_running_loop()
                deadline = loop.time() + 25
                while loop.time() < deadline:
                    try:
                        await ws.send(json.dumps({"type": "text", "text": "My name is Zed and I need a taxi."}))
                    except ConnectionClosed:
                        return True
                    await asyncio.sleep(0.3)
                return False
        finally:
            await server.close()
            store.close()

    with caplog.at_level(logging.WARNING, logger="sotto.server.app"):
        closed = run(body())
    assert closed, "a client that never reads stayed connected"
    assert any("did not read" in r.getMessage() for r in caplog.records)


def test_one_client_cannot_hold_every_session(tmp_path: Path) -> None:
    """Default limits: one client address gets some sessions, never all of them."""

    async def body() -> tuple[int, str]:
        server, store = make_server(tmp_path)
        await server.start()
        held: list[ClientConnection] = []
        try:
            refused_after = -1
            for i in range(64):
                try:
                    held.append(await connect(f"{server.url}/ws/hog-{i}"))
                except InvalidStatus:
                    refused_after = i
                    break
            async with good_client(server) as ws:
                reply = await turn(ws, "My name is Alice.")
            return refused_after, reply["type"]
        finally:
            for ws in held:
                await ws.close()
            await server.close()
            store.close()

    refused_after, reply = run(body())
    assert 0 < refused_after < ServeOptions().limits.max_sessions, "one client took every session slot"
    assert reply == "reply"


# ---------------------------------------------------------------- all of them, with a client being served


def test_serve_survives_each_hostile_client_while_another_client_is_answered(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    limits = ServeLimits(write_timeout_s=1.0, max_sessions=12, max_sessions_per_client=4)

    async def body() -> dict[str, Any]:
        server, store = make_server(tmp_path, limits, ms_per_char=400, boards=True)
        await server.start()
        answered: list[str] = []
        try:
            async with good_client(server) as good:

                async def good_turn(label: str) -> None:
                    reply = await turn(good, f"My name is Alice and my code is {len(answered) + 1}.")
                    assert reply["type"] == "reply" and reply["audio"], (label, reply)
                    answered.append(label)

                await good_turn("before")
                # 1. the ERROR frame over a Wi-Fi board session
                received: list[Any] = []
                decoder = wire.FrameDecoder(lambda t, s, p: received.append(m.decode_message(t, bytes(p))))
                encoder = wire.FrameEncoder()
                async with connect(f"{server.url}/ws/board-1") as board:
                    await board.send(m.encode_message(encoder, hello()))
                    assert await welcomes_after(board, received, decoder, 1, 10)
                    await board.send(KILLER_FRAME)
                    await good_turn("error frame")
                    await board.send(m.encode_message(encoder, hello()))
                    assert await welcomes_after(board, received, decoder, 2, 5)
                # 2. nesting, 3. NUL, 4. lone surrogate
                async with connect(f"{server.url}/ws/hostile-text") as bad:
                    await bad.send("[" * 1000)
                    assert json.loads(await asyncio.wait_for(bad.recv(), 10))["code"] == "invalid_json"
                    await good_turn("nesting")
                    assert (await turn(bad, "remind me at \u0000 6 pm"))["type"] == "reply"
                    recall = await turn(bad, "when is my reminder?")
                    assert recall["type"] == "reply" and recall["audio"] and not recall.get("errors")
                    await good_turn("nul")
                    await bad.send('{"type": "text", "text": "\\udc80"}')
                    assert json.loads(await asyncio.wait_for(bad.recv(), 10))["code"] == "invalid_json"
                    await good_turn("surrogate")
                # 5. ids the session would refuse
                for bad_id in ("a:b", ".."):
                    with pytest.raises(InvalidStatus):
                        await connect(f"{server.url}/ws/{bad_id}")
                await good_turn("ids")
                # 6. one client taking every session slot
                hogs = []
                with pytest.raises(InvalidStatus):
                    for i in range(limits.max_sessions):
                        hogs.append(await connect(f"{server.url}/ws/hog-{i}"))
                await good_turn("session hog")
                for hog in hogs:
                    await hog.close()
                # 7. a client that never reads what it asked for
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(("127.0.0.1", server.port))
                async with connect(f"{server.url}/ws/never-reads", sock=sock, max_queue=1, max_size=None) as slow:
                    for i in range(60):
                        if server.slow_clients_closed:
                            break
                        try:
                            await slow.send(json.dumps({"type": "text", "text": f"My name is Zed, note {i}."}))
                        except ConnectionClosed:
                            break
                        if i % 4 == 0:
                            await good_turn(f"slow reader {i}")
                        await asyncio.sleep(0.2)
                await good_turn("after")
            return {"answered": answered, "slow_closed": server.slow_clients_closed, "guard": server.guard.failures}
        finally:
            await server.close()
            store.close()

    with caplog.at_level(logging.WARNING, logger="sotto.server.app"):
        figures = run(body(), timeout=120)
    assert figures["answered"][0] == "before" and figures["answered"][-1] == "after"
    assert figures["slow_closed"] == 1
    assert any("did not read" in r.getMessage() for r in caplog.records)
