"""Wyoming TTS and ASR engines: against fake Wyoming servers built on the `wyoming`
package (protocol, failures, recovery), and TTS against real wyoming-piper (slow)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from wyoming.asr import Transcript as WyTranscript
from wyoming.audio import AudioChunk as WyChunk
from wyoming.audio import AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.server import AsyncEventHandler, AsyncTcpServer
from wyoming.tts import Synthesize

from remote_servers import free_port, start_wyoming_piper, stop
from sotto.engines.base import AudioChunk
from sotto.engines.config import EngineConfig
from sotto.engines.wyoming_asr import WyomingRecognizer
from sotto.engines.wyoming_common import parse_address
from sotto.engines.wyoming_tts import WyomingSynthesizer
from sotto.errors import ConfigError, RemoteEngineUnavailable

RATE = 16000


class FakeTtsHandler(AsyncEventHandler):
    """10 ms of audio per character, in two chunks; "fail" in the text -> a Wyoming error event."""

    async def handle_event(self, event: Event) -> bool:
        if Synthesize.is_type(event.type):
            text = Synthesize.from_event(event).text
            if "fail" in text:
                await self.write_event(Error(text="voice exploded").event())
                return False
            pcm = b"\x01\x00" * (160 * len(text))
            half = len(pcm) // 2
            await self.write_event(AudioStart(rate=RATE, width=2, channels=1).event())
            for part in (pcm[:half], pcm[half:]):
                await self.write_event(WyChunk(rate=RATE, width=2, channels=1, audio=part).event())
            await self.write_event(AudioStop().event())
            return False
        return True


class FakeAsrHandler(AsyncEventHandler):
    """Transcribes as 'heard N bytes'."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.received = 0

    async def handle_event(self, event: Event) -> bool:
        if WyChunk.is_type(event.type):
            self.received += len(WyChunk.from_event(event).audio)
        elif AudioStop.is_type(event.type):
            await self.write_event(WyTranscript(text=f"heard {self.received} bytes").event())
            return False
        return True


class FakeWyomingServer:
    """A Wyoming server on 127.0.0.1 in a thread of its own."""

    def __init__(self, handler: Callable[..., AsyncEventHandler], port: int | None = None) -> None:
        self.handler = handler
        self.port = port or free_port()
        self.loop = asyncio.new_event_loop()
        self.server = AsyncTcpServer("127.0.0.1", self.port)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> "FakeWyomingServer":
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(self.handler), self.loop).result(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def test_address_parsing() -> None:
    assert parse_address("tcp://127.0.0.1:10200").port == 10200
    assert parse_address("localhost:1").host == "localhost"
    for bad in ("127.0.0.1", "host:port", ":80", "h:70000"):
        with pytest.raises(ConfigError):
            parse_address(bad)


def test_tts_one_chunk_per_sentence() -> None:
    with FakeWyomingServer(FakeTtsHandler) as fake:
        tts = WyomingSynthesizer(fake.address)
        audio = list(tts.synthesize("Hello there. Bye now."))
    assert [a.text for a in audio] == ["Hello there.", "Bye now."]
    assert all(a.sample_rate == RATE for a in audio) and tts.sample_rate == RATE
    assert len(audio[0].pcm) == 2 * 160 * len("Hello there.")


def test_tts_error_event_and_server_down_raise_remote_engine_unavailable() -> None:
    with FakeWyomingServer(FakeTtsHandler) as fake:
        with pytest.raises(RemoteEngineUnavailable, match="voice exploded"):
            list(WyomingSynthesizer(fake.address).synthesize("Please fail."))
    with pytest.raises(RemoteEngineUnavailable, match="unreachable"):
        list(WyomingSynthesizer(f"127.0.0.1:{free_port()}", connect_timeout_s=0.5).synthesize("Hi."))


def loud(ms: int) -> bytes:
    return b"\x00\x20" * (RATE * ms // 1000)


def silent(ms: int) -> bytes:
    return b"\x00\x00" * (RATE * ms // 1000)


def test_asr_final_at_endpoint_and_at_flush() -> None:
    with FakeWyomingServer(FakeAsrHandler) as fake:
        asr = WyomingRecognizer(fake.address, endpoint_silence_ms=300)
        out = []
        for seq, pcm in enumerate([loud(200), loud(200), silent(200), silent(200)]):
            out += asr.accept(AudioChunk(1, seq, pcm, RATE))
        assert [t.text for t in out] == [f"heard {len(loud(400)) + len(silent(400))} bytes"] and out[0].final
        assert asr.accept(AudioChunk(1, 9, loud(100), RATE)) == []  # one final per turn
        asr.accept(AudioChunk(2, 0, loud(100), RATE))
        assert asr.accept(AudioChunk(2, 0, loud(100), RATE)) == []  # repeated chunk dropped
        flushed = asr.flush(2)
        assert [t.text for t in flushed] == [f"heard {len(loud(100))} bytes"]
        assert asr.flush(2) == []


def test_asr_server_down_records_the_error_and_recovers_when_it_returns() -> None:
    port = free_port()
    asr = WyomingRecognizer(f"127.0.0.1:{port}", connect_timeout_s=0.5)
    assert asr.accept(AudioChunk(1, 0, loud(100), RATE)) == []
    assert asr.flush(1) == []  # no final, no exception into the voice session
    assert asr.last_error and "unreachable" in asr.last_error
    with FakeWyomingServer(FakeAsrHandler, port=port):
        asr.accept(AudioChunk(2, 0, loud(100), RATE))
        assert [t.text for t in asr.flush(2)] == [f"heard {len(loud(100))} bytes"]


def test_engine_config_from_file_and_flags(tmp_path: Path) -> None:
    toml = tmp_path / "engines.toml"
    toml.write_text('[llm]\nurl = "http://127.0.0.1:8080/v1"\n[tts]\nwyoming = "127.0.0.1:10200"\n')
    config = EngineConfig.from_file(toml)
    assert config.llm_url == "http://127.0.0.1:8080/v1" and config.tts_wyoming == "127.0.0.1:10200"
    assert config.describe()["asr"] == "in-process vosk or pocketsphinx"
    assert config.remote_llm() is not None and config.remote_tts() is not None
    as_json = tmp_path / "engines.json"
    as_json.write_text('{"asr": {"wyoming": "127.0.0.1:10300"}}')
    import argparse

    args = argparse.Namespace(engines_config=str(as_json), llm_url=None, llm_model=None,
                              tts_wyoming="127.0.0.1:10201", asr_wyoming=None)
    merged = EngineConfig.from_args(args)
    assert merged.asr_wyoming == "127.0.0.1:10300" and merged.tts_wyoming == "127.0.0.1:10201"
    assert merged.remote_llm() is None  # in-process unless configured
    (tmp_path / "bad.toml").write_text('[llm]\nurl = "nope"\n')
    with pytest.raises(ConfigError):
        EngineConfig.from_file(tmp_path / "bad.toml")
    (tmp_path / "typo.toml").write_text('[tts]\nwyomin = "x:1"\n')
    with pytest.raises(ConfigError, match="unknown key"):
        EngineConfig.from_file(tmp_path / "typo.toml")


@pytest.mark.slow
def test_wyoming_piper_speaks_fails_when_stopped_and_recovers() -> None:
    port = free_port()
    proc = start_wyoming_piper(port)
    try:
        tts = WyomingSynthesizer(f"127.0.0.1:{port}", read_timeout_s=30)
        first = list(tts.synthesize("Hello from the joe voice."))
        assert first and first[0].sample_rate == 22050 and first[0].duration_s > 0.5
        stop(proc)
        with pytest.raises(RemoteEngineUnavailable):
            list(tts.synthesize("Is anybody there?"))
        proc = start_wyoming_piper(port)
        again = list(tts.synthesize("Back again."))
        assert again and again[0].duration_s > 0.3
    finally:
        stop(proc)
