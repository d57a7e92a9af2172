# Audio codecs of the wire protocol: PCM16 passthrough, G.711 mu-law, IMA-ADPCM.
#
# PCM16 is mono little-endian int16 in bytearrays. Encoders and decoders work into
# buffers the caller allocated once; nothing here allocates per frame.
#
# IMA-ADPCM frames are self-contained blocks so a lost frame costs only itself:
#   predictor (int16 LE) | step index (u8) | 0 | 4-bit codes, low nibble first
# The header holds the coder state *before* the block's first sample; every sample of
# the block is coded, two per byte (an odd sample count is padded by repeating the
# last sample). The encoder carries its state from block to block (one per stream,
# reset() at a stream start); the decoder restarts from each block's header.

from sotto_fw import wire
from sotto_fw.compat import const, copy_into, native_or_bytecode

PCM16 = wire.FMT_PCM16
MULAW = wire.FMT_MULAW
ADPCM = wire.FMT_ADPCM
SUPPORTED_FORMATS = const(7)  # PCM16 | MULAW | ADPCM
ADPCM_HEADER = const(4)

_MULAW_BIAS = const(0x84)
_MULAW_CLIP = const(32635)

_STEPS = (
    7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45,
    50, 55, 60, 66, 73, 80, 88, 97, 107, 118, 130, 143, 157, 173, 190, 209, 230,
    253, 279, 307, 337, 371, 408, 449, 494, 544, 598, 658, 724, 796, 876, 963,
    1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066, 2272, 2499, 2749, 3024, 3327,
    3660, 4026, 4428, 4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487,
    12635, 13899, 15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
)
_INDEX_DELTA = (-1, -1, -1, -1, 2, 4, 6, 8, -1, -1, -1, -1, 2, 4, 6, 8)


def _make_exp_lut():
    lut = bytearray(256)
    for i in range(2, 256):
        e = 0
        v = i
        while v > 1:
            v >>= 1
            e += 1
        lut[i] = e
    return bytes(lut)


_EXP_LUT = _make_exp_lut()


def _mulaw_decode_value(u):
    u = ~u & 0xFF
    t = (((u & 0x0F) << 3) + _MULAW_BIAS) << ((u >> 4) & 7)
    return (_MULAW_BIAS - t) if u & 0x80 else (t - _MULAW_BIAS)


# 256 decoded values as little-endian int16 byte pairs: decoding is two table lookups.
_MULAW_DECODE = bytearray(512)
for _u in range(256):
    _v = _mulaw_decode_value(_u) & 0xFFFF
    _MULAW_DECODE[2 * _u] = _v & 0xFF
    _MULAW_DECODE[2 * _u + 1] = _v >> 8
_MULAW_DECODE = bytes(_MULAW_DECODE)


def format_supported(fmt):
    return fmt in (PCM16, MULAW, ADPCM)


def encoded_size(fmt, samples):
    """Bytes one frame of `samples` samples takes on the wire (audio only)."""
    if fmt == PCM16:
        return 2 * samples
    if fmt == MULAW:
        return samples
    if fmt == ADPCM:
        return ADPCM_HEADER + (samples + 1) // 2
    raise ValueError("unknown audio format")


def decoded_bytes(fmt, n):
    """PCM16 bytes that n wire bytes of audio decode to."""
    if fmt == PCM16:
        return n & ~1
    if fmt == MULAW:
        return 2 * n
    if fmt == ADPCM:
        return 0 if n <= ADPCM_HEADER else 4 * (n - ADPCM_HEADER)
    raise ValueError("unknown audio format")


def bytes_per_second(fmt, rate, frame_ms=20):
    """Audio payload bytes a second for a format (ADPCM counts its per-frame header)."""
    samples = rate * frame_ms // 1000
    return encoded_size(fmt, samples) * 1000 // frame_ms


# The per-sample loops, as source compiled at import (sotto_fw.compat): @micropython.native
# machine code on the board, plain bytecode on CPython or a port without a native
# emitter. One text for both, so the host tests run exactly what the board runs. They
# use only their arguments (tables are passed in) because they get a namespace of
# their own.

_MULAW_ENCODE_SOURCE = """\
def _mulaw_encode(src, n, dst, doff, lut):
    o = doff
    i = 0
    while i + 1 < n:
        s = src[i] | (src[i + 1] << 8)
        if s >= 32768:
            s -= 65536
        if s < 0:
            sign = 0x80
            s = -s
        else:
            sign = 0
        if s > 32635:
            s = 32635
        s += 0x84
        e = lut[(s >> 7) & 0xFF]
        m = (s >> (e + 3)) & 0x0F
        dst[o] = ~(sign | (e << 4) | m) & 0xFF
        o += 1
        i += 2
    return o - doff
"""
_mulaw_encode = native_or_bytecode(_MULAW_ENCODE_SOURCE, "_mulaw_encode")


_MULAW_DECODE_SOURCE = """\
def _mulaw_decode(src, soff, n, dst, table):
    o = 0
    i = soff
    end = soff + n
    while i < end:
        u = src[i] << 1
        dst[o] = table[u]
        dst[o + 1] = table[u + 1]
        o += 2
        i += 1
    return o
"""
_mulaw_decode = native_or_bytecode(_MULAW_DECODE_SOURCE, "_mulaw_decode")


_ADPCM_ENCODE_SOURCE = """\
def _adpcm_encode(src, n, dst, doff, pred, index, steps, deltas):
    # Returns the new state packed as (index << 16) | (pred & 0xFFFF).
    o = doff
    i = 0
    hi = False
    byte = 0
    last = pred
    count = n >> 1
    total = count + (count & 1)
    k = 0
    while k < total:
        if k < count:
            s = src[i] | (src[i + 1] << 8)
            if s >= 32768:
                s -= 65536
            last = s
            i += 2
        else:
            s = last  # pad to an even sample count
        step = steps[index]
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
        if code & 8:
            pred -= vpdiff
            if pred < -32768:
                pred = -32768
        else:
            pred += vpdiff
            if pred > 32767:
                pred = 32767
        index += deltas[code]
        if index < 0:
            index = 0
        elif index > 88:
            index = 88
        if hi:
            dst[o] = byte | (code << 4)
            o += 1
            hi = False
        else:
            byte = code
            hi = True
        k += 1
    return (index << 16) | (pred & 0xFFFF)
"""
_adpcm_encode = native_or_bytecode(_ADPCM_ENCODE_SOURCE, "_adpcm_encode")


_ADPCM_DECODE_SOURCE = """\
def _adpcm_decode(src, soff, n, dst, pred, index, steps, deltas):
    o = 0
    i = soff
    end = soff + n
    while i < end:
        b = src[i]
        i += 1
        for half in range(2):
            code = (b >> 4) if half else (b & 0x0F)
            step = steps[index]
            vpdiff = step >> 3
            if code & 4:
                vpdiff += step
            if code & 2:
                vpdiff += step >> 1
            if code & 1:
                vpdiff += step >> 2
            if code & 8:
                pred -= vpdiff
                if pred < -32768:
                    pred = -32768
            else:
                pred += vpdiff
                if pred > 32767:
                    pred = 32767
            index += deltas[code]
            if index < 0:
                index = 0
            elif index > 88:
                index = 88
            v = pred & 0xFFFF
            dst[o] = v & 0xFF
            dst[o + 1] = v >> 8
            o += 2
    return (index << 16) | (pred & 0xFFFF)
"""
_adpcm_decode = native_or_bytecode(_ADPCM_DECODE_SOURCE, "_adpcm_decode")


def _signed16(v):
    return v - 65536 if v >= 32768 else v


class AudioEncoder:
    """PCM16 -> one wire format. ADPCM state carries across frames of one stream."""

    def __init__(self, fmt):
        if not format_supported(fmt):
            raise ValueError("unsupported audio format")
        self.fmt = fmt
        self.pred = 0
        self.index = 0

    def reset(self):
        self.pred = 0
        self.index = 0

    def encode_into(self, pcm, n, dst, doff=0):
        """Encode pcm[:n] (n even) into dst[doff:]. Returns bytes written."""
        fmt = self.fmt
        if fmt == PCM16:
            n &= ~1
            return copy_into(dst, doff, pcm, 0, n)
        if fmt == MULAW:
            return _mulaw_encode(pcm, n, dst, doff, _EXP_LUT)
        pred = self.pred
        dst[doff] = pred & 0xFF
        dst[doff + 1] = (pred >> 8) & 0xFF
        dst[doff + 2] = self.index
        dst[doff + 3] = 0
        state = _adpcm_encode(pcm, n, dst, doff + ADPCM_HEADER, pred, self.index, _STEPS, _INDEX_DELTA)
        self.pred = _signed16(state & 0xFFFF)
        self.index = state >> 16
        samples = n >> 1
        return ADPCM_HEADER + (samples + 1) // 2


class AudioDecoder:
    """One wire format -> PCM16. Returns 0 for a frame it cannot decode."""

    def __init__(self, fmt):
        if not format_supported(fmt):
            raise ValueError("unsupported audio format")
        self.fmt = fmt
        self.pred = 0
        self.index = 0
        self.bad_frames = 0

    def reset(self):
        self.pred = 0
        self.index = 0

    def decode_into(self, src, soff, n, dst):
        """Decode src[soff:soff+n] into dst[0:]. Returns PCM16 bytes written.

        dst must hold decoded_bytes(fmt, n) bytes.
        """
        fmt = self.fmt
        if fmt == PCM16:
            n &= ~1
            return copy_into(dst, 0, src, soff, n)
        if fmt == MULAW:
            return _mulaw_decode(src, soff, n, dst, _MULAW_DECODE)
        if n <= ADPCM_HEADER:
            return 0
        pred = _signed16(src[soff] | (src[soff + 1] << 8))
        index = src[soff + 2]
        if index > 88:
            self.bad_frames += 1
            return 0
        state = _adpcm_decode(src, soff + ADPCM_HEADER, n - ADPCM_HEADER, dst, pred, index, _STEPS, _INDEX_DELTA)
        self.pred = _signed16(state & 0xFFFF)
        self.index = state >> 16
        return 4 * (n - ADPCM_HEADER)
