"""The degradation ladder of one turn (docs/DESIGN.md, "Latency budgets and degradation").

While the first answer sentence is not under way, the ladder's steps fire in order at
their times after the final words: acknowledge (a cached phrase), shorten (one sentence),
defer (skip the deep work and say so). Once the agent has routed the turn, its
prediction of the first answer replaces the timers' guess (`on_prediction`): an answer
predicted within the first-byte budget gets no acknowledgement at all, one predicted later
gets it at once, and a composed answer never gets one (it is under way already); and the deferral is dropped when
there is no deep work to defer. A prediction of the time to the first answer
(`FirstAnswerPredictor`, injected into the turn engine) lets the ladder act before the
timers: when the model could not even start before the acknowledgement is due, the turn
is answered from the working memory at once and the deep work deferred.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Union

from sotto.clock import Clock
from sotto.errors import SottoError
from sotto.voice.budgets import FIRST_ANSWER, FIRST_BYTE, TOTAL_TURN, BudgetConfig
from sotto.voice.phrases import PhraseCache
from sotto.voice.reply_types import ACKNOWLEDGEMENT, ANSWER, DEFERRAL, ReplyControl, ReplyOutcome, ReplyOutput, Segment
from sotto.voice.usage import COMPLETED, DEFERRED, FAILED

ACKNOWLEDGE = "acknowledge"
SHORTEN = "shorten"
DEFER = "defer"
FALLBACK_REPLY = "fallback_reply"  # the LLM failed; the reply was composed from the working memory
TEXT_ONLY = "text_only"  # TTS failed; the sentence went out without audio

@dataclass(frozen=True)
class Prediction:
    """For the player: the first answer's predicted time (ms after the final words)."""

    first_answer_ms: float
    deep_work: str
    composed: bool  # answered by code at once: never a filler before it


SegmentItem = Union[Segment, Prediction, BaseException, None]  # None: the reply is complete
DegradeListener = Callable[[str, dict[str, Any]], None]


class FirstAnswerPredictor(Protocol):
    def first_answer_ms(self, session_id: str, words: str) -> float | None:
        """Predicted ms from the final words to the first answer sentence; None: no idea."""
        ...


class DegradationLadder:
    def __init__(self, budgets: BudgetConfig, *, predicted_first_answer_ms: float | None = None) -> None:
        self.budgets = budgets
        self.config = budgets.ladder
        self.predicted_first_answer_ms = predicted_first_answer_ms
        steps = ((self.config.ack_after_ms, ACKNOWLEDGE), (self.config.shorten_after_ms, SHORTEN),
                 (self.config.defer_after_ms, DEFER))
        self._steps = list(steps) if self.config.enabled else []

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def answer_from_memory(self) -> bool:
        """The prediction says the model could not even start before the acknowledgement is
        due: answer from the working memory now (the model's deep work is deferred)."""
        predicted = self.predicted_first_answer_ms
        return self.enabled and predicted is not None and predicted > self.config.ack_after_ms

    def on_prediction(self, first_answer_ms: float, *, deep_work: str = "", composed: bool = False) -> None:
        """The agent's prediction (ms after the final words) replaces the timers' guess. A
        composed answer is under way already: a filler would only delay it."""
        self.predicted_first_answer_ms = first_answer_ms
        acknowledge = any(action == ACKNOWLEDGE for _, action in self._steps)
        steps = [(at, action) for at, action in self._steps if action != ACKNOWLEDGE]
        if not deep_work:
            steps = [(at, action) for at, action in steps if action != DEFER]  # nothing to defer: say nothing of it
        if acknowledge and not composed and first_answer_ms > self.budgets.budgets[FIRST_BYTE].target_ms:
            steps.insert(0, (0.0, ACKNOWLEDGE))  # due now: its audio is cached
        self._steps = steps

    def next_step(self) -> tuple[float, str] | None:
        """(ms after the final words, action) of the next step, while the answer is not under way."""
        return self._steps[0] if self._steps else None

    def step_taken(self) -> None:
        self._steps.pop(0)

    def give_up_after_ms(self) -> float | None:
        """After deferring: when the answer is given up (None: never)."""
        if not self.enabled or not self.config.give_up_after_defer:
            return None
        return self.budgets.budgets[FIRST_ANSWER].limit_ms

    def stall_limit_ms(self) -> float | None:
        """An answer that stalls mid-way is cut here (ms after the final words)."""
        return self.budgets.budgets[TOTAL_TURN].limit_ms if self.enabled else None

    def total_turn_at_risk(self, elapsed_ms: float) -> bool:
        """While answering: past this share of the total_turn target, stop after the current sentence."""
        return self.enabled and elapsed_ms > self.config.total_turn_share * self.budgets.budgets[TOTAL_TURN].target_ms


class LadderPlayer:
    """Hands the reply to the output as it is ready; while the answer is late, walks the ladder."""

    def __init__(self, clock: Clock, received_t: float, output: ReplyOutput, control: ReplyControl,
                 outcome: ReplyOutcome, ladder: DegradationLadder, phrases: PhraseCache,
                 on_degrade: DegradeListener | None) -> None:
        self.clock = clock
        self.t0 = received_t  # the final words: every budget runs from here
        self.output = output
        self.control = control
        self.outcome = outcome
        self.ladder = ladder
        self.phrases = phrases
        self.on_degrade = on_degrade

    def _at(self, ms: float) -> float:
        return self.t0 + ms / 1000.0

    async def play(self, segments: "asyncio.Queue[SegmentItem]") -> str:
        answers_sent = 0
        answer_started = False
        deferred = False
        give_up_at: float | None = None
        while True:
            deadline: float | None = None
            step: str | None = None
            if not answer_started:
                upcoming = self.ladder.next_step()
                if upcoming is not None:
                    deadline, step = self._at(upcoming[0]), upcoming[1]
                elif give_up_at is not None:
                    deadline = give_up_at
            else:
                stall = self.ladder.stall_limit_ms()
                deadline = None if stall is None else self._at(stall)
            timeout = None if deadline is None else max(0.0, deadline - self.clock.now())
            try:
                item = await self.clock.wait_for(segments.get(), timeout)
            except asyncio.TimeoutError:
                if answer_started:
                    self._record(SHORTEN, reason="answer stalled")
                    return COMPLETED
                if step is None:
                    return DEFERRED  # deferred and said so; the answer did not come in time
                self.ladder.step_taken()
                if await self._degrade(step, answer_started):
                    if step == DEFER:
                        deferred = True
                        give_up = self.ladder.give_up_after_ms()
                        give_up_at = None if give_up is None else self._at(give_up)
                continue
            if item is None:
                return DEFERRED if deferred and not answer_started else COMPLETED
            if isinstance(item, Prediction):
                if not answer_started:
                    self.ladder.on_prediction(item.first_answer_ms, deep_work=item.deep_work, composed=item.composed)
                continue
            if isinstance(item, BaseException):
                self.outcome.errors.append(_describe(item))
                return FAILED
            if item.kind == ANSWER:
                limit = self.control.max_sentences
                if limit is not None and answers_sent >= limit:
                    return COMPLETED
                answers_sent += 1
                answer_started = True
                self.outcome.answers.append(item.text)
            await self.output.play(item)
            elapsed_ms = (self.clock.now() - self.t0) * 1000.0
            if answer_started and self.control.max_sentences is None and self.ladder.total_turn_at_risk(elapsed_ms):
                await self._degrade(SHORTEN, answer_started, keep=answers_sent)

    async def _degrade(self, action: str, answer_started: bool, keep: int = 1) -> bool:
        """Fire one ladder step; False when it was not needed (e.g. audio already playing)."""
        if action == ACKNOWLEDGE:
            if self.output.has_played:
                return False
            phrase = self.phrases.next_ack()
            self._record(action, phrase=phrase.text)
            await self.output.play(Segment(phrase.text, phrase.pcm, ACKNOWLEDGEMENT))
            return True
        if action == SHORTEN:
            self.control.shorten(keep)
            self._record(action, max_sentences=self.control.max_sentences)
            return True
        if action == DEFER and not answer_started:
            self.control.defer = True
            self.control.shorten(1)
            phrase = self.phrases.deferral
            self._record(action, phrase=phrase.text)
            self.outcome.answers.append(phrase.text)
            await self.output.play(Segment(phrase.text, phrase.pcm, DEFERRAL))
            return True
        return False

    def _record(self, action: str, **data: Any) -> None:
        self.outcome.degrade(action)
        if self.on_degrade is not None:
            elapsed = (self.clock.now() - self.t0) * 1000.0
            self.on_degrade(action, {"after_ms": round(elapsed, 1), **data})


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SottoError):
        return f"{exc.code}: {exc}"
    return f"{type(exc).__name__}: {exc}"
