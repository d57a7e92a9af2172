"""Fake language models for the working-memory tests (deterministic, no weights)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from sotto.engines.base import ChatMessage, Completion
from sotto.errors import ContextOverflow


class FakeLanguageModel:
    """Scripted answers: `patches` are returned by complete() in order (the last one
    repeats), `replies` by stream() likewise. Every call's prompt is recorded and
    checked against the context window like llama.cpp would."""

    def __init__(
        self,
        *,
        patches: Sequence[str] = ('{"last_topic": "", "add_facts": [], "add_names": [], "replace": []}',),
        replies: Sequence[str] = ("Okay.",),
        n_ctx: int = 2048,
        finish_reason: str = "stop",
        on_complete: Callable[[], None] | None = None,
    ) -> None:
        self.name = "fake-llm"
        self.n_ctx = n_ctx
        self.patches = list(patches)
        self.replies = list(replies)
        self.finish_reason = finish_reason
        self.on_complete = on_complete
        self.complete_calls: list[list[ChatMessage]] = []
        self.stream_calls: list[list[ChatMessage]] = []
        self.grammars: list[str | None] = []
        self.max_prompt_tokens = 0
        self.streams_closed = 0

    def count_tokens(self, text: str) -> int:
        return len(text) // 3 + 1

    def _check(self, messages: Sequence[ChatMessage], max_tokens: int) -> None:
        used = sum(self.count_tokens(m.content) + 6 for m in messages)
        self.max_prompt_tokens = max(self.max_prompt_tokens, used)
        if used + max_tokens > self.n_ctx:
            raise ContextOverflow(f"prompt of {used} tokens + {max_tokens} exceeds {self.n_ctx}")

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Completion:
        self._check(messages, max_tokens)
        self.complete_calls.append(list(messages))
        self.grammars.append(grammar)
        if self.on_complete is not None:
            self.on_complete()
        index = min(len(self.complete_calls) - 1, len(self.patches) - 1)
        text = self.patches[index]
        return Completion(text=text, prompt_tokens=10, completion_tokens=len(text) // 3, finish_reason=self.finish_reason)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        self._check(messages, max_tokens)
        self.stream_calls.append(list(messages))
        text = self._reply_for(messages)
        try:
            for i in range(0, len(text), 3):
                self._piece_cost()
                yield text[i : i + 3]
        finally:
            self.streams_closed += 1

    def _reply_for(self, messages: Sequence[ChatMessage]) -> str:
        return self.replies[min(len(self.stream_calls) - 1, len(self.replies) - 1)]

    def _piece_cost(self) -> None:
        """What generating one piece costs (nothing: the fake is instant)."""


class SlowPatchModel(FakeLanguageModel):
    """Signals (by creating `marker`) that the model update started, then hangs: the
    process is killed mid-turn in the crash test."""

    def __init__(self, marker: Path, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.marker = marker

    def complete(self, messages: Sequence[ChatMessage], **kwargs: object) -> Completion:  # type: ignore[override]
        self.marker.write_text("started")
        time.sleep(60)
        raise AssertionError("should have been killed")


class FakeAnsweringModel(FakeLanguageModel):
    """Answers by the question (the last user message): `answers` maps a question's start
    to the reply streamed; anything else gets `default`. `complete()` returns `patches` as
    FakeLanguageModel does. With `clock` (a fake clock with `advance(seconds)`), each
    streamed piece costs `piece_s` of its time: a slow model, without sleeping."""

    def __init__(self, answers: dict[str, str], *, default: str = "Hmm.", clock: object = None, piece_s: float = 0.0,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.answers = answers
        self.default = default
        self.clock = clock
        self.piece_s = piece_s

    def _reply_for(self, messages: Sequence[ChatMessage]) -> str:
        question = messages[-1].content
        return next((a for q, a in self.answers.items() if question.startswith(q)), self.default)

    def _piece_cost(self) -> None:
        if self.clock is not None:
            self.clock.advance(self.piece_s)  # type: ignore[attr-defined]


# Right answers to the capability probe's open questions (sotto.agent.capability.OPEN_PROBES).
PROBE_ANSWERS = {
    "What is the capital of France?": "The capital of France is Paris.",
    "How many days are in a week?": "A week has seven days.",
    "What color is the sky on a clear day?": "The sky on a clear day is blue.",
    "What is the opposite of hot?": "The opposite of hot is cold.",
    "What do cows drink?": "Cows drink water.",
    "法国的首都是哪里？": "法国的首都是巴黎。",
    "一个星期有几天？": "一个星期有七天。",
    "晴天的天空是什么颜色？": "晴天的天空是蓝色的。",
    "热的反义词是什么？": "热的反义词是冷。",
    "一年有几个月？": "一年有十二个月。",
}
