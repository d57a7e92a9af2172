"""The voice harness's `Responder`, backed by the working-memory agent (sotto.agent).

Every call into the agent (start the turn, next reply sentence, finish the turn)
runs on ONE worker thread owned by this responder. llama.cpp is not thread-safe,
and a barge-in cancels the harness's await at once while the model thread is still
inside `next()`: with a single worker, the turn's `finish()` (the model's state
patch) is queued behind that in-flight step instead of racing it, and the next
turn's `start_turn()` is queued behind the patch.

Board actions of a turn ("set the volume to 30") are yielded as `BoardAction`s right
after the turn starts and before its first sentence: the harness runs them on the
board (`BoardPort.send_command`) on its cancellable path and hands what already ran in
an interrupted turn to the next request (`prior_side_effects`), which the agent notes
in the state and says first.

The session's long-term profile is opened (`Agent.open_session`) on the worker before
the first turn, and promoted (`Agent.end_session`) when the session closes.

Acknowledgements are left to the harness's degradation ladder, which plays phrases
synthesised at start-up (instant) rather than a phrase synthesised on demand.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from typing import TYPE_CHECKING, AsyncIterator, Iterator

from sotto.voice.responder import ReplyItem, ReplyRequest, ReplySentence

if TYPE_CHECKING:
    from sotto.agent import Agent, Turn, TurnResult

log = logging.getLogger(__name__)


class AgentVoiceResponder:
    """`Responder` for one session; `result(turn_id)` gives each turn's committed outcome."""

    def __init__(self, agent: "Agent", session_id: str, *, lang: str | None = None, profile: str | None = None) -> None:
        """`profile`: a user name or profile key ("demo", "board:kiosk-1") the session is seeded
        from and promoted to; None: `AgentConfig.profile_owner`, else none until a name is said."""
        self.agent = agent
        self.session_id = session_id
        self.lang = lang
        self.profile = profile
        self._opened = False  # read and written on the worker thread only
        self._ended: concurrent.futures.Future[list[str]] | None = None
        self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="sotto-agent")
        self._results: dict[int, concurrent.futures.Future[TurnResult]] = {}
        # Per turn, ms after the request: when the agent started the turn and yielded each sentence.
        self.timings: dict[int, dict[str, list[float]]] = {}
        self._turns_waiting = 0  # replies asked for whose turn has not started yet
        self._waiting_lock = threading.Lock()
        self.patches_skipped: list[int] = []

    def result(self, turn_id: int) -> "concurrent.futures.Future[TurnResult]":
        """The turn's outcome (state after the model's patch), set once `finish()` has run."""
        return self._results.setdefault(turn_id, concurrent.futures.Future())

    async def _next(self, sentences: Iterator[str]) -> str | None:
        return await asyncio.get_running_loop().run_in_executor(self._worker, next, sentences, None)

    async def reply(self, request: ReplyRequest) -> AsyncIterator[ReplyItem]:
        outcome = self.result(request.turn_id)
        t0 = time.perf_counter()
        marks = self.timings.setdefault(request.turn_id, {"started": [], "sentences": []})
        self._count_waiting(+1)
        started = self._worker.submit(self._start, request)
        try:
            turn: Turn = await asyncio.wrap_future(started)
            marks["started"].append(round((time.perf_counter() - t0) * 1000.0, 1))
        except asyncio.CancelledError:
            # Cancelled while the turn was starting: once it has started, finish it (it holds the agent).
            started.add_done_callback(lambda f: self._finish_started(f, outcome))
            raise
        except BaseException as exc:
            if not outcome.done():
                outcome.set_exception(exc)
            raise
        finished = False
        try:
            # Side effects first: the harness runs them on the board before the answer.
            for action in turn.board_actions():
                yield action
            sentences: Iterator[str] = turn.sentences()
            while True:
                if request.control.max_sentences is not None:
                    turn.shorten(request.control.max_sentences)  # the ladder's live hint
                sentence = await self._next(sentences)
                if sentence is None:
                    break
                marks["sentences"].append(round((time.perf_counter() - t0) * 1000.0, 1))
                yield ReplySentence(sentence)
            finished = True
        finally:
            if not finished:
                turn.cancel()  # barge-in or session end: the model stops within one token
            # Queued behind any step still running; the state update stands either way.
            self._worker.submit(self._finish_turn, turn, outcome)

    def _count_waiting(self, delta: int) -> None:
        with self._waiting_lock:
            self._turns_waiting += delta

    def _finish_turn(self, turn: "Turn", outcome: "concurrent.futures.Future[TurnResult]") -> None:
        # Defer deep work: when the user already spoke again, the next answer must not wait
        # behind this turn's model patch (seconds on a busy 2-core host). The rule-based
        # update of this turn is already committed; the skip is recorded.
        run_model = self._turns_waiting == 0
        if not run_model:
            self.patches_skipped.append(turn.number)
        self._finish(turn, outcome, run_model=run_model)

    def _start(self, request: ReplyRequest) -> "Turn":
        self._count_waiting(-1)
        self._open_now()
        return self.agent.start_turn(self.session_id, request.words, turn=request.turn_id, lang=self.lang,
                                     prior_side_effects=request.prior_side_effects)

    def open(self) -> "concurrent.futures.Future[None]":
        """Open the session (seed it from its profile) on the worker now, ahead of the first turn."""
        return self._worker.submit(self._open_now)

    def _open_now(self) -> None:
        if not self._opened:
            self.agent.open_session(self.session_id, profile=self.profile)
            self._opened = True

    def _finish_started(self, started: "concurrent.futures.Future[Turn]", outcome: "concurrent.futures.Future[TurnResult]") -> None:
        if started.cancelled():
            self._count_waiting(-1)  # it never ran
        if started.cancelled() or started.exception() is not None:
            if not outcome.done():
                outcome.cancel()
            return
        turn = started.result()
        turn.cancel()
        self._worker.submit(self._finish_turn, turn, outcome)

    @staticmethod
    def _finish(turn: "Turn", outcome: "concurrent.futures.Future[TurnResult]", *, run_model: bool = True) -> None:
        try:
            result = turn.finish(run_model=run_model)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the outcome
            if not outcome.done():
                outcome.set_exception(exc)
            return
        if not outcome.done():
            outcome.set_result(result)

    def idle(self) -> "concurrent.futures.Future[None]":
        """Done once every queued agent call (e.g. a state patch) has run."""
        return self._worker.submit(lambda: None)

    def end_session(self) -> "concurrent.futures.Future[list[str]]":
        """Promote the session's stable items to its profile, after every queued agent call.
        Once per responder; the future gives the profile keys written."""
        if self._ended is None:
            self._ended = self._worker.submit(self._end_now)
        return self._ended

    def _end_now(self) -> list[str]:
        return self.agent.end_session(self.session_id) if self._opened else []

    def close(self) -> None:
        """End the session (profile promotion) and stop the worker; blocks until both are done."""
        ended = self.end_session()
        self._worker.shutdown(wait=True)
        exc = ended.exception()
        if exc is not None:  # the session's turns are committed; only the promotion is lost
            log.warning("session %s: profile promotion at session end failed: %s", self.session_id, exc)
