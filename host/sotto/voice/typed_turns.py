"""Typed turns for `sotto run --text`: lines typed on the terminal become finals.

`TypedTurnsRecognizer` wraps the session's recognizer (or none, when no Vosk model
fits the language): each typed line is handed to the harness as the final transcript
of the turn being listened to, on the next microphone chunk (boards stream the mic
continuously, every 20-40 ms). So a typed line takes the same path as a spoken one:
it commits once, and typed while the board speaks, it interrupts the reply.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable, TextIO

from sotto.engines.base import AudioChunk, Recognizer, Transcript

MAX_TYPED_CHARS = 600


class TypedTurnsRecognizer:
    def __init__(self, inner: Recognizer | None, sample_rate: int = 16000) -> None:
        self.inner = inner
        self.sample_rate = inner.sample_rate if inner is not None else sample_rate
        self.name = f"{inner.name} + typed" if inner is not None else "typed"
        self._typed: deque[str] = deque()
        self._lock = threading.Lock()

    def type_line(self, text: str) -> None:
        """Thread-safe: queue one typed turn."""
        text = " ".join(text.split())[:MAX_TYPED_CHARS]
        if text:
            with self._lock:
                self._typed.append(text)

    def _take(self) -> str | None:
        with self._lock:
            return self._typed.popleft() if self._typed else None

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        out = self.inner.accept(chunk) if self.inner is not None else []
        if any(t.final for t in out):
            return out
        typed = self._take()
        if typed is not None:
            return [Transcript(chunk.turn_id, typed, final=True, confidence=1.0)]
        return out

    def flush(self, turn_id: int) -> list[Transcript]:
        return self.inner.flush(turn_id) if self.inner is not None else []


def read_lines_forever(source: TextIO, sink: Callable[[str], None], stop: threading.Event) -> None:
    """Blocking reader for a daemon thread: every line typed goes to `sink`."""
    while not stop.is_set():
        line = source.readline()
        if not line:
            return  # end of input
        sink(line)
