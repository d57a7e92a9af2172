"""The simulated board's microphone and speaker, and WAV input/output.

Both run on the hardware thread's clock (`produce(now)` / `play(now)`), like I2S DMA:
the microphone makes samples at its rate whether or not the firmware reads them (a
full capture buffer drops the oldest), the speaker consumes its output stage at its
rate and plays silence when it runs dry. The speaker recording is a continuous
timeline from the sim's start, so every sample sits at the board time it played.

The echo path feeds what the speaker played back into the microphone, delayed and
scaled, the way a real speaker leaks into a nearby mic.
"""

from __future__ import annotations

import threading
import wave
from collections import deque
from pathlib import Path
from typing import Callable

import numpy as np
import numpy.typing as npt

from sotto.audio.resample import StreamResampler
from sotto.errors import AudioFormatError

Int16Array = npt.NDArray[np.int16]
EventSink = Callable[[int, str, str], None]  # (board_ms, kind, detail)
MAX_UTTERANCE_S = 600


def _resample(pcm: Int16Array, from_rate: int, to_rate: int) -> Int16Array:
    if from_rate == to_rate or pcm.size == 0:
        return pcm
    r = StreamResampler(from_rate, to_rate)
    out = r.process(pcm.astype("<i2").tobytes()) + r.flush()
    return np.frombuffer(out, dtype="<i2").astype(np.int16)


def read_wav(path: str | Path) -> tuple[Int16Array, int]:
    """Mono PCM16 samples and rate of a WAV file; AudioFormatError for anything else."""
    p = Path(path)
    try:
        with wave.open(str(p), "rb") as w:
            channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(frames)
    except FileNotFoundError:
        raise AudioFormatError(f"{p}: no such file") from None
    except (wave.Error, EOFError, OSError) as exc:
        raise AudioFormatError(f"{p}: not a readable PCM WAV file ({exc})",
                               hint="convert it with: sox IN.wav -b 16 -c 1 OUT.wav") from None
    if width not in (1, 2, 3, 4):
        raise AudioFormatError(f"{p}: unsupported sample width {width} bytes")
    if rate < 4000 or rate > 192000:
        raise AudioFormatError(f"{p}: unsupported sample rate {rate} Hz")
    if channels < 1:
        raise AudioFormatError(f"{p}: no channels")
    if frames > rate * MAX_UTTERANCE_S:
        raise AudioFormatError(f"{p}: longer than {MAX_UTTERANCE_S} s")
    usable = len(raw) - len(raw) % (width * channels)
    raw = raw[:usable]
    if width == 1:
        x = (np.frombuffer(raw, dtype=np.uint8).astype(np.int32) - 128) << 8
    elif width == 2:
        x = np.frombuffer(raw, dtype="<i2").astype(np.int32)
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        x = ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8) >> 16  # sign-extend, keep the top 16 bits
    else:
        x = np.frombuffer(raw, dtype="<i4").astype(np.int64) >> 16
    x = x.reshape(-1, channels).mean(axis=1)  # mono mix
    return np.clip(np.round(x), -32768, 32767).astype(np.int16), rate


def write_wav(path: str | Path, pcm: Int16Array, rate: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype("<i2").tobytes())


class SimMicrophone:
    """PCM16 mono at the configured rate: queued utterances, silence between, plus echo."""

    def __init__(self, rate: int = 16000, *, gap_s: float = 0.6, buffer_s: float = 1.0,
                 on_event: EventSink | None = None) -> None:
        self.rate = rate
        self.gap_s = gap_s
        self.buffer_s = buffer_s
        self._on_event = on_event
        self._lock = threading.Lock()
        self._captured = bytearray()
        self._queue: deque[tuple[Int16Array, int, str]] = deque()
        self._current: Int16Array | None = None
        self._current_label = ""
        self._pos = 0
        self._gap_left = 0
        self._t0 = -1.0
        self._made = 0
        self.overrun_bytes = 0
        self.echo_gain = 0.0
        self.echo_delay_s = 0.0
        self._echo = np.zeros(0, dtype=np.float32)
        self._echo_resampler: StreamResampler | None = None
        self.utterances_done = 0

    # -- firmware side --
    def configure(self, rate: int) -> None:
        with self._lock:
            if rate != self.rate:
                self.rate = rate
                self._t0 = -1.0
                self._captured.clear()
                self._echo = np.zeros(0, dtype=np.float32)
                self._echo_resampler = None
                if self._current is not None:
                    self._current = None  # restart the utterance at the new rate is not worth it: drop it

    def readinto(self, buf: bytearray | memoryview, off: int = 0, n: int = -1) -> int:
        """Up to n bytes (all that fit when n < 0) of captured PCM16 into buf[off:]."""
        if n < 0:
            n = len(buf) - off
        with self._lock:
            n = min(n, len(self._captured)) & ~1
            if n:
                buf[off: off + n] = self._captured[:n]
                del self._captured[:n]
            return n

    def take(self) -> bytes:
        """Everything captured so far (a firmware in another process reads it through a pipe)."""
        with self._lock:
            out = bytes(self._captured)
            self._captured.clear()
            return out

    # -- sim side --
    def queue_utterance(self, pcm: Int16Array, rate: int, label: str = "") -> None:
        with self._lock:
            self._queue.append((pcm, rate, label))

    @property
    def busy(self) -> bool:
        """An utterance is playing or queued."""
        with self._lock:
            return self._current is not None or bool(self._queue)

    def set_echo(self, gain: float, delay_s: float) -> None:
        with self._lock:
            self.echo_gain = gain
            self.echo_delay_s = delay_s
            self._echo = np.zeros(int(delay_s * self.rate), dtype=np.float32)
            self._echo_resampler = None

    def add_echo(self, played: Int16Array, speaker_rate: int) -> None:
        """What the speaker just played; heard by the mic after the echo delay."""
        if self.echo_gain <= 0.0:
            return
        with self._lock:
            if self._echo_resampler is None or self._echo_resampler.from_rate != speaker_rate:
                self._echo_resampler = StreamResampler(speaker_rate, self.rate)
                self._echo = np.zeros(int(self.echo_delay_s * self.rate), dtype=np.float32)
            out = np.frombuffer(self._echo_resampler.process(played.astype("<i2").tobytes()), dtype="<i2")
            self._echo = np.concatenate([self._echo, out.astype(np.float32) * self.echo_gain])

    def produce(self, now: float, board_ms: int) -> None:
        with self._lock:
            if self._t0 < 0:
                self._t0 = now
                self._made = 0
            due = int((now - self._t0) * self.rate) - self._made
            if due <= 0:
                return
            self._made += due
            out = np.zeros(due, dtype=np.float32)
            filled = 0
            while filled < due:
                if self._current is None:
                    if self._gap_left > 0:
                        k = min(self._gap_left, due - filled)
                        self._gap_left -= k
                        filled += k
                        continue
                    if not self._queue:
                        break
                    pcm, rate, label = self._queue.popleft()
                    self._current = _resample(pcm, rate, self.rate)
                    self._current_label = label
                    self._pos = 0
                    self._event(board_ms, "utterance_start", label)
                cur = self._current
                k = min(cur.size - self._pos, due - filled)
                out[filled: filled + k] = cur[self._pos: self._pos + k]
                self._pos += k
                filled += k
                if self._pos >= cur.size:
                    self._current = None
                    self.utterances_done += 1
                    self._gap_left = int(self.gap_s * self.rate)
                    self._event(board_ms, "utterance_end", self._current_label)
            if self._echo.size:
                k = min(due, self._echo.size)
                out[:k] += self._echo[:k]
                self._echo = self._echo[k:]
            pcm16 = np.clip(out, -32768, 32767).astype("<i2").tobytes()
            self._captured += pcm16
            limit = int(self.buffer_s * self.rate) * 2
            if len(self._captured) > limit:
                extra = len(self._captured) - limit
                del self._captured[:extra]
                self.overrun_bytes += extra

    def _event(self, board_ms: int, kind: str, detail: str) -> None:
        if self._on_event is not None:
            self._on_event(board_ms, kind, detail)


class SimSpeaker:
    """An I2S-like output stage consumed in real time; records a timeline WAV."""

    def __init__(self, stage_bytes: int = 8192, *, record_rate: int | None = 22050,
                 mic: SimMicrophone | None = None) -> None:
        self.stage_bytes = stage_bytes
        self.rate = 0  # until the firmware configures it, nothing plays
        self.volume = 100
        self._lock = threading.Lock()
        self._stage = bytearray()
        self._t0 = -1.0
        self._played = 0
        self._record_rate = record_rate
        self._recording: list[Int16Array] = []
        self._recorded = 0
        self._record_resampler: StreamResampler | None = None
        self._start_time: float | None = None
        self._mic = mic
        self.bytes_played = 0  # non-silent bytes taken from the stage
        self.stops = 0
        self.volume_shift = 0  # the board's volume as a right shift (a firmware in another process)

    # -- firmware side --
    def configure(self, rate: int) -> None:
        with self._lock:
            if rate != self.rate:
                self.rate = rate
                self._t0 = -1.0

    def write(self, buf: bytes | bytearray | memoryview, off: int = 0, n: int = -1) -> int:
        """Up to n bytes of PCM16 from buf[off:] (all of it when n < 0); returns how many."""
        if n < 0:
            n = len(buf) - off
        with self._lock:
            k = min(n, self.stage_bytes - len(self._stage)) & ~1
            if k > 0:
                self._stage += buf[off: off + k]
            return max(k, 0)

    def stop(self) -> int:
        with self._lock:
            dropped = len(self._stage)
            self._stage.clear()
            self.stops += 1
            return dropped

    def queued(self) -> int:
        with self._lock:
            return len(self._stage)

    def set_volume(self, percent: int) -> None:
        self.volume = max(0, min(100, int(percent)))

    # -- sim side --
    def start_clock(self, now: float) -> None:
        self._start_time = now

    def play(self, now: float) -> None:
        if self._start_time is None:
            self._start_time = now
        with self._lock:
            if self.rate <= 0:
                return
            if self._t0 < 0:
                self._t0 = now
                self._played = 0
            due = int((now - self._t0) * self.rate) - self._played
            if due <= 0:
                return
            self._played += due
            take = min(len(self._stage), 2 * due) & ~1
            chunk = np.zeros(due, dtype=np.int16)
            if take:
                chunk[: take // 2] = np.frombuffer(bytes(self._stage[:take]), dtype="<i2")
                del self._stage[:take]
                self.bytes_played += take
            if self.volume != 100:
                chunk = (chunk.astype(np.int32) * self.volume // 100).astype(np.int16)
            rate = self.rate
        self._record(now, chunk, rate)
        if self._mic is not None:
            self._mic.add_echo(chunk, rate)

    def received(self, now: float, pcm: bytes, rate: int, shift: int = 0) -> None:
        """What a speaker in another process played since the last call (PCM16 at `rate`,
        its volume as a right shift), placed on the timeline at `now`: silence fills the
        time nothing arrived, so the recording and the echo stay on the board's clock."""
        if self._start_time is None:
            self._start_time = now
        if rate <= 0:
            return
        with self._lock:
            if rate != self.rate or self._t0 < 0:
                self.rate = rate
                self._t0 = now - len(pcm) / 2 / rate
                self._played = 0
            samples = np.frombuffer(pcm, dtype="<i2").astype(np.int16)
            due = int((now - self._t0) * rate) - self._played
            pad = max(0, due - samples.size)
            if pad == 0 and samples.size == 0:
                return
            chunk = np.concatenate([np.zeros(pad, dtype=np.int16), samples]) if pad else samples
            if shift:
                chunk = (chunk.astype(np.int32) >> shift).astype(np.int16)
            self._played += chunk.size
            self.bytes_played += len(pcm)
            self.volume_shift = shift
        self._record(now, chunk, rate)
        if self._mic is not None:
            self._mic.add_echo(chunk, rate)

    def _record(self, now: float, chunk: Int16Array, rate: int) -> None:
        if self._record_rate is None:
            return
        if self._record_resampler is None or self._record_resampler.from_rate != rate:
            self._record_resampler = StreamResampler(rate, self._record_rate)
        out = np.frombuffer(self._record_resampler.process(chunk.astype("<i2").tobytes()), dtype="<i2")
        if self._recorded == 0 and self._start_time is not None:
            # Silence from the sim's start to the first sample: the timeline starts at board time 0.
            lead = int((now - self._start_time) * self._record_rate) - out.size
            if lead > 0:
                self._recording.append(np.zeros(lead, dtype=np.int16))
                self._recorded += lead
        self._recording.append(out.astype(np.int16))
        self._recorded += out.size

    @property
    def record_rate(self) -> int | None:
        return self._record_rate

    def recording(self) -> Int16Array:
        parts = list(self._recording)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)
