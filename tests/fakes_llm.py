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
        text = self.replies[min(len(self.stream_calls) - 1, len(self.replies) - 1)]
        try:
            for i in range(0, len(text), 3):
                yield text[i : i + 3]
        finally:
            self.streams_closed += 1


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
