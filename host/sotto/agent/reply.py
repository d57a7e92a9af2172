"""The spoken reply: streamed from the model sentence by sentence, checked, or composed.

The model's tokens go through the sentence splitter; each finished sentence is
sanitized and checked before it is handed on (to TTS). A first sentence that fails a
check (leaks, wrong language, an invented number or name, off-topic for a question)
cancels the stream and the reply composed from the state is spoken instead; a later
sentence that fails just ends the reply. At most two sentences, one when shortened.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from sotto.engines.base import LanguageModel
from sotto.errors import ModelError
from sotto.knowledge.base import KnowledgeBase
from sotto.agent.compose import answer_keys, answers_from_memory, compose_reply
from sotto.agent.reference import Reference, retrieve
from sotto.memory.prompts import fit_messages, reply_instruction
from sotto.memory.rules import RuleResult
from sotto.memory.sanitize import leaks, sanitize
from sotto.memory.state import SessionState
from sotto.memory.text import cjk_ratio, content_keys, numbers_in
from sotto.text.sentences import SentenceSplitter

REPLY_MAX_TOKENS = 64
# The model's first sentence must be checked and ready by then, else the composed reply
# is spoken: the first answer has a 1500 ms budget including speech synthesis.
FIRST_SENTENCE_DEADLINE_MS = 900.0
NEXT_SENTENCE_TIMEOUT_S = 6.0
_DONE = object()
PROBE_AFTER_FAILURES = 3
PROBE_EVERY = 4
MAX_SENTENCE_CHARS = 220
_BAD_PHRASES = re.compile(
    r"\b(?:as an ai|language model|i'm not sure|i am not sure|i don't know what|sorry to hear|misunderstanding|the user|assistant|i'm here to help)\b|用户|助手",
    re.I,
)


@dataclass
class ReplySentenceOut:
    text: str
    source: str  # "model" | "composed"


@dataclass
class ReplyReport:
    sentences: list[ReplySentenceOut] = field(default_factory=list)
    source: str = ""
    rejected: list[str] = field(default_factory=list)  # model sentences refused, with the reason
    context_overflow: bool = False
    cancelled: bool = False
    deadline_missed: bool = False
    first_sentence_ms: float | None = None
    worker: threading.Thread | None = None
    reference_titles: list[str] = field(default_factory=list)  # knowledge passages given to the reply

    def wait_for_model(self, timeout: float | None = None) -> None:
        """Wait until the model stream has stopped (the model is free again)."""
        if self.worker is not None:
            self.worker.join(timeout)

    @property
    def text(self) -> str:
        sep = "" if any(cjk_ratio(s.text) > 0.3 for s in self.sentences) else " "
        return sep.join(s.text for s in self.sentences)


def check_sentence(
    sentence: str, *, state: SessionState, words: str, rules: RuleResult, first: bool, reference: str = ""
) -> str | None:
    """Why the model's sentence may not be spoken, or None when it may."""
    if len(sentence) > MAX_SENTENCE_CHARS:
        return "too long"
    if leaks(sentence):
        return "leaks"
    ratio = cjk_ratio(sentence)
    if rules.lang == "zh" and ratio < 0.6:
        return "not Chinese"
    if rules.lang != "zh" and ratio > 0.0:
        return "not English"
    if _BAD_PHRASES.search(sentence):
        return "filler or confusion"
    known = " ".join([words, *state.all_strings(), reference])
    if not numbers_in(sentence) <= numbers_in(known):
        return "invented number"
    known_keys = content_keys(known)
    capitals = {w.lower() for w in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+", sentence)}
    if any(c not in known.lower() for c in capitals):
        return "invented name"
    keys = content_keys(sentence)
    if first:
        if rules.question:
            wanted = answer_keys(state, words) | (content_keys(reference) - content_keys(words))
            if not wanted:
                return "nothing in memory to answer from (offline: the model would make it up)"
            if not keys & wanted:
                return "does not answer from memory"
        elif not keys & content_keys(words):
            return "off-topic"
    if not keys <= known_keys | {"sure", "okay", "great", "noted", "done", "thank", "welcome", "good", "right", "fine", "nice", "meet", "perfect"} and len(keys - known_keys) > 3:
        return "says too much that was never said"
    return None


class ReplyWriter:
    def __init__(
        self,
        model: LanguageModel | None,
        *,
        mode: str = "auto",
        max_tokens: int = REPLY_MAX_TOKENS,
        first_sentence_deadline_ms: float | None = FIRST_SENTENCE_DEADLINE_MS,
        knowledge: KnowledgeBase | None = None,
    ) -> None:
        self.knowledge = knowledge
        if mode not in ("auto", "model", "composed"):
            raise ValueError(f"unknown reply mode {mode!r}")
        self.model = model
        self.mode = mode
        self.max_tokens = max_tokens
        self.deadline_ms = first_sentence_deadline_ms if mode == "auto" else None
        # Recent outcomes of the model's replies per language: a model that keeps
        # failing (too slow, wrong language, off-topic) is only probed now and then.
        self._outcomes: dict[str, list[bool]] = {}
        self._skipped: dict[str, int] = {}

    def _model_worth_trying(self, lang: str) -> bool:
        if self.mode != "auto":
            return True
        recent = self._outcomes.get(lang, [])[-PROBE_AFTER_FAILURES:]
        if len(recent) < PROBE_AFTER_FAILURES or any(recent):
            return True
        skipped = self._skipped.get(lang, 0) + 1
        self._skipped[lang] = skipped
        return skipped % PROBE_EVERY == 0

    def _note_outcome(self, lang: str, ok: bool) -> None:
        self._outcomes.setdefault(lang, []).append(ok)
        del self._outcomes[lang][:-PROBE_AFTER_FAILURES]

    def sentences(
        self,
        state: SessionState,
        words: str,
        rules: RuleResult,
        report: ReplyReport,
        *,
        max_sentences: Callable[[], int] = lambda: 2,
        cancelled: threading.Event | None = None,
    ) -> Iterator[str]:
        """Reply sentences, each ready to speak, as they are produced."""
        cancel = cancelled or threading.Event()
        started = time.perf_counter()
        reference = retrieve(self.knowledge, words)
        report.reference_titles = [p.title for p in reference.passages]

        def emit(text: str, source: str) -> str:
            if report.first_sentence_ms is None:
                report.first_sentence_ms = (time.perf_counter() - started) * 1000
            report.sentences.append(ReplySentenceOut(text, source))
            report.source = source if not report.source or report.source == source else "mixed"
            return text

        if self.model is not None and self.mode != "composed" and not self._model_worth_trying(rules.lang):
            report.rejected.append(f"model reply skipped: its last {PROBE_AFTER_FAILURES} {rules.lang} replies were unusable")
        elif self.model is not None and self.mode != "composed":
            spoken = 0
            for sentence in self._threaded(state, words, rules, report, cancel, started, lambda: spoken == 0, reference):
                if cancel.is_set():
                    report.cancelled = True
                    return
                clean = sanitize(sentence)
                reason = "leaks" if clean is None else check_sentence(
                    clean, state=state, words=words, rules=rules, first=spoken == 0, reference=reference.text
                )
                if reason is not None:
                    report.rejected.append(f"{reason}: {sentence[:120]!r}")
                    break
                assert clean is not None
                yield emit(clean, "model")
                spoken += 1
                if spoken >= max(1, min(2, max_sentences())):
                    break
            if not cancel.is_set():
                self._note_outcome(rules.lang, spoken > 0)
            if spoken:
                return
        if cancel.is_set():
            report.cancelled = True
            return
        # A question the user's own words answer goes to memory; else a well-matched passage answers it.
        said = answers_from_memory(state, words)
        from_reference = reference.answer(words) if rules.question and not said else None
        composed = [from_reference] if from_reference else compose_reply(state, words, rules, max_sentences=max(1, min(2, max_sentences())))
        for text in composed:
            clean = sanitize(text)
            if clean:
                yield emit(clean, "composed")
            if len(report.sentences) >= max(1, min(2, max_sentences())) or cancel.is_set():
                break

    def _threaded(
        self,
        state: SessionState,
        words: str,
        rules: RuleResult,
        report: ReplyReport,
        cancel: threading.Event,
        started: float,
        waiting_for_first: Callable[[], bool],
        reference: Reference | None = None,
    ) -> Iterator[str]:
        """The model's sentences from a worker thread, so a missed first-sentence
        deadline can fall back at once instead of waiting for llama.cpp."""
        out: "queue.Queue[object]" = queue.Queue()
        stop = threading.Event()

        def work() -> None:
            try:
                for sentence in self._model_sentences(state, words, rules, report, stop, reference):
                    out.put(sentence)
                    if stop.is_set():
                        break
            except Exception as exc:  # reported, never raised into the voice pipeline
                report.rejected.append(f"model failed: {exc}")
            finally:
                out.put(_DONE)

        worker = threading.Thread(target=work, name="reply-model", daemon=True)
        report.worker = worker
        worker.start()
        try:
            while True:
                if waiting_for_first() and self.deadline_ms is not None:
                    timeout = max(0.0, self.deadline_ms / 1000 - (time.perf_counter() - started))
                else:
                    timeout = NEXT_SENTENCE_TIMEOUT_S
                try:
                    item = out.get(timeout=timeout)
                except queue.Empty:
                    if waiting_for_first():
                        report.deadline_missed = True
                        report.rejected.append(f"no checked sentence within {self.deadline_ms:.0f} ms")
                    return
                if item is _DONE or cancel.is_set():
                    return
                assert isinstance(item, str)
                yield item
        finally:
            stop.set()  # the worker closes the model stream at its next token

    def _model_sentences(
        self,
        state: SessionState,
        words: str,
        rules: RuleResult,
        report: ReplyReport,
        cancel: threading.Event,
        reference: Reference | None = None,
    ) -> Iterator[str]:
        assert self.model is not None
        fitted = fit_messages(
            self.model, state, words, reply_instruction(rules.lang, 2), self.max_tokens,
            reference=reference.prompt if reference else "",
        )
        if fitted is None:
            report.context_overflow = True
            return
        messages, _, _ = fitted
        splitter = SentenceSplitter()
        stream = self.model.stream(messages, max_tokens=self.max_tokens, temperature=0.0, stop=("\n\n", "<|im_end|>"))
        try:
            for piece in stream:
                if cancel.is_set():
                    return
                yield from splitter.feed(piece)
            yield from splitter.flush()
        except ModelError as exc:
            if exc.code == "model_context_overflow":
                report.context_overflow = True
            report.rejected.append(f"model failed: {exc}")
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()  # stops llama.cpp generating the rest
