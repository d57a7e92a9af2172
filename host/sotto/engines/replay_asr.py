"""Transcript replay: recognition for a scripted conversation when no Vosk model fits.

The only Vosk model the package registries carry is Korean. When a conversation's
language has no installed model, `sotto demo` says so and uses this recognizer
instead: it follows the real audio (energy-based speech detection, trailing-silence
endpointing, flush at end of input), and reveals the script's transcript of each
utterance word by word in step with the speech it has heard. Partials, finals, their
timing and their ordering are therefore those of a streaming recognizer; only the
words come from the script rather than from acoustics.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from sotto.engines.base import AudioChunk, Transcript


@dataclass(frozen=True)
class ReplayConfig:
    speech_rms: float = 400.0  # int16 RMS above which a 10 ms slice counts as speech
    endpoint_silence_ms: float = 450.0  # trailing silence that ends an utterance
    min_speech_ms: float = 120.0  # shorter bursts are noise, not an utterance
    seconds_per_word: float = 0.32  # pace of revealed words when no duration is known


class TranscriptReplayRecognizer:
    """A `Recognizer` whose words come from a script, timed by the audio it hears."""

    name = "transcript-replay"

    def __init__(
        self,
        transcripts: Sequence[str],
        *,
        sample_rate: int = 16000,
        durations_s: Sequence[float] | None = None,
        config: ReplayConfig | None = None,
    ) -> None:
        self.sample_rate = sample_rate
        self.config = config or ReplayConfig()
        self._pending: deque[tuple[str, float | None]] = deque(
            (text, durations_s[i] if durations_s is not None and i < len(durations_s) else None)
            for i, text in enumerate(transcripts)
        )
        self._turn_id: int | None = None
        self._next_seq = 0
        self._speech_ms = 0.0
        self._silence_ms = 0.0
        self._in_speech = False
        self._revealed = 0
        self._ended_turns: set[int] = set()

    @property
    def remaining(self) -> int:
        return len(self._pending)

    def _start_turn(self, turn_id: int) -> None:
        self._turn_id = turn_id
        self._next_seq = 0
        self._speech_ms = 0.0
        self._silence_ms = 0.0
        self._in_speech = False
        self._revealed = 0

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        if chunk.turn_id in self._ended_turns:
            return []
        if chunk.turn_id != self._turn_id:
            self._start_turn(chunk.turn_id)
        if chunk.seq != self._next_seq:
            return []  # repeated or out of order: dropped
        self._next_seq += 1
        if not self._pending:
            return []
        samples = np.frombuffer(chunk.pcm[: len(chunk.pcm) // 2 * 2], dtype="<i2").astype(np.float64)
        slice_n = max(1, self.sample_rate // 100)
        out: list[Transcript] = []
        for start in range(0, len(samples), slice_n):
            piece = samples[start : start + slice_n]
            ms = len(piece) * 1000.0 / self.sample_rate
            rms = float(np.sqrt(np.mean(piece * piece))) if len(piece) else 0.0
            if rms >= self.config.speech_rms:
                self._speech_ms += ms
                self._silence_ms = 0.0
                if self._speech_ms >= self.config.min_speech_ms:
                    self._in_speech = True
            else:
                self._silence_ms += ms
                if not self._in_speech and self._silence_ms >= self.config.endpoint_silence_ms:
                    self._speech_ms = 0.0  # a noise burst that never became speech
            if self._in_speech and self._silence_ms >= self.config.endpoint_silence_ms:
                out.extend(self._finish(chunk.turn_id))
                return out
        partial = self._partial(chunk.turn_id)
        if partial is not None:
            out.append(partial)
        return out

    def _partial(self, turn_id: int) -> Transcript | None:
        if not self._in_speech or not self._pending:
            return None
        text, duration = self._pending[0]
        words = text.split()
        per_word = (duration / max(1, len(words))) if duration else self.config.seconds_per_word
        shown = min(len(words) - 1, int(self._speech_ms / 1000.0 / per_word) + 1)
        if shown <= self._revealed:
            return None
        self._revealed = shown
        return Transcript(turn_id=turn_id, text=" ".join(words[:shown]), final=False)

    def _finish(self, turn_id: int) -> list[Transcript]:
        self._ended_turns.add(turn_id)
        self._in_speech = False
        text, _ = self._pending.popleft()
        return [Transcript(turn_id=turn_id, text=text, final=True, confidence=None)]

    def flush(self, turn_id: int) -> list[Transcript]:
        """End of input: an utterance that was heard gets its final now."""
        if turn_id in self._ended_turns or turn_id != self._turn_id:
            return []
        if self._in_speech and self._pending:
            return self._finish(turn_id)
        self._ended_turns.add(turn_id)
        return []
