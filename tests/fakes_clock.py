"""Simulated time for the host's timing logic (`sotto.clock.Clock`), so ladder, barge-in and
late-answer tests never sleep and never depend on how busy the machine is.

Time moves only when the test moves it (`advance`, `run_until`). Before each step the
clock waits until the system is quiet: the event loop has nothing ready and the worker
threads it is told about (`quiet`) are idle or asleep on this clock. So an answer that a
worker thread produces "instantly" arrives at the same simulated moment on any machine.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from typing import Any, Awaitable, Callable, TypeVar, Union

T = TypeVar("T")
STEP_S = 0.005  # the resolution of run_until
SETTLE_LIMIT_S = 5.0  # real seconds a step waits at most for the workers to go quiet (a hung test fails)

_Waiter = Union["asyncio.Future[None]", threading.Event]


class SimulatedClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.t = start
        self._timers: list[tuple[float, int, _Waiter]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()
        self.sleeping_threads = 0  # worker threads blocked in blocking_sleep
        self.quiet: Callable[[], bool] = lambda: True  # extra condition for "the workers are quiet"

    # ------------------------------------------------------------------ sotto.clock.Clock

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._add(self.t + seconds, future)
        await future

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        if timeout is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        timer: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._add(self.t + max(0.0, timeout), timer)
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            task.cancel()
            timer.cancel()
            raise
        if task.done():
            timer.cancel()
            return task.result()
        task.cancel()
        await asyncio.wait({task})  # let it finish cancelling; a cancellation of ours still raises
        raise asyncio.TimeoutError

    # ------------------------------------------------------------------ worker threads

    def blocking_sleep(self, seconds: float, cancelled: threading.Event | None = None) -> None:
        """For a worker thread: block until simulated time has passed `seconds` (or `cancelled`)."""
        done = threading.Event()
        self._add(self.t + seconds, done)
        with self._lock:
            self.sleeping_threads += 1
        try:
            while not done.is_set() and not (cancelled is not None and cancelled.is_set()):
                done.wait(0.002)
        finally:
            with self._lock:
                self.sleeping_threads -= 1

    # ------------------------------------------------------------------ moving time

    async def settle(self) -> None:
        """Let the loop and the workers run until nothing is left to do at this moment."""
        deadline = time.monotonic() + SETTLE_LIMIT_S
        while True:
            for _ in range(20):
                await asyncio.sleep(0)
            if self.quiet() or time.monotonic() > deadline:
                return
            await asyncio.sleep(0.001)  # real time for the worker threads

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, firing every timer due on the way in order."""
        target = self.t + seconds
        await self.settle()
        while True:
            with self._lock:
                due = self._timers[0] if self._timers and self._timers[0][0] <= target else None
                if due is not None:
                    heapq.heappop(self._timers)
            if due is None:
                break
            self.t = max(self.t, due[0])
            waiter = due[2]
            if isinstance(waiter, threading.Event):
                waiter.set()
            elif not waiter.done():
                waiter.set_result(None)
            await self.settle()
        self.t = target
        await self.settle()

    async def run_until(self, condition: Callable[[], Any], *, limit_s: float = 60.0, what: str = "the condition") -> None:
        """Advance in small steps until `condition()` holds (at most `limit_s` of simulated time)."""
        end = self.t + limit_s
        await self.settle()
        while not condition():
            if self.t >= end:
                raise AssertionError(f"{what} not reached within {limit_s:g} s of simulated time")
            await self.advance(STEP_S)

    def _add(self, at: float, waiter: _Waiter) -> None:
        with self._lock:
            heapq.heappush(self._timers, (at, next(self._order), waiter))


def quiet_engine(runner: Any, clock: SimulatedClock) -> Callable[[], bool]:
    """The turn engine's workers are quiet: nothing queued, nothing running except what sleeps on the clock."""

    def quiet() -> bool:
        for worker in (runner.model_worker, runner.tts_worker):
            if worker.pending():
                return False
        if runner.tts_worker.busy_session is not None:
            return False
        return runner.model_worker.busy_session is None or clock.sleeping_threads > 0

    return quiet
