"""The engine interfaces the pipeline is written against.

Each engine is made by a `load()` factory in its own module and used through one of
these protocols. Tests inject small deterministic fakes through the same protocols.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol, Sequence, runtime_checkable


# ------------------------------------------------------------------ speech recognition


@dataclass(frozen=True)
class AudioChunk:
    """Mono PCM16 little-endian audio for one turn, numbered per turn from 0."""

    turn_id: int
    seq: int
    pcm: bytes
    sample_rate: int


@dataclass(frozen=True)
class WordConfidence:
    """One word of a final transcript and how sure the recognizer was of it.

    `confidence` is in 0..1 (Vosk: the word's `conf` from its lattice; pocketsphinx: the
    word's posterior probability), None when the engine gives none. After normalisation
    ("three p m" -> "3 pm") a word may stand for several recognised ones: `heard` keeps
    them and `confidence` is the lowest of theirs. `start_s` / `end_s` are seconds from
    the start of the turn's audio, when the engine gives them.
    """

    word: str
    confidence: float | None
    heard: str = ""
    start_s: float | None = None
    end_s: float | None = None


@dataclass(frozen=True)
class Transcript:
    """A recognizer result. A partial is provisional; a final is authoritative.

    On a final from a recognizer that gives them, `words` lists each word with its
    confidence (in the order of `text`'s words), `confidence` is the mean of those, and
    `raw_text` is what the recognizer produced before numbers and times were normalised
    (None when normalisation changed nothing or did not run).
    """

    turn_id: int
    text: str
    final: bool
    confidence: float | None = None
    words: tuple[WordConfidence, ...] = ()
    raw_text: str | None = None

    def least_confident(self, below: float) -> list[WordConfidence]:
        """The words recognised with a confidence under `below` (unknown confidences excluded)."""
        return [w for w in self.words if w.confidence is not None and w.confidence < below]


def mean_confidence(words: Sequence[WordConfidence]) -> float | None:
    known = [w.confidence for w in words if w.confidence is not None]
    return round(sum(known) / len(known), 4) if known else None


@runtime_checkable
class Recognizer(Protocol):
    sample_rate: int
    name: str

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        """Feed one chunk; out-of-order or repeated chunks of the turn are dropped."""
        ...

    def flush(self, turn_id: int) -> list[Transcript]:
        """End of input for the turn: returns the last final (only flush knows it ended)."""
        ...


# ------------------------------------------------------------------ language model


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" | "length" | "cancelled"


@runtime_checkable
class LanguageModel(Protocol):
    name: str
    n_ctx: int

    def count_tokens(self, text: str) -> int: ...

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Completion:
        """One whole completion, optionally constrained by a GBNF grammar."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        """Token pieces as they are generated; closing the iterator cancels generation."""
        ...


# ------------------------------------------------------------------ speech synthesis


@dataclass(frozen=True)
class SpeechAudio:
    """Synthesised speech for one sentence: mono PCM16 little-endian."""

    text: str
    pcm: bytes
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate


@runtime_checkable
class SpeechSynthesizer(Protocol):
    name: str
    sample_rate: int

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        """One chunk per sentence, in order, as each is ready."""
        ...
