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
from sotto_fw.compat import const, copy_into, loop_source, native_or_bytecode

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


# The per-sample loops (sotto_fw.loopsrc), compiled at import: @micropython.native
# machine code on the board, plain bytecode on CPython or a port without a native
# emitter. One text for both, so the host tests run exactly what the board runs. Tables
# are passed in: the loops get a namespace of their own.
_mulaw_encode = native_or_bytecode(loop_source("MULAW_ENCODE"), "_mulaw_encode")
_mulaw_decode = native_or_bytecode(loop_source("MULAW_DECODE"), "_mulaw_decode")
_adpcm_encode = native_or_bytecode(loop_source("ADPCM_ENCODE"), "_adpcm_encode")
_adpcm_decode = native_or_bytecode(loop_source("ADPCM_DECODE"), "_adpcm_decode")


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
        self.straddle = bytearray(4)  # one ADPCM byte's two samples, when they straddle a ring's end

    def reset(self):
        self.pred = 0
        self.index = 0

    def decode_into(self, src, soff, n, dst, doff=0):
        """Decode src[soff:soff+n] into dst[doff:]. Returns PCM16 bytes written.

        dst must hold decoded_bytes(fmt, n) bytes from doff.
        """
        k = self.decode_wrapped(src, soff, n, dst, doff, decoded_bytes(self.fmt, n), 1 << 30)
        return 0 if k < 0 else k

    def decode_wrapped(self, src, soff, n, dst, doff, first, room):
        """Decode into a ring: output goes to dst[doff:doff+first], then on from dst[0:];
        at most `room` bytes (whole samples; what does not fit is not decoded). Returns
        PCM16 bytes written, -1 for a frame it cannot decode. Nothing is allocated: the
        board decodes speaker audio straight into its ring, with no frame buffer."""
        fmt = self.fmt
        if fmt == PCM16:
            n &= ~1
            if n > room:
                n = room & ~1
            if n <= first:
                return copy_into(dst, doff, src, soff, n)
            copy_into(dst, doff, src, soff, first)
            copy_into(dst, 0, src, soff + first, n - first)
            return n
        if fmt == MULAW:
            if n > room >> 1:
                n = room >> 1
            a = first >> 1
            if n <= a:
                return _mulaw_decode(src, soff, n, dst, doff, _MULAW_DECODE)
            _mulaw_decode(src, soff, a, dst, doff, _MULAW_DECODE)
            _mulaw_decode(src, soff + a, n - a, dst, 0, _MULAW_DECODE)
            return 2 * n
        if n <= ADPCM_HEADER:
            return 0
        pred = _signed16(src[soff] | (src[soff + 1] << 8))
        index = src[soff + 2]
        if index > 88:
            self.bad_frames += 1
            return -1
        codes = n - ADPCM_HEADER
        if codes > room >> 2:
            codes = room >> 2
        i = soff + ADPCM_HEADER
        a = first >> 2  # code bytes whose 4 output bytes fit before the end
        if codes <= a:
            state = _adpcm_decode(src, i, codes, dst, doff, pred, index, _STEPS, _INDEX_DELTA)
        else:
            state = _adpcm_decode(src, i, a, dst, doff, pred, index, _STEPS, _INDEX_DELTA)
            pred = _signed16(state & 0xFFFF)
            index = state >> 16
            rest = codes - a
            o = 0
            if first & 2:
                # One byte's two samples straddle the end: one before it, one after.
                s4 = self.straddle
                state = _adpcm_decode(src, i + a, 1, s4, 0, pred, index, _STEPS, _INDEX_DELTA)
                pred = _signed16(state & 0xFFFF)
                index = state >> 16
                copy_into(dst, doff + 4 * a, s4, 0, 2)
                copy_into(dst, 0, s4, 2, 2)
                o = 2
                a += 1
                rest -= 1
            if rest > 0:
                state = _adpcm_decode(src, i + a, rest, dst, o, pred, index, _STEPS, _INDEX_DELTA)
        self.pred = _signed16(state & 0xFFFF)
        self.index = state >> 16
        return 4 * codes
