"""What every streaming recognizer needs around its decoder: chunk order and the endpoint.

- `ChunkOrderGuard`: each turn's chunks are taken once and in order; a repeated chunk or
  a straggler from before is dropped.
- `TrailingSilence`: the end of an utterance measured on the audio's energy, so that
  every engine ends a turn on the same silence (neither Vosk 0.3.45 nor pocketsphinx's
  decoder offers a trailing-silence delay of its own).
"""

from __future__ import annotations

import numpy as np

from sotto.engines.base import AudioChunk


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
