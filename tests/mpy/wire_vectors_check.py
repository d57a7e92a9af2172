# The wire codec against tests/vectors/wire_vectors.json, under real MicroPython.
# Usage: micropython wire_vectors_check.py PATH/TO/wire_vectors.json

import json
import struct
import sys

from mpycheck import check, equal, hexs, run, summary, unhex

from sotto_fw import compat, wire

V = json.load(open(sys.argv[1]))


def plain(v):
    if isinstance(v, dict) and "hex" in v:
        return unhex(v["hex"])
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def crc():
    for c in V["crc32"]:
        data = unhex(c["data"])
        equal(wire.crc32(data), c["crc"], "crc32 " + c["data"][:12])
        equal(wire._crc32_py(data), c["crc"], "crc32 pure python " + c["data"][:12])


def cobs():
    for c in V["cobs"]:
        raw = unhex(c["raw"])
        dst = bytearray(len(raw) + 8)
        k = wire.cobs_encode_into(bytearray(raw), len(raw), dst)
        equal(hexs(dst[:k]), c["encoded"], "cobs encode " + c["raw"][:12])
        enc = unhex(c["encoded"])
        out = bytearray(len(enc) + 8)
        n = wire.cobs_decode_into(enc, len(enc), out)
        equal(hexs(out[:n]), c["raw"], "cobs decode " + c["raw"][:12])


def messages():
    for c in V["messages"]:
        args = plain(c["args"])
        payload = getattr(wire, "pack_" + c["name"])(*args)
        equal(hexs(payload), c["payload"], "pack " + c["name"])
        back = plain(list(getattr(wire, "unpack_" + c["name"])(unhex(c["payload"]))))
        equal(back, args, "unpack " + c["name"])


def bench():
    for c in V["bench"]:
        buf = bytearray(c["size"])
        wire.bench_fill(buf, c["counter"], c["size"])
        equal(hexs(buf), c["payload"], "bench_fill %d" % c["counter"])
        check(wire.bench_check(buf), "bench_check %d" % c["counter"])


def streams():
    for c in V["streams"]:
        data = unhex(c["input"])
        for chunk in (1, 7, 100000):
            frames = []
            dec = wire.FrameDecoder(lambda t, s, p: frames.append({"type": t, "seq": s, "payload": hexs(p)}))
            i = 0
            while i < len(data):
                piece = bytearray(data[i : i + chunk])
                piece.extend(b"\xaa\xaa")  # bytes past n must be ignored
                dec.feed(piece, min(chunk, len(data) - i))
                i += chunk
            name = c["name"] + " chunk %d" % chunk
            equal(frames, c["frames"], name + " frames")
            counters = {
                "frames_ok": dec.frames_ok, "crc_errors": dec.crc_errors, "bad_frames": dec.bad_frames,
                "version_mismatch": dec.version_mismatch, "lost": dec.lost, "resyncs": dec.resyncs,
            }
            equal(counters, c["counters"], name + " counters")
        # A memoryview is accepted too.
        frames = []
        dec = wire.FrameDecoder(lambda t, s, p: frames.append(s))
        dec.feed(memoryview(data))
        equal(frames, [f["seq"] for f in c["frames"]], c["name"] + " memoryview")


def encoder_round_trip():
    enc = wire.FrameEncoder()
    got = []
    dec = wire.FrameDecoder(lambda t, s, p: got.append((t, s, bytes(p))))
    for size in (0, 1, 253, 254, 255, 508, wire.MAX_PAYLOAD):
        payload = bytes((i * 13 + size) & 0xFF for i in range(size))
        dec.feed(enc.encode(wire.BENCH, payload))
    equal(len(got), 7, "encoder round trip count")
    equal([len(p) for _, _, p in got], [0, 1, 253, 254, 255, 508, wire.MAX_PAYLOAD], "encoder round trip sizes")
    equal([s for _, s, _ in got], list(range(7)), "encoder round trip seqs")


def viper_cobs_is_compiled():
    """MicroPython (the unix port has a native emitter) gets the viper loops; CPython the
    Python ones. Without this the comparison below could silently compare nothing."""
    if compat.MICROPYTHON:
        check(wire._cobs_encode_viper is not None, "viper COBS encode compiled at import")
        check(wire._cobs_decode_viper is not None, "viper COBS decode compiled at import")
        check("_cobs_encode_v" in compat.ACCELERATED and "_cobs_decode_v" in compat.ACCELERATED,
              "viper COBS listed as accelerated", compat.ACCELERATED)
    else:
        equal((wire._cobs_encode_viper, wire._cobs_decode_viper), (None, None), "CPython uses the Python COBS")


def viper_crc_and_copy():
    """The board's viper CRC (no int object per frame) and copy agree with binascii and
    slices; CPython uses those directly."""
    if not compat.MICROPYTHON:
        equal((wire._crc_put_viper, wire._crc_ok_viper), (None, None), "CPython uses binascii for the CRC")
        return
    check(wire._crc_put_viper is not None and wire._crc_ok_viper is not None, "viper CRC compiled at import")
    check("copy_into" in compat.ACCELERATED, "viper copy compiled at import", compat.ACCELERATED)
    import binascii

    x = 7
    for n in (0, 1, 3, 4, 17, 255, 1028):
        buf = bytearray(n + 4)
        for i in range(n):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            buf[i] = (x >> 16) & 0xFF
        equal(wire.crc_put(buf, n), n + 4, "crc_put length %d" % n)
        want = binascii.crc32(bytes(buf[:n])) & 0xFFFFFFFF
        equal(struct.unpack_from("<I", buf, n)[0], want, "crc_put value %d" % n)
        check(wire.crc_ok(buf, n), "crc_ok accepts %d" % n)
        buf[n + 3] ^= 0x40
        check(not wire.crc_ok(buf, n), "crc_ok rejects a flipped CRC bit %d" % n)
        if n:
            buf[n + 3] ^= 0x40
            buf[n // 2] ^= 1
            check(not wire.crc_ok(buf, n), "crc_ok rejects a flipped data bit %d" % n)
    dst = bytearray(10)
    equal(compat.copy_into(dst, 3, b"abcdefgh", 2, 4), 4, "copy_into count")
    equal(bytes(dst), b"\x00\x00\x00cdef\x00\x00\x00", "copy_into bytes at offsets")


def viper_cobs_matches_python():
    """The board's viper COBS loops against the Python ones, on data with many zeros."""
    if wire._cobs_encode_viper is None:
        return  # CPython: viper_cobs_is_compiled checked that this is expected
    fast_enc = wire._cobs_encode_viper
    fast_dec = wire._cobs_decode_viper
    x = 12345
    try:
        for case in range(300):
            n = (case * 37) % (wire.MAX_RAW + 1)
            zero_every = 1 + case % 7
            src = bytearray(n)
            for i in range(n):
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                src[i] = 0 if (x >> 8) % zero_every == 0 else (x >> 16) & 0xFF
            a = bytearray(wire.MAX_ENCODED + 2)
            b = bytearray(wire.MAX_ENCODED + 2)
            wire._cobs_encode_viper = fast_enc
            ka = wire.cobs_encode_into(src, n, a)
            wire._cobs_encode_viper = None
            kb = wire.cobs_encode_into(src, n, b)
            if not equal(bytes(a[:ka]), bytes(b[:kb]), "viper COBS encode case %d" % case):
                break
            da = bytearray(wire.MAX_RAW + 8)
            db = bytearray(wire.MAX_RAW + 8)
            wire._cobs_decode_viper = fast_dec
            na = wire.cobs_decode_into(a, ka, da)
            wire._cobs_decode_viper = None
            nb = wire.cobs_decode_into(a, ka, db)
            equal((na, bytes(da[:na])), (nb, bytes(db[:nb])), "viper COBS decode case %d" % case)
            equal(bytes(da[:na]), bytes(src), "viper COBS round trip case %d" % case)
            # Invalid input: a zero inside, a code running past the end.
            bad = bytearray(a[:ka])
            if ka > 2:
                bad[ka // 2] = 0
                wire._cobs_decode_viper = fast_dec
                ra = wire.cobs_decode_into(bad, ka, da)
                wire._cobs_decode_viper = None
                equal(ra, wire.cobs_decode_into(bad, ka, db), "viper COBS invalid input case %d" % case)
    finally:
        wire._cobs_encode_viper = fast_enc
        wire._cobs_decode_viper = fast_dec


for fn in (crc, cobs, messages, bench, streams, encoder_round_trip, viper_cobs_is_compiled, viper_crc_and_copy,
           viper_cobs_matches_python):
    run(fn)
sys.exit(1 if summary() else 0)
