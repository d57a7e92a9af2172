"""A hostile board: frames with a correct CRC and hostile contents never take the link down.

Issue 15, item 1: one valid 14-byte ERROR frame ("action ²: x") killed the receive task
(`'²'.isdigit()` is True, `int('²')` raises), after which the board was "gone" while it
was alive. Here that frame, and then 20 s of message-level fuzz, go to a link over the
in-memory fake board; afterwards the link must still answer PING and its receive task
must never have died.
"""

from __future__ import annotations

import asyncio
import logging
import random
import struct
import time
from typing import Awaitable, Callable, TypeVar

import pytest
from sotto_fw import wire

from fakes_link import FakeBoard
from sotto.errors import LinkError
from sotto.link import messages as m
from sotto.link.board_link import BoardLink, LinkOptions

T = TypeVar("T")

# The frame from the issue: ERROR, seq 0x0203, code 3, text "action ²: x", correct CRC.
KILLER_FRAME = bytes.fromhex("0003010c01020311616374696f6e20c2b23a2078bcf6750700")
FUZZ_SECONDS = 20.0


def run(coro: Awaitable[T], timeout: float = 30.0) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def options() -> LinkOptions:
    return LinkOptions(baud=921600, hello_timeout_s=2.0, ping_interval_s=0.05, detach_after_s=60.0,
                       backoff_initial_s=0.01, backoff_max_s=0.02, command_timeout_s=1.0)


async def open_link(board: FakeBoard) -> BoardLink:
    link = BoardLink("fake://board", options(), transport_factory=board.open_port)
    await link.open()
    return link


def receive_task_alive() -> bool:
    tasks = [t for t in asyncio.all_tasks() if t.get_name() == "sotto-link-rx"]
    return len(tasks) == 1 and not tasks[0].done()


async def answers_ping(link: BoardLink, board: FakeBoard, timeout: float = 3.0) -> bool:
    """A PING goes out, the fake board answers PONG, and the link takes that PONG in."""
    pongs: list[int] = []
    remove = link.add_listener(lambda msg, _t: pongs.append(msg.nonce) if isinstance(msg, m.Pong) else None)
    try:
        nonce = link.send_ping()
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while nonce not in pongs:
            if loop.time() > end:
                return False
            await asyncio.sleep(0.01)
        return True
    finally:
        remove()


def test_the_error_frame_from_the_issue_is_dropped_and_the_link_goes_on() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            assert await answers_ping(link, board)
            board.send_raw(KILLER_FRAME)
            await asyncio.sleep(0.2)
            assert receive_task_alive(), "the receive task died on one valid frame"
            assert await answers_ping(link, board), "the link no longer answers PING"
            assert link.attached
        finally:
            await link.close()

    run(go())


def test_a_handler_that_raises_costs_one_frame_which_is_logged_with_its_type_and_seq(
        caplog: pytest.LogCaptureFixture) -> None:
    """The guard itself: whatever a handler meets next, the frame is dropped, logged, counted."""

    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        handle = link._handle

        def breaks_on_log(message: m.Message, now: float) -> None:
            if isinstance(message, m.Log):
                raise IndexError("a case nobody thought of")
            handle(message, now)

        link._handle = breaks_on_log  # type: ignore[method-assign]
        try:
            seq = board.encoder.seq
            board.send(m.Log(wire.LOG_INFO, "hello"))
            await asyncio.sleep(0.1)
            assert receive_task_alive() and await answers_ping(link, board)
            assert link.guard.failures == 1 and link.guard.by_kind["LOG frame"] == 1
            assert link.guard.last is not None and link.guard.last.seq == seq
        finally:
            await link.close()

    with caplog.at_level(logging.ERROR, logger="sotto.link"):
        run(go())
    assert any("dropped LOG frame seq" in r.getMessage() and "IndexError" in r.getMessage() for r in caplog.records)


def test_a_command_error_still_fails_its_command_and_a_unicode_digit_does_not_match() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        board_confirms = board._on_frame

        def refuse_commands(mtype: int, seq: int, payload: memoryview) -> None:
            msg = m.decode_message(mtype, payload)
            if isinstance(msg, m.Command):  # the board refuses, naming the action
                board.send(m.Error(wire.ERR_BAD_COMMAND, f"action ²{msg.action_id}: no"))
                board.send(m.Error(wire.ERR_BAD_COMMAND, f"action {msg.action_id}: no such output"))
                return
            board_confirms(mtype, seq, payload)

        board.decoder = wire.FrameDecoder(refuse_commands)
        try:
            with pytest.raises(LinkError, match="refused the command"):
                await link.send_command("gpio:7", 1)
            assert receive_task_alive()
        finally:
            await link.close()

    run(go())


def test_a_gpio_name_with_a_unicode_digit_is_a_clear_link_error() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            for name in ("gpio²", "gpio:٣", "gpio:" + "9" * 5000):
                with pytest.raises(LinkError, match="bad GPIO command name"):
                    await link.send_command(name, 1)
        finally:
            await link.close()

    run(go())


# ---------------------------------------------------------------- message-level fuzz

_HOSTILE_TEXTS = ["action ²: x", "action ٣: x", "action 99999999999999999999: x", "action : x", "action -1: x",
                  "\x00\x1b[2J\x07", "é" * 90, "action 1", "", "action \u0663\u0664: y"]


def _text_bytes(rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return rng.choice(_HOSTILE_TEXTS).encode("utf-8", "surrogatepass")[: wire.MAX_TEXT]
    return bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 64)))  # often not UTF-8


def _extreme(rng: random.Random, fmt: str) -> int:
    bits = struct.calcsize(fmt) * 8
    signed = fmt.islower()
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return rng.choice([lo, hi, 0, 1, -1 if signed else 2, rng.randint(lo, hi)])


def hostile_payload(rng: random.Random) -> tuple[int, bytes]:
    """A message type and a payload: well-formed with extreme values, truncated, padded or random."""
    mtype = rng.choice(list(wire.TYPE_NAMES) + [0, 15, 99, 255])
    kind = rng.random()
    if kind < 0.2:
        return mtype, bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))
    if mtype in (wire.ERROR, wire.LOG):
        head = "<H" if mtype == wire.ERROR else "<B"
        payload = struct.pack(head, _extreme(rng, head[1])) + _text_bytes(rng)
    elif mtype == wire.HELLO:
        rates = [rng.choice([0, 1, 8000, 16000, 22050, 48000, 65535]) for _ in range(rng.randrange(0, 5))]
        try:
            payload = wire.pack_hello(_text_bytes(rng).decode("utf-8", "replace")[:8], "brd\x00²", "id-²",
                                      _extreme(rng, "I"), _extreme(rng, "B"), _extreme(rng, "B"), rates,
                                      rates[::-1], _extreme(rng, "I"))
        except (ValueError, struct.error, OverflowError):
            payload = b"\x01"
    elif mtype == wire.CREDIT:
        payload = struct.pack("<HHI", _extreme(rng, "H"), _extreme(rng, "H"), _extreme(rng, "I"))
    elif mtype == wire.PLAYBACK:
        payload = struct.pack("<BHII", _extreme(rng, "B"), _extreme(rng, "H"), _extreme(rng, "I"), _extreme(rng, "I"))
    elif mtype == wire.EVENT:
        payload = struct.pack("<BhI", rng.choice([0, 1, 2, 3, 4, 5, 6, 255]), _extreme(rng, "h"), _extreme(rng, "I"))
    elif mtype == wire.PONG:
        payload = struct.pack("<III", _extreme(rng, "I"), _extreme(rng, "I"), _extreme(rng, "I"))
    elif mtype == wire.AUDIO_UP:
        payload = struct.pack("<I", _extreme(rng, "I")) + bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 700)))
    else:
        payload = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40)))
    if rng.random() < 0.25 and payload:  # truncated or padded
        cut = rng.randrange(0, len(payload))
        payload = payload[:cut] if rng.random() < 0.5 else payload + bytes(rng.randrange(1, 9))
    return mtype, payload[: wire.MAX_PAYLOAD]


def test_message_level_fuzz_for_20_s_never_kills_the_receive_task() -> None:
    """Valid CRC, hostile contents, for at least 20 s: 0 receive-task deaths, PING answered after."""

    async def go() -> dict[str, int]:
        rng = random.Random(15)
        board = FakeBoard()
        link = await open_link(board)
        encoder = wire.FrameEncoder()
        sent = deaths_seen = 0
        try:
            assert await answers_ping(link, board)
            started = time.monotonic()
            next_check = started
            while time.monotonic() - started < FUZZ_SECONDS:
                for _ in range(64):
                    mtype, payload = hostile_payload(rng)
                    board.send_raw(encoder.encode(mtype, payload))
                    sent += 1
                assert board.transport is not None
                while board.transport._rx.qsize() > 256:  # let the link keep up: flat memory
                    await asyncio.sleep(0.001)
                await asyncio.sleep(0)
                if time.monotonic() >= next_check:
                    next_check += 0.5
                    if not receive_task_alive():
                        deaths_seen += 1
                        break
            board.say_hello()  # whatever the fuzz did to the handshake, a real HELLO sets it right
            await asyncio.sleep(0.1)
            answered = await answers_ping(link, board)
        finally:
            await link.close()
        assert deaths_seen == 0, f"the receive task died after {sent} hostile frames"
        assert answered, "the link does not answer PING after the fuzz"
        return {"frames": sent, "messages_in": link.stats.messages_in, "malformed": link.stats.malformed,
                "crc_errors": link.decoder.crc_errors, "handler_failures_dropped": link.guard.failures}

    figures = run(go(), timeout=FUZZ_SECONDS + 40)
    assert figures["frames"] > 10_000 and figures["crc_errors"] == 0
    print(f"fuzz: {figures}")
