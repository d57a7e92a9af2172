"""`sotto serve`: the JSON exchange over a real WebSocket on loopback, sessions, limits, auth.

The agent and the store are real; the LLM, TTS and ASR are fakes (tests/fakes_*.py).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import threading
import time
import wave
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from fakes_llm import FakeLanguageModel
from fakes_serve import FakeRecognizerSource, FakeSynthesizer
from sotto.agent import Agent, AgentConfig
from sotto.errors import ServeNeedsToken
from sotto.memory.store import Store
from sotto.server.app import ServeOptions, SottoServer
from sotto.server.auth import check_bind, is_loopback
from sotto.server.limits import ServeLimits
from sotto.voice.workers import FairWorker
from sotto.server.turns import TurnService
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.budgets import BudgetConfig, LadderConfig

TOKEN = "0123456789abcdef-test-token"


def wav_b64(pcm: bytes, rate: int = 16000, channels: int = 1) -> str:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm)
    return base64.b64encode(buf.getvalue()).decode()


def wav_seconds(b64: str) -> float:
    with wave.open(io.BytesIO(base64.b64decode(b64)), "rb") as wav:
        return wav.getnframes() / wav.getframerate()


def make_server(tmp_path: Path, *, llm: Any = None, tts: FakeSynthesizer | None = None, options: ServeOptions | None = None,
                recognizers: Any = None, budgets: BudgetConfig | None = None) -> tuple[SottoServer, FakeSynthesizer]:
    model = llm if llm is not None else FakeLanguageModel(replies=("Sure thing.",))
    store = Store(tmp_path / "serve.db")
    agent = Agent(model, store)
    speaker = tts or FakeSynthesizer()
    service = TurnService(TurnRunner(agent, speaker), budgets=budgets)
    server = SottoServer(service, recognizers, options or ServeOptions(port=0))
    return server, speaker


def run(tmp_path: Path, body: Callable[[SottoServer], Awaitable[Any]], **kwargs: Any) -> Any:
    async def main() -> Any:
        server, _ = make_server(tmp_path, **kwargs)
        await server.start()
        try:
            return await asyncio.wait_for(body(server), 60)
        finally:
            await server.close()

    return asyncio.run(main())


async def exchange(ws: Any, message: dict[str, Any], *, until: str = "reply") -> list[dict[str, Any]]:
    """Send one message; collect what comes back up to the first `until` or error message."""
    await ws.send(json.dumps(message))
    got: list[dict[str, Any]] = []
    for _ in range(20):  # bounded
        reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
        got.append(reply)
        if reply["type"] in (until, "error"):
            return got
    raise AssertionError(f"no {until} among {got}")


def test_text_exchange_returns_reply_and_audio(tmp_path: Path) -> None:
    async def body(server: SottoServer) -> list[dict[str, Any]]:
        async with connect(f"{server.url}/ws/kiosk-1") as ws:
            return await exchange(ws, {"type": "text", "text": "My name is Alice."})

    messages = run(tmp_path, body)
    reply = messages[-1]
    assert reply["type"] == "reply"
    assert reply["reply"]
    assert wav_seconds(reply["audio"]) > 0.1
    assert "state" not in reply  # only when asked
    assert reply["first_answer_ms"] is not None


def test_state_only_when_asked(tmp_path: Path) -> None:
    async def body(server: SottoServer) -> dict[str, Any]:
        async with connect(f"{server.url}/ws/kiosk-2") as ws:
            return (await exchange(ws, {"type": "text", "text": "My name is Bob.", "state": True}))[-1]

    reply = run(tmp_path, body)
    assert "Bob" in json.dumps(reply["state"])


def test_audio_exchange_with_a_fake_recognizer(tmp_path: Path) -> None:
    source = FakeRecognizerSource({"en": "My name is Carol."})

    async def body(server: SottoServer) -> dict[str, Any]:
        async with connect(f"{server.url}/ws/kiosk-3") as ws:
            tone = b"\x00\x10" * 16000
            return (await exchange(ws, {"type": "audio", "audio": wav_b64(tone), "state": True}))[-1]

    reply = run(tmp_path, body, recognizers=source)
    assert reply["type"] == "reply", reply
    assert reply["transcript"] == "My name is Carol."
    assert "Carol" in json.dumps(reply["state"])
    assert wav_seconds(reply["audio"]) > 0.1
    assert source.made[0].bytes_heard == 32000


def test_audio_without_a_model_for_the_language_says_so(tmp_path: Path) -> None:
    source = FakeRecognizerSource({"ko": "안녕하세요"})

    async def body(server: SottoServer) -> list[dict[str, Any]]:
        async with connect(f"{server.url}/ws/kiosk-4") as ws:
            first = await exchange(ws, {"type": "audio", "audio": wav_b64(b"\x00\x10" * 800), "lang": "en"})
            second = await exchange(ws, {"type": "text", "text": "Still there?"})  # connection still usable
            return first + second

    messages = run(tmp_path, body, recognizers=source)
    assert messages[0]["type"] == "error" and messages[0]["code"] == "no_asr_model"
    assert "'en'" in messages[0]["message"] and "ko" in messages[0]["message"]
    assert messages[-1]["type"] == "reply"


def test_session_resumed_after_reconnect_remembers(tmp_path: Path) -> None:
    async def body(server: SottoServer) -> dict[str, Any]:
        async with connect(f"{server.url}/ws/resume-me") as ws:
            await exchange(ws, {"type": "text", "text": "My name is Dolores."})
        # connection closed; a new one with the same session id
        async with connect(f"{server.url}/ws/resume-me") as ws:
            return (await exchange(ws, {"type": "text", "text": "What is my name?", "state": True}))[-1]

    reply = run(tmp_path, body)
    assert "Dolores" in json.dumps(reply["state"])


def test_no_state_crosses_sessions(tmp_path: Path) -> None:
    names = ["Ada", "Grace", "Linus", "Barbara"]

    async def client(server: SottoServer, name: str) -> dict[str, Any]:
        async with connect(f"{server.url}/ws/iso-{name}") as ws:
            await exchange(ws, {"type": "text", "text": f"My name is {name}."})
            return (await exchange(ws, {"type": "text", "text": "What is my name?", "state": True}))[-1]

    async def body(server: SottoServer) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(client(server, n) for n in names)))

    replies = run(tmp_path, body)
    for name, reply in zip(names, replies):
        state = json.dumps(reply["state"])
        assert name in state
        assert not [other for other in names if other != name and other in state], state


def test_bad_messages_get_errors_and_the_connection_stays_usable(tmp_path: Path) -> None:
    bad = [
        "not json {",
        json.dumps([1, 2]),
        json.dumps({"type": "dance"}),
        json.dumps({"type": "text", "text": ""}),
        json.dumps({"type": "text", "text": "x" * 5000}),
        json.dumps({"type": "audio", "audio": "%%% not base64 %%%"}),
        json.dumps({"type": "audio", "audio": base64.b64encode(b"RIFF....WAVEjunk").decode()}),
    ]

    async def body(server: SottoServer) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        errors = []
        async with connect(f"{server.url}/ws/robust") as ws:
            for raw in bad:
                await ws.send(raw)
                errors.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
            last = (await exchange(ws, {"type": "text", "text": "Hello there."}))[-1]
        return errors, last

    errors, last = run(tmp_path, body, recognizers=FakeRecognizerSource({"en": "hi"}))
    codes = [e["code"] for e in errors]
    assert all(e["type"] == "error" and e["message"] for e in errors)
    assert codes == ["invalid_json", "invalid_message", "unknown_type", "invalid_message", "text_too_long",
                     "invalid_base64", "invalid_wav"]
    assert last["type"] == "reply"


def test_oversized_message_is_refused_with_an_error(tmp_path: Path) -> None:
    limits = ServeLimits(max_message_bytes=10_000, hard_frame_bytes=100_000)

    async def body(server: SottoServer) -> list[dict[str, Any]]:
        async with connect(f"{server.url}/ws/big") as ws:
            await ws.send(json.dumps({"type": "audio", "audio": "A" * 20_000}))
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
            return [first] + await exchange(ws, {"type": "text", "text": "Hi."})

    messages = run(tmp_path, body, options=ServeOptions(port=0, limits=limits))
    assert messages[0]["code"] == "message_too_large"
    assert messages[-1]["type"] == "reply"


def test_rate_limit_answers_with_errors_not_a_closed_connection(tmp_path: Path) -> None:
    limits = ServeLimits(messages_per_s=1.0, burst=3)

    async def body(server: SottoServer) -> list[str]:
        async with connect(f"{server.url}/ws/chatty") as ws:
            for _ in range(6):
                await ws.send(json.dumps({"type": "ping"}))
            return [json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] for _ in range(6)]

    kinds = run(tmp_path, body, options=ServeOptions(port=0, limits=limits))
    assert kinds.count("pong") == 3 and kinds.count("error") == 3


def test_session_count_is_bounded(tmp_path: Path) -> None:
    limits = ServeLimits(max_sessions=2)

    async def body(server: SottoServer) -> dict[str, Any]:
        async with connect(f"{server.url}/ws/a"), connect(f"{server.url}/ws/b"):
            async with connect(f"{server.url}/ws/c") as third:
                return json.loads(await asyncio.wait_for(third.recv(), 10))

    refused = run(tmp_path, body, options=ServeOptions(port=0, limits=limits))
    assert refused["type"] == "error" and refused["code"] == "serve_too_many_sessions"


def test_token_required_when_set(tmp_path: Path) -> None:
    async def body(server: SottoServer) -> tuple[int, str, str]:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(f"{server.url}/ws/t1"):
                pass
        async with connect(f"{server.url}/ws/t1", additional_headers={"Authorization": f"Bearer {TOKEN}"}) as ws:
            by_header = (await exchange(ws, {"type": "ping"}, until="pong"))[-1]["type"]
        async with connect(f"{server.url}/ws/t1?token={TOKEN}") as ws:
            by_query = (await exchange(ws, {"type": "ping"}, until="pong"))[-1]["type"]
        return refused.value.response.status_code, by_header, by_query

    status, by_header, by_query = run(tmp_path, body, options=ServeOptions(port=0, token=TOKEN))
    assert status == 401
    assert by_header == by_query == "pong"


def test_wrong_path_is_refused(tmp_path: Path) -> None:
    async def body(server: SottoServer) -> int:
        with pytest.raises(InvalidStatus) as refused:
            async with connect(f"{server.url}/other"):
                pass
        return refused.value.response.status_code

    assert run(tmp_path, body) == 404


def test_non_loopback_bind_without_token_refuses_to_start(tmp_path: Path) -> None:
    server, _ = make_server(tmp_path, options=ServeOptions(host="0.0.0.0", port=0))
    with pytest.raises(ServeNeedsToken):
        asyncio.run(server.start())
    server.service.close()
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5") and not is_loopback("")
    with pytest.raises(ServeNeedsToken):
        check_bind("192.168.1.5", "short")
    check_bind("192.168.1.5", TOKEN)  # a long enough token: allowed


def test_queued_turn_acknowledges_first_and_records_degradation(tmp_path: Path) -> None:
    """A slow shared model: the second session's turn waits in the queue; it gets an ack
    message before its reply, and its reply says which degradation fired."""
    gate = threading.Event()

    class SlowModel(FakeLanguageModel):
        def stream(self, messages: Any, **kw: Any) -> Any:
            gate.wait(5)
            return super().stream(messages, **kw)

    budgets = BudgetConfig(ladder=LadderConfig(ack_after_ms=50, shorten_after_ms=100, defer_after_ms=150))

    async def body(server: SottoServer) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with connect(f"{server.url}/ws/first") as a, connect(f"{server.url}/ws/second") as b:
            first = asyncio.create_task(exchange(a, {"type": "text", "text": "What should I cook tonight?"}))
            await asyncio.sleep(0.05)
            second = asyncio.create_task(exchange(b, {"type": "text", "text": "Remind me to buy milk."}))
            await asyncio.sleep(0.4)
            gate.set()
            return await first, await second

    first, second = run(tmp_path, body, llm=SlowModel(replies=("Cook a simple pasta tonight.",)), budgets=budgets)
    for messages in (first, second):
        assert messages[0]["type"] == "ack" and messages[0]["audio"]
        reply = messages[-1]
        assert reply["type"] == "reply" and reply["degraded"]
        assert "acknowledge" in reply["degrade_actions"]
    assert second[-1]["queued_ms"] > 100  # it waited behind the first session's turn


def test_fair_worker_serves_sessions_round_robin() -> None:
    worker = FairWorker("test")
    gate = threading.Event()
    worker.submit("blocker", lambda: gate.wait(5))
    time.sleep(0.05)
    futures = [worker.submit("chatty", lambda: None) for _ in range(4)]
    futures += [worker.submit("quiet", lambda: None)]
    gate.set()
    for f in futures:
        f.result(5)
    worker.close()
    order = worker.served[1:]
    assert order.index("quiet") <= 1  # the quiet session did not wait behind all of chatty's jobs
    assert order.count("chatty") == 4


def test_tts_down_degrades_to_text_only_and_recovers(tmp_path: Path) -> None:
    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        server, tts = make_server(tmp_path)
        await server.start()
        try:
            async with connect(f"{server.url}/ws/tts-down") as ws:
                tts.down = True
                down = (await exchange(ws, {"type": "text", "text": "My name is Eve."}))[-1]
                tts.down = False
                back = (await exchange(ws, {"type": "text", "text": "What is my name?"}))[-1]
            return down, back
        finally:
            await server.close()

    down, back = asyncio.run(main())
    assert down["type"] == "reply" and down["reply"] and down["audio"] is None
    assert "text_only" in down["degrade_actions"] and down["errors"]
    assert back["audio"] and not back.get("errors")


def test_long_model_queue_answers_from_memory_and_records_defer(tmp_path: Path) -> None:
    """With the model busy for longer than the budget allows, a new turn is answered from the
    working memory (no LLM) instead of waiting: degraded as `defer`, the state still updated."""
    gate = threading.Event()

    class SlowModel(FakeLanguageModel):
        def stream(self, messages: Any, **kw: Any) -> Any:
            gate.wait(5)
            return super().stream(messages, **kw)

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        store = Store(tmp_path / "serve.db")
        agent = Agent(SlowModel(replies=("Sure thing.",)), store)
        memory_agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
        service = TurnService(TurnRunner(agent, FakeSynthesizer(), memory_agent=memory_agent))
        service.runner.model_queue.turn_ms = 800.0
        server = SottoServer(service, None, ServeOptions(port=0))
        await server.start()
        try:
            async with connect(f"{server.url}/ws/busy-1") as a, connect(f"{server.url}/ws/busy-2") as b:
                first = asyncio.create_task(exchange(a, {"type": "text", "text": "What should I cook tonight?"}))
                await asyncio.sleep(0.2)  # the model is now busy with the first turn
                second = await exchange(b, {"type": "text", "text": "My name is Zelda.", "state": True})
                gate.set()
                return await first, second
        finally:
            await server.close()

    first, second = asyncio.run(main())
    reply = second[-1]
    assert reply["type"] == "reply" and reply["reply_source"] == "composed"
    assert "defer" in reply["degrade_actions"]
    assert "Zelda" in json.dumps(reply["state"]) and "Zelda" in reply["reply"]
    assert first[-1]["type"] == "reply"


@pytest.mark.slow
def test_korean_audio_through_the_real_vosk_model(tmp_path: Path) -> None:
    """The only Vosk model installed is Korean: espeak-ng Korean speech in, a transcript
    and a reply with audio out."""
    import shutil
    import subprocess

    from sotto.engines.config import EngineConfig

    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is required (tools/setup installs it)")
    wav = tmp_path / "ko.wav"
    subprocess.run([espeak, "-v", "ko", "-w", str(wav), "안녕하세요 저는 학생입니다"], check=True, capture_output=True, timeout=30)
    audio = base64.b64encode(wav.read_bytes()).decode()

    async def body(server: SottoServer) -> list[dict[str, Any]]:
        async with connect(f"{server.url}/ws/korean") as ws:
            return await exchange(ws, {"type": "audio", "audio": audio, "lang": "ko"})

    reply = run(tmp_path, body, recognizers=EngineConfig().recognizers())[-1]
    assert reply["type"] == "reply", reply
    assert reply["transcript"] and any("\uac00" <= ch <= "\ud7a3" for ch in reply["transcript"])  # Hangul
    assert reply["asr_ms"] > 0 and wav_seconds(reply["audio"]) > 0.1
