"""The one turn engine: a board's voice session and `sotto serve`'s text turns both run here.

    runner = TurnRunner(agent, tts)                       # one per host: one model worker, one TTS worker
    control = ReplyControl()
    outcome = await runner.run(TurnRequest("kitchen", words, received_t=clock.now()), output, control,
                               budgets=BudgetConfig())

A turn runs as ONE job on the model worker (llama.cpp is not thread-safe; the worker serves
sessions round-robin): the agent's turn starts (rules applied and committed), its board
actions go to the turn's action lane (`sotto.voice.action_lane`: they run whatever becomes
of the spoken reply) and its answer sentences are posted to the event loop as they come,
and the turn finishes (the model's state patch, unless deferred) on the same job. On the
loop, each sentence is synthesised on the TTS worker and handed to the `ReplyOutput` (a
board's speaker, or a WebSocket reply) once the actions have run; meanwhile the
degradation ladder acts while the answer is late. `ReplyControl` is the one control of a
running turn: the ladder shortens it or defers its deep work, barge-in cancels it (the
model stream stops within one token, the action lane stops).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence, Union

from sotto.agent import Turn, TurnResult
from sotto.agent.actions import RequestedAction
from sotto.clock import MONOTONIC, Clock
from sotto.engines.base import SpeechSynthesizer, WordConfidence
from sotto.errors import SottoError
from sotto.memory.state import SessionState
from sotto.voice.action_lane import ActionLane
from sotto.voice.budgets import BudgetConfig
from sotto.voice.ladder import (
    DEFER,
    DegradationLadder,
    DegradeListener,
    FALLBACK_REPLY,
    FirstAnswerPredictor,
    LadderPlayer,
    Prediction,
    SHORTEN,
    SegmentItem,
    TEXT_ONLY,
)
from sotto.voice.phrases import DEFAULT_ACKS, DEFAULT_DEFERRAL, Phrase, PhraseCache, synthesize_pcm
from sotto.voice.reply_types import ReplyControl, ReplyOutcome, ReplyOutput, Segment, TurnRequest
from sotto.voice.workers import FairWorker, ModelQueue


class AgentLike(Protocol):
    """What the turn engine needs of the agent (sotto.agent.Agent; fakes in tests)."""

    def start_turn(self, session_id: str, words: str, *, turn: int | None = None, lang: str | None = None,
                   prior_side_effects: Sequence[str] = (), heard: Sequence[WordConfidence] = ()) -> Turn: ...

    def open_session(self, session_id: str, *, profile: str | None = None) -> SessionState: ...

    def end_session(self, session_id: str) -> list[str]: ...

    def withdraw_actions(self, session_id: str, descriptions: Sequence[str]) -> None: ...

    def state(self, session_id: str) -> SessionState: ...


@dataclass(frozen=True)
class _Started:
    at: float


@dataclass(frozen=True)
class _Routed:
    """The agent routed the turn: who answers, and its predicted time to the first sentence."""

    route: str
    reason: str
    first_sentence_ms: float | None  # from now to the first answer sentence's text (0: composed; None: unknown)
    deep_work: str  # what deferring would put off ("": nothing)


@dataclass(frozen=True)
class _Ended:
    turn: int
    source: str
    rejected: list[str]
    patch_skipped: bool


SPEECH_WAIT_S = 60.0  # bound on the model patch's wait for the reply's speech (a session that died)

_WorkerItem = Union[_Started, _Routed, _Ended, str, BaseException]
CANCELLED_REASON = "the turn was cancelled"  # a cancellation from outside that gave no reason
# Speech synthesis of a first sentence, until the runner has timed its own (ms).
INITIAL_TTS_ESTIMATE_MS = 300.0


class TurnRunner:
    def __init__(
        self,
        agent: AgentLike,
        tts: SpeechSynthesizer,
        *,
        clock: Clock = MONOTONIC,
        memory_agent: AgentLike | None = None,
        predictor: FirstAnswerPredictor | None = None,
    ) -> None:
        """`memory_agent`: the same working memory without the model, to answer at once when
        the prediction says the model is too far away (`sotto serve`: many sessions, one model).
        `predictor`: the time to the first answer the ladder acts on; default with a memory
        agent: the model queue's expected wait."""
        self.agent = agent
        self.tts = tts
        self.clock = clock
        self.memory_agent = memory_agent
        self.model_worker = FairWorker("sotto-model", clock=clock)
        self.tts_worker = FairWorker("sotto-tts", clock=clock)
        self.memory_worker = FairWorker("sotto-memory", clock=clock) if memory_agent is not None else None
        self.model_queue = ModelQueue(self.model_worker, clock=clock)
        if predictor is None and memory_agent is not None:
            predictor = _QueueWaitPredictor(self.model_queue)
        self.predictor = predictor
        self._phrases: dict[int, PhraseCache] = {}
        self._phrases_lock = asyncio.Lock()
        self.tts_estimate_ms = INITIAL_TTS_ESTIMATE_MS  # a first answer sentence's synthesis, measured as we go
        self._last_model_job: dict[str, concurrent.futures.Future[Any]] = {}
        self._turns_waiting = 0  # turns queued for the model that have not started (any session)
        self._waiting_lock = threading.Lock()

    # ------------------------------------------------------------------ sessions

    def open_session(self, session_id: str, *, profile: str | None = None) -> "concurrent.futures.Future[SessionState]":
        """Open the session (seed it from its profile) on the model worker, ahead of its first turn."""
        return self.model_worker.submit(session_id, lambda: self.agent.open_session(session_id, profile=profile))

    def end_session(self, session_id: str) -> "concurrent.futures.Future[list[str]]":
        """Promote the session's stable items to its profile, after its queued work."""
        return self.model_worker.submit(session_id, lambda: self.agent.end_session(session_id))

    def idle(self, session_id: str) -> "concurrent.futures.Future[None]":
        """Done once the session's queued model work (e.g. a state patch) has run."""
        return self.model_worker.submit(session_id, lambda: None)

    def close(self) -> None:
        for worker in (self.model_worker, self.tts_worker, self.memory_worker):
            if worker is not None:
                worker.close()

    # ------------------------------------------------------------------ speech

    async def synthesize(self, session_id: str, text: str, rate: int) -> bytes:
        started = self.clock.now()
        pcm = await asyncio.wrap_future(self.tts_worker.submit(session_id, lambda: synthesize_pcm(self.tts, text, rate)))
        # Running estimate (recent sentences weigh more) for the first-answer prediction.
        self.tts_estimate_ms = 0.7 * self.tts_estimate_ms + 0.3 * (self.clock.now() - started) * 1000.0
        return pcm

    async def phrases(self, rate: int) -> PhraseCache:
        """The acknowledgement and deferral phrases at `rate`, synthesised once."""
        async with self._phrases_lock:
            cache = self._phrases.get(rate)
            if cache is None:
                made = [await self._phrase(text, rate) for text in (*DEFAULT_ACKS, DEFAULT_DEFERRAL)]
                cache = self._phrases[rate] = PhraseCache(made[:-1], made[-1])
            return cache

    async def _phrase(self, text: str, rate: int) -> Phrase:
        try:
            return Phrase(text, await self.synthesize("_startup", text, rate), rate)
        except SottoError:
            return Phrase(text, b"", rate)  # TTS down at start-up: text-only phrases

    # ------------------------------------------------------------------ one turn

    async def run(
        self,
        request: TurnRequest,
        output: ReplyOutput,
        control: ReplyControl,
        *,
        budgets: BudgetConfig,
        outcome: ReplyOutcome | None = None,
        on_degrade: DegradeListener | None = None,
        text_only_on_tts_failure: bool = False,
    ) -> ReplyOutcome:
        """Run the turn until its reply is over; cancelling the caller cancels the turn.
        A TTS failure fails the turn, or with `text_only_on_tts_failure` the sentence goes
        out without audio (recorded as `text_only`)."""
        outcome = outcome or ReplyOutcome()
        predicted = self.predictor.first_answer_ms(request.session_id, request.words) if self.predictor else None
        ladder = DegradationLadder(budgets, predicted_first_answer_ms=predicted)
        phrases = await self.phrases(output.sample_rate)
        items: asyncio.Queue[_WorkerItem] = asyncio.Queue()
        speech_ready = threading.Event()  # the producer has synthesised every sentence (or stopped)
        lane = ActionLane(output, on_not_sent=lambda unsent: self._withdraw(request.session_id, unsent))
        job = await self._submit(request, control, items, outcome, speech_ready, _threadsafe(lane.decide),
                                 from_memory=ladder.answer_from_memory())
        lane.start()
        job.add_done_callback(lambda f: _copy_result(f, outcome.result))
        undecided = _threadsafe(lambda _actions: lane.undecided())  # the job may end on its worker thread
        job.add_done_callback(lambda _: undecided(()))
        segments: asyncio.Queue[SegmentItem] = asyncio.Queue()
        producer = asyncio.create_task(
            self._produce(request, items, output, control, outcome, segments, lane, text_only_on_tts_failure))
        producer.add_done_callback(lambda _: speech_ready.set())
        player = LadderPlayer(self.clock, request.received_t, output, control, outcome, ladder, phrases, on_degrade)
        try:
            outcome.stop_reason = await player.play(segments)
        except BaseException:
            control.cancel()  # barge-in or session end: the model stops within one token
            job.cancel()  # still queued: it never starts (and decides nothing)
            await lane.stop(control.cancel_reason or CANCELLED_REASON)
            raise
        finally:
            if not producer.done():
                control.cancel()  # the reply ended before the agent's turn did (cut, given up, failed)
                producer.cancel()
            await asyncio.wait({producer})
        # The reply is over, however it ended; the board actions the turn decided still run.
        try:
            await lane.finished()
        except BaseException:
            await lane.stop(control.cancel_reason or CANCELLED_REASON)
            raise
        return outcome

    def _withdraw(self, session_id: str, unsent: Sequence[RequestedAction]) -> None:
        """Decided actions that never reached the board leave the memory. Queued on the
        session's model worker, so the next turn of the session sees the memory without them."""
        descriptions = [action.description for action in unsent]
        self.model_worker.submit(session_id, lambda: self.agent.withdraw_actions(session_id, descriptions))

    async def _submit(self, request: TurnRequest, control: ReplyControl, items: "asyncio.Queue[_WorkerItem]",
                      outcome: ReplyOutcome, speech_ready: threading.Event,
                      decide: Callable[[Sequence[RequestedAction]], None], *,
                      from_memory: bool) -> "concurrent.futures.Future[TurnResult]":
        loop = asyncio.get_running_loop()

        def post(item: _WorkerItem) -> None:
            try:
                loop.call_soon_threadsafe(items.put_nowait, item)
            except RuntimeError:
                pass  # the loop is gone (the session ended): nobody waits for the item

        session_id = request.session_id
        if from_memory and self.memory_agent is not None and self.memory_worker is not None:
            outcome.degrade(DEFER)
            previous = self._last_model_job.get(session_id)
            if previous is not None:  # this session's model patch lands before its next turn starts
                await asyncio.wait({asyncio.wrap_future(previous)})
            memory_agent = self.memory_agent
            return self.memory_worker.submit(
                session_id, lambda: self._job(memory_agent, request, control, post, decide, speech_ready, outcome))
        started = threading.Event()

        def run() -> TurnResult:
            self._count_waiting(-1)
            started.set()
            return self._job(self.agent, request, control, post, decide, speech_ready, outcome, timed=True)

        def done(job: "concurrent.futures.Future[Any]") -> None:
            if not started.is_set():
                self._count_waiting(-1)  # cancelled before it ran
            self._forget_job(session_id, job)

        self._count_waiting(+1)
        job = self.model_worker.submit(session_id, run)
        self._last_model_job[session_id] = job
        job.add_done_callback(done)
        return job

    def _count_waiting(self, delta: int) -> None:
        with self._waiting_lock:
            self._turns_waiting += delta

    def turn_waiting(self) -> bool:
        """Another turn (of any session) waits for the model."""
        with self._waiting_lock:
            return self._turns_waiting > 0

    def _forget_job(self, session_id: str, job: "concurrent.futures.Future[Any]") -> None:
        if self._last_model_job.get(session_id) is job:
            del self._last_model_job[session_id]

    def _job(self, agent: AgentLike, request: TurnRequest, control: ReplyControl, post: Callable[[_WorkerItem], None],
             decide: Callable[[Sequence[RequestedAction]], None], speech_ready: threading.Event,
             outcome: ReplyOutcome, *, timed: bool = False) -> TurnResult:
        """On the worker: the whole agent turn."""
        started = self.clock.now()
        post(_Started(started))
        try:
            turn = agent.start_turn(request.session_id, request.words, turn=request.turn_id, lang=request.lang,
                                    prior_side_effects=request.prior_side_effects, heard=request.heard)
        except BaseException as exc:
            post(exc)
            raise
        decide(list(turn.actions))  # decided: they run whatever becomes of the reply (even if cancelled now)
        control.attach(turn)
        route = getattr(turn, "route", None)
        if route is not None:  # the agent routed the turn: the ladder acts on its prediction
            post(_Routed(route.name, route.reason, turn.predicted_first_sentence_ms, str(turn.deep_work)))
        try:
            for sentence in turn.sentences():
                post(sentence)
        except BaseException as exc:  # noqa: BLE001 - the turn is finished below either way
            post(exc)
        finally:
            # Deep work only when the ladder did not defer it and no turn waits for the model:
            # the user's next answer matters more than this turn's patch.
            run_model = not control.defer and not self.turn_waiting()
            post(_Ended(turn.number, turn.report.source, list(turn.report.rejected), not run_model))
            # The patch waits until the reply's speech is synthesised: on a 2-core host llama.cpp
            # and Piper running at once each take 2-3 times longer, and the answer comes first.
            speech_ready.wait(SPEECH_WAIT_S)
            if run_model and self.turn_waiting():
                run_model = False  # the user spoke again meanwhile
                outcome.patch_skipped = True
            result = turn.finish(run_model=run_model)
            if timed:
                self.model_queue.note_turn((self.clock.now() - started) * 1000.0)
        return result

    async def _produce(self, request: TurnRequest, items: "asyncio.Queue[_WorkerItem]", output: ReplyOutput,
                       control: ReplyControl, outcome: ReplyOutcome, segments: "asyncio.Queue[SegmentItem]",
                       lane: ActionLane, text_only_on_tts_failure: bool) -> None:
        """Worker items -> sentences synthesised, in order, once the turn's board actions have run."""
        answers = 0
        actions_run = False
        try:
            while True:
                item = await items.get()
                if isinstance(item, BaseException):
                    await segments.put(item)
                    return
                if isinstance(item, _Started):
                    outcome.queued_ms = (item.at - request.received_t) * 1000.0
                elif isinstance(item, _Routed):
                    outcome.route, outcome.route_reason = item.route, item.reason
                    if item.first_sentence_ms is None:
                        continue  # no measured speed: the ladder's timers stand
                    elapsed = (self.clock.now() - request.received_t) * 1000.0
                    composed = item.first_sentence_ms == 0.0
                    predicted = elapsed + item.first_sentence_ms + self.tts_estimate_ms
                    outcome.predicted_first_answer_ms = round(predicted, 1)
                    await segments.put(Prediction(predicted, item.deep_work, composed))
                elif isinstance(item, _Ended):
                    outcome.turn, outcome.reply_source, outcome.patch_skipped = item.turn, item.source, item.patch_skipped
                    failures = [r for r in item.rejected if r.startswith("model failed")]
                    if failures:
                        outcome.errors.extend(failures)
                        if item.source == "composed":
                            outcome.degrade(FALLBACK_REPLY)
                    await segments.put(None)
                    return
                elif item.strip():
                    if not actions_run:  # side effects first: they run on the board before the answer
                        await lane.finished()
                        actions_run = True
                    limit = control.max_sentences
                    if limit is not None and answers >= limit:
                        continue
                    if answers and self.tts_worker.others_waiting(request.session_id):
                        outcome.degrade(SHORTEN)  # other sessions wait for the voice: one sentence each
                        continue
                    answers += 1
                    pcm = await self._speech(request.session_id, item, output, outcome, text_only_on_tts_failure)
                    await segments.put(Segment(item, pcm))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the reply failed: the turn records it, the session goes on
            await segments.put(exc)

    async def _speech(self, session_id: str, text: str, output: ReplyOutput, outcome: ReplyOutcome,
                      text_only_on_failure: bool) -> bytes:
        try:
            return await self.synthesize(session_id, text, output.sample_rate)
        except SottoError as exc:
            if not text_only_on_failure:
                raise
            outcome.errors.append(f"{exc.code}: {exc}")
            outcome.degrade(TEXT_ONLY)
            return b""


class _QueueWaitPredictor:
    """The first answer is at least as far as the model queue's expected wait."""

    def __init__(self, queue: ModelQueue) -> None:
        self.queue = queue

    def first_answer_ms(self, session_id: str, words: str) -> float | None:
        return self.queue.expected_wait_ms()


def _threadsafe(call: Callable[[Sequence[RequestedAction]], None]) -> Callable[[Sequence[RequestedAction]], None]:
    """`call`, made callable from a worker thread: it runs on the (current) event loop."""
    loop = asyncio.get_running_loop()

    def on_loop(actions: Sequence[RequestedAction]) -> None:
        try:
            loop.call_soon_threadsafe(call, actions)
        except RuntimeError:
            pass  # the loop is gone (the session ended): nobody waits for the decision

    return on_loop


def _copy_result(job: "concurrent.futures.Future[TurnResult]", result: "concurrent.futures.Future[TurnResult]") -> None:
    if result.done():
        return
    if job.cancelled():
        result.cancel()
    elif job.exception() is not None:
        result.set_exception(job.exception())  # type: ignore[arg-type]
    else:
        result.set_result(job.result())


