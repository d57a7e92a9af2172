"""The OpenAI-compatible remote LLM engine: against a small fake HTTP server (protocol,
failures) and against llama-cpp-python's own server on loopback (slow)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

from remote_servers import free_port, start_llama_server, stop
from sotto.engines.base import ChatMessage
from sotto.engines.remote_llm import RemoteLanguageModel, parse_endpoint, wait_until_ready
from sotto.errors import ConfigError, RemoteEngineUnavailable

MESSAGES = [ChatMessage("system", "Be brief."), ChatMessage("user", "Say hello.")]


class FakeOpenAIServer:
    """A fake OpenAI-compatible server: records requests, streams `pieces` as SSE."""

    def __init__(self, pieces: list[str], *, stall_s: float = 0.0) -> None:
        self.pieces = pieces
        self.stall_s = stall_s
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "fake"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, **body})
                if self.path == "/extras/tokenize":
                    self._json(200, {"tokens": list(range(len(body["input"].split())))})
                    return
                if outer.stall_s:
                    time.sleep(outer.stall_s)
                if not body.get("stream"):
                    text = "".join(outer.pieces)
                    self._json(200, {"choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for piece in outer.pieces:
                        chunk = {"choices": [{"delta": {"content": piece}, "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(0.01)
                    self.wfile.write(b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    outer.disconnects += 1

            def _json(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeOpenAIServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def test_endpoint_parsing() -> None:
    assert parse_endpoint("http://127.0.0.1:8080").base_path == "/v1"
    assert parse_endpoint("http://127.0.0.1:8080/v1/").base_path == "/v1"
    with pytest.raises(ConfigError):
        parse_endpoint("ftp://x")
    with pytest.raises(ConfigError):
        parse_endpoint("127.0.0.1:8080")


def test_stream_complete_grammar_and_tokenize_against_a_fake_server() -> None:
    with FakeOpenAIServer(["Hel", "lo ", "there."]) as fake:
        model = RemoteLanguageModel(fake.url)
        assert "".join(model.stream(MESSAGES, max_tokens=20, stop=("\n\n",))) == "Hello there."
        completion = model.complete(MESSAGES, max_tokens=20, grammar='root ::= "x"')
        assert completion.text == "Hello there." and completion.prompt_tokens == 7
        assert model.count_tokens("one two three") == 3
    chat = [r for r in fake.requests if r["path"] == "/v1/chat/completions"]
    assert chat[0]["stream"] is True and chat[0]["stop"] == ["\n\n"]
    assert chat[1]["grammar"] == 'root ::= "x"' and chat[1]["messages"][1]["content"] == "Say hello."


def test_closing_the_stream_closes_the_connection() -> None:
    with FakeOpenAIServer([f"w{i} " for i in range(200)]) as fake:
        model = RemoteLanguageModel(fake.url)
        stream: Iterator[str] = model.stream(MESSAGES, max_tokens=500)
        assert next(stream)
        stream.close()  # type: ignore[attr-defined]
        deadline = time.monotonic() + 5
        while fake.disconnects == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.disconnects == 1  # the server saw the client go: generation stops


def test_server_down_raises_remote_engine_unavailable_and_count_tokens_estimates() -> None:
    model = RemoteLanguageModel(f"http://127.0.0.1:{free_port()}", connect_timeout_s=0.5)
    with pytest.raises(RemoteEngineUnavailable):
        model.complete(MESSAGES, max_tokens=5)
    with pytest.raises(RemoteEngineUnavailable):
        list(model.stream(MESSAGES, max_tokens=5))
    assert model.count_tokens("a fairly short sentence") > 0  # never raises
    assert not model.ping(timeout_s=0.5)
    assert model.failures >= 2 and model.last_error


def test_stalled_server_times_out() -> None:
    with FakeOpenAIServer(["late"], stall_s=3.0) as fake:
        model = RemoteLanguageModel(fake.url, read_timeout_s=0.5)
        with pytest.raises(RemoteEngineUnavailable):
            model.complete(MESSAGES, max_tokens=5)


@pytest.mark.slow
def test_llama_cpp_server_turns_degrade_when_it_stops_and_recover_when_it_returns(tmp_path: Path) -> None:
    """Real llama-cpp-python server on loopback behind `sotto serve`: a normal turn; the
    server stopped -> the next turn degrades (reply from memory, error recorded); the server
    back -> the following turn is normal again."""
    from websockets.asyncio.client import connect

    from fakes_serve import FakeSynthesizer
    from sotto.agent import Agent
    from sotto.memory.patch import ModelPatch
    from sotto.memory.store import Store
    from sotto.server.app import ServeOptions, SottoServer
    from sotto.server.turns import TurnService
    from sotto.voice.turn_runner import TurnRunner

    port = free_port()
    proc = start_llama_server(port)
    try:
        model = RemoteLanguageModel(f"http://127.0.0.1:{port}", read_timeout_s=20)
        assert wait_until_ready(model, 30)
        # grammar-constrained completion through the server: valid JSON of the patch schema
        patch = model.complete(MESSAGES, max_tokens=60, grammar=ModelPatch.grammar())
        assert patch.text.startswith('{ "last_topic": "')  # the grammar's shape, not free text
        assert model.count_tokens("hello world") == 2  # the server's tokenizer

        async def turn(ws: Any, text: str) -> dict[str, Any]:
            await ws.send(json.dumps({"type": "text", "text": text, "state": True}))
            for _ in range(5):
                message = json.loads(await asyncio.wait_for(ws.recv(), 60))
                if message["type"] in ("reply", "error"):
                    return message
            raise AssertionError("no reply")

        async def main() -> list[dict[str, Any]]:
            nonlocal proc
            service = TurnService(TurnRunner(Agent(model, Store(tmp_path / "r.db")), FakeSynthesizer()))
            server = SottoServer(service, None, ServeOptions(port=0))
            await server.start()
            try:
                async with connect(f"{server.url}/ws/remote") as ws:
                    normal = await turn(ws, "My name is Quentin.")
                    stop(proc)
                    # An open question goes to the model (statements are composed and never call it).
                    down = await turn(ws, "Remind me to call the bank. How do I bake bread?")
                    proc = await asyncio.to_thread(start_llama_server, port)
                    assert await asyncio.to_thread(wait_until_ready, model, 30)
                    back = await turn(ws, "What is my name?")
                return [normal, down, back]
            finally:
                await server.close()

        normal, down, back = asyncio.run(main())
    finally:
        stop(proc)
    assert normal["type"] == "reply" and not normal.get("errors")
    assert down["type"] == "reply" and down["reply"]  # never silent
    assert down["reply_source"] == "composed" and "fallback_reply" in down["degrade_actions"]
    assert any(e.startswith("model failed") and "127.0.0.1" in e for e in down["errors"]), down["errors"]
    assert "call the bank" in json.dumps(down["state"])  # the turn still updated the memory
    assert back["type"] == "reply" and not back.get("errors")
    assert "Quentin" in json.dumps(back["state"])
