"""PCM16 resampling: pitch and level kept, aliasing removed, chunking invisible."""

from __future__ import annotations

import numpy as np
import pytest

from sotto.audio.resample import StreamResampler, resample_pcm16, resample_samples


def _tone(freq: float, rate: int, seconds: float, amplitude: float = 12000.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return np.rint(amplitude * np.sin(2 * np.pi * freq * t)).astype(np.int16)


def _peak_frequency(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64) * np.hanning(len(samples))))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))])


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


@pytest.mark.parametrize(("src", "dst"), [(22050, 16000), (22050, 8000), (16000, 22050), (48000, 16000), (8000, 16000)])
def test_tone_keeps_pitch_and_level(src: int, dst: int) -> None:
    tone = _tone(440.0, src, 1.0)
    out = resample_samples(tone, src, dst)
    assert abs(len(out) - len(tone) * dst / src) <= 1
    assert abs(_peak_frequency(out, dst) - 440.0) < 3.0
    middle = slice(len(out) // 10, -len(out) // 10)  # edges fade in and out of the silent padding
    assert _rms(out[middle]) == pytest.approx(_rms(tone), rel=0.02)


def test_tone_above_new_nyquist_is_removed() -> None:
    # 6 kHz cannot exist at 8 kHz sampling: without a low-pass it would alias to 2 kHz.
    tone = _tone(6000.0, 22050, 1.0)
    out = resample_samples(tone, 22050, 8000)
    assert _rms(out) < _rms(tone) / 100  # at least 40 dB down


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 441, 1000, 4410])
def test_chunked_stream_equals_whole_buffer(chunk_bytes: int) -> None:
    rng = np.random.default_rng(5)
    noise = rng.integers(-8000, 8000, size=22050 // 10, dtype=np.int16).tobytes()
    whole = resample_pcm16(noise, 22050, 16000)
    stream = StreamResampler(22050, 16000)
    parts = [stream.process(noise[i : i + chunk_bytes]) for i in range(0, len(noise), chunk_bytes)]
    assert b"".join(parts) + stream.flush() == whole


def test_chunk_boundaries_make_no_clicks() -> None:
    tone = _tone(300.0, 22050, 0.5).tobytes()
    stream = StreamResampler(22050, 16000)
    out = b"".join(stream.process(tone[i : i + 882]) for i in range(0, len(tone), 882)) + stream.flush()
    samples = np.frombuffer(out, dtype="<i2").astype(np.int32)
    # A 300 Hz tone at 12000 peak moves at most ~1420 per sample at 16 kHz; a click jumps far more.
    assert np.max(np.abs(np.diff(samples[100:-100]))) < 1600


def test_flush_resets_for_the_next_utterance() -> None:
    tone = _tone(440.0, 22050, 0.2).tobytes()
    stream = StreamResampler(22050, 8000)
    first = stream.process(tone) + stream.flush()
    second = stream.process(tone) + stream.flush()
    assert first == second


def test_loud_input_is_clipped_not_wrapped() -> None:
    square = np.where(np.arange(1600) % 100 < 50, 32767, -32768).astype(np.int16)
    out = resample_samples(square, 16000, 8000)
    # Overshoot near the edges must saturate at full scale, never wrap to the opposite sign.
    phase = np.arange(len(out)) % 50
    assert np.all(out[(phase > 3) & (phase < 22)] > 20000)
    assert np.all(out[(phase > 28) & (phase < 47)] < -20000)


def test_same_rate_passes_through() -> None:
    data = np.arange(-50, 50, dtype=np.int16).tobytes()
    assert resample_pcm16(data, 16000, 16000) == data
    stream = StreamResampler(16000, 16000)
    assert stream.process(data) == data and stream.flush() == b""


def test_empty_input() -> None:
    assert resample_pcm16(b"", 22050, 16000) == b""


@pytest.mark.parametrize(("src", "dst"), [(0, 16000), (22050, -1)])
def test_rejects_bad_rates(src: int, dst: int) -> None:
    with pytest.raises(ValueError):
        StreamResampler(src, dst)
