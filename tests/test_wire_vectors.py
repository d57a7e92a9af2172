"""The wire codec against the shared vectors (the MicroPython run checks the same file)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sotto_fw import wire

from sotto.link import messages
from wire_vectors import VECTORS_PATH, load_vectors, plain

VECTORS = load_vectors()


@pytest.mark.parametrize("case", VECTORS["crc32"], ids=lambda c: c["data"][:12] or "empty")
def test_crc32_native_and_pure_python_agree_with_vectors(case: dict[str, Any]) -> None:
    data = bytes.fromhex(case["data"])
    assert wire.crc32(data) == case["crc"]
    assert wire._crc32_py(data) == case["crc"]


def test_pure_python_crc_chains_like_binascii() -> None:
    data = bytes(range(200))
    assert wire._crc32_py(data[100:], wire._crc32_py(data[:100])) == wire.crc32(data)


@pytest.mark.parametrize("case", VECTORS["cobs"], ids=lambda c: c["raw"][:12])
def test_cobs_vectors(case: dict[str, Any]) -> None:
    raw = bytes.fromhex(case["raw"])
    encoded = bytes.fromhex(case["encoded"])
    dst = bytearray(len(raw) + 8)
    k = wire.cobs_encode_into(bytearray(raw), len(raw), dst)
    assert bytes(dst[:k]) == encoded
    assert 0 not in encoded
    out = bytearray(len(encoded) + 8)
    n = wire.cobs_decode_into(encoded, len(encoded), out)
    assert bytes(out[:n]) == raw


def test_cobs_matches_the_published_examples() -> None:
    # From the COBS paper / Wikipedia (without the trailing delimiter).
    published = {"00": "0101", "0000": "010101", "11220033": "0311220233", "11223344": "0511223344",
                 "11000000": "0211010101"}
    table = {c["raw"]: c["encoded"] for c in VECTORS["cobs"]}
    for raw, enc in published.items():
        assert table[raw] == enc


@pytest.mark.parametrize("case", VECTORS["messages"], ids=lambda c: c["name"])
def test_message_payload_vectors(case: dict[str, Any]) -> None:
    args = plain(case["args"])
    payload = getattr(wire, "pack_" + case["name"])(*args)
    assert payload.hex() == case["payload"]
    assert plain(list(getattr(wire, "unpack_" + case["name"])(payload))) == args
    # The host's typed message decodes the same bytes and re-encodes them unchanged.
    msg = messages.decode_message(case["type"], bytes.fromhex(case["payload"]))
    assert msg.to_payload().hex() == case["payload"]


def test_every_message_type_has_a_vector() -> None:
    covered = {c["type"] for c in VECTORS["messages"]} | {wire.BENCH}
    assert covered == set(wire.TYPE_NAMES)


@pytest.mark.parametrize("case", VECTORS["bench"], ids=lambda c: str(c["counter"]))
def test_bench_vectors(case: dict[str, Any]) -> None:
    buf = bytearray(case["size"])
    wire.bench_fill(buf, case["counter"], case["size"])
    assert buf.hex() == case["payload"]
    assert wire.bench_check(buf)
    if case["size"] > 4:
        buf[-1] ^= 1
        assert not wire.bench_check(buf)


def _decode(data: bytes, chunk: int) -> tuple[list[dict[str, Any]], dict[str, int]]:
    frames: list[dict[str, Any]] = []
    dec = wire.FrameDecoder(lambda t, s, p: frames.append({"type": t, "seq": s, "payload": bytes(p).hex()}))
    for i in range(0, len(data), chunk):
        piece = bytearray(data[i : i + chunk] + b"\xaa" * 3)  # bytes past n must be ignored
        dec.feed(piece, min(chunk, len(data) - i))
    counters = {
        "frames_ok": dec.frames_ok, "crc_errors": dec.crc_errors, "bad_frames": dec.bad_frames,
        "version_mismatch": dec.version_mismatch, "lost": dec.lost, "resyncs": dec.resyncs,
    }
    return frames, counters


@pytest.mark.parametrize("chunk", [1, 7, 64, 100000])
@pytest.mark.parametrize("case", VECTORS["streams"], ids=lambda c: c["name"])
def test_stream_vectors_in_any_chunking(case: dict[str, Any], chunk: int) -> None:
    frames, counters = _decode(bytes.fromhex(case["input"]), chunk)
    assert frames == case["frames"]
    assert counters == case["counters"]


def test_memoryview_input_is_accepted() -> None:
    case = next(c for c in VECTORS["streams"] if c["name"] == "back-to-back frames")
    got: list[int] = []
    dec = wire.FrameDecoder(lambda t, s, p: got.append(s))
    dec.feed(memoryview(bytes.fromhex(case["input"])))
    assert got == [f["seq"] for f in case["frames"]]


@pytest.mark.parametrize("name", ["wire", "audio"])
def test_regenerating_the_vectors_changes_nothing(name: str, tmp_path: Path) -> None:
    """The vectors pin the format: today's code must reproduce them exactly."""
    vectors = VECTORS_PATH.parent
    out = tmp_path / f"{name}_vectors.json"
    subprocess.run([sys.executable, str(vectors / f"make_{name}_vectors.py"), str(out)], check=True, capture_output=True)
    assert json.loads(out.read_text()) == json.loads((vectors / f"{name}_vectors.json").read_text())
