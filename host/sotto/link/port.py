"""The board link's port: one byte transport at a time, reopened with backoff when it is
lost (an unplugged board), each failure handled once (transports are numbered)."""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from sotto.clock import Clock
from sotto.errors import LinkClosed, SottoError
from sotto.link.options import LinkOptions, LinkStats
from sotto.link.transport import ByteTransport

log = logging.getLogger("sotto.link")

TransportFactory = Callable[[str, int], ByteTransport]


class ReopeningPort:
    def __init__(self, url: str, options: LinkOptions, factory: TransportFactory, clock: Clock, stats: LinkStats, *,
                 on_bytes: Callable[[bytes], None], on_new: Callable[[], None], on_lost: Callable[[str], None]) -> None:
        """`on_new`: a transport was (re)opened; `on_lost(detail)`: the current one failed."""
        self.url = url
        self.options = options
        self.factory = factory
        self.clock = clock
        self.stats = stats
        self._on_bytes = on_bytes
        self._on_new = on_new
        self._on_lost = on_lost
        self.transport: ByteTransport | None = None
        self.generation = 0  # bumps on each (re)opened transport: a failure is handled once
        self.connected: asyncio.Event | None = None  # created in open(), on the running loop

    def open(self) -> None:
        self.connected = asyncio.Event()
        self._use(self.factory(self.url, self.options.baud))

    def _use(self, transport: ByteTransport) -> None:
        assert self.connected is not None
        self.transport = transport
        self.generation += 1
        self._on_new()
        transport.start(asyncio.get_running_loop())
        self.connected.set()

    async def receive_forever(self, closing: Callable[[], bool]) -> None:
        """Feed every byte read to `on_bytes`; reopen after a loss. Returns when closing, or when
        the port is lost and reconnecting is off."""
        while not closing():
            transport = self.transport
            assert transport is not None
            try:
                while True:
                    self._on_bytes(await transport.read())
            except LinkClosed as exc:
                if closing():
                    return
                self.failed(self.generation, str(exc))
            if not self.options.reconnect:
                return
            await self._reopen(closing)

    def failed(self, generation: int, detail: str) -> None:
        if generation != self.generation or self.connected is None or not self.connected.is_set():
            return  # this failure was already handled
        self.connected.clear()
        if self.transport is not None:
            self.transport.close()
        self._on_lost(f"port lost ({detail}); reopening")

    async def _reopen(self, closing: Callable[[], bool]) -> None:
        delay = self.options.backoff_initial_s
        while not closing():
            await self.clock.sleep(delay)
            self.stats.reopen_attempts += 1
            try:
                transport = self.factory(self.url, self.options.baud)
            except SottoError as exc:
                log.debug("reopen %s failed: %s", self.url, exc)
                delay = min(self.options.backoff_max_s, delay * 2)
                continue
            log.info("reopened %s; waiting for HELLO", self.url)
            self._use(transport)
            return

    async def write(self, frame: bytes) -> None:
        transport = self.transport
        generation = self.generation
        if transport is None:
            return
        try:
            await transport.write(frame)
        except LinkClosed as exc:
            self.failed(generation, str(exc))
            return
        self.stats.frames_out += 1
        self.stats.bytes_out += len(frame)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
