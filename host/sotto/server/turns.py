"""One text turn of a WebSocket session, on the host's one turn engine.

The turn runs in `sotto.voice.turn_runner.TurnRunner`, as a board's turns do: the agent's
turn on the shared model worker (queued fairly with other sessions' turns), each answer
sentence synthesised on the shared TTS worker, and the degradation ladder acting on the
turn's clock, which starts when its words arrive (time spent queued counts):

- acknowledge: no answer audio by `ack_after_ms` -> an `ack` message with a cached phrase
  goes out first (never silence);
- shorten: still none by `shorten_after_ms` -> at most one answer sentence;
- defer: still none by `defer_after_ms` -> the model's state patch (deep work) is skipped
  for this turn and a deferral phrase goes out as an `ack` message; the rules' update,
  committed before the reply, stands.

When the model queue is too long for the budget, the turn is answered from the working
memory at once (the runner's memory agent), recorded as `defer`. A remote engine that is
down degrades the turn: the agent answers from the working memory without the LLM, or the
reply goes out without audio; the error is recorded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from sotto.agent.actions import RequestedAction
from sotto.audio.resample import resample_pcm16
from sotto.engines.base import AudioChunk, Recognizer
from sotto.errors import SottoError
from sotto.server.messages import encode_wav_base64
from sotto.voice.budgets import FIRST_ANSWER, BudgetConfig, LadderConfig
from sotto.voice.ladder import DEFER
from sotto.voice.reply_types import ANSWER, ReplyControl, Segment, TurnRequest
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.workers import FairWorker

MAX_TURN_S = 60.0  # a turn still unanswered after this is abandoned with an error
RECOGNIZER_CHUNK_MS = 100


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


def serve_budgets() -> BudgetConfig:
    """The voice budgets, except that a client waits for its reply after a deferral."""
    return BudgetConfig(ladder=LadderConfig(give_up_after_defer=False))


class MessageReply:
    """The turn engine's `ReplyOutput` for a WebSocket client: cached phrases go out at once
    as `ack` messages, the answer's audio is gathered for the reply message."""

    def __init__(self, send: Callable[[dict[str, Any]], Awaitable[None]], sample_rate: int,
                 clock: Callable[[], float], t0: float) -> None:
        self._send = send
        self._sample_rate = sample_rate
        self._clock = clock
        self._t0 = t0
        self.answers: list[str] = []
        self.audio: list[bytes] = []
        self.first_answer_ms: float | None = None

    @property
    def sample_rate(self) -> int:
        return self._sample_rate

    @property
    def has_played(self) -> bool:
        return bool(self.answers)

    async def run_action(self, action: RequestedAction) -> None:
        pass  # no board behind a text client: the reply says what was asked

    def action_not_sent(self, action: RequestedAction, reason: str) -> None:
        pass  # nothing would have been sent: there is no board behind a text client

    async def play(self, segment: Segment) -> None:
        if segment.kind != ANSWER:
            audio = encode_wav_base64(segment.pcm, self._sample_rate) if segment.pcm else None
            await self._send({"type": "ack", "kind": segment.kind, "text": segment.text, "audio": audio,
                              "sample_rate": self._sample_rate})
            return
        self.answers.append(segment.text)
        self.audio.append(segment.pcm)
        if self.first_answer_ms is None:
            self.first_answer_ms = (self._clock() - self._t0) * 1000.0


class TurnService:
    """Runs text and audio turns for every session on the host's turn engine."""

    def __init__(self, runner: TurnRunner, *, budgets: BudgetConfig | None = None) -> None:
        self.runner = runner
        self.tts = runner.tts
        self.budgets = budgets or serve_budgets()
        self.asr_worker = FairWorker("sotto-asr", clock=runner.clock)

    def clock(self) -> float:
        return self.runner.clock.now()

    async def prepare(self) -> None:
        """Synthesise the cached phrases once, so the ladder never waits for TTS."""
        await self.runner.phrases(self.tts.sample_rate)

    def close(self) -> None:
        self.asr_worker.close()  # the turn engine belongs to the runtime, which closes it

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
        rate = self.tts.sample_rate
        output = MessageReply(send, rate, self.clock, t0)
        control = ReplyControl()
        request = TurnRequest(session_id, words, t0, lang=lang)
        run = asyncio.create_task(self.runner.run(request, output, control, budgets=self.budgets,
                                                  text_only_on_tts_failure=True))
        outcome = TurnOutcome(session_id, None, words, "", b"", rate, None, 0.0, None, "")
        try:
            reply = await asyncio.wait_for(asyncio.shield(run), max(0.1, MAX_TURN_S - (self.clock() - t0)))
        except asyncio.TimeoutError:
            run.cancel()
            await asyncio.wait({run})
            outcome.errors.append(f"turn_timeout: no reply within {MAX_TURN_S:g} s")
            reply = None
        except BaseException:
            # Client gone or server stopping: stop this turn's model work, let the queue go on.
            run.cancel()
            await asyncio.wait({run})
            raise
        if reply is not None:
            outcome.turn, outcome.reply_source, outcome.queued_ms = reply.turn, reply.reply_source, reply.queued_ms
            outcome.degrade_actions = list(reply.degrade_actions)
            outcome.errors += reply.errors
            if reply.patch_skipped and DEFER not in outcome.degrade_actions:
                outcome.degrade_actions.append(DEFER)
            if want_state:
                outcome.state = await self._final_state(session_id, reply.result)
        outcome.reply = " ".join(output.answers)
        outcome.audio = b"".join(output.audio)
        outcome.first_answer_ms = output.first_answer_ms
        outcome.total_ms = (self.clock() - t0) * 1000.0
        if outcome.first_answer_ms is not None:
            outcome.over_target = outcome.first_answer_ms > self.budgets.budgets[FIRST_ANSWER].target_ms
        return outcome

    async def _final_state(self, session_id: str, result: Any) -> dict[str, Any] | None:
        """The state after the whole turn (the model's patch included), as the client asked for it."""
        try:
            done = await asyncio.wrap_future(result)
        except (asyncio.CancelledError, SottoError):
            raise
        except Exception:  # noqa: BLE001 - the committed state is still there
            done = None
        if done is not None and getattr(done, "state", None) is not None:
            return dict(done.state.to_dict())
        state = await asyncio.to_thread(self.runner.agent.state, session_id)
        return dict(state.to_dict())

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
