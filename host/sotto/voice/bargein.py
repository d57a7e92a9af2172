"""Barge-in detection on the uplink, with the host's own speech as the echo reference.

The host knows what it plays: every agent audio chunk is placed on a playout timeline
(host monotonic time, re-anchored when the board reports playback started). For each
mic frame, the echo gate finds the delayed, scaled copy of that reference which best
explains the frame (FFT cross-correlation over the lag range) and removes it. Only the
residual counts as the user's voice, and only a run of voice at least
`min_speech_ms` long interrupts: a cough or a click does not, and neither does the
agent's own voice coming back through the microphone.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class BargeInConfig:
    vad_threshold_rms: float = 500.0  # int16 scale: residual above this (plus echo leak) is voice
    min_speech_ms: float = 200.0  # a voiced run shorter than this never interrupts
    hangover_ms: float = 80.0  # gaps this short stay inside one voiced run
    echo_max_lag_ms: float = 400.0  # acoustic delay plus playout-timeline uncertainty
    # The echo may also show up a little BEFORE the timeline says it plays: the board stamps
    # PLAYBACK started and mic frames at different points of its loop (measured on the pty
    # sim: 2-50 ms early), so the search also covers reference audio this much later.
    echo_lead_ms: float = 100.0
    echo_leak: float = 0.35  # residual allowed as a share of the echo (reverb, speaker distortion)
    reference_keep_s: float = 4.0


class PlayoutTimeline:
    """Agent audio as the board plays it, at the mic rate, on host monotonic time."""

    def __init__(self, mic_rate: int) -> None:
        self.mic_rate = mic_rate
        self._segments: deque[tuple[int, float, FloatArray]] = deque()  # (stream, start_t, samples)
        self._anchored: set[int] = set()

    def _end(self, start_t: float, samples: FloatArray) -> float:
        return start_t + len(samples) / self.mic_rate

    def add(self, stream_id: int, samples_at_mic_rate: FloatArray, sent_t: float) -> None:
        """Audio handed to the board at `sent_t`: it plays right after what is already queued."""
        start = sent_t
        if self._segments and self._segments[-1][0] == stream_id:
            start = max(start, self._end(self._segments[-1][1], self._segments[-1][2]))
        self._segments.append((stream_id, start, samples_at_mic_rate))

    def anchor(self, stream_id: int, started_t: float) -> None:
        """The board reports the stream started playing at `started_t`: shift its schedule."""
        if stream_id in self._anchored:
            return
        self._anchored.add(stream_id)
        first = next((s for s in self._segments if s[0] == stream_id), None)
        if first is None:
            return
        delta = started_t - first[1]
        self._segments = deque(
            (sid, start + delta if sid == stream_id else start, samples) for sid, start, samples in self._segments
        )

    def stop(self, stream_id: int, stopped_t: float) -> None:
        """The speaker went silent at `stopped_t`: nothing of the stream plays after it."""
        kept: deque[tuple[int, float, FloatArray]] = deque()
        for sid, start, samples in self._segments:
            if sid == stream_id and start < stopped_t:
                n = int(max(0.0, stopped_t - start) * self.mic_rate)
                samples = samples[:n]
            elif sid == stream_id:
                continue
            kept.append((sid, start, samples))
        self._segments = kept

    def prune(self, now: float, keep_s: float) -> None:
        while self._segments and self._end(self._segments[0][1], self._segments[0][2]) < now - keep_s:
            self._segments.popleft()

    def window(self, t0: float, n: int) -> FloatArray:
        """Reference samples for [t0, t0 + n / rate); zeros where nothing plays."""
        out = np.zeros(n, dtype=np.float64)
        for _sid, start, samples in self._segments:
            offset = int(round((start - t0) * self.mic_rate))
            lo = max(0, offset)
            hi = min(n, offset + len(samples))
            if hi > lo:
                out[lo:hi] += samples[lo - offset : hi - offset]
        return out


@dataclass(frozen=True)
class FrameVerdict:
    voice: bool
    residual_rms: float
    echo_rms: float
    lag_ms: float | None


class EchoGate:
    """Separates the user's voice from the agent's own echo, frame by frame."""

    def __init__(self, mic_rate: int, config: BargeInConfig, timeline: PlayoutTimeline) -> None:
        self.mic_rate = mic_rate
        self.config = config
        self.timeline = timeline
        self._max_lag = int(config.echo_max_lag_ms * mic_rate / 1000)
        self._lead = max(0, int(config.echo_lead_ms * mic_rate / 1000))

    def classify(self, frame: FloatArray, t0: float) -> FrameVerdict:
        n = len(frame)
        if n == 0:
            return FrameVerdict(False, 0.0, 0.0, None)
        total_energy = float(np.dot(frame, frame))
        span = self._max_lag + self._lead  # candidate offsets j = 0..span; lag = max_lag - j (negative: lead)
        reference = self.timeline.window(t0 - self._max_lag / self.mic_rate, n + span)
        best_explained, best_lag = 0.0, None
        if np.any(reference):
            # c[j] = sum_i reference[j + i] * frame[i]; lag = max_lag - j samples.
            size = 1 << int(np.ceil(np.log2(len(reference) + n)))
            spectrum = np.fft.rfft(reference, size) * np.conj(np.fft.rfft(frame, size))
            corr = np.fft.irfft(spectrum, size)[: span + 1]
            squares = np.concatenate([[0.0], np.cumsum(reference * reference)])
            energy = squares[n : n + span + 1] - squares[: span + 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                explained = np.where(energy > 1e-6, corr * corr / np.maximum(energy, 1e-6), 0.0)
            j = int(np.argmax(explained))
            best_explained = float(min(explained[j], total_energy))
            best_lag = (self._max_lag - j) * 1000.0 / self.mic_rate
        residual_rms = float(np.sqrt(max(0.0, total_energy - best_explained) / n))
        echo_rms = float(np.sqrt(best_explained / n))
        voice = residual_rms > self.config.vad_threshold_rms + self.config.echo_leak * echo_rms
        return FrameVerdict(voice, residual_rms, echo_rms, best_lag)


@dataclass
class SpeechRun:
    """Accumulates voiced frames; `confirmed` once the run is at least min_speech_ms long."""

    config: BargeInConfig
    voiced_ms: float = 0.0
    gap_ms: float = 0.0
    started_t: float | None = None
    confirmed: bool = False
    held: list[bytes] = field(default_factory=list)  # frames of an unconfirmed run, released on confirm

    def update(self, voice: bool, frame_ms: float, t0: float) -> bool:
        """Feed one frame's verdict; True exactly when the run becomes confirmed."""
        if voice:
            if self.started_t is None:
                self.started_t = t0
            self.voiced_ms += frame_ms
            self.gap_ms = 0.0
            if not self.confirmed and self.voiced_ms >= self.config.min_speech_ms:
                self.confirmed = True
                return True
            return False
        if self.started_t is not None:
            self.gap_ms += frame_ms
            if self.gap_ms > self.config.hangover_ms:
                self.reset()
        return False

    @property
    def active(self) -> bool:
        return self.started_t is not None

    def reset(self) -> None:
        self.voiced_ms = 0.0
        self.gap_ms = 0.0
        self.started_t = None
        self.confirmed = False
        self.held = []
