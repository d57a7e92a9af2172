"""PCM16 mono resampling for speech, numpy only, chunk by chunk without clicks.

Piper voices speak at 22050 Hz; boards play 16000 or 8000 Hz. This is a windowed-sinc
(Blackman) band-limited interpolator: the cut-off sits below the lower of the two
Nyquist frequencies, so downsampling does not alias. Rational rate ratios L/M use a
precomputed table of L filter phases. The stream keeps the last input samples between
chunks, so cutting the input anywhere gives the same output as one whole call.
"""

from __future__ import annotations

from functools import lru_cache
from math import gcd

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
Int16Array = npt.NDArray[np.int16]

_ZERO_CROSSINGS = 8  # per side of the kernel: ~60 dB stop band with Blackman
_ROLLOFF = 0.92  # cut-off as a fraction of the lower Nyquist frequency
_MAX_TABLE_PHASES = 4096  # beyond this, weights are computed per output sample


class StreamResampler:
    """Resample a PCM16 mono stream from `from_rate` to `to_rate`.

    `process()` takes bytes (little-endian int16) and returns the output that is
    ready; `flush()` returns the tail once the input has ended and resets the stream.
    """

    def __init__(self, from_rate: int, to_rate: int) -> None:
        if from_rate <= 0 or to_rate <= 0:
            raise ValueError(f"sample rates must be positive, got {from_rate} -> {to_rate}")
        self.from_rate = from_rate
        self.to_rate = to_rate
        divisor = gcd(from_rate, to_rate)
        self._up = to_rate // divisor  # L: output samples per M input samples
        self._down = from_rate // divisor  # M
        self._cutoff = _ROLLOFF * min(1.0, to_rate / from_rate)  # relative to the input Nyquist
        self._half_taps = int(np.ceil(_ZERO_CROSSINGS / self._cutoff))
        self._taps = 2 * self._half_taps
        self._offsets = np.arange(-self._half_taps + 1, self._half_taps + 1)  # tap i = floor(t) + offset
        self._table: Float32Array | None = None  # taps x phases
        if self._up <= _MAX_TABLE_PHASES and not self.passthrough:
            self._table = _phase_table(self._up, self._cutoff, self._half_taps)
        self._reset_stream()

    @property
    def passthrough(self) -> bool:
        return self.from_rate == self.to_rate

    @property
    def delay_samples(self) -> int:
        """Input samples that must follow a sample before its output can be computed."""
        return self._half_taps

    def _reset_stream(self) -> None:
        # History holds input samples starting at absolute index self._history_start;
        # the stream starts with silence before sample 0.
        self._history: Float32Array = np.zeros(self._half_taps, dtype=np.float32)
        self._history_start = -self._half_taps
        self._received = 0  # input samples received
        self._next_out = 0  # index of the next output sample
        self._odd_byte = b""

    def _weights(self, fractions: FloatArray) -> FloatArray:
        return _kernel_weights(fractions, self._cutoff, self._half_taps)

    def process(self, pcm: bytes) -> bytes:
        data = self._odd_byte + pcm
        usable = len(data) - (len(data) % 2)
        self._odd_byte = data[usable:]
        if usable == 0:
            return b""
        samples = np.frombuffer(data[:usable], dtype="<i2")
        return self.process_samples(samples).astype("<i2").tobytes()

    def process_samples(self, samples: npt.NDArray[np.integer] | FloatArray) -> Int16Array:
        """Like process() for a numpy array of samples (int16 scale)."""
        if self.passthrough:
            return np.asarray(samples).astype(np.int16)
        chunk = np.asarray(samples, dtype=np.float32)
        self._history = np.concatenate([self._history, chunk])
        self._received += len(chunk)
        # Output n sits at input time t = n * M / L and needs taps up to floor(t) + half_taps.
        last_ready = (self._received - 1 - self._half_taps) * self._up // self._down
        return self._emit(last_ready)

    def flush(self) -> bytes:
        """The remaining output once the input has ended; the stream starts afresh after."""
        if self.passthrough:
            self._reset_stream()
            return b""
        self._history = np.concatenate([self._history, np.zeros(self._half_taps, dtype=np.float32)])
        total_out = -(-self._received * self._up // self._down)  # ceil: every input instant covered
        out = self._emit(total_out - 1)
        self._reset_stream()
        return out.astype("<i2").tobytes()

    def _emit(self, last_index: int) -> Int16Array:
        if last_index < self._next_out:
            return np.zeros(0, dtype=np.int16)
        n = np.arange(self._next_out, last_index + 1, dtype=np.int64)
        scaled = n * self._down
        base = scaled // self._up  # floor(t)
        phase = scaled % self._up
        start = base - self._history_start
        out = np.zeros(len(n), dtype=np.float32)
        if self._table is not None:
            # One vector pass per tap: no n-by-taps temporaries (2-3x faster than a gather).
            for tap, offset in enumerate(self._offsets):
                out += self._history[start + offset] * self._table[tap][phase]
        else:
            weights = self._weights(phase / self._up).astype(np.float32)
            for tap, offset in enumerate(self._offsets):
                out += self._history[start + offset] * weights[:, tap]
        self._next_out = last_index + 1
        # Keep only the history the next output can still reach.
        next_base = (self._next_out * self._down) // self._up
        keep_from = next_base - self._half_taps + 1
        if keep_from > self._history_start:
            self._history = self._history[keep_from - self._history_start :]
            self._history_start = keep_from
        return np.clip(np.rint(out), -32768, 32767).astype(np.int16)


def _kernel_weights(fractions: FloatArray, cutoff: float, half_taps: int) -> FloatArray:
    """Normalised kernel weights, one row per fractional position in [0, 1)."""
    offsets = np.arange(-half_taps + 1, half_taps + 1)
    distance = fractions[:, None] - offsets[None, :]  # t - tap index
    kernel = cutoff * np.sinc(cutoff * distance)
    window_pos = np.clip(distance / half_taps, -1.0, 1.0)
    window = 0.42 + 0.5 * np.cos(np.pi * window_pos) + 0.08 * np.cos(2 * np.pi * window_pos)
    weights: FloatArray = kernel * window
    # Unit gain at DC for every phase: no ripple on steady signals.
    weights /= weights.sum(axis=1, keepdims=True)
    return weights


@lru_cache(maxsize=16)
def _phase_table(phases: int, cutoff: float, half_taps: int) -> Float32Array:
    """Weights for every output phase of a rational ratio, taps x phases (shared by all streams)."""
    table = np.ascontiguousarray(_kernel_weights(np.arange(phases) / phases, cutoff, half_taps).T, dtype=np.float32)
    table.setflags(write=False)
    return table


def resample_pcm16(pcm: bytes, from_rate: int, to_rate: int) -> bytes:
    """Resample a whole PCM16 mono buffer."""
    if from_rate == to_rate:
        return pcm
    stream = StreamResampler(from_rate, to_rate)
    return stream.process(pcm) + stream.flush()


def resample_samples(samples: npt.NDArray[np.integer], from_rate: int, to_rate: int) -> Int16Array:
    """Resample a whole int16 numpy array."""
    out = resample_pcm16(np.asarray(samples, dtype="<i2").tobytes(), from_rate, to_rate)
    return np.frombuffer(out, dtype="<i2").astype(np.int16)
