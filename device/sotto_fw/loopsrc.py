# The firmware's machine-code loops, as source text. The board compiles each at import
# with its own compiler (sotto_fw.compat.compile_accelerated): a @micropython.viper or
# .native decorator in a module's source would stop `mpy-cross FILE.py` without -march.
# Once every loop is compiled the board drops this module (compat.forget_loop_sources):
# kept, its text would hold about 7 KB of an RP2040's 160 KB heap. CPython and ports
# without a native emitter compile the same text to bytecode (or use slices).
#
# Each loop uses only its arguments and builtins (it gets a namespace of its own).

# sotto_fw.compat
COPY_INTO = """\
def copy_into(dst: ptr8, doff: int, src: ptr8, soff: int, n: int) -> int:
    i = 0
    while i < n:
        dst[doff + i] = src[soff + i]
        i += 1
    return n
"""

# sotto_fw.wire
CRC_PUT = """\
def _crc_put_v(buf: ptr8, n: int, table: ptr32) -> int:
    m = (uint(0xFFFF) << 16) | uint(0xFFFF)
    c = m
    i = 0
    while i < n:
        c = uint(table[(c ^ uint(buf[i])) & 0xFF]) ^ (c >> 8)
        i += 1
    c = (c ^ m) & m
    buf[n] = c & 0xFF
    buf[n + 1] = (c >> 8) & 0xFF
    buf[n + 2] = (c >> 16) & 0xFF
    buf[n + 3] = (c >> 24) & 0xFF
    return n + 4
"""

# sotto_fw.wire
CRC_OK = """\
def _crc_ok_v(buf: ptr8, n: int, table: ptr32) -> int:
    m = (uint(0xFFFF) << 16) | uint(0xFFFF)
    c = m
    i = 0
    while i < n:
        c = uint(table[(c ^ uint(buf[i])) & 0xFF]) ^ (c >> 8)
        i += 1
    c = (c ^ m) & m
    if uint(buf[n]) != c & 0xFF or uint(buf[n + 1]) != (c >> 8) & 0xFF:
        return 0
    if uint(buf[n + 2]) != (c >> 16) & 0xFF or uint(buf[n + 3]) != (c >> 24) & 0xFF:
        return 0
    return 1
"""

# sotto_fw.wire
COBS_ENCODE = """\
def _cobs_encode_v(src: ptr8, n: int, dst: ptr8) -> int:
    code_pos = 0
    o = 1
    code = 1
    i = 0
    while i < n:
        b = src[i]
        if b == 0:
            dst[code_pos] = code
            code_pos = o
            o += 1
            code = 1
        else:
            dst[o] = b
            o += 1
            code += 1
            if code == 255:
                dst[code_pos] = code
                code_pos = o
                o += 1
                code = 1
        i += 1
    dst[code_pos] = code
    return o
"""

# sotto_fw.wire
COBS_DECODE = """\
def _cobs_decode_v(src: ptr8, n: int, dst: ptr8) -> int:
    i = 0
    o = 0
    while i < n:
        code = src[i]
        if code == 0:
            return -1
        i += 1
        end = i + code - 1
        if end > n:
            return -1
        while i < end:
            dst[o] = src[i]
            o += 1
            i += 1
        if code != 255 and i < n:
            dst[o] = 0
            o += 1
    return o
"""

# sotto_fw.wire
BENCH_FILL = """\
def _bench_fill(buf, x, n):
    i = 4
    while i < n:
        buf[i] = x
        x = (x * 5 + 1) & 0xFF
        i += 1
    return n
"""

# sotto_fw.wire
BENCH_CHECK = """\
def _bench_check(buf, off, n):
    if n < 4:
        return 0
    x = (buf[off] * 177 + 1) & 0xFF
    i = off + 4
    end = off + n
    while i < end:
        if buf[i] != x:
            return 0
        x = (x * 5 + 1) & 0xFF
        i += 1
    return 1
"""

# sotto_fw.audiocodec
MULAW_ENCODE = """\
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

# sotto_fw.audiocodec
MULAW_DECODE = """\
def _mulaw_decode(src, soff, n, dst, doff, table):
    o = doff
    i = soff
    end = soff + n
    while i < end:
        u = src[i] << 1
        dst[o] = table[u]
        dst[o + 1] = table[u + 1]
        o += 2
        i += 1
    return o - doff
"""

# sotto_fw.audiocodec
ADPCM_ENCODE = """\
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

# sotto_fw.audiocodec
ADPCM_DECODE = """\
def _adpcm_decode(src, soff, n, dst, doff, pred, index, steps, deltas):
    o = doff
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

# sotto_fw.micformat
SLOTS32_TO_PCM16 = """\
def _slots32_to_pcm16(src, soff, count, dst, doff, shift):
    i = soff
    o = doff
    end = soff + 4 * count
    while i < end:
        v = src[i + 1] | (src[i + 2] << 8) | (src[i + 3] << 16)
        if v >= 0x800000:
            v -= 0x1000000
        v >>= shift
        if v > 32767:
            v = 32767
        elif v < -32768:
            v = -32768
        v &= 0xFFFF
        dst[o] = v & 0xFF
        dst[o + 1] = v >> 8
        i += 4
        o += 2
    return o - doff
"""
