"""The agent facade: a session id and the user's final words in, a spoken reply out,
with the working memory updated and persisted on the way.

    agent = Agent(model, Store())
    turn = agent.start_turn("kitchen", "Book a table at Luigi's for four")  # rules applied, committed
    run(turn.actions)                                  # (a) board actions asked for, before the answer
    for sentence in turn.sentences(): speak(sentence)  # (b) sentence by sentence
    turn.cancel()        # (c) barge-in, from any thread: the model stream stops
    turn.shorten(1)      # (d) from any thread: at most one sentence from now on
    result = turn.finish()   # the model's patch, validated and committed; the turn record

Why the reply starts before the model's patch: on the embedded 135M model a grammar-
constrained patch costs 1-2 s on 2 cores, which alone would break the 1500 ms
first-answer budget. The rule extractor's state (instant, verbatim, handles
corrections) is committed first and the reply is written from it; the model's patch
runs in `finish()`, while the reply is being played, and is merged on top (grounded in
the user's words) for the next turn. `AgentConfig(model_update="before_reply")` gives
the strict order (update, then reply) for larger models or when latency does not matter.

Voice sessions and `sotto serve` run turns through the one turn engine
(`sotto.voice.turn_runner`): each turn as one job on the model worker.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Mapping, Sequence

from sotto.backfill.corrector import Correction, EntityCorrector
from sotto.backfill.entities import entities_from_state
from sotto.engines.base import LanguageModel, WordConfidence
from sotto.errors import SottoError
from sotto.knowledge.base import KnowledgeBase
from sotto.agent.actions import DEFAULT_OUTPUTS, RequestedAction, extract_actions, volume_from_facts, words_without_actions
from sotto.memory.diff import diff_states
from sotto.memory.items import KIND_NOTE, Item
from sotto.memory.monologue import Monologue, RulesUpdate
from sotto.memory.patch import Applied, Replacement, StatePatch, apply_patch
from sotto.memory.rules import RuleResult
from sotto.agent.compose import ask_again_sentence, confirm_question, correction_sentence, kept_sentence
from sotto.agent.confirm import CORRECTED, LAPSED, YES, Answer, PendingConfirmation, read_answer, unsure_value, without_value
from sotto.agent.capability import OPEN_ANSWER, PATCH, ModelCapabilities, new_prompt_tokens, unprobed
from sotto.agent.reference import retrieve
from sotto.agent.reply import OPEN_ANSWER_DEADLINE_MS, ReplyWriter
from sotto.agent.router import CONFIRM, Route, route_turn
from sotto.agent.turn import Turn, TurnResult
from sotto.memory.state import SessionState, bounded
from sotto.memory.statements import warm_up as warm_up_reading
from sotto.memory.store import Store
from sotto.memory.text import detect_lang
from sotto.memory.profile import Profile, profile_key, promote, seed_state
from sotto.untrusted import clean_text

MAX_WORDS_CHARS = 600
# pocketsphinx's word posteriors on eval/memory/tune*'s English turns (tools/confirm_threshold.py):
# under 0.5, 80 of ~330 turns ask, 34 of those values were misrecognised and the spoken answer
# fixed 14; each fix costs about 5.6 questions up to 0.5 and 13 from 0.5 to 0.6. No right value
# was lost: every "yes" was recognised.
CONFIRM_BELOW = 0.5
CONFIRM_WAIT_S = 600.0  # a question not answered within this lapses (the next words are about something else)


@dataclass(frozen=True)
class AgentConfig:
    model_update: str = "after_reply"  # "after_reply" | "before_reply" | "off"
    # "auto": each turn routed (sotto.agent.router), the model answers open questions only
    # when it passed the open-answer probe; "composed": the model never writes a reply.
    reply_mode: str = "auto"
    first_answer_budget_ms: float = 1500.0
    # An open answer's first checked sentence must be ready by then, else "I don't know that one."
    open_answer_deadline_ms: float | None = OPEN_ANSWER_DEADLINE_MS
    # Board output names -> GPIO index for "turn on the light" / 开灯.
    outputs: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_OUTPUTS))
    # Long-term profile of sessions opened without an explicit one (e.g. "board:kiosk-1");
    # None: a session only gets a profile when its user says their name.
    profile_owner: str | None = None
    promote_every_turns: int = 3  # stable items go to the profile every N turns and at session end
    # Correct misheard entities in final transcripts against the state's known ones (sotto.backfill).
    entity_backfill: bool = True
    # Ask back a name, number, time, date or count just stored whose words were recognised with a
    # confidence under this (sotto.agent.confirm); 0: never ask.
    confirm_below: float = CONFIRM_BELOW


class Agent:
    def __init__(
        self,
        model: LanguageModel | None,
        store: Store,
        *,
        config: AgentConfig | None = None,
        knowledge: KnowledgeBase | None = None,
        capabilities: ModelCapabilities | None = None,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
    ) -> None:
        """`knowledge`: system knowledge (`sotto.knowledge.load_configured_knowledge(flag)`),
        given to the reply only, never written into the state. `capabilities`: the jobs the
        model passed in its start-up probe (`sotto.agent.capability.capabilities_for`); the
        model is given only those (None: every job, unprobed - tests and explicit callers).
        `now`: the host clock the time and date answers come from."""
        warm_up_reading()  # the Chinese segmenter's dictionary loads here, not in the first turn
        self.model = model
        self.knowledge = knowledge
        self.store = store
        self.config = config or AgentConfig()
        if self.config.reply_mode not in ("auto", "composed"):
            raise ValueError(f"unknown reply mode {self.config.reply_mode!r}")
        self.capabilities = capabilities or (unprobed(model) if model is not None else None)
        caps = self.capabilities
        # A model that failed the patch probe is never called for patches: the rules' update stands.
        patches = model is not None and caps is not None and caps.does(PATCH) and self.config.model_update != "off"
        self.monologue = Monologue(model if patches else None)
        answers = model is not None and self.config.reply_mode == "auto"
        self.writer = ReplyWriter(model if answers else None, open_answer_deadline_ms=self.config.open_answer_deadline_ms, now=now)
        self.now = now
        # llama.cpp is not thread-safe and one session's turns must not interleave.
        self._model_lock = threading.Lock()  # released by whichever thread finishes the turn
        # One corrector per session, rebuilt when the state's entity set changes.
        self._correctors: dict[str, tuple[tuple[str, ...], EntityCorrector]] = {}

    def backfill(self, session_id: str, state: SessionState, words: str) -> tuple[str, list[Correction]]:
        """The words with misheard known entities corrected (ASR backfill), and the corrections."""
        if not self.config.entity_backfill:
            return words, []
        known = tuple(entities_from_state(state))
        if not known:
            return words, []
        cached = self._correctors.get(session_id)
        if cached is None or cached[0] != known:
            cached = (known, EntityCorrector(known, "auto"))
            self._correctors[session_id] = cached
        return cached[1].correct(words)

    def model_answers(self, lang: str) -> bool:
        """Open questions in `lang` go to the model (it passed the open-answer probe)."""
        caps = self.capabilities
        return self.writer.model is not None and caps is not None and caps.does(OPEN_ANSWER, lang)

    def predicted_first_sentence_ms(self, route: Route, words: str, lang: str) -> float | None:
        """From the final words to the first answer sentence (text), before speech: 0 for a
        composed route; for the model, from its measured speed and the prompt size (None:
        its speed was never measured)."""
        if route.composed:
            return 0.0
        if self.model is None or self.capabilities is None:
            return None
        return self.capabilities.predict_first_sentence_ms(new_prompt_tokens(self.model, words, lang))

    @property
    def llm_name(self) -> str:
        return self.model.name if self.model is not None else "none"

    def state(self, session_id: str) -> SessionState:
        return self.store.ensure_session(session_id)

    # -------------------------------------------------------------- long-term profiles

    def open_session(self, session_id: str, *, profile: str | None = None) -> SessionState:
        """The session's state; a new session starts with its profile's stable items.

        `profile` is a user name or key ("Ana", "user:ana", "board:kiosk-1"); default
        `AgentConfig.profile_owner`. Only the profile's names, preferences and
        constraints are seeded: nothing of an earlier session's task or facts.
        """
        key = profile_key(profile) if profile else (profile_key(self.config.profile_owner, kind="board") if self.config.profile_owner else None)
        latest = self.store.latest(session_id)
        if key is not None:
            self.store.bind_profile(session_id, key)
        if latest is not None:
            return latest.state
        state = self.store.ensure_session(session_id)
        stored = self.store.profile(key) if key is not None else None
        if stored is not None and not stored.is_empty():
            seeded = seed_state(state, stored)
            changes = diff_states(state, seeded)
            if changes:
                seeded.touch()
                self.store.commit(seeded, turn=0, source="profile", changes=changes, note=f"seeded from {key}")
                state = seeded
        return state

    def promote_profile(self, session_id: str, state: SessionState | None = None) -> list[str]:
        """Copy the session's stable items (user_profile) to its profiles; returns the keys written.

        Written to the session's bound profile and, once the user's name is known, to
        `user:<name>`; the task, steps and facts stay in the session.
        """
        state = state or self.store.ensure_session(session_id)
        keys: list[str] = []
        bound = self.store.session_profile(session_id)
        if bound:
            keys.append(bound)
        if state.user_profile.names:
            try:
                keys.append(profile_key(state.user_profile.names[0]))
            except SottoError:
                pass  # a name that cannot be a key: the bound profile still gets it
        written: list[str] = []
        for key in dict.fromkeys(keys):
            current = self.store.profile(key) or Profile(key)
            updated = promote(current, state)
            if updated.is_empty():
                continue
            self.store.put_profile(updated, source_session=session_id)  # new items remember their session
            written.append(key)
        if written:
            self.store.append_trace(session_id, {"type": "profile_promoted", "profiles": written})
        return written

    def withdraw_actions(self, session_id: str, descriptions: Sequence[str]) -> None:
        """Board actions the turn decided but never sent (it was cancelled first) leave the
        memory, which must not say the lamp is on when the board never heard of it."""
        if not descriptions:
            return
        with self._model_lock:
            latest = self.store.latest(session_id)
            if latest is None:
                return
            before = latest.state
            after = before.copy()
            after.facts = [f for f in after.facts if f.value not in descriptions]
            changes = diff_states(before, after)
            if changes:
                after.touch()
                self.store.commit(after, turn=latest.turn, source="rules", changes=changes, note="board actions not sent")

    def end_session(self, session_id: str) -> list[str]:
        """At session end: promote the stable items to the long-term profile."""
        with self._model_lock:
            if self.store.latest(session_id) is None:
                return []
            return self.promote_profile(session_id)

    def _with_named_profile(self, session_id: str, before: SessionState, state: SessionState) -> SessionState:
        """A name said for the first time in this session brings that user's profile in."""
        new_names = [n for n in state.user_profile.names if n not in before.user_profile.names]
        if not new_names or before.user_profile.names:
            return state
        try:
            stored = self.store.profile(profile_key(new_names[0]))
        except SottoError:
            return state
        if stored is None or stored.is_empty():
            return state
        if not self.store.session_profile(session_id):
            self.store.bind_profile(session_id, stored.key)
        return seed_state(state, stored)

    def start_turn(
        self,
        session_id: str,
        words: str,
        *,
        turn: int | None = None,
        lang: str | None = None,
        prior_side_effects: Sequence[str] = (),
        heard: Sequence[WordConfidence] = (),
    ) -> "Turn":
        """Commit the rules' update for the words and return the turn (its reply comes next).

        `heard`: the final transcript's words with their confidences (a voice turn); a value
        stored from words recognised under `confirm_below` is asked back (sotto.agent.confirm),
        and the next turn's words answer the question first. Typed turns give none.

        Board actions asked for ("set the volume to 30", 开灯) are taken out of the words
        before the memory update and recorded as facts ("volume set to 30"); the turn
        carries them so the turn engine runs them on the board before the answer.
        `prior_side_effects` (actions that already ran in an interrupted turn) are noted
        in the state and mentioned at the start of the reply.
        """
        words = " ".join(clean_text(words).split())[:MAX_WORDS_CHARS]  # no NUL/control/lone surrogate is stored
        self._model_lock.acquire()  # released by Turn.finish()
        try:
            before = self.open_session(session_id) if self.store.latest(session_id) is None else self.store.ensure_session(session_id)
            number = turn if turn is not None else self.store.last_turn(session_id) + 1
            started = time.perf_counter()
            asr_text = words
            words, corrections = self.backfill(session_id, before, words)
            if corrections:
                self.store.append_trace(
                    session_id,
                    {
                        "type": "asr_backfill",
                        "turn": number,
                        "corrections": [{"heard": c.heard, "entity": c.entity, "reason": c.reason} for c in corrections],
                    },
                )
            turn_lang = lang or detect_lang(words)
            # The answer is read as recognised: the backfill would map the user's correction back
            # onto the very value asked about (a known entity now).
            answer, answered = self._answer_pending(session_id, before, asr_text, number, turn_lang)
            if answered is not None:
                return answered
            actions = extract_actions(
                words, turn_lang, outputs=self.config.outputs, volume_now=volume_from_facts([f.value for f in before.facts])
            )
            memory_words = words_without_actions(words, actions) if actions else words
            rules = self.monologue.rules_update(before, memory_words, lang=turn_lang, turn=number)
            prior = [str(p)[:120] for p in prior_side_effects if str(p).strip()][:4]
            if actions or prior:
                noted = _note_actions(rules.state, actions, prior, number)
                rules.changes = rules.changes + diff_states(rules.state, noted)
                rules.state = noted
            if rules.rules.patch.add_names:
                known = self._with_named_profile(session_id, before, rules.state)
                if known is not rules.state:
                    rules.changes = rules.changes + diff_states(rules.state, known)
                    rules.state = known
            reference = retrieve(self.knowledge, memory_words)
            route = route_turn(memory_words, rules.rules, rules.state, has_actions=bool(actions), reference=reference,
                               model_does=self.model_answers)
            rules_ms = (time.perf_counter() - started) * 1000
            state = rules.state
            if rules.changes:
                state.touch()
                self.store.commit(state, turn=number, source="rules", changes=rules.changes)
            t = Turn(
                self, session_id, number, memory_words, before, rules, rules_ms, actions=actions, prior=prior, heard=words,
                route=route, reference=reference,
            )
            t.asr_text, t.backfill, t.confirm_answer = asr_text, corrections, answer
            if route.name == CONFIRM and heard and not actions:
                self._ask_if_unsure(t, before, heard, corrections)
            if self.config.model_update == "before_reply":
                t._run_model_update()
            return t
        except BaseException:
            self._model_lock.release()
            raise

    # -------------------------------------------------------------- confirming unsure values

    def _answer_pending(self, session_id: str, before: SessionState, words: str, number: int,
                        lang: str) -> "tuple[str, Turn | None]":
        """The words answer the question the last turn asked: the memory keeps, replaces or
        drops the value. Returns what they said ("" when nothing was asked) and the turn that
        answers a "yes", a "no" or a correction; a "yes" with more words after it, and anything
        else, are handled as any turn (the value stays; the question lapses)."""
        stored = self.store.pending_confirmation(session_id)
        if stored is None:
            return "", None
        self.store.set_pending_confirmation(session_id, None)  # one answer, whatever it says
        pending = PendingConfirmation.from_dict(stored)
        if pending is None:
            return "", None
        if not 0 <= self.now().timestamp() - pending.asked_at <= CONFIRM_WAIT_S:
            # Asked too long ago: a "yes" now is not an answer to it.
            self.store.append_trace(session_id, {"type": "confirm_answered", "turn": number, "value": pending.value,
                                                 "kind": pending.kind, "answer": LAPSED, "corrected_to": ""})
            return LAPSED, None
        answer = read_answer(words, pending)
        self.store.append_trace(session_id, {"type": "confirm_answered", "turn": number, "value": pending.value,
                                             "kind": pending.kind, "answer": answer.outcome, "corrected_to": answer.value})
        if answer.outcome == LAPSED or (answer.outcome == YES and answer.rest):
            return answer.outcome, None
        return answer.outcome, self._confirmation_answer_turn(session_id, before, words, number, lang, pending, answer)

    def _confirmation_answer_turn(self, session_id: str, before: SessionState, words: str, number: int, lang: str,
                                  pending: PendingConfirmation, answer: Answer) -> "Turn":
        started = time.perf_counter()
        if answer.outcome == CORRECTED:
            # The memory's own replacement, as for any correction: everywhere the value was said.
            patch = StatePatch(replace=[Replacement(old=pending.asked, new=answer.value)])
            sentence = correction_sentence(answer.value, lang)
            applied = apply_patch(before, patch, turn=number)
        elif answer.outcome == YES:
            applied = Applied(before.copy(), [], [])
            sentence = kept_sentence(pending.value, lang)
        else:
            # Only the unsure value goes (not every note that mentions it, as a cancellation would).
            dropped = without_value(before, pending.value)
            applied = Applied(dropped, diff_states(before, dropped), [])
            sentence = ask_again_sentence(lang)
        result = RuleResult(patch=StatePatch(), lang=lang, state=applied.state)
        if answer.outcome == CORRECTED:
            result.corrections = [Replacement(old=pending.asked, new=answer.value)]
            result.retired = [pending.asked]  # the model may not write it back
        rules = RulesUpdate(result, applied.state, applied.changes, applied.notes)
        if applied.changes:
            applied.state.touch()
            self.store.commit(applied.state, turn=number, source="rules", changes=applied.changes)
        t = Turn(self, session_id, number, words, before, rules, (time.perf_counter() - started) * 1000,
                 route=Route(CONFIRM, f"answers a confirmation: {answer.outcome}"), composed=[sentence])
        t.confirm_answer = answer.outcome
        return t

    def _ask_if_unsure(self, t: "Turn", before: SessionState, heard: Sequence[WordConfidence],
                       corrections: Sequence[Correction]) -> None:
        """When a value just stored was recognised with low confidence, the turn asks it back."""
        pending = unsure_value(t.rules.rules, before, heard, below=self.config.confirm_below,
                               known=entities_from_state(before), corrections=corrections, turn=t.number,
                               asked_at=self.now().timestamp())
        if pending is None:
            return
        self.store.set_pending_confirmation(t.session_id, pending.to_dict(), turn=t.number)
        self.store.append_trace(t.session_id, {"type": "confirm_asked", "turn": t.number, "value": pending.value,
                                               "asked": pending.asked, "heard": pending.heard, "kind": pending.kind,
                                               "confidence": round(pending.confidence, 4)})
        t.ask(pending, confirm_question(pending.asked, pending.kind, pending.lang))

    def run_turn(
        self,
        session_id: str,
        words: str,
        *,
        turn: int | None = None,
        lang: str | None = None,
        prior_side_effects: Sequence[str] = (),
        heard: Sequence[WordConfidence] = (),
    ) -> TurnResult:
        """A whole turn: update, reply, finish (`heard`: as for `start_turn`)."""
        t = self.start_turn(session_id, words, turn=turn, lang=lang, prior_side_effects=prior_side_effects, heard=heard)
        try:
            for _ in t.sentences():
                pass
        finally:
            result = t.finish()
        return result


_VOLUME_FACT_PREFIXES = ("volume set to ", "音量调到")
ACTION_KEY = "board action"
DONE_PREFIX = {"en": "already done: ", "zh": "已经完成："}


def _note_actions(state: SessionState, actions: list[RequestedAction], prior: list[str], turn: int = 0) -> SessionState:
    """The state with the requested actions (and those already run) as facts; one volume fact at most."""
    out = state.copy()
    for action in actions:
        if action.name == "volume":
            out.facts = [f for f in out.facts if not f.value.startswith(_VOLUME_FACT_PREFIXES)]
        out.facts = [f for f in out.facts if f.value != action.description] + [
            Item(key=action.name, value=action.description, kind=KIND_NOTE, turn=turn)
        ]
    for done in prior:
        fact = (DONE_PREFIX["zh"] if detect_lang(done) == "zh" else DONE_PREFIX["en"]) + done
        if not any(f.value == fact for f in out.facts):
            out.facts.append(Item(key=ACTION_KEY, value=fact, kind=KIND_NOTE, turn=turn))
    return bounded(out)[0]
