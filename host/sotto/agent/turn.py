"""One user turn of the agent: its board actions and reply sentences, its controls (cancel,
shorten; callable from any thread), and `finish()`: the model's state patch and the record."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from sotto.agent.actions import RequestedAction
from sotto.agent.confirm import PendingConfirmation
from sotto.agent.reference import Reference
from sotto.agent.reply import ReplyReport, ReplySentenceOut
from sotto.agent.router import CONFIRM, Route
from sotto.backfill.corrector import Correction
from sotto.memory.diff import Change
from sotto.memory.monologue import ModelUpdate, RulesUpdate
from sotto.memory.state import SessionState

if TYPE_CHECKING:
    from sotto.agent.core import Agent


@dataclass
class TurnResult:
    session_id: str
    turn: int
    words: str
    reply: str
    reply_source: str
    state: SessionState
    changes: list[Change]
    json_failures: int
    context_overflows: int
    interrupted: bool
    rules_ms: float
    first_sentence_ms: float | None
    model_update_ms: float
    rejected: list[str] = field(default_factory=list)
    actions: list[RequestedAction] = field(default_factory=list)
    prior_side_effects: list[str] = field(default_factory=list)
    corrections: list[Correction] = field(default_factory=list)  # ASR entity backfill
    route: str = ""  # which route answered (sotto.agent.router) and why
    route_reason: str = ""
    # sotto.agent.confirm: the value this turn asked back (PendingConfirmation.to_dict()), and
    # what this turn's words said to the last turn's question ("yes", "no", "corrected", "lapsed").
    confirm_asked: dict[str, Any] | None = None
    confirm_answer: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "turn": self.turn,
            "user": self.words,
            "reply": self.reply,
            "reply_source": self.reply_source,
            "state": self.state.to_dict(),
            "changes": [c.to_dict() for c in self.changes],
            "json_failures": self.json_failures,
            "context_overflows": self.context_overflows,
            "interrupted": self.interrupted,
            "rules_ms": round(self.rules_ms, 1),
            "first_sentence_ms": None if self.first_sentence_ms is None else round(self.first_sentence_ms, 1),
            "model_update_ms": round(self.model_update_ms, 1),
            "actions": [{"name": a.name, "value": a.value, "description": a.description} for a in self.actions],
            "prior_side_effects": list(self.prior_side_effects),
            "corrections": [{"heard": c.heard, "entity": c.entity} for c in self.corrections],
            "route": self.route,
            "route_reason": self.route_reason,
            "confirm_asked": self.confirm_asked,
            "confirm_answer": self.confirm_answer,
        }


def action_sentences(actions: list[RequestedAction], prior: list[str], lang: str) -> list[str]:
    """What the reply says first: actions that already ran (interrupted turn), then this turn's."""
    zh = lang == "zh"
    out: list[str] = []
    if prior:
        out.append(("刚才已经" + "，".join(prior) + "。") if zh else ("Earlier I already did this: " + "; ".join(prior) + "."))
    if actions:
        said = ("，".join(a.description for a in actions)) if zh else "; ".join(a.description for a in actions)
        out.append(f"好的，{said}。" if zh else f"Okay, {said}.")
    return out


class Turn:
    """One user turn. `sentences()` once, then `finish()` exactly once (it releases the agent)."""

    def __init__(
        self,
        agent: Agent,
        session_id: str,
        number: int,
        words: str,
        before: SessionState,
        rules: RulesUpdate,
        rules_ms: float,
        *,
        actions: list[RequestedAction] | None = None,
        prior: list[str] | None = None,
        heard: str | None = None,
        route: Route | None = None,
        reference: Reference | None = None,
        composed: list[str] | None = None,
    ) -> None:
        self.route = route or Route(CONFIRM, "not routed")
        self.composed = composed  # the reply, when the agent wrote it already (a confirmation's question or answer)
        self.confirm_asked: PendingConfirmation | None = None
        self.confirm_answer = ""
        self.reference = reference
        self.heard = words if heard is None else heard  # everything the user said (after backfill)
        self.asr_text = self.heard  # the transcript as recognised
        self.backfill: list[Correction] = []
        self.actions: list[RequestedAction] = list(actions or [])
        self.prior_side_effects: list[str] = list(prior or [])
        self.agent = agent
        self.session_id = session_id
        self.number = number
        self.words = words  # what goes to the working memory (action requests taken out)
        self.before = before
        self.rules = rules
        self.rules_ms = rules_ms
        self.state = rules.state
        self.report = ReplyReport()
        self.model_update: ModelUpdate | None = None
        self._cancel = threading.Event()
        self._max_sentences = 2
        self._finished = False

    def ask(self, pending: PendingConfirmation, question: str) -> None:
        """The reply asks the unsure value back instead of confirming the turn."""
        self.confirm_asked = pending
        self.composed = [question]
        self.route = Route(CONFIRM, f"asks back an unsure {pending.kind}")

    # -- controls, callable from any thread

    def cancel(self) -> None:
        self._cancel.set()

    def shorten(self, max_sentences: int = 1) -> None:
        self._max_sentences = max(1, min(self._max_sentences, max_sentences))

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def predicted_first_sentence_ms(self) -> float | None:
        """The route's predicted time to the first answer sentence (0: composed, at once; None: unknown)."""
        return self.agent.predicted_first_sentence_ms(self.route, self.words, self.rules.rules.lang)

    @property
    def deep_work(self) -> str:
        """What deferring this turn's deep work would put off ("" when nothing would)."""
        if self.agent.monologue.model is None or not self.words or self.agent.config.model_update != "after_reply":
            return ""
        return "the model's check of my notes"

    # -- the reply

    def sentences(self) -> Iterator[str]:
        for text in action_sentences(self.actions, self.prior_side_effects, self.rules.rules.lang):
            if self._cancel.is_set():
                return
            self.report.sentences.append(ReplySentenceOut(text, "composed"))
            self.report.source = self.report.source or "composed"
            yield text
        if self.actions and not self.words:
            return  # the words only asked for the action: its confirmation is the answer
        if self.composed is not None:
            self.report.route, self.report.route_reason = self.route.name, self.route.reason
            self.report.first_sentence_ms = 0.0
            for text in self.composed:
                if self._cancel.is_set():
                    self.report.cancelled = True
                    return
                self.report.sentences.append(ReplySentenceOut(text, "composed"))
                self.report.source = self.report.source or "composed"
                yield text
            return
        yield from self.agent.writer.sentences(
            self.state,
            self.words,
            self.rules.rules,
            self.report,
            route=self.route,
            reference=self.reference,
            max_sentences=lambda: self._max_sentences,
            cancelled=self._cancel,
        )

    # -- the model's patch and the record

    def _run_model_update(self) -> None:
        if self.model_update is not None:
            return
        self.report.wait_for_model()  # a reply stream past its deadline may still be stopping
        if not self.words:
            return  # only board actions were asked for: nothing for the model to note
        update = self.agent.monologue.model_update(self.state, self.words, self.rules.rules)
        self.model_update = update
        if update.changes:
            update.state.touch()
            self.agent.store.commit(update.state, turn=self.number, source="model", changes=update.changes)
            self.state = update.state
        if update.failures or update.rejected or update.context_overflow:
            self.agent.store.append_trace(
                self.session_id,
                {
                    "type": "state_update_failed" if update.failed else "state_update_checked",
                    "turn": self.number,
                    "failures": update.failures,
                    "rejected": update.rejected,
                    "context_overflow": update.context_overflow,
                    "raw": [r[:300] for r in update.raw],
                },
            )

    def finish(self, *, run_model: bool = True) -> TurnResult:
        if self._finished:
            raise RuntimeError("turn already finished")
        self._finished = True
        try:
            self.report.wait_for_model()
            if self.agent.config.model_update == "after_reply":
                if run_model:
                    self._run_model_update()
                elif self.words:
                    # Deferred, or the user already spoke again: their next answer matters more
                    # than this patch; the rules' state (committed) stands for this turn.
                    self.agent.store.append_trace(self.session_id, {"type": "state_update_skipped", "turn": self.number})
            update = self.model_update
            failures = 1 if update is not None and update.failed else 0
            overflows = int(bool(update and update.context_overflow)) + int(self.report.context_overflow)
            changes = self.rules.changes + (update.changes if update else [])
            result = TurnResult(
                session_id=self.session_id,
                turn=self.number,
                words=self.heard,
                reply=self.report.text,
                reply_source=self.report.source,
                state=self.state,
                changes=changes,
                json_failures=failures,
                context_overflows=overflows,
                interrupted=self.cancelled,
                rules_ms=self.rules_ms,
                first_sentence_ms=self.report.first_sentence_ms,
                model_update_ms=update.elapsed_ms if update else 0.0,
                rejected=self.report.rejected + (update.rejected if update else []),
                actions=list(self.actions),
                prior_side_effects=list(self.prior_side_effects),
                corrections=list(self.backfill),
                route=self.route.name,
                route_reason=self.route.reason,
                confirm_asked=self.confirm_asked.to_dict() if self.confirm_asked is not None else None,
                confirm_answer=self.confirm_answer,
            )
            self.agent.store.append_trace(self.session_id, self._trace_record(result, update, failures, overflows))
            every = self.agent.config.promote_every_turns
            if every > 0 and self.number % every == 0:
                self.agent.promote_profile(self.session_id, self.state)
            return result
        finally:
            self.agent._model_lock.release()

    def _trace_record(self, result: TurnResult, update: ModelUpdate | None, failures: int,
                      overflows: int) -> dict[str, Any]:
        """The turn as the store's trace keeps it (`sotto stats`, `sotto trace` read it)."""
        changes = result.changes
        return {
            "type": "reply_interrupted" if self.cancelled else "agent_turn",
            "turn": self.number,
            "user": self.heard,
            "reply": result.reply,
            "reply_source": result.reply_source,
            "route": self.route.name,
            "route_reason": self.route.reason,
            "reply_rejected": self.report.rejected,
            "changes": [c.to_dict() for c in changes],
            "json_failures": failures,
            "context_overflows": overflows,
            "first_sentence_ms": result.first_sentence_ms,
            "model_update_ms": result.model_update_ms,
            "actions": [a.description for a in self.actions],
            "prior_side_effects": list(self.prior_side_effects),
            "knowledge": list(self.report.reference_titles),
            "update_prompt_tokens": update.prompt_tokens if update else 0,
            "update_completion_tokens": update.completion_tokens if update else 0,
            "reply_tokens": self.agent.model.count_tokens(result.reply)
            if self.agent.model is not None and result.reply_source in ("model", "mixed")
            else 0,
            "asr_text": self.asr_text if self.backfill else None,
            "corrections": [{"heard": c.heard, "entity": c.entity} for c in self.backfill],
        }
