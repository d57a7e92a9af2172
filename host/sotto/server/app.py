"""The WebSocket server behind `sotto serve` (the `websockets` library does the framing).

    server = SottoServer(service, recognizers, ServeOptions(port=0))
    await server.start()                  # binds; server.port is the real port
    ...                                   # clients connect to ws://127.0.0.1:PORT/ws/{session_id}
    await server.close()

Sessions are keyed by the id in the path and their working memory lives in the store,
so a client that reconnects with the same id continues the same conversation. Text
messages are the seed article's JSON (sotto.server.messages); binary messages carry the
serial wire protocol's frames (sotto.server.wsboard), so a Wi-Fi board runs the same
voice session as a serial one. Every client input is bounded: message size, message
rate, queued turns per session, sessions and connections; a bad message gets an error
message and the connection stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from sotto.engines.base import Recognizer
from sotto.errors import InvalidSessionId, ModelNotFound, ServeError, SottoError
from sotto.guard import InputGuard
from sotto.ids import SessionId
from sotto.server.auth import check_bind, presented_token, token_ok
from sotto.server.limits import ServeLimits, TokenBucket
from sotto.server.messages import (
    AudioIn,
    ClientMessageError,
    PingIn,
    TextIn,
    error_message,
    parse_client_message,
)
from sotto.server.turns import TurnOutcome, TurnService
from sotto.server.wsboard import RecognizerSource, board_bridges

if TYPE_CHECKING:
    from sotto.runtime import Runtime
    from sotto.voice.budgets import BudgetConfig

log = logging.getLogger(__name__)

PATH_PREFIX = "/ws/"


class BoardBridgeFactory(Protocol):
    """Makes the binary-frame side of a session (a Wi-Fi board speaking the wire protocol)."""

    def __call__(self, session_id: SessionId, /) -> "BoardBridge": ...


class BoardBridge(Protocol):
    async def attach(self, connection: "ClientWriter") -> None: ...

    async def receive(self, data: bytes) -> None: ...

    async def detach(self) -> None: ...


@dataclass(frozen=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    token: str | None = None
    lang: str = "en"  # language of text turns and default for audio without "lang"
    limits: ServeLimits = field(default_factory=ServeLimits)


@dataclass
class ServeSession:
    session_id: SessionId
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one turn at a time per session, in order
    connections: int = 0
    queued_turns: int = 0
    last_seen: float = field(default_factory=time.monotonic)
    recognizers: dict[str, Recognizer] = field(default_factory=dict)
    asr_turns: int = 0
    turns: list[TurnOutcome] = field(default_factory=list)  # bounded: the last few, for stats
    bridge: BoardBridge | None = None


class TooManySessions(ServeError):
    code = "serve_too_many_sessions"


class ClientTooSlow(ServeError):
    """The client did not take what the server wrote within the write timeout; it was closed."""

    code = "serve_client_too_slow"


def _peer(connection: ServerConnection) -> str:
    """The client's address: the unit the per-client limits count."""
    address = connection.remote_address
    return str(address[0]) if isinstance(address, tuple) and address else "?"


class ClientWriter:
    """Everything the server writes to one connection goes through here, each write bounded
    by the write timeout: a client that stops reading is closed (with a logged reason)
    instead of holding its turn, its session slot and a growing buffer."""

    def __init__(self, connection: ServerConnection, session_id: str, timeout_s: float) -> None:
        self.connection = connection
        self.session_id = session_id
        self.timeout_s = timeout_s
        self.closed_slow = False

    async def send(self, data: str | bytes) -> None:
        if self.closed_slow:
            raise ClientTooSlow(f"session {self.session_id}: connection already closed as too slow")
        try:
            await asyncio.wait_for(self.connection.send(data), self.timeout_s)
        except asyncio.TimeoutError:
            self.closed_slow = True
            log.warning("closing client %s (session %s): it did not read what the server wrote within %.1f s",
                        _peer(self.connection), self.session_id, self.timeout_s)
            self.connection.transport.abort()
            raise ClientTooSlow(f"session {self.session_id}: the client did not read within {self.timeout_s:g} s") from None


@dataclass
class ClientUse:
    """What one client address holds now: connections, and the sessions they are on."""

    connections: int = 0
    sessions: dict[str, int] = field(default_factory=dict)  # session id -> connections from this client


class SessionRegistry:
    """Live sessions, bounded; a session with no connection is forgotten first when full
    (its working memory stays in the store, so reconnecting later still remembers)."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[str, ServeSession] = {}

    def open(self, session_id: SessionId) -> ServeSession:
        session = self.sessions.get(session_id)
        if session is None:
            if len(self.sessions) >= self.max_sessions:
                idle = [s for s in self.sessions.values() if s.connections == 0 and s.queued_turns == 0]
                if not idle:
                    raise TooManySessions(f"all {self.max_sessions} sessions are in use")
                oldest = min(idle, key=lambda s: s.last_seen)
                del self.sessions[oldest.session_id]
                closer = getattr(oldest.bridge, "close", None)
                if closer is not None:  # a Wi-Fi board gone for good: stop its link and voice session
                    asyncio.get_running_loop().create_task(closer())
            session = ServeSession(session_id)
            self.sessions[session_id] = session
        session.connections += 1
        session.last_seen = time.monotonic()
        return session

    def release(self, session: ServeSession) -> None:
        session.connections = max(0, session.connections - 1)
        session.last_seen = time.monotonic()


class SottoServer:
    @classmethod
    def from_runtime(cls, runtime: "Runtime", options: ServeOptions, *, budgets: "BudgetConfig | None" = None,
                     recognizers: RecognizerSource | None = None) -> "SottoServer":
        """Text sessions and Wi-Fi boards on the runtime's agent and turn engine (recognizers:
        the runtime's engine configuration's, unless given)."""
        recognizers = recognizers if recognizers is not None else runtime.engines.recognizers
        return cls(TurnService(runtime.runner, budgets=budgets), recognizers, options,
                   board_bridges=board_bridges(runtime, recognizers, options.lang))

    def __init__(
        self,
        service: TurnService,
        recognizers: RecognizerSource | None,
        options: ServeOptions | None = None,
        *,
        board_bridges: BoardBridgeFactory | None = None,
    ) -> None:
        self.service = service
        self.recognizers = recognizers
        self.options = options or ServeOptions()
        self.limits = self.options.limits
        self.registry = SessionRegistry(self.limits.max_sessions)
        self.board_bridges = board_bridges
        self.connections = 0
        self.errors_sent = 0
        self.slow_clients_closed = 0
        self.clients: dict[str, ClientUse] = {}
        # Every client message is handled under this guard: one that breaks its handler is
        # dropped (logged, counted, answered with an error), never the connection or the server.
        self.guard = InputGuard(log, "sotto serve")
        self._server: Server | None = None
        self.port = self.options.port

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        check_bind(self.options.host, self.options.token)
        await self.service.prepare()
        try:
            self._server = await serve(
                self._handle,
                self.options.host,
                self.options.port,
                process_request=self._process_request,
                max_size=self.limits.hard_frame_bytes,
                max_queue=8,
                compression=None,  # audio does not compress; and no decompression bombs
                ping_interval=20,
                ping_timeout=20,
            )
        except OSError as exc:
            raise ServeError(f"cannot listen on {self.options.host}:{self.options.port}: {exc.strerror or exc}") from exc
        sockets = list(self._server.sockets) if self._server is not None else []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        host = self.options.host if ":" not in self.options.host else f"[{self.options.host}]"
        return f"ws://{host}:{self.port}"

    async def serve_forever(self) -> None:
        assert self._server is not None
        await self._server.serve_forever()

    async def close(self) -> None:
        for session in list(self.registry.sessions.values()):
            closer = getattr(session.bridge, "close", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        self.service.close()

    # ------------------------------------------------------------------ handshake

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if not path.startswith(PATH_PREFIX):
            return _http_error(http.HTTPStatus.NOT_FOUND, "sessions live at /ws/{session_id}")
        try:
            session_id = SessionId(path[len(PATH_PREFIX):])
        except InvalidSessionId as exc:
            return _http_error(http.HTTPStatus.BAD_REQUEST, str(exc))
        if not token_ok(self.options.token, presented_token(request.path, request.headers.get("Authorization"))):
            return _http_error(http.HTTPStatus.UNAUTHORIZED, "missing or wrong token (Authorization: Bearer T, or ?token=T)")
        if self.connections >= self.limits.max_connections:
            return _http_error(http.HTTPStatus.SERVICE_UNAVAILABLE, "too many connections")
        refusal = self._client_refusal(_peer(connection), session_id)
        if refusal is not None:
            return _http_error(http.HTTPStatus.TOO_MANY_REQUESTS, refusal)
        return None

    def _client_refusal(self, peer: str, session_id: str) -> str | None:
        """Why this client may not open one more connection (to this session), or None."""
        use = self.clients.get(peer)
        if use is None:
            return None
        if use.connections >= self.limits.max_connections_per_client:
            return f"this client already has {use.connections} connections (the limit per client)"
        if session_id not in use.sessions and len(use.sessions) >= self.limits.max_sessions_per_client:
            return f"this client already holds {len(use.sessions)} sessions (the limit per client)"
        return None

    # ------------------------------------------------------------------ a connection

    async def _handle(self, connection: ServerConnection) -> None:
        # _process_request let only a valid id through; checked again here, where it is used.
        session_id = SessionId(urlsplit(connection.request.path if connection.request else "").path[len(PATH_PREFIX):])
        writer = ClientWriter(connection, session_id, self.limits.write_timeout_s)
        peer = _peer(connection)
        refusal = self._client_refusal(peer, session_id)  # handshakes that raced past _process_request
        if refusal is not None:
            await self._send_error(writer, "serve_client_limit", refusal)
            await connection.close(1013, "client limit")
            return
        try:
            session = self.registry.open(session_id)
        except TooManySessions as exc:
            await self._send_error(writer, exc.code, exc.message)
            await connection.close(1013, "too many sessions")
            return
        self.connections += 1
        use = self.clients.setdefault(peer, ClientUse())
        use.connections += 1
        use.sessions[session_id] = use.sessions.get(session_id, 0) + 1
        text_bucket = TokenBucket(self.limits.messages_per_s, self.limits.burst)
        binary_bucket = TokenBucket(self.limits.binary_frames_per_s, self.limits.binary_burst)
        tasks: set[asyncio.Task[None]] = set()
        received = 0
        try:
            async for raw in connection:
                received += 1
                if isinstance(raw, bytes):
                    if not binary_bucket.allow():
                        continue  # a board over its frame rate: drop frames like a noisy line would
                    with self.guard.handling("binary message", received):
                        await self._on_binary(writer, session, raw)
                    continue
                if not text_bucket.allow():
                    await self._send_error(writer, "rate_limited", f"more than {self.limits.messages_per_s:g} messages/s; slow down")
                    continue
                with self.guard.handling("text message", received) as handled:
                    task = await self._on_text(writer, session, raw)
                    if task is not None:
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                if handled.failed:
                    await self._send_error(writer, "internal", "the server could not handle that message; it was dropped")
        except ConnectionClosed:
            pass  # closed by the client, or aborted by the writer as too slow
        finally:
            if writer.closed_slow:
                self.slow_clients_closed += 1
            for task in tasks:
                task.cancel()  # the client is gone: stop its queued and running turns
            if tasks:
                await asyncio.wait(tasks)
            if session.bridge is not None:
                with contextlib.suppress(Exception):
                    await session.bridge.detach()
            self.connections -= 1
            use.connections -= 1
            use.sessions[session_id] -= 1
            if not use.sessions[session_id]:
                del use.sessions[session_id]
            if not use.connections:
                self.clients.pop(peer, None)
            self.registry.release(session)

    async def _on_text(self, writer: ClientWriter, session: ServeSession, raw: str) -> asyncio.Task[None] | None:
        received_at = self.service.clock()
        try:
            message = parse_client_message(raw, self.limits)
        except ClientMessageError as exc:
            await self._send_error(writer, exc.code, exc.message)
            return None
        if isinstance(message, PingIn):
            await self._send(writer, {"type": "pong", "session_id": session.session_id})
            return None
        if session.queued_turns >= self.limits.max_queued_turns_per_session:
            await self._send_error(writer, "busy",
                                   f"this session already has {session.queued_turns} turns waiting; wait for a reply")
            return None
        if isinstance(message, AudioIn):
            lang = message.lang or self.options.lang
            if self.recognizers is None or not self.recognizers.available(lang):
                await self._send_error(writer, "no_asr_model", self._no_model_text(lang))
                return None
        session.queued_turns += 1
        return asyncio.create_task(self._run_turn(writer, session, message, received_at))

    def _no_model_text(self, lang: str) -> str:
        installed = ", ".join(sorted(self.recognizers.languages())) if self.recognizers is not None else ""
        return (f"no speech recognition model for language {lang!r} on this host (languages: {installed or 'none'}); "
                f"send text, send audio with \"lang\" set to an installed language, or configure --asr-wyoming")

    async def _run_turn(self, writer: ClientWriter, session: ServeSession, message: TextIn | AudioIn,
                        received_at: float) -> None:
        try:
            async with session.lock:
                await self._turn(writer, session, message, received_at)
        except (ConnectionClosed, ClientTooSlow):
            pass
        except asyncio.CancelledError:
            raise
        except ClientMessageError as exc:
            await self._send_error(writer, exc.code, exc.message)
        except SottoError as exc:
            await self._send_error(writer, exc.code, str(exc))
        except Exception as exc:  # noqa: BLE001 - one broken turn must not take the server down
            log.exception("turn failed in session %s", session.session_id)
            await self._send_error(writer, "internal", f"the turn failed: {type(exc).__name__}: {exc}")
        finally:
            session.queued_turns -= 1

    async def _turn(self, writer: ClientWriter, session: ServeSession, message: TextIn | AudioIn,
                    received_at: float) -> None:
        async def send(payload: dict[str, Any]) -> None:
            await self._send(writer, payload)

        transcript: str | None = None
        asr_ms: float | None = None
        lang: str | None = None
        if isinstance(message, AudioIn):
            lang = message.lang or self.options.lang
            recognizer = session.recognizers.get(lang)
            if recognizer is None:
                assert self.recognizers is not None
                try:
                    recognizer = await asyncio.to_thread(self.recognizers.make, lang)
                except ModelNotFound:
                    raise ClientMessageError("no_asr_model", self._no_model_text(lang)) from None
                session.recognizers[lang] = recognizer
            session.asr_turns += 1
            transcript, asr_ms = await self.service.transcribe(session.session_id, recognizer, session.asr_turns,
                                                                message.pcm, message.sample_rate)
            last_error = getattr(recognizer, "last_error", None)
            if not transcript:
                detail = f" ({last_error})" if last_error else ""
                raise ClientMessageError("no_speech", f"no words recognised in the audio{detail}")
            words = transcript
            received_at = self.service.clock()  # the budget runs from the final transcript, as for a board
        else:
            words = message.text
        outcome = await self.service.text_turn(session.session_id, words, lang=lang, want_state=message.want_state,
                                               send=send, received_at=received_at)
        outcome.transcript, outcome.asr_ms = transcript, asr_ms
        session.turns.append(outcome)
        del session.turns[:-20]
        await self._send(writer, outcome.to_message(want_state=message.want_state))

    async def _on_binary(self, writer: ClientWriter, session: ServeSession, data: bytes) -> None:
        if self.board_bridges is None:
            await self._send_error(writer, "binary_unsupported", "this server takes JSON text messages only")
            return
        if session.bridge is None:
            lang = self.options.lang
            if self.recognizers is None or not self.recognizers.available(lang):
                await self._send_error(writer, "no_asr_model", self._no_model_text(lang))
                return
            session.bridge = self.board_bridges(session.session_id)
        await session.bridge.attach(writer)
        await session.bridge.receive(data)

    # ------------------------------------------------------------------ sending

    async def _send(self, writer: ClientWriter, payload: dict[str, Any]) -> None:
        # A client gone or closed as too slow: its receive loop ends on its own.
        with contextlib.suppress(ConnectionClosed, ClientTooSlow):
            await writer.send(json.dumps(payload, ensure_ascii=False))

    async def _send_error(self, writer: ClientWriter, code: str, message: str) -> None:
        self.errors_sent += 1
        with contextlib.suppress(ConnectionClosed, ClientTooSlow):
            await writer.send(error_message(code, message))


def _http_error(status: http.HTTPStatus, text: str) -> Response:
    body = (text + "\n").encode()
    headers = Headers([("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))])
    return Response(status.value, status.phrase, headers, body)
