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

from typing import Protocol

from sotto.voice.budgets import FIRST_ANSWER, FIRST_BYTE, TOTAL_TURN, BudgetConfig

ACKNOWLEDGE = "acknowledge"
SHORTEN = "shorten"
DEFER = "defer"
FALLBACK_REPLY = "fallback_reply"  # the LLM failed; the reply was composed from the working memory
TEXT_ONLY = "text_only"  # TTS failed; the sentence went out without audio


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
