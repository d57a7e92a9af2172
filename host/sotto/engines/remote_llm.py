"""A language model served by an OpenAI-compatible HTTP endpoint, behind `LanguageModel`.

Tested against llama-cpp-python's own server (`python -m llama_cpp.server`), which
also accepts a GBNF `grammar` field and offers `/extras/tokenize`; llama.cpp's
`llama-server` accepts `grammar` too. Streaming uses server-sent events; closing the
`stream()` iterator closes the connection, which makes the server stop generating.

Only the standard library's `http.client` is used: no extra dependency, no proxy or
environment lookups, and a socket timeout on every call, so a server that is down or
stalls turns into `RemoteEngineUnavailable` (a `ModelError`) within the timeout. The
agent already treats a `ModelError` as "the model failed": the turn falls back to the
reply composed from the working memory and the failure is recorded.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence
from urllib.parse import urlsplit

from sotto.engines.base import ChatMessage, Completion, LanguageModel
from sotto.errors import ConfigError, ContextOverflow, RemoteEngineUnavailable

DEFAULT_N_CTX = 2048
MAX_RESPONSE_BYTES = 1 << 20  # a reply of more than 1 MiB is not a reply
MAX_SSE_LINE = 64 * 1024


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    base_path: str  # e.g. "/v1" or ""

    @property
    def label(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.base_path}"


def parse_endpoint(url: str) -> Endpoint:
    """`http://127.0.0.1:8080` or `http://host:port/v1` (the `/v1` is added when missing)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"LLM URL {url!r} is not an http(s) URL", hint="e.g. --llm-url http://127.0.0.1:8080/v1")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ConfigError(f"LLM URL {url!r} has a bad port: {exc}") from exc
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path = path + "/v1"
    return Endpoint(parts.scheme, parts.hostname, port, path)


class RemoteLanguageModel:
    """`LanguageModel` over an OpenAI-compatible chat-completions endpoint. Thread-safe
    (one HTTP connection per call); the server decides how it serialises requests."""

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        connect_timeout_s: float = 2.0,
        read_timeout_s: float = 20.0,
        api_key: str | None = None,
    ) -> None:
        self.endpoint = parse_endpoint(url)
        self.model = model
        self.n_ctx = n_ctx
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self._api_key = api_key
        self.name = f"remote:{model or self.endpoint.label}"
        self._tokenize_supported: bool | None = None  # learnt on first use
        self._grammar_supported: bool | None = None
        self._lock = threading.Lock()
        self.calls = 0
        self.failures = 0
        self.last_error: str | None = None

    # ------------------------------------------------------------------ LanguageModel

    def count_tokens(self, text: str) -> int:
        """The server's tokenizer when it offers one (llama-cpp-python's /extras/tokenize),
        else a conservative estimate. Never raises: a down server is reported by the call
        that needs the answer, not by prompt fitting."""
        if self._tokenize_supported is not False:
            try:
                status, body = self._request("POST", "/extras/tokenize", {"input": text}, root=True, timeout_s=2.0)
            except RemoteEngineUnavailable:
                return _estimate_tokens(text)
            if status == 200 and isinstance(body, dict) and isinstance(body.get("tokens"), list):
                self._tokenize_supported = True
                return len(body["tokens"])
            self._tokenize_supported = False
        return _estimate_tokens(text)

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Completion:
        payload = self._payload(messages, max_tokens=max_tokens, temperature=temperature, stop=stop, stream=False)
        if grammar and self._grammar_supported is not False:
            payload["grammar"] = grammar
        status, body = self._call(payload)
        if status in (400, 422) and "grammar" in payload and _mentions(body, "grammar"):
            # A server without GBNF support: ask again unconstrained; the agent validates the JSON anyway.
            self._grammar_supported = False
            del payload["grammar"]
            status, body = self._call(payload)
        self._check_status(status, body)
        try:
            choice = body["choices"][0]
            text = choice["message"].get("content") or ""
            reason = choice.get("finish_reason") or "stop"
            usage = body.get("usage") or {}
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise self._fail(f"unexpected completion shape from {self.endpoint.label}: {str(body)[:200]}") from exc
        return Completion(
            text=str(text),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=str(reason),
        )

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        payload = self._payload(messages, max_tokens=max_tokens, temperature=temperature, stop=stop, stream=True)
        conn = self._connection()
        try:
            try:
                conn.request("POST", self.endpoint.base_path + "/chat/completions", body=json.dumps(payload).encode(),
                             headers=self._headers())
                response = conn.getresponse()
            except (OSError, http.client.HTTPException) as exc:
                raise self._fail(f"{self.endpoint.label} unreachable: {exc}") from exc
            if response.status != 200:
                body = _read_json(response)
                self._check_status(response.status, body)
            yield from self._events(response)
        finally:
            conn.close()  # closing the socket is how generation is cancelled

    # ------------------------------------------------------------------ health

    def ping(self, timeout_s: float = 2.0) -> bool:
        """True when the server answers `GET /v1/models`."""
        try:
            status, _ = self._request("GET", "/models", None, timeout_s=timeout_s)
        except RemoteEngineUnavailable:
            return False
        return status == 200

    # ------------------------------------------------------------------ internals

    def _payload(
        self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float, stop: Sequence[str], stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": int(max_tokens),
            "temperature": float(temperature),
            "stream": stream,
        }
        if self.model:
            payload["model"] = self.model
        if stop:
            payload["stop"] = list(stop)[:4]  # the OpenAI API takes at most four
        return payload

    def _events(self, response: http.client.HTTPResponse) -> Iterator[str]:
        started = time.perf_counter()
        while True:
            try:
                line = response.readline(MAX_SSE_LINE + 1)
            except (OSError, http.client.HTTPException) as exc:
                raise self._fail(f"{self.endpoint.label} stream broke after {time.perf_counter() - started:.1f} s: {exc}") from exc
            if not line:
                return  # server closed the stream
            if len(line) > MAX_SSE_LINE:
                raise self._fail(f"{self.endpoint.label} sent an event line over {MAX_SSE_LINE} bytes")
            text = line.decode("utf-8", errors="replace").strip()
            if not text.startswith("data:"):
                continue  # blank separators, comments (": ping"), event names
            data = text[5:].strip()
            if data == "[DONE]":
                return
            try:
                chunk = json.loads(data)
            except ValueError:
                continue  # a torn or foreign line: skip it, the next one may be fine
            if isinstance(chunk, dict) and "error" in chunk:
                raise self._fail(f"{self.endpoint.label} error mid-stream: {str(chunk['error'])[:200]}")
            try:
                choice = chunk["choices"][0]
            except (KeyError, IndexError, TypeError):
                continue
            piece = (choice.get("delta") or {}).get("content") or ""
            if piece:
                yield str(piece)
            if choice.get("finish_reason"):
                return

    def _call(self, payload: dict[str, Any]) -> tuple[int, Any]:
        return self._request("POST", "/chat/completions", payload)

    def _request(
        self, method: str, path: str, payload: dict[str, Any] | None, *, root: bool = False, timeout_s: float | None = None
    ) -> tuple[int, Any]:
        conn = self._connection(timeout_s)
        full = path if root else self.endpoint.base_path + path
        with self._lock:
            self.calls += 1
        try:
            body = None if payload is None else json.dumps(payload).encode()
            conn.request(method, full, body=body, headers=self._headers())
            response = conn.getresponse()
            return response.status, _read_json(response)
        except (OSError, http.client.HTTPException) as exc:
            raise self._fail(f"{self.endpoint.label} unreachable: {exc}") from exc
        finally:
            conn.close()

    def _connection(self, timeout_s: float | None = None) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self.endpoint.scheme == "https" else http.client.HTTPConnection
        conn = cls(self.endpoint.host, self.endpoint.port, timeout=self.connect_timeout_s)
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._fail(f"cannot connect to {self.endpoint.label}: {exc}") from exc
        if conn.sock is not None:
            conn.sock.settimeout(timeout_s or self.read_timeout_s)  # a stalled server fails the call
        return conn

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _check_status(self, status: int, body: Any) -> None:
        if status == 200:
            return
        detail = str(body)[:200]
        if status in (400, 413) and ("context" in detail.lower() or "too long" in detail.lower() or "exceed" in detail.lower()):
            raise ContextOverflow(f"{self.name}: {detail}", hint=f"n_ctx={self.n_ctx}")
        raise self._fail(f"{self.endpoint.label} answered HTTP {status}: {detail}")

    def _fail(self, message: str) -> RemoteEngineUnavailable:
        with self._lock:
            self.failures += 1
            self.last_error = message
        return RemoteEngineUnavailable(message, hint="is the LLM server running? sotto degrades the turn meanwhile")


def _estimate_tokens(text: str) -> int:
    # ~3 characters per token for English BPE; rounding up keeps prompt fitting on the safe side.
    return len(text.encode("utf-8")) // 3 + 1


def _read_json(response: http.client.HTTPResponse) -> Any:
    raw = response.read(MAX_RESPONSE_BYTES + 1)
    if len(raw) > MAX_RESPONSE_BYTES:
        return {"error": "response too large"}
    try:
        return json.loads(raw.decode("utf-8", errors="replace")) if raw else None
    except ValueError:
        return {"error": raw[:200].decode("utf-8", errors="replace")}


def _mentions(body: Any, word: str) -> bool:
    return word in json.dumps(body).lower() if body is not None else False


def wait_until_ready(model: RemoteLanguageModel, timeout_s: float) -> bool:
    """Poll the server until it answers (a freshly started server loads its model first)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if model.ping(timeout_s=1.0):
            return True
        time.sleep(0.2)
    return False


def _check_protocol(engine: RemoteLanguageModel) -> LanguageModel:
    return engine


