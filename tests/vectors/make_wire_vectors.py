"""Regenerate wire_vectors.json: `python tests/vectors/make_wire_vectors.py`.

The vectors pin the wire format: host tests (tests/test_wire_vectors.py) and the
MicroPython script (tests/mpy/wire_vectors_check.py) both check the codec against
them. Hand-checkable anchors (CRC-32 of "123456789", the COBS examples from the
COBS paper / Wikipedia) sit next to vectors made by the encoder; regenerating must
not change any existing vector (the test suite compares them byte for byte).
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "device"))

from sotto_fw import wire  # noqa: E402

OUT = Path(__file__).with_name("wire_vectors.json")


def b(x: bytes) -> dict[str, str]:
    return {"hex": x.hex()}


# One message of every type: pack function name, arguments (bytes as {"hex"}).
MESSAGES: list[tuple[str, int, list[object]]] = [
    ("hello", wire.HELLO, ["sotto-fw 0.1.0", "esp32s3", "a1b2c3", 0xDEADBEEF, 7, 7, [16000, 8000], [22050, 16000, 8000], 32768]),
    ("welcome", wire.WELCOME, [0x01020304, wire.FMT_ADPCM, 16000, wire.FMT_MULAW, 22050, 20, 5]),
    ("audio_up", wire.AUDIO_UP, [123456, b(bytes(range(0, 40, 2)) + b"\x00\x00\xff")]),
    ("audio_down", wire.AUDIO_DOWN, [7, b(b"\x00\x01\x02\x03\x00\xfe")]),
    ("audio_down", wire.AUDIO_DOWN, [7, b(b"")]),  # end of stream 7
    ("credit", wire.CREDIT, [7, 65535, 32768]),
    ("stop", wire.STOP, [7]),
    ("playback", wire.PLAYBACK, [wire.PLAY_STOPPED, 7, 12000, 987654]),
    ("event", wire.EVENT, [wire.EV_COMMAND_DONE, -2, 4000000000]),
    ("ping", wire.PING, [42, 1000]),
    ("pong", wire.PONG, [42, 1000, 2000]),
    ("log", wire.LOG, [wire.LOG_INFO, "bench rx=1 bad=0 crc=0 lost=0 ünïcode"]),
    ("error", wire.ERROR, [wire.ERR_BAD_WELCOME, "WELCOME rejected"]),
    ("command", wire.COMMAND, [9, wire.CMD_GPIO, 1, 1]),
]


def arg(x: object) -> object:
    if isinstance(x, dict):
        return bytes.fromhex(x["hex"])
    return x


def frame(encoder: wire.FrameEncoder, mtype: int, payload: bytes) -> bytes:
    return encoder.encode(mtype, payload)


def raw_frame(version: int, mtype: int, seq: int, payload: bytes) -> bytes:
    """A frame built by hand (for a foreign version number)."""
    body = struct.pack("<BBH", version, mtype, seq) + payload
    body += struct.pack("<I", wire.crc32(body))
    out = bytearray(len(body) + 8)
    k = wire.cobs_encode_into(bytearray(body), len(body), out)
    return b"\x00" + bytes(out[:k]) + b"\x00"


def decode_all(data: bytes) -> tuple[list[dict[str, object]], dict[str, int]]:
    frames: list[dict[str, object]] = []
    dec = wire.FrameDecoder(lambda t, s, p: frames.append({"type": t, "seq": s, "payload": bytes(p).hex()}))
    dec.feed(data)
    counters = {
        "frames_ok": dec.frames_ok, "crc_errors": dec.crc_errors, "bad_frames": dec.bad_frames,
        "version_mismatch": dec.version_mismatch, "lost": dec.lost, "resyncs": dec.resyncs,
    }
    return frames, counters


def streams() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []

    def add(name: str, data: bytes) -> None:
        frames, counters = decode_all(data)
        out.append({"name": name, "input": data.hex(), "frames": frames, "counters": counters})

    enc = wire.FrameEncoder()
    ping = wire.pack_ping(1, 2)
    add("one frame", frame(enc, wire.PING, ping))
    enc = wire.FrameEncoder()
    add("garbage before a frame", b"\x13\x37garbage\xff\xfe" + frame(enc, wire.PING, ping))
    enc = wire.FrameEncoder()
    good = frame(enc, wire.STOP, wire.pack_stop(3))
    flipped = bytearray(frame(enc, wire.STOP, wire.pack_stop(4)))
    flipped[4] ^= 0x10
    add("flipped byte then good frame", good + bytes(flipped) + frame(enc, wire.STOP, wire.pack_stop(5)))
    enc = wire.FrameEncoder()
    f1 = frame(enc, wire.CREDIT, wire.pack_credit(1, 2, 3))
    add("truncated frame then good frame", f1[: len(f1) // 2] + frame(enc, wire.CREDIT, wire.pack_credit(1, 3, 4)))
    enc = wire.FrameEncoder()
    add("oversized frame then good frame", b"\x00" + b"\x55" * (wire.MAX_ENCODED + 40) + frame(enc, wire.PING, ping))
    enc = wire.FrameEncoder()
    add("back-to-back frames", b"".join(frame(enc, wire.PING, wire.pack_ping(i, i * 10)) for i in range(4)))
    enc = wire.FrameEncoder()
    first = frame(enc, wire.PING, ping)
    frame(enc, wire.PING, ping)  # sent, lost on the line
    frame(enc, wire.PING, ping)
    add("two frames lost between", first + frame(enc, wire.PING, ping))
    add("foreign protocol version", raw_frame(2, wire.PING, 0, ping) + raw_frame(1, wire.PING, 0, ping))
    add("idle delimiters only", b"\x00" * 10)
    add("zero in a frame that is not COBS", b"\x00\x05\x01\x00")
    enc = wire.FrameEncoder()
    add("every message type", b"".join(frame(enc, t, getattr(wire, "pack_" + n)(*map(arg, a))) for n, t, a in MESSAGES))
    enc = wire.FrameEncoder()
    big = bytes((i * 7 + 1) & 0xFF for i in range(wire.MAX_PAYLOAD))
    add("largest payload", frame(enc, wire.BENCH, big))
    return out


def main(out_path: Path = OUT) -> None:
    messages = []
    for name, mtype, args in MESSAGES:
        payload = getattr(wire, "pack_" + name)(*map(arg, args))
        messages.append({"name": name, "type": mtype, "args": args, "payload": payload.hex()})
    bench = []
    for counter, size in ((0, 4), (1, 16), (123456, 40)):
        buf = bytearray(size)
        wire.bench_fill(buf, counter, size)
        bench.append({"counter": counter, "size": size, "payload": bytes(buf).hex()})
    cobs = []
    for raw in (b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", b"\x11\x22\x33\x44", b"\x11\x00\x00\x00",
                bytes(range(1, 255)), bytes(range(0, 255)), bytes(range(1, 256)), bytes(range(2, 256)) + b"\x00",
                bytes(range(3, 256)) + b"\x00\x01"):
        dst = bytearray(len(raw) + 8)
        k = wire.cobs_encode_into(bytearray(raw), len(raw), dst)
        cobs.append({"raw": raw.hex(), "encoded": bytes(dst[:k]).hex()})
    vectors = {
        "comment": "Wire codec vectors shared by host and MicroPython tests; regenerate with make_wire_vectors.py",
        "crc32": [{"data": b"123456789".hex(), "crc": 0xCBF43926}, {"data": "", "crc": 0},
                  {"data": bytes(range(256)).hex(), "crc": wire.crc32(bytes(range(256)))}],
        "cobs": cobs,
        "messages": messages,
        "bench": bench,
        "streams": streams(),
    }
    out_path.write_text(json.dumps(vectors, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
