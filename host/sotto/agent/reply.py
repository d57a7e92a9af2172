"""The spoken reply of a routed turn (sotto.agent.router): composed at once, or the model's.

Composed routes (confirmations, memory answers, the host's facts, live data it lacks,
knowledge passages) are spoken at once and never wait on the model. The MODEL route
(open questions, small talk) streams the model's answer through the sentence splitter;
each sentence is sanitized and checked with the checks suited to open answers (on topic,
no leaks, right language, no "as an AI"); the memory-faithfulness checks (no invented
numbers or names) apply only when the question touches the user's own data. The first
sentence that passes is spoken; when none passes in time the reply says so honestly
("I don't know that one."). At most two sentences, one when shortened.
"""

from __future__ import annotations

import queue
from collections import OrderedDict
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterator

from sotto.engines.base import LanguageModel
from sotto.errors import ModelError
from sotto.agent.compose import compose_reply
from sotto.agent.recall import RecallThread
from sotto.agent.reference import Reference
from sotto.agent.router import (
    HOST_FACT, KNOWLEDGE, LIVE_DATA, MODEL, NO_ANSWER, Route, host_fact_sentence, live_data_sentence, no_answer_sentence,
)
from sotto.engines.base import ChatMessage
from sotto.memory.prompts import memory_lines
from sotto.memory.rules import RuleResult
from sotto.memory.sanitize import leaks, sanitize
from sotto.memory.state import SessionState
from sotto.memory.text import cjk_ratio, content_keys, numbers_in
from sotto.text.sentences import SentenceSplitter

OPEN_MAX_TOKENS = 56
# No checked sentence of an open answer by then: "I don't know that one." (the first
# answer's hard limit is 2500 ms including speech synthesis).
OPEN_ANSWER_DEADLINE_MS = 1900.0
NEXT_SENTENCE_TIMEOUT_S = 1.5  # a second sentence that is slower than this is not waited for
_DONE = object()
RECALL_THREADS_MAX = 64  # sessions whose last recall is kept (a follow-up refers to it)
MAX_SENTENCE_CHARS = 220
_BAD_PHRASES = re.compile(
    r"\b(?:ai|language model|i'm not sure|i am not sure|i don't know what|sorry|misunderstanding|the user|assistant|i'm here to help"
    r"|i'm unable|i am unable|i cannot|i can't|i'm just)\b|用户|助手|人工智能|抱歉|对不起",
    re.I,
)
# A sentence that asks rather than answers (a model echoing the question).
_ASKS_BACK = re.compile(r"[?？]\s*$|哪|什么|谁|几[个点号]|吗[。！]?$")
OPEN_SYSTEM_PROMPT = "You are a friendly voice assistant. Answer in one or two short spoken sentences, in plain words."
OPEN_SYSTEM_PROMPT_ZH = "你是一个友好的语音助手。请用中文回答，一两句话，简单明了。"


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
    route: str = ""
    route_reason: str = ""
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


def open_answer_messages(question: str, lang: str, state: SessionState | None = None) -> list[ChatMessage]:
    """The prompt of an open answer: a short static system part (its tokens stay in
    llama.cpp's cache) and the question; the user's notes only when it is about them."""
    system = OPEN_SYSTEM_PROMPT_ZH if lang == "zh" else OPEN_SYSTEM_PROMPT
    if state is not None:
        lines = memory_lines(state)[-8:]
        if lines:
            system += "\n" + ("用户说过：" if lang == "zh" else "The user told you:") + "\n" + "\n".join(f"- {line}" for line in lines)
    return [ChatMessage("system", system), ChatMessage("user", question)]


def check_open_sentence(sentence: str, *, question: str, lang: str, first: bool, state: SessionState | None = None) -> str | None:
    """Why a sentence of an open answer may not be spoken, or None when it may.
    `state`: the question touches the user's own data, so nothing may be invented."""
    if len(sentence) > MAX_SENTENCE_CHARS:
        return "too long"
    if leaks(sentence):
        return "leaks"
    ratio = cjk_ratio(sentence)
    if lang == "zh" and ratio < 0.6:
        return "not Chinese"
    if lang != "zh" and ratio > 0.0:
        return "not English"
    if _BAD_PHRASES.search(sentence):
        return "filler or confusion"
    if sentence.rstrip().endswith((":", "：")):
        return "a preamble, not an answer"
    if _ASKS_BACK.search(sentence):
        return "asks instead of answering"
    if first:
        wanted = content_keys(question)
        if wanted and not content_keys(sentence) & wanted:
            return "off-topic"
    if state is not None:
        known = " ".join([question, *state.all_strings()])
        if not numbers_in(sentence) <= numbers_in(known):
            return "invented number"
        capitals = {w.lower() for w in re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+", sentence)}
        if any(c not in known.lower() for c in capitals):
            return "invented name"
    return None


@dataclass
class OpenAnswer:
    """What one open answer from the model gave (also the capability probe's measurement)."""

    sentences: list[str] = field(default_factory=list)  # checked, ready to speak
    rejected: list[str] = field(default_factory=list)
    first_piece_ms: float | None = None  # prompt evaluated, first token out
    first_sentence_ms: float | None = None  # the first checked sentence ready
    timed_out: bool = False


def open_answer_sentences(
    model: LanguageModel,
    question: str,
    lang: str,
    answer: OpenAnswer,
    *,
    state: SessionState | None = None,
    stop: threading.Event | None = None,
    max_sentences: Callable[[], int] = lambda: 2,
    clock: Callable[[], float] = time.perf_counter,
) -> Iterator[str]:
    """The model's checked sentences for an open question, as they are ready (on the
    caller's thread). Failing sentences are skipped and recorded; `state` switches the
    memory-faithfulness checks on."""
    started = clock()
    splitter = SentenceSplitter()
    stream = model.stream(open_answer_messages(question, lang, state), max_tokens=OPEN_MAX_TOKENS, temperature=0.0,
                          stop=("\n\n", "<|im_end|>"))

    def checked(sentences: list[str]) -> Iterator[str]:
        for sentence in sentences:
            clean = sanitize(sentence)
            reason = "leaks" if clean is None else check_open_sentence(
                clean, question=question, lang=lang, first=not answer.sentences, state=state)
            if reason is not None:
                answer.rejected.append(f"{reason}: {sentence[:120]!r}")
                continue
            assert clean is not None
            if answer.first_sentence_ms is None:
                answer.first_sentence_ms = (clock() - started) * 1000
            answer.sentences.append(clean)
            yield clean

    try:
        for piece in stream:
            if answer.first_piece_ms is None:
                answer.first_piece_ms = (clock() - started) * 1000
            if stop is not None and stop.is_set():
                return
            yield from checked(splitter.feed(piece))
            if len(answer.sentences) >= max(1, min(2, max_sentences())):
                return
        yield from checked(splitter.flush())
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()  # stops llama.cpp generating the rest


class ReplyWriter:
    def __init__(
        self,
        model: LanguageModel | None,
        *,
        open_answer_deadline_ms: float | None = OPEN_ANSWER_DEADLINE_MS,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
    ) -> None:
        """`model`: the model for open answers (None: no model passed the open-answer
        probe, or none is configured). `now`: the host clock the time and date come from."""
        self.model = model
        self.deadline_ms = open_answer_deadline_ms
        self.now = now
        # Each session's last recall ("And the other one?"), the most recent sessions only.
        self._threads: OrderedDict[str, RecallThread] = OrderedDict()

    def _thread(self, session_id: str) -> RecallThread:
        thread = self._threads.pop(session_id, None) or RecallThread()
        self._threads[session_id] = thread
        while len(self._threads) > RECALL_THREADS_MAX:
            self._threads.popitem(last=False)
        return thread

    def sentences(
        self,
        state: SessionState,
        words: str,
        rules: RuleResult,
        report: ReplyReport,
        *,
        route: Route,
        reference: Reference | None = None,
        max_sentences: Callable[[], int] = lambda: 2,
        cancelled: threading.Event | None = None,
    ) -> Iterator[str]:
        """Reply sentences, each ready to speak, as they are produced."""
        cancel = cancelled or threading.Event()
        started = time.perf_counter()
        report.route, report.route_reason = route.name, route.reason
        if reference is not None:
            report.reference_titles = [p.title for p in reference.passages]

        def emit(text: str, source: str) -> str:
            if report.first_sentence_ms is None:
                report.first_sentence_ms = (time.perf_counter() - started) * 1000
            report.sentences.append(ReplySentenceOut(text, source))
            report.source = source if not report.source or report.source == source else "mixed"
            return text

        limit = lambda: max(1, min(2, max_sentences()))  # noqa: E731
        if route.name == MODEL and self.model is not None:
            spoken = 0
            for sentence in self._threaded(state, words, rules, route, report, started, limit, lambda: spoken == 0):
                if cancel.is_set():
                    report.cancelled = True
                    return
                yield emit(sentence, "model")
                spoken += 1
                if spoken >= limit():
                    break
            if spoken:
                return
        if cancel.is_set():
            report.cancelled = True
            return
        for text in self._composed(state, words, rules, route, reference, limit()):
            clean = sanitize(text)
            if clean:
                yield emit(clean, "composed")
            if len(report.sentences) >= limit() or cancel.is_set():
                break

    def _composed(self, state: SessionState, words: str, rules: RuleResult, route: Route,
                  reference: Reference | None, max_sentences: int) -> list[str]:
        lang = rules.lang
        if route.name == HOST_FACT:
            return [host_fact_sentence(route.topic, self.now(), lang)]
        if route.name == LIVE_DATA:
            return [live_data_sentence(route.topic, lang)]
        if route.name == KNOWLEDGE and reference is not None:
            passage = reference.answer(words)
            if passage:
                return [passage]
        if route.name in (MODEL, NO_ANSWER):
            return [no_answer_sentence(lang)]  # nothing the model said passed, or no model may answer
        return compose_reply(state, words, rules, max_sentences=max_sentences, thread=self._thread(state.session_id))

    def _threaded(
        self,
        state: SessionState,
        words: str,
        rules: RuleResult,
        route: Route,
        report: ReplyReport,
        started: float,
        limit: Callable[[], int],
        waiting_for_first: Callable[[], bool],
    ) -> Iterator[str]:
        """The model's checked sentences from a worker thread, so a missed deadline
        falls back at once instead of waiting for llama.cpp."""
        assert self.model is not None
        model = self.model
        out: "queue.Queue[object]" = queue.Queue()
        stop = threading.Event()
        question = " ".join(q.raw or q.text for q in rules.questions) or words
        answer = OpenAnswer()

        def work() -> None:
            try:
                for sentence in open_answer_sentences(model, question, rules.lang, answer,
                                                      state=state if route.about_user_data else None,
                                                      stop=stop, max_sentences=limit):
                    out.put(sentence)
                    if stop.is_set():
                        break
            except ModelError as exc:
                if exc.code == "model_context_overflow":
                    report.context_overflow = True
                report.rejected.append(f"model failed: {exc}")
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
                if item is _DONE:
                    return
                assert isinstance(item, str)
                yield item
        finally:
            stop.set()  # the worker closes the model stream at its next token
            report.rejected.extend(answer.rejected)
