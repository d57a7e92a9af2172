"""Fair queueing of model work from many sessions onto one worker thread.

llama.cpp is not thread-safe and the host has one model instance, so every session's
model work runs on ONE thread. Jobs wait in a FIFO per session and the worker takes
sessions round-robin: a chatty session cannot starve a quiet one, and a session's own
jobs keep their order.
"""

from __future__ import annotations

import collections
import concurrent.futures
import threading
from dataclasses import dataclass
from typing import Any, Callable, Deque, TypeVar

from sotto.clock import MONOTONIC, Clock

T = TypeVar("T")


@dataclass
class _Job:
    session_id: str
    fn: Callable[[], Any]
    future: "concurrent.futures.Future[Any]"
    queued_at: float


class FairWorker:
    """`submit(session_id, fn)` -> Future; jobs run one at a time, sessions served round-robin."""

    def __init__(self, name: str = "sotto-model", *, clock: Clock = MONOTONIC) -> None:
        self._clock = clock
        self._queues: "collections.OrderedDict[str, Deque[_Job]]" = collections.OrderedDict()
        self._cond = threading.Condition()
        self._closed = False
        self.busy_session: str | None = None
        self.busy_since: float | None = None  # clock time the running job started
        self.served: list[str] = []  # session ids in the order their jobs ran (bounded; tests read it)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, session_id: str, fn: Callable[[], T]) -> "concurrent.futures.Future[T]":
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("worker closed")
            self._queues.setdefault(session_id, collections.deque()).append(_Job(session_id, fn, future, self._clock.now()))
            self._cond.notify()
        return future

    def pending(self, session_id: str | None = None) -> int:
        """Jobs waiting (not running): for one session, or for all."""
        with self._cond:
            if session_id is not None:
                return len(self._queues.get(session_id, ()))
            return sum(len(q) for q in self._queues.values())

    def others_waiting(self, session_id: str) -> bool:
        """Another session has work queued: this session should not hold the model longer than needed."""
        with self._cond:
            return any(q for sid, q in self._queues.items() if sid != session_id)

    def _next(self) -> _Job | None:
        with self._cond:
            while not self._closed:
                for session_id in list(self._queues):
                    queue = self._queues[session_id]
                    if not queue:
                        del self._queues[session_id]
                        continue
                    job = queue.popleft()
                    # Round-robin: this session goes to the back of the line.
                    self._queues.move_to_end(session_id)
                    if not queue:
                        del self._queues[session_id]
                    return job
                self._cond.wait()
            return None

    def _run(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            if not job.future.set_running_or_notify_cancel():
                continue  # cancelled while it waited
            self.busy_session = job.session_id
            self.busy_since = self._clock.now()
            self.served.append(job.session_id)
            del self.served[:-1000]
            try:
                job.future.set_result(job.fn())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits the future
                job.future.set_exception(exc)
            finally:
                self.busy_session = None
                self.busy_since = None

    def close(self, timeout_s: float = 5.0) -> None:
        with self._cond:
            self._closed = True
            for queue in self._queues.values():
                for job in queue:
                    job.future.cancel()
            self._queues.clear()
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout_s)


class ModelQueue:
    """How long a turn submitted now would wait for the model: what is left of the running
    job plus one average job per queued one (the average learnt from the turns run)."""

    def __init__(self, worker: FairWorker, *, clock: Clock = MONOTONIC, first_guess_ms: float = 1000.0) -> None:
        self.worker = worker
        self.clock = clock
        self.turn_ms = first_guess_ms  # moving average of one turn's model work

    def note_turn(self, spent_ms: float) -> None:
        self.turn_ms = 0.7 * self.turn_ms + 0.3 * spent_ms

    def expected_wait_ms(self) -> float:
        since = self.worker.busy_since
        running_left = 0.0
        if since is not None:
            running_left = max(0.0, self.turn_ms - (self.clock.now() - since) * 1000.0)
        return running_left + self.worker.pending() * self.turn_ms
