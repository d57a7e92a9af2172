"""Reference wire audio codecs on numpy arrays, written independently of the board's.

Byte-for-byte the same as the board's `sotto_fw.audiocodec` (shared vectors in
tests/vectors/audio_vectors.json prove it): PCM16 little-endian, G.711 mu-law, and
IMA-ADPCM in self-contained blocks (predictor int16 LE, step index u8, 0, then 4-bit
codes low nibble first; the header is the coder state before the block's first sample).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from sotto_fw import wire

PCM16 = wire.FMT_PCM16
MULAW = wire.FMT_MULAW
ADPCM = wire.FMT_ADPCM
FORMATS = (PCM16, MULAW, ADPCM)
ADPCM_HEADER = 4

Int16Array = npt.NDArray[np.int16]

_STEPS = (
    7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45,
    50, 55, 60, 66, 73, 80, 88, 97, 107, 118, 130, 143, 157, 173, 190, 209, 230,
    253, 279, 307, 337, 371, 408, 449, 494, 544, 598, 658, 724, 796, 876, 963,
    1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066, 2272, 2499, 2749, 3024, 3327,
    3660, 4026, 4428, 4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487,
    12635, 13899, 15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
)
_INDEX_DELTA = (-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8)

# Exponent of a biased magnitude's top byte: floor(log2(i)) for i >= 2, else 0.
_EXP_LUT = np.array([0, 0] + [int(i).bit_length() - 1 for i in range(2, 256)], dtype=np.int32)


def _mulaw_decode_table() -> Int16Array:
    u = ~np.arange(256, dtype=np.int32) & 0xFF
    t = (((u & 0x0F) << 3) + 0x84) << ((u >> 4) & 7)
    return np.where(u & 0x80, 0x84 - t, t - 0x84).astype(np.int16)


_MULAW_TABLE = _mulaw_decode_table()


def as_pcm16(pcm: bytes | bytearray | memoryview | npt.NDArray[np.int16]) -> Int16Array:
    """PCM16 bytes (little-endian) or an int16 array -> int16 array (no copy for arrays)."""
    if isinstance(pcm, np.ndarray):
        return pcm.astype(np.int16, copy=False)
    raw = bytes(pcm)
    return np.frombuffer(raw[: len(raw) & ~1], dtype="<i2").astype(np.int16)


def mulaw_encode(pcm: bytes | Int16Array) -> bytes:
    s = as_pcm16(pcm).astype(np.int32)
    sign = np.where(s < 0, 0x80, 0)
    mag = np.minimum(np.abs(s), 32635) + 0x84
    exp = _EXP_LUT[(mag >> 7) & 0xFF]
    mant = (mag >> (exp + 3)) & 0x0F
    return (~(sign | (exp << 4) | mant) & 0xFF).astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> Int16Array:
    return _MULAW_TABLE[np.frombuffer(bytes(data), dtype=np.uint8)]


def encoded_size(fmt: int, samples: int) -> int:
    if fmt == PCM16:
        return 2 * samples
    if fmt == MULAW:
        return samples
    if fmt == ADPCM:
        return ADPCM_HEADER + (samples + 1) // 2
    raise ValueError(f"unknown audio format {fmt}")


def bytes_per_second(fmt: int, rate: int, frame_ms: int = 20) -> int:
    """Audio payload bytes a second (ADPCM counts its per-frame header)."""
    return encoded_size(fmt, rate * frame_ms // 1000) * 1000 // frame_ms


class AdpcmEncoder:
    """IMA-ADPCM, one block per call; the state carries over to the next block of the stream."""

    def __init__(self) -> None:
        self.predictor = 0
        self.index = 0

    def reset(self) -> None:
        self.predictor = 0
        self.index = 0

    def encode(self, pcm: bytes | Int16Array) -> bytes:
        samples = as_pcm16(pcm).tolist()
        if len(samples) % 2:
            samples.append(samples[-1])  # even sample count, as the board pads
        pred, index = self.predictor, self.index
        out = bytearray(ADPCM_HEADER + len(samples) // 2)
        out[0:2] = (pred & 0xFFFF).to_bytes(2, "little")
        out[2] = index
        codes = []
        for s in samples:
            step = _STEPS[index]
            diff = s - pred
            code = 0
            if diff < 0:
                code = 8
                diff = -diff
            vpdiff = step >> 3
            if diff >= step:
                code |= 4
                diff -= step
                vpdiff += step
            step >>= 1
            if diff >= step:
                code |= 2
                diff -= step
                vpdiff += step
            step >>= 1
            if diff >= step:
                code |= 1
                vpdiff += step
            pred = max(-32768, pred - vpdiff) if code & 8 else min(32767, pred + vpdiff)
            index = min(88, max(0, index + _INDEX_DELTA[code]))
            codes.append(code)
        c = np.array(codes, dtype=np.uint8)
        out[ADPCM_HEADER:] = (c[0::2] | (c[1::2] << 4)).tobytes()
        self.predictor, self.index = pred, index
        return bytes(out)


def adpcm_decode(block: bytes) -> Int16Array:
    """One IMA-ADPCM block -> int16 samples (empty for a block too short or corrupt)."""
    data = bytes(block)
    if len(data) <= ADPCM_HEADER or data[2] > 88:
        return np.zeros(0, dtype=np.int16)
    pred = int.from_bytes(data[0:2], "little", signed=True)
    index = data[2]
    out = []
    for b in data[ADPCM_HEADER:]:
        for code in (b & 0x0F, b >> 4):
            step = _STEPS[index]
            vpdiff = step >> 3
            if code & 4:
                vpdiff += step
            if code & 2:
                vpdiff += step >> 1
            if code & 1:
                vpdiff += step >> 2
            pred = max(-32768, pred - vpdiff) if code & 8 else min(32767, pred + vpdiff)
            index = min(88, max(0, index + _INDEX_DELTA[code]))
            out.append(pred)
    return np.array(out, dtype=np.int16)


class Encoder:
    """PCM16 -> one wire format, frame by frame (one encoder per stream)."""

    def __init__(self, fmt: int) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown audio format {fmt}")
        self.fmt = fmt
        self._adpcm = AdpcmEncoder()

    def reset(self) -> None:
        self._adpcm.reset()

    def encode(self, pcm: bytes | Int16Array) -> bytes:
        if self.fmt == PCM16:
            return as_pcm16(pcm).astype("<i2").tobytes()
        if self.fmt == MULAW:
            return mulaw_encode(pcm)
        return self._adpcm.encode(pcm)


def decode(fmt: int, data: bytes) -> Int16Array:
    """One frame of a wire format -> int16 samples."""
    if fmt == PCM16:
        return as_pcm16(data)
    if fmt == MULAW:
        return mulaw_decode(data)
    if fmt == ADPCM:
        return adpcm_decode(data)
    raise ValueError(f"unknown audio format {fmt}")
