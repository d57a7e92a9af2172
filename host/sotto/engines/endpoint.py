"""What every streaming recognizer needs around its decoder: chunk order, turns, the endpoint.

- `ChunkOrderGuard`: each turn's chunks are taken once and in order; a repeated chunk or
  a straggler from before is dropped.
- `TrailingSilence`: the end of an utterance measured on the audio's energy, so that
  every engine ends a turn on the same silence (neither Vosk 0.3.45 nor pocketsphinx's
  decoder offers a trailing-silence delay of its own).
- `TurnStream`: the `Recognizer.accept` bookkeeping both in-process engines share (rate
  check, chunk order, one final per turn, real-time factor); an engine implements
  `_new_turn(turn_id)` and `_feed(turn_id, pcm)`, and sets `_final_done` on its final.
"""

from __future__ import annotations

import time

import numpy as np

from sotto.engines.base import AudioChunk, Transcript
from sotto.errors import AudioFormatError


class ChunkOrderGuard:
    """Accepts each turn's chunks once and in order: later duplicates and stragglers are dropped."""

    def __init__(self) -> None:
        self._last_seq: dict[int, int] = {}

    def admit(self, chunk: AudioChunk) -> bool:
        last = self._last_seq.get(chunk.turn_id, -1)
        if chunk.seq <= last:
            return False
        self._last_seq[chunk.turn_id] = chunk.seq
        if len(self._last_seq) > 64:  # bounded: forget the oldest turns
            for turn in sorted(self._last_seq)[:-32]:
                del self._last_seq[turn]
        return True


class TrailingSilence:
    """Speech seen, then `endpoint_silence_ms` of audio under `silence_rms`: the utterance ended."""

    def __init__(self, sample_rate: int, *, endpoint_silence_ms: float = 600.0, silence_rms: float = 300.0) -> None:
        self.sample_rate = sample_rate
        self.endpoint_silence_ms = endpoint_silence_ms
        self.silence_rms = silence_rms
        self.speech_seen = False
        self.silence_ms = 0.0

    def reset(self) -> None:
        self.speech_seen = False
        self.silence_ms = 0.0

    def update(self, pcm: bytes) -> bool:
        """Account for one chunk of PCM16; True once the utterance has ended."""
        samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2").astype(np.float64)
        if not samples.size:
            return False
        rms = float(np.sqrt(np.mean(samples * samples)))
        if rms >= self.silence_rms:
            self.speech_seen = True
            self.silence_ms = 0.0
        elif self.speech_seen:
            self.silence_ms += 1000.0 * samples.size / self.sample_rate
        return self.speech_seen and self.silence_ms >= self.endpoint_silence_ms


class TurnStream:
    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._guard = ChunkOrderGuard()
        self._turn: int | None = None
        self._final_done = False
        # Seconds of audio fed and of processing spent: the real-time factor.
        self.audio_s = 0.0
        self.busy_s = 0.0

    @property
    def real_time_factor(self) -> float | None:
        return self.busy_s / self.audio_s if self.audio_s else None

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        if chunk.sample_rate != self.sample_rate:
            raise AudioFormatError(f"recognizer runs at {self.sample_rate} Hz, chunk is {chunk.sample_rate} Hz")
        if not self._guard.admit(chunk):
            return []
        if self._turn is not None and chunk.turn_id < self._turn:
            return []  # a chunk of a finished turn
        if chunk.turn_id != self._turn:
            self._new_turn(chunk.turn_id)
            self._turn = chunk.turn_id
            self._final_done = False
        if self._final_done:
            return []  # one final per turn: the harness moves to the next turn id
        pcm = chunk.pcm[: len(chunk.pcm) - len(chunk.pcm) % 2]
        if not pcm:
            return []
        started = time.perf_counter()
        try:
            return self._feed(chunk.turn_id, pcm)
        finally:
            self.busy_s += time.perf_counter() - started
            self.audio_s += len(pcm) / 2 / self.sample_rate

    def _new_turn(self, turn_id: int) -> None:
        raise NotImplementedError

    def _feed(self, turn_id: int, pcm: bytes) -> list[Transcript]:
        raise NotImplementedError
