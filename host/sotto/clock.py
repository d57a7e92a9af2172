"""The one clock of the host's timing logic: the voice session, the board link and the turn
engine read the time and wait through it, so tests can drive every timeout on simulated
time (tests/fakes_clock.py) instead of sleeping."""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float:
        """Monotonic seconds."""
        ...

    async def sleep(self, seconds: float) -> None: ...

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        """`asyncio.wait_for` on this clock: asyncio.TimeoutError when `timeout` passes first."""
        ...


class MonotonicClock:
    """The real clock: time.monotonic and the event loop's own timers."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        # Not asyncio.wait_for: before Python 3.12 it swallows a cancellation that arrives as
        # the awaited thing completes (a barge-in lost while a reply's next item came in).
        if timeout is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            return task.result()
        task.cancel()
        await asyncio.wait({task})  # let it finish cancelling; a cancellation of ours still raises
        raise asyncio.TimeoutError


MONOTONIC = MonotonicClock()
