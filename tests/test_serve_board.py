"""A Wi-Fi board over `sotto serve`: binary WebSocket messages carry the serial wire
protocol; the host runs BoardLink + the voice harness over it, as for a serial board."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from fakes_llm import FakeLanguageModel
from fakes_serve import FakeSynthesizer
from sotto.agent import AgentConfig
from sotto.engines.base import AudioChunk, Transcript
from sotto.knowledge import example_path, load_knowledge
from sotto.link import messages as m
from sotto.memory.store import Store
from sotto.runtime import LoadedEngines, Runtime, RuntimeOptions
from sotto.server.app import ServeOptions, SottoServer
from sotto_fw import wire

RATE = 16000


class EndpointingFakeRecognizer:
    """A final ("My name is Wanda.") once it has heard `need_bytes` of audio in a turn."""

    def __init__(self, need_bytes: int) -> None:
        self.name = "fake-endpointing-asr"
        self.sample_rate = RATE
        self.need_bytes = need_bytes
        self.heard: dict[int, int] = {}
        self.done: set[int] = set()

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        if chunk.turn_id in self.done:
            return []
        self.heard[chunk.turn_id] = self.heard.get(chunk.turn_id, 0) + len(chunk.pcm)
        if self.heard[chunk.turn_id] >= self.need_bytes:
            self.done.add(chunk.turn_id)
            return [Transcript(chunk.turn_id, "My name is Wanda.", final=True)]
        return [Transcript(chunk.turn_id, "my name", final=False)]

    def flush(self, turn_id: int) -> list[Transcript]:
        return []


class Recognizers:
    def __init__(self) -> None:
        self.made: list[EndpointingFakeRecognizer] = []

    def available(self, lang: str) -> bool:
        return lang == "en"

    def languages(self) -> list[str]:
        return ["en"]

    def make(self, lang: str, *, sample_rate: int = 16000) -> EndpointingFakeRecognizer:
        recognizer = EndpointingFakeRecognizer(need_bytes=RATE * 2 // 2)  # half a second
        self.made.append(recognizer)
        return recognizer


def make_server(tmp_path: Path, recognizers: Any, *, reply: str = "Hello Wanda.",
                options: RuntimeOptions | None = None) -> tuple[SottoServer, Runtime, Store]:
    """`sotto serve`'s assembly: the composition root's runtime behind the server."""
    store = Store(tmp_path / "b.db")
    engines = LoadedEngines(FakeLanguageModel(replies=(reply,)), FakeSynthesizer(), "fake-llm.gguf", "fake-tts")
    runtime = Runtime(engines, store, options or RuntimeOptions(answer_from_memory=True))
    return SottoServer.from_runtime(runtime, ServeOptions(port=0), recognizers=recognizers), runtime, store


def hello() -> m.Hello:
    return m.Hello("test-1.0", "wifi-test", "board-42", 7, wire.FMT_PCM16, wire.FMT_PCM16, (RATE,), (RATE,), 32768)


def test_wifi_board_gets_welcome_and_a_spoken_reply_over_websocket(tmp_path: Path) -> None:
    async def main() -> tuple[list[Any], dict[str, Any]]:
        server, runtime, store = make_server(tmp_path, Recognizers())
        await server.start()
        received: list[Any] = []
        decoder = wire.FrameDecoder(lambda mtype, seq, payload: received.append(m.decode_message(mtype, bytes(payload))))
        encoder = wire.FrameEncoder()
        try:
            async with connect(f"{server.url}/ws/wifi-board") as ws:
                async def pump(until: type, timeout_s: float) -> Any:
                    deadline = asyncio.get_running_loop().time() + timeout_s
                    while asyncio.get_running_loop().time() < deadline:  # bounded
                        for message in received:
                            if isinstance(message, until):
                                return message
                        try:
                            data = await asyncio.wait_for(ws.recv(), 0.5)
                        except asyncio.TimeoutError:
                            continue
                        assert isinstance(data, bytes), data
                        decoder.feed(bytearray(data))
                    raise AssertionError(f"no {until.__name__}; got {[type(x).__name__ for x in received]}")

                await ws.send(m.encode_message(encoder, hello()))
                welcome = await pump(m.Welcome, 10)
                await ws.send(m.encode_message(encoder, m.Credit(0, 0, 32768)))
                tone = (b"\x00\x20\x00\xe0" * (RATE // 100 // 2))  # 10 ms frames, loud
                for i in range(80):  # 0.8 s of "speech"
                    await ws.send(m.encode_message(encoder, m.AudioUp(i * 10, tone)))
                    await asyncio.sleep(0.005)
                audio = await pump(m.AudioDown, 15)
            await asyncio.sleep(0.2)
            state = store.ensure_session("wifi-board").to_dict()
            return [welcome, audio], state
        finally:
            await server.close()
            runtime.close()

    (welcome, audio), state = asyncio.run(main())
    assert welcome.mic_rate == RATE and welcome.mic_format == wire.FMT_PCM16
    assert audio.audio  # the agent's reply reached the board's speaker stream
    assert "Wanda" in json.dumps(state)  # the final went through the agent's working memory


def test_binary_frames_without_an_asr_model_get_a_clear_error(tmp_path: Path) -> None:
    class NoRecognizers(Recognizers):
        def available(self, lang: str) -> bool:
            return False

    async def main() -> dict[str, Any]:
        server, _runtime, _store = make_server(tmp_path, NoRecognizers())
        await server.start()
        try:
            async with connect(f"{server.url}/ws/no-asr") as ws:
                await ws.send(m.encode_message(wire.FrameEncoder(), hello()))
                return dict(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        finally:
            await server.close()

    error = asyncio.run(main())
    assert error["type"] == "error" and error["code"] == "no_asr_model" and "'en'" in error["message"]


def test_serve_sessions_get_the_knowledge_file_and_the_profile(tmp_path: Path) -> None:
    """A Wi-Fi board's session is opened on its board profile, and every serve session (board or
    text) answers from the same system knowledge, as `sotto run` and the demo do."""
    options = RuntimeOptions(knowledge=load_knowledge(example_path()), answer_from_memory=True,
                             agent=AgentConfig(model_update="off", reply_mode="composed"))

    async def main() -> tuple[dict[str, Any], Store, str | None]:
        server, runtime, store = make_server(tmp_path, Recognizers(), options=options)
        await server.start()
        try:
            encoder = wire.FrameEncoder()
            async with connect(f"{server.url}/ws/kiosk-7") as board:
                await board.send(m.encode_message(encoder, hello()))
                for _ in range(40):  # until the link has attached and the session was built
                    await asyncio.sleep(0.05)
                    if store.session_profile("kiosk-7"):
                        break
            async with connect(f"{server.url}/ws/visitor") as client:
                await client.send(json.dumps({"type": "text", "text": "When do you open?"}))
                while True:
                    reply = json.loads(await asyncio.wait_for(client.recv(), 30))
                    if reply["type"] in ("reply", "error"):
                        break
            return reply, store, store.session_profile("kiosk-7")
        finally:
            await server.close()
            runtime.close()

    reply, store, board_profile = asyncio.run(main())
    assert board_profile == "board:board-42"  # the board's own profile, from its HELLO
    assert reply["type"] == "reply" and "6:00" in reply["reply"] and "23:30" in reply["reply"]
    assert store.traces("visitor", kind="agent_turn")[-1]["knowledge"] == ["Opening hours"]
