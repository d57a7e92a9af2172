"""Property tests of the wire codec (hypothesis) through the host's typed messages."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sotto_fw import wire

from sotto.link import messages as m

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
i16 = st.integers(-0x8000, 0x7FFF)


def bounded_text(limit: int) -> st.SearchStrategy[str]:
    return st.text(max_size=limit).filter(lambda s: len(s.encode("utf-8")) <= limit)


def audio(limit: int) -> st.SearchStrategy[bytes]:
    return st.binary(max_size=limit)


rates = st.lists(u16, max_size=8).map(tuple)

MESSAGES: st.SearchStrategy[Any] = st.one_of(
    st.builds(m.Hello, bounded_text(wire.MAX_NAME), bounded_text(wire.MAX_NAME), bounded_text(wire.MAX_NAME),
              u32, u8, u8, rates, rates, u32),
    st.builds(m.Welcome, u32, u8, u16, u8, u16, u8, u16),
    st.builds(m.AudioUp, u32, audio(wire.MAX_PAYLOAD - wire.AUDIO_UP_HEAD)),
    st.builds(m.AudioDown, u16, audio(wire.MAX_PAYLOAD - wire.AUDIO_DOWN_HEAD)),
    st.builds(m.Credit, u16, u16, u32),
    st.builds(m.Stop, u16),
    st.builds(m.Playback, u8, u16, u32, u32),
    st.builds(m.Event, u8, i16, u32),
    st.builds(m.Ping, u32, u32),
    st.builds(m.Pong, u32, u32, u32),
    st.builds(m.Log, u8, bounded_text(wire.MAX_TEXT)),
    st.builds(m.Error, u16, bounded_text(wire.MAX_TEXT)),
    st.builds(m.Bench, st.builds(lambda c, n: m.Bench.make(c, n).payload, u32, st.integers(4, wire.MAX_PAYLOAD))),
    st.builds(m.Command, u16, u8, u8, i16),
)


def collect(data: bytes | bytearray, splits: list[int] | None = None) -> tuple[list[tuple[int, int, bytes]], wire.FrameDecoder]:
    got: list[tuple[int, int, bytes]] = []
    dec = wire.FrameDecoder(lambda t, s, p: got.append((t, s, bytes(p))))
    if not splits:
        dec.feed(bytes(data))
    else:
        start = 0
        for cut in sorted(set(min(c, len(data)) for c in splits)) + [len(data)]:
            dec.feed(bytearray(data[start:cut]))
            start = cut
    return got, dec


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MESSAGES, min_size=1, max_size=6), st.lists(st.integers(0, 8000), max_size=5))
def test_messages_round_trip_through_frames_in_any_chunking(msgs: list[Any], splits: list[int]) -> None:
    enc = wire.FrameEncoder()
    line = b"".join(m.encode_message(enc, msg) for msg in msgs)
    got, dec = collect(line, splits)
    assert [m.decode_message(t, p) for t, _, p in got] == msgs
    assert [s for _, s, _ in got] == list(range(len(msgs)))
    assert dec.crc_errors == dec.bad_frames == dec.lost == 0


@given(st.binary(max_size=3000), st.lists(st.integers(0, 3000), max_size=4))
def test_arbitrary_bytes_never_raise_and_deliver_only_what_is_on_the_line(data: bytes, splits: list[int]) -> None:
    got, dec = collect(data, splits)
    assert dec.frames_ok == len(got)
    for mtype, seq, payload in got:
        # A delivered frame must be exactly a valid frame that is present in the input.
        enc = wire.FrameEncoder()
        enc.seq = seq
        assert enc.encode(mtype, payload)[1:-1] in data


@given(
    st.lists(st.builds(m.Ping, u32, u32) | st.builds(m.AudioUp, u32, audio(300)), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=6),
    st.lists(st.integers(0, 10**6), max_size=3),
)
def test_corrupted_lines_never_deliver_a_frame_that_was_not_sent(
    msgs: list[Any], flips: list[tuple[int, int]], drops: list[int]
) -> None:
    enc = wire.FrameEncoder()
    frames = [m.encode_message(enc, msg) for msg in msgs]
    sent = {(msg.TYPE, seq, msg.to_payload()) for seq, msg in enumerate(msgs)}
    line = bytearray(b"".join(frames))
    for pos, mask in flips:
        line[pos % len(line)] ^= mask
    for pos in drops:
        if line:
            del line[pos % len(line)]
    got, dec = collect(line)
    for frame in got:
        assert frame in sent
    assert len(got) + dec.crc_errors + dec.bad_frames + dec.version_mismatch <= len(msgs) + len(flips) + len(drops)


@given(st.builds(m.AudioUp, u32, audio(500)), st.integers(2, 200), st.builds(m.Ping, u32, u32))
def test_a_truncated_frame_is_dropped_and_the_next_arrives(first: Any, cut: int, good: Any) -> None:
    enc = wire.FrameEncoder()
    broken = m.encode_message(enc, first)
    # cut >= 2: at least one byte of the frame goes, not only its closing delimiter.
    line = broken[: max(2, len(broken) - cut)] + m.encode_message(enc, good)
    got, dec = collect(line)
    assert [m.decode_message(t, p) for t, _, p in got] == [good]
    assert dec.crc_errors + dec.bad_frames == 1


@given(st.integers(1, 3000), st.builds(m.Ping, u32, u32), u8)
def test_an_oversized_frame_is_dropped_and_the_next_arrives(extra: int, good: Any, fill: int) -> None:
    enc = wire.FrameEncoder()
    junk = bytes([fill or 1]) * (wire.MAX_ENCODED + extra)
    got, dec = collect(b"\x00" + junk + m.encode_message(enc, good))
    assert [m.decode_message(t, p) for t, _, p in got] == [good]
    assert dec.bad_frames == 1


@given(st.binary(max_size=wire.MAX_RAW))
def test_cobs_round_trip(raw: bytes) -> None:
    dst = bytearray(wire.MAX_ENCODED + 2)
    k = wire.cobs_encode_into(bytearray(raw), len(raw), dst)
    assert 0 not in dst[:k]
    assert k <= len(raw) + len(raw) // 254 + 2
    out = bytearray(wire.MAX_RAW + 8)
    n = wire.cobs_decode_into(dst, k, out)
    assert bytes(out[:n]) == raw


@given(st.binary(max_size=600), st.integers(0, 2**32 - 1))
def test_pure_python_crc_matches_binascii(data: bytes, start: int) -> None:
    assert wire._crc32_py(data, start) == wire.crc32(data, start)
