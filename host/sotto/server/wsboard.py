"""A Wi-Fi board over WebSocket: binary messages carry the serial wire protocol's bytes.

The board side is the same firmware logic as on a cable; only the transport differs. So
the host side is the same too: `BoardLink` (handshake, format choice, credits, STOP,
PING clock, reattach on HELLO) runs over `WebSocketByteTransport` instead of a serial
port, and the same `VoiceSession` (partials, finals, barge-in, budgets) serves it. No
second protocol implementation.

Reconnects: when the WebSocket closes, the transport reports the port lost; BoardLink
reports the board detached and keeps asking its transport factory for a new port, which
succeeds as soon as the board reconnects to the same /ws/{session_id}; its HELLO then
re-attaches the same session (same working memory), within the harness's grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any, Callable, Protocol

from sotto.engines.base import Recognizer
from sotto.errors import LinkClosed, PortOpenFailed, SottoError
from sotto.ids import SessionId

if TYPE_CHECKING:
    from sotto.runtime import Runtime

log = logging.getLogger(__name__)

# The byte rate BoardLink assumes for pacing and for the audio format choice. A WebSocket
# over Wi-Fi carries far more than a UART; 16 kHz PCM both ways is ~64 KB/s.
WEBSOCKET_BAUD = 2_000_000


class RecognizerSource(Protocol):
    def available(self, lang: str) -> bool: ...

    def languages(self) -> list[str]:
        """The languages it can recognise (for error messages)."""
        ...

    def make(self, lang: str, *, sample_rate: int = 16000) -> Recognizer: ...


class BinarySender(Protocol):
    async def send(self, message: bytes) -> None: ...


class WebSocketByteTransport:
    """`ByteTransport` over one WebSocket connection: bytes in are fed by the server's handler."""

    def __init__(self, url: str, connection: BinarySender) -> None:
        self.url = url
        self._connection = connection
        self._queue: asyncio.Queue[bytes | BaseException] = asyncio.Queue(maxsize=1024)
        self._closed = False
        self.bytes_read = 0
        self.bytes_written = 0

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        pass  # the server's handler feeds bytes on the loop already running

    def feed(self, data: bytes) -> None:
        if self._closed:
            return
        try:
            self._queue.put_nowait(data)
        except asyncio.QueueFull:
            log.warning("%s: host side behind; %d bytes dropped", self.url, len(data))  # like an overrun UART

    async def read(self) -> bytes:
        item = await self._queue.get()
        if isinstance(item, BaseException):
            self._queue.put_nowait(item)  # every later read fails the same way
            raise item
        self.bytes_read += len(item)
        return item

    async def write(self, data: bytes) -> None:
        if self._closed:
            raise LinkClosed(f"{self.url}: connection closed")
        try:
            await self._connection.send(data)
        except Exception as exc:  # noqa: BLE001 - any failure to send means the connection is gone
            raise LinkClosed(f"{self.url}: connection lost while writing: {exc}") from exc
        self.bytes_written += len(data)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(asyncio.QueueFull):
            self._queue.put_nowait(LinkClosed(f"{self.url}: connection closed"))


class WebSocketBoardBridge:
    """One session's Wi-Fi board: a BoardLink over the session's current WebSocket, and the
    voice session (built by `make_session(link)`) serving it."""

    def __init__(self, session_id: SessionId, make_session: Callable[[Any], Any], *, hello_timeout_s: float = 5.0,
                 on_close: Callable[[], None] | None = None) -> None:
        from sotto.link.board_link import LinkOptions

        self.session_id = SessionId(session_id)
        self.url = f"ws-board://{session_id}"
        self.make_session = make_session
        self.on_close = on_close
        self.options = LinkOptions(baud=WEBSOCKET_BAUD, hello_timeout_s=hello_timeout_s)
        self._connection: BinarySender | None = None
        self._transport: WebSocketByteTransport | None = None
        self._task: asyncio.Task[None] | None = None
        self.link: Any = None
        self.usage: Any = None
        self.failure: str | None = None

    def _transport_factory(self, url: str, baud: int) -> WebSocketByteTransport:
        if self._connection is None:
            raise PortOpenFailed(f"{url}: the board is not connected")
        self._transport = WebSocketByteTransport(url, self._connection)
        return self._transport

    async def attach(self, connection: Any) -> None:
        if connection is self._connection and self._task is not None and not self._task.done():
            return
        if self._transport is not None:
            self._transport.close()  # the old connection is gone; BoardLink reopens on the new one
            self._transport = None
        self._connection = connection
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._serve(), name=f"sotto-wsboard-{self.session_id}")

    async def receive(self, data: bytes) -> None:
        if self._transport is None:
            await asyncio.sleep(0)  # BoardLink is opening its transport right now
        if self._transport is not None:
            self._transport.feed(data)

    async def detach(self) -> None:
        self._connection = None
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    async def close(self) -> None:
        await self.detach()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _serve(self) -> None:
        from sotto.link.board_link import BoardLink

        link = BoardLink(self.url, self.options, transport_factory=self._transport_factory)
        self.link = link
        try:
            await link.open()  # waits for the board's HELLO
            session = self.make_session(link)
            self.usage = await session.run()
        except asyncio.CancelledError:
            raise
        except SottoError as exc:
            self.failure = f"{exc.code}: {exc}"
            log.warning("board session %s: %s", self.session_id, exc)
        except Exception as exc:  # noqa: BLE001 - logged, never a silent dead task behind a WELCOME
            self.failure = f"internal: {type(exc).__name__}: {exc}"
            log.exception("board session %s failed", self.session_id)
        finally:
            await link.close()
            if self.on_close is not None:
                self.on_close()


def board_bridges(runtime: "Runtime", recognizers: RecognizerSource,
                  lang: str) -> Callable[[SessionId], WebSocketBoardBridge]:
    """Wi-Fi boards (binary wire frames): BoardLink over the WebSocket and a voice session from
    the runtime, exactly as `sotto run` serves a serial board (same knowledge, the board's profile)."""

    def make(session_id: SessionId) -> WebSocketBoardBridge:
        def make_session(link: Any) -> Any:
            return runtime.voice_session(link, recognizers.make(lang), session_id=session_id)

        def end_session() -> None:  # profile promotion, queued on the model worker
            runtime.end_session(session_id)

        return WebSocketBoardBridge(session_id, make_session, on_close=end_session)

    return make
