"""Audio format negotiation: pick mic and speaker formats that fit the line.

A serial line carries baud/10 bytes a second in each direction (8N1: 10 bits a byte).
Audio, with its framing overhead, may use at most AUDIO_LINE_SHARE of that, so PINGs,
CREDITs and LOG frames always have room and a slightly slow UART clock does not turn
into a growing queue. Within that budget the best-sounding candidate wins: for the
microphone, 16 kHz (what speech recognisers want) before 8 kHz, then PCM16, mu-law,
IMA-ADPCM; for the speaker, PCM16 at the TTS voice's 22050 Hz first.

Examples (frame overhead included):
  921600 baud = 92160 B/s, budget 73728 B/s: mic PCM16 16 kHz (~32.9 kB/s), speaker PCM16 22050 Hz (~45 kB/s).
  115200 baud = 11520 B/s, budget  9216 B/s: PCM16 16 kHz (32 kB/s) and mu-law 16 kHz (16 kB/s) do not fit;
  mic IMA-ADPCM 16 kHz (~8.5 kB/s with 40 ms frames), speaker IMA-ADPCM 16 kHz (~8.5 kB/s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from sotto_fw import wire

from sotto.errors import LinkError

AUDIO_LINE_SHARE = 0.8
BITS_PER_BYTE_ON_LINE = 10  # start + 8 data + stop

# IMA-ADPCM frames carry their own predictor and step index so a lost frame never
# desynchronises the decoder: 4 header bytes per frame, then 4 bits a sample.
ADPCM_FRAME_HEADER = 4

MIC_CANDIDATES: tuple[tuple[int, int], ...] = (
    (wire.FMT_PCM16, 16000),
    (wire.FMT_MULAW, 16000),
    (wire.FMT_ADPCM, 16000),
    (wire.FMT_PCM16, 8000),
    (wire.FMT_MULAW, 8000),
    (wire.FMT_ADPCM, 8000),
)

SPEAKER_CANDIDATES: tuple[tuple[int, int], ...] = (
    (wire.FMT_PCM16, 22050),
    (wire.FMT_PCM16, 16000),
    (wire.FMT_MULAW, 22050),
    (wire.FMT_MULAW, 16000),
    (wire.FMT_ADPCM, 22050),
    (wire.FMT_ADPCM, 16000),
    (wire.FMT_PCM16, 8000),
    (wire.FMT_MULAW, 8000),
    (wire.FMT_ADPCM, 8000),
)


def line_bytes_per_s(baud: int) -> float:
    return baud / BITS_PER_BYTE_ON_LINE


def frame_ms_for(baud: int) -> int:
    """Longer frames on slow lines: the per-frame overhead is a bigger share there."""
    return 20 if baud >= 230400 else 40


def audio_bytes(fmt: int, samples: int) -> int:
    """Wire bytes of `samples` samples in format `fmt` (one frame)."""
    if fmt == wire.FMT_PCM16:
        return 2 * samples
    if fmt == wire.FMT_MULAW:
        return samples
    if fmt == wire.FMT_ADPCM:
        return ADPCM_FRAME_HEADER + (samples + 1) // 2
    raise ValueError(f"unknown audio format {fmt}")


def frame_line_bytes(payload: int) -> int:
    """Bytes a frame with `payload` payload bytes takes on the line (worst-case COBS)."""
    raw = wire.HEADER_LEN + payload + wire.CRC_LEN
    return raw + 1 + raw // 254 + 2  # COBS code bytes + a delimiter on each side


def stream_line_bytes_per_s(fmt: int, rate: int, frame_ms: int, head: int) -> float:
    samples = rate * frame_ms // 1000
    per_frame = frame_line_bytes(head + audio_bytes(fmt, samples))
    return per_frame * 1000.0 / frame_ms


@dataclass(frozen=True)
class FormatChoice:
    mic_format: int
    mic_rate: int
    speaker_format: int
    speaker_rate: int
    frame_ms: int
    baud: int
    mic_line_bytes_per_s: float
    speaker_line_bytes_per_s: float

    @property
    def budget_bytes_per_s(self) -> float:
        return line_bytes_per_s(self.baud) * AUDIO_LINE_SHARE

    def describe(self) -> str:
        line = line_bytes_per_s(self.baud)
        return (
            f"{self.baud} baud = {line:.0f} B/s each way; "
            f"mic {wire.FORMAT_NAMES[self.mic_format]} {self.mic_rate} Hz "
            f"({self.mic_line_bytes_per_s:.0f} B/s, {100 * self.mic_line_bytes_per_s / line:.0f}% of the line), "
            f"speaker {wire.FORMAT_NAMES[self.speaker_format]} {self.speaker_rate} Hz "
            f"({self.speaker_line_bytes_per_s:.0f} B/s, {100 * self.speaker_line_bytes_per_s / line:.0f}%), "
            f"{self.frame_ms} ms frames"
        )


def _pick(candidates: tuple[tuple[int, int], ...], formats: int, rates: tuple[int, ...], host_formats: int,
          frame_ms: int, head: int, budget: float) -> tuple[int, int, float] | None:
    for fmt, rate in candidates:
        if not (fmt & formats and fmt & host_formats) or rate not in rates:
            continue
        if head + audio_bytes(fmt, rate * frame_ms // 1000) > wire.MAX_PAYLOAD:
            continue  # one frame must fit one wire payload
        need = stream_line_bytes_per_s(fmt, rate, frame_ms, head)
        if need <= budget:
            return fmt, rate, need
    return None


def choose_formats(baud: int, mic_formats: int, mic_rates: tuple[int, ...], speaker_formats: int,
                   speaker_rates: tuple[int, ...], host_formats: int) -> FormatChoice:
    """The best mic and speaker formats both sides support that fit `baud` with headroom."""
    if baud <= 0:
        raise LinkError(f"invalid baud rate {baud}")
    frame_ms = frame_ms_for(baud)
    budget = line_bytes_per_s(baud) * AUDIO_LINE_SHARE
    mic = _pick(MIC_CANDIDATES, mic_formats, mic_rates, host_formats, frame_ms, wire.AUDIO_UP_HEAD, budget)
    spk = _pick(SPEAKER_CANDIDATES, speaker_formats, speaker_rates, host_formats, frame_ms, wire.AUDIO_DOWN_HEAD, budget)
    if mic is None or spk is None:
        which = "microphone" if mic is None else "speaker"
        raise LinkError(
            f"no {which} audio format fits {baud} baud ({budget:.0f} B/s for audio)",
            hint=f"board offers mic formats 0x{mic_formats:x} at {list(mic_rates)} Hz, speaker formats "
                 f"0x{speaker_formats:x} at {list(speaker_rates)} Hz; use a faster baud rate",
        )
    return FormatChoice(mic[0], mic[1], spk[0], spk[1], frame_ms, baud, mic[2], spk[2])


def pcm_bytes_per_frame(rate: int, frame_ms: int) -> int:
    return 2 * max(1, math.floor(rate * frame_ms / 1000))
