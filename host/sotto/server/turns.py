"""One text turn of a WebSocket session, on models shared by every session.

The model part of a turn (the agent: rules, reply sentences, the model's state patch)
runs on the shared model worker, queued fairly with other sessions' turns; each reply
sentence is synthesised on the shared TTS worker as soon as it arrives. The turn's
budget starts when its words arrive, so time spent queued counts against it, and the
degradation ladder (DESIGN.md) acts on that clock:

- acknowledge: no answer audio by `ack_after_ms` -> an `ack` message with a phrase
  synthesised at start-up goes out first (never silence);
- shorten: still none by `shorten_after_ms` -> at most one answer sentence;
- defer: still none by `defer_after_ms` -> the model's state patch (deep work) is
  skipped for this turn; the rules' update, committed before the reply, stands.

The model's patch is also skipped when other sessions are waiting for the model (it
costs 1-2 s on the embedded model and would delay everyone): recorded as `defer`.
A remote engine that is down degrades the turn: the agent answers from the working
memory without the LLM, or the reply goes out without audio; the error is recorded.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from sotto.audio.resample import resample_pcm16
from sotto.engines.base import AudioChunk, Recognizer, SpeechSynthesizer
from sotto.errors import SottoError
from sotto.server.scheduler import FairWorker
from sotto.voice.acks import DEFAULT_ACKS
from sotto.voice.budgets import FIRST_ANSWER, BudgetConfig

ACKNOWLEDGE = "acknowledge"
SHORTEN = "shorten"
DEFER = "defer"
FALLBACK_REPLY = "fallback_reply"  # the LLM failed; the reply was composed from the working memory
TEXT_ONLY = "text_only"  # TTS failed; the reply went out without audio
MAX_TURN_S = 60.0  # a turn still unanswered after this is abandoned with an error
RECOGNIZER_CHUNK_MS = 100


class AgentLike(Protocol):
    def start_turn(self, session_id: str, words: str, *, turn: int | None = None, lang: str | None = None) -> Any: ...

    def state(self, session_id: str) -> Any: ...


@dataclass
class TurnOutcome:
    session_id: str
    turn: int | None
    user: str
    reply: str
    audio: bytes  # PCM16 at sample_rate: the answer (acknowledgements were sent before)
    sample_rate: int
    first_answer_ms: float | None
    total_ms: float
    queued_ms: float | None
    reply_source: str
    degrade_actions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    state: dict[str, Any] | None = None
    transcript: str | None = None
    asr_ms: float | None = None
    over_target: bool = False

    @property
    def degraded(self) -> bool:
        return bool(self.degrade_actions)

    def to_message(self, *, want_state: bool) -> dict[str, Any]:
        from sotto.server.messages import encode_wav_base64

        message: dict[str, Any] = {
            "type": "reply",
            "reply": self.reply,
            "audio": encode_wav_base64(self.audio, self.sample_rate) if self.audio else None,
            "sample_rate": self.sample_rate,
            "turn": self.turn,
            "first_answer_ms": None if self.first_answer_ms is None else round(self.first_answer_ms, 1),
            "total_ms": round(self.total_ms, 1),
            "queued_ms": None if self.queued_ms is None else round(self.queued_ms, 1),
            "degraded": self.degraded,
            "degrade_actions": self.degrade_actions,
            "reply_source": self.reply_source,
        }
        if self.errors:
            message["errors"] = self.errors
        if self.transcript is not None:
            message["transcript"] = self.transcript
            message["asr_ms"] = None if self.asr_ms is None else round(self.asr_ms, 1)
        if want_state:
            message["state"] = self.state
        return message


@dataclass(frozen=True)
class Phrase:
    text: str
    pcm: bytes
    sample_rate: int


class _TurnControl:
    """Shared by the event loop (ladder) and the model worker (the agent's turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.turn: Any = None
        self.max_sentences = 2
        self.defer = False
        self.cancelled = False
        self.started_at: float | None = None

    def attach(self, turn: Any) -> None:
        with self._lock:
            self.turn = turn
            if self.max_sentences < 2:
                turn.shorten(self.max_sentences)
            if self.cancelled:
                turn.cancel()

    def shorten(self) -> None:
        with self._lock:
            self.max_sentences = 1
            if self.turn is not None:
                self.turn.shorten(1)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            if self.turn is not None:
                self.turn.cancel()


_END = object()


class TurnService:
    """Runs text and audio turns for every session on one model worker and one TTS worker."""

    def __init__(
        self,
        agent: AgentLike,
        tts: SpeechSynthesizer,
        *,
        budgets: BudgetConfig | None = None,
        clock: Callable[[], float] = time.monotonic,
        memory_agent: AgentLike | None = None,
    ) -> None:
        self.agent = agent
        # The same working memory without the LLM (rules + composed reply): answers a turn in
        # milliseconds when the model queue is too long for its budget (deep work deferred).
        self.memory_agent = memory_agent
        self.tts = tts
        self.budgets = budgets or BudgetConfig()
        self.clock = clock
        self.model_worker = FairWorker("sotto-model")
        self.tts_worker = FairWorker("sotto-tts")
        self.asr_worker = FairWorker("sotto-asr")
        self.memory_worker = FairWorker("sotto-memory")
        self.acks: list[Phrase] = []
        self._next_ack = 0
        self.model_turn_ms = 1000.0  # moving average of one turn's model work (a guess until measured)
        self._last_model_job: dict[str, concurrent.futures.Future[Any]] = {}

    def expected_model_wait_ms(self) -> float:
        """How long a turn submitted now would wait for the model: what is left of the running
        job plus one average job per queued turn."""
        worker = self.model_worker
        since = worker.busy_since
        running_left = 0.0
        if since is not None:
            running_left = max(0.0, self.model_turn_ms - (time.monotonic() - since) * 1000.0)
        return running_left + worker.pending() * self.model_turn_ms

    def _should_defer(self) -> bool:
        if self.memory_agent is None or not self.budgets.ladder.enabled:
            return False
        # Answer from memory when the model could not even start before the acknowledgement
        # is due: queued behind other turns, the answer would be late for its budget anyway.
        return self.expected_model_wait_ms() > self.budgets.ladder.ack_after_ms

    async def prepare(self) -> None:
        """Synthesise the acknowledgements once, so the ladder never waits for TTS."""
        for text in DEFAULT_ACKS:
            try:
                audio = await asyncio.wrap_future(self.tts_worker.submit("_startup", functools.partial(self._synthesize, text)))
            except SottoError:
                audio = (b"", self.tts.sample_rate)  # TTS down at start-up: text-only acknowledgements
            self.acks.append(Phrase(text, audio[0], audio[1]))

    def close(self) -> None:
        for worker in (self.model_worker, self.tts_worker, self.asr_worker, self.memory_worker):
            worker.close()

    # ------------------------------------------------------------------ text

    async def text_turn(
        self,
        session_id: str,
        words: str,
        *,
        lang: str | None = None,
        want_state: bool = False,
        send: Callable[[dict[str, Any]], Awaitable[None]],
        received_at: float | None = None,
    ) -> TurnOutcome:
        t0 = received_at if received_at is not None else self.clock()
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[object] = asyncio.Queue()
        control = _TurnControl()

        def post(item: object) -> None:
            loop.call_soon_threadsafe(items.put_nowait, item)

        outcome = TurnOutcome(session_id, None, words, "", b"", self.tts.sample_rate, None, 0.0, None, "")
        if self._should_defer():
            assert self.memory_agent is not None
            memory_agent = self.memory_agent
            _add(outcome.degrade_actions, DEFER)
            previous = self._last_model_job.get(session_id)
            if previous is not None:  # this session's model patch must land before its next turn starts
                await asyncio.wait({asyncio.wrap_future(previous)})
            model_job = self.memory_worker.submit(
                session_id, lambda: self._model_job(memory_agent, session_id, words, lang, control, post))
        else:
            model_job = self.model_worker.submit(
                session_id, lambda: self._model_job(self.agent, session_id, words, lang, control, post, timed=True))
            self._last_model_job[session_id] = model_job
            model_job.add_done_callback(lambda f: self._forget_job(session_id, f))
        first_ready = asyncio.Event()
        producer = asyncio.create_task(self._produce(items, control, outcome, first_ready, t0))
        try:
            await self._ladder(producer, first_ready, control, outcome, send, t0)
            try:
                await asyncio.wait_for(asyncio.shield(producer), max(0.1, MAX_TURN_S - (self.clock() - t0)))
            except asyncio.TimeoutError:
                control.cancel()
                model_job.cancel()
                outcome.errors.append(f"turn_timeout: no reply within {MAX_TURN_S:g} s")
            if want_state:
                outcome.state = await self._final_state(session_id, model_job)
        except BaseException:
            # Client gone or server stopping: stop this turn's model work, let the queue go on.
            control.cancel()
            model_job.cancel()
            producer.cancel()
            raise
        finally:
            if not producer.done():
                producer.cancel()
        outcome.total_ms = (self.clock() - t0) * 1000.0
        if outcome.first_answer_ms is not None:
            outcome.over_target = outcome.first_answer_ms > self.budgets.budgets[FIRST_ANSWER].target_ms
        return outcome

    async def _final_state(self, session_id: str, model_job: "Any") -> dict[str, Any] | None:
        """The state after the whole turn (the model's patch included), as the client asked for it."""
        try:
            result = await asyncio.wrap_future(model_job)
        except (asyncio.CancelledError, SottoError):
            raise
        except Exception:  # noqa: BLE001 - the committed state is still there
            result = None
        if result is not None and getattr(result, "state", None) is not None:
            return dict(result.state.to_dict())
        state = await asyncio.to_thread(self.agent.state, session_id)
        return dict(state.to_dict())

    def _forget_job(self, session_id: str, job: "concurrent.futures.Future[Any]") -> None:
        if self._last_model_job.get(session_id) is job:
            del self._last_model_job[session_id]

    def _model_job(self, agent: AgentLike, session_id: str, words: str, lang: str | None, control: _TurnControl,
                   post: Callable[[object], None], *, timed: bool = False) -> Any:
        control.started_at = self.clock()
        post(("started", control.started_at))
        try:
            turn = agent.start_turn(session_id, words, lang=lang)
        except BaseException as exc:
            post(exc)
            raise
        control.attach(turn)
        try:
            for sentence in turn.sentences():
                post(("sentence", sentence))
        except BaseException as exc:  # noqa: BLE001 - the turn is finished below either way
            post(exc)
        finally:
            report = turn.report
            # Deep work only when nobody else waits for the model and the ladder did not defer it.
            run_model = not control.defer and not control.cancelled and not self.model_worker.others_waiting(session_id)
            deferred = not run_model and not control.cancelled
            post(("end", turn.number, report.source, list(report.rejected), deferred))
            result = turn.finish(run_model=run_model)
            if timed:
                spent = (self.clock() - control.started_at) * 1000.0
                self.model_turn_ms = 0.7 * self.model_turn_ms + 0.3 * spent
        return result

    async def _produce(self, items: "asyncio.Queue[object]", control: _TurnControl, outcome: TurnOutcome,
                       first_ready: asyncio.Event, t0: float) -> None:
        answers: list[str] = []
        audio: list[bytes] = []
        while True:
            item = await items.get()
            if isinstance(item, BaseException):
                outcome.errors.append(_describe(item))
                break
            assert isinstance(item, tuple)
            kind = item[0]
            if kind == "started":
                outcome.queued_ms = (item[1] - t0) * 1000.0
            elif kind == "sentence":
                if len(answers) >= control.max_sentences:
                    continue
                if answers and self.tts_worker.others_waiting(outcome.session_id):
                    _add(outcome.degrade_actions, SHORTEN)  # other sessions wait for the voice: one sentence each
                    continue
                answers.append(item[1])
                pcm = await self._speak(item[1], outcome)
                audio.append(pcm)
                if outcome.first_answer_ms is None:
                    outcome.first_answer_ms = (self.clock() - t0) * 1000.0
                    first_ready.set()
            elif kind == "end":
                _, outcome.turn, source, rejected, deferred = item
                outcome.reply_source = source
                failures = [r for r in rejected if r.startswith("model failed")]
                if failures:
                    outcome.errors.extend(failures)
                    if source == "composed":
                        _add(outcome.degrade_actions, FALLBACK_REPLY)
                if deferred:
                    _add(outcome.degrade_actions, DEFER)
                break
        outcome.reply = " ".join(answers)
        outcome.audio = b"".join(audio)
        first_ready.set()

    async def _speak(self, text: str, outcome: TurnOutcome) -> bytes:
        try:
            pcm, rate = await asyncio.wrap_future(self.tts_worker.submit(outcome.session_id, lambda: self._synthesize(text)))
        except SottoError as exc:
            outcome.errors.append(f"{exc.code}: {exc}")
            _add(outcome.degrade_actions, TEXT_ONLY)
            return b""
        return pcm if rate == outcome.sample_rate else resample_pcm16(pcm, rate, outcome.sample_rate)

    def _synthesize(self, text: str) -> tuple[bytes, int]:
        rate = self.tts.sample_rate
        pieces = []
        for audio in self.tts.synthesize(text):
            rate = audio.sample_rate
            pieces.append(audio.pcm)
        return b"".join(pieces), rate

    async def _ladder(self, producer: "asyncio.Task[None]", first_ready: asyncio.Event, control: _TurnControl,
                      outcome: TurnOutcome, send: Callable[[dict[str, Any]], Awaitable[None]], t0: float) -> None:
        ladder = self.budgets.ladder
        if not ladder.enabled:
            return
        ready = asyncio.create_task(first_ready.wait())
        try:
            for after_ms, action in ((ladder.ack_after_ms, ACKNOWLEDGE), (ladder.shorten_after_ms, SHORTEN),
                                     (ladder.defer_after_ms, DEFER)):
                timeout = max(0.0, t0 + after_ms / 1000.0 - self.clock())
                done, _ = await asyncio.wait({producer, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if done:
                    return
                _add(outcome.degrade_actions, action)
                if action == ACKNOWLEDGE:
                    await send(self._ack_message())
                elif action == SHORTEN:
                    control.shorten()
                else:
                    control.defer = True
        finally:
            ready.cancel()

    def _ack_message(self) -> dict[str, Any]:
        from sotto.server.messages import encode_wav_base64

        if not self.acks:
            return {"type": "ack", "text": DEFAULT_ACKS[0], "audio": None}
        phrase = self.acks[self._next_ack % len(self.acks)]
        self._next_ack += 1
        audio = encode_wav_base64(phrase.pcm, phrase.sample_rate) if phrase.pcm else None
        return {"type": "ack", "text": phrase.text, "audio": audio, "sample_rate": phrase.sample_rate}

    # ------------------------------------------------------------------ audio

    async def transcribe(self, session_id: str, recognizer: Recognizer, turn_id: int, pcm: bytes,
                         sample_rate: int) -> tuple[str, float]:
        """The final words of a whole utterance (every final the recognizer gave, joined) and the ms it took."""
        started = self.clock()
        text = await asyncio.wrap_future(
            self.asr_worker.submit(session_id, lambda: _recognize(recognizer, turn_id, pcm, sample_rate)))
        return text, (self.clock() - started) * 1000.0


def _recognize(recognizer: Recognizer, turn_id: int, pcm: bytes, sample_rate: int) -> str:
    """One utterance as one recognizer turn (a turn id of its own: the recognizer starts fresh)."""
    if sample_rate != recognizer.sample_rate:
        pcm = resample_pcm16(pcm, sample_rate, recognizer.sample_rate)
    step = int(recognizer.sample_rate * RECOGNIZER_CHUNK_MS / 1000) * 2
    finals: list[str] = []
    for seq, offset in enumerate(range(0, len(pcm), step)):
        for transcript in recognizer.accept(AudioChunk(turn_id, seq, pcm[offset: offset + step], recognizer.sample_rate)):
            if transcript.final and transcript.text.strip():
                finals.append(transcript.text.strip())
    for transcript in recognizer.flush(turn_id):
        if transcript.final and transcript.text.strip():
            finals.append(transcript.text.strip())
    return " ".join(finals)


def _add(actions: list[str], action: str) -> None:
    if action not in actions:
        actions.append(action)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SottoError):
        return f"{exc.code}: {exc}"
    return f"{type(exc).__name__}: {exc}"
