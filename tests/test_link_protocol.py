"""BoardLink against a fake board over an in-memory loopback."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, TypeVar

import pytest
from sotto_fw import wire

from fakes_link import FakeBoard, frame_with_version
from sotto.errors import HandshakeTimeout, LinkError, ProtocolVersionMismatch
from sotto.link import messages as m
from sotto.link.board_link import BoardLink, LinkOptions
from sotto.link.events import LinkStatus, MicAudio, PlaybackReport

T = TypeVar("T")


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 20))  # type: ignore[arg-type]


def fast_options(**kw: object) -> LinkOptions:
    opts = LinkOptions(baud=921600, hello_timeout_s=1.0, ping_interval_s=0.05, detach_after_s=60.0,
                       backoff_initial_s=0.01, backoff_max_s=0.02, command_timeout_s=1.0)
    for k, v in kw.items():
        setattr(opts, k, v)
    return opts


async def until(cond: Callable[[], bool], timeout: float = 3.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.005)


async def open_link(board: FakeBoard, **kw: object) -> BoardLink:
    link = BoardLink("fake://board", fast_options(**kw), transport_factory=board.open_port)
    await link.open()
    return link


def statuses(link: BoardLink) -> list[str]:
    return [state for _, state, _ in link.stats.status_log]


def test_handshake_chooses_pcm16_at_921600_and_welcomes() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            await until(lambda: bool(board.welcomes))
            w = board.welcomes[0]
            assert (w.mic_format, w.mic_rate) == (wire.FMT_PCM16, 16000)
            assert (w.speaker_format, w.speaker_rate) == (wire.FMT_PCM16, 22050)
            assert w.session_token == link.session_token
            assert link.mic_rate == 16000 and link.speaker_rate == 22050
            assert statuses(link) == ["attached"]
        finally:
            await link.close()

    run(go())


def test_handshake_at_115200_picks_a_compressed_mic_format() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board, baud=115200)
        try:
            await until(lambda: bool(board.welcomes))
            w = board.welcomes[0]
            assert w.mic_format != wire.FMT_PCM16 and w.mic_rate == 16000
            assert w.speaker_format != wire.FMT_PCM16
        finally:
            await link.close()

    run(go())


def test_no_hello_is_a_handshake_timeout() -> None:
    async def go() -> None:
        board = FakeBoard(hello_on_connect=False)
        link = BoardLink("fake://board", fast_options(hello_timeout_s=0.2), transport_factory=board.open_port)
        with pytest.raises(HandshakeTimeout) as info:
            await link.open()
        assert "no HELLO" in str(info.value) and "nothing arrived" in str(info.value)

    run(go())


def test_garbage_only_is_a_handshake_timeout_that_says_so() -> None:
    async def go() -> None:
        board = FakeBoard(hello_on_connect=False)
        link = BoardLink("fake://board", fast_options(hello_timeout_s=0.3), transport_factory=board.open_port)
        task = asyncio.create_task(link.open())
        await asyncio.sleep(0.05)
        board.send_raw(bytes(range(1, 200)) + b"\x00" + b"\xff" * 50 + b"\x00")
        with pytest.raises(HandshakeTimeout) as info:
            await task
        assert "bytes arrived" in str(info.value) and "baud" in str(info.value)

    run(go())


def test_other_protocol_version_is_reported() -> None:
    async def go() -> None:
        board = FakeBoard(hello_on_connect=False)
        link = BoardLink("fake://board", fast_options(), transport_factory=board.open_port)
        task = asyncio.create_task(link.open())
        await asyncio.sleep(0.05)
        board.send_raw(frame_with_version(7, wire.HELLO, b"whatever"))
        with pytest.raises(ProtocolVersionMismatch) as info:
            await task
        assert "version 7" in str(info.value)

    run(go())


def test_garbage_between_frames_never_breaks_the_link() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            noise = bytes((i * 37 + 11) % 256 for i in range(3000))
            board.send_raw(noise)
            board.send_raw(b"\x00\x05\x01\x02\x00")  # a short bogus frame
            board.send(m.AudioUp(1234, b"\x01\x00" * 320))
            events = link.events()
            ev = await anext(events)
            while not isinstance(ev, MicAudio):
                ev = await anext(events)
            assert ev.pcm == b"\x01\x00" * 320 and ev.board_ms == 1234
            d = link.decoder
            assert d.crc_errors + d.bad_frames > 0
        finally:
            await link.close()

    run(go())


def test_speaker_audio_never_exceeds_credits() -> None:
    async def go() -> None:
        board = FakeBoard(speaker_buffer=4096)
        link = await open_link(board)
        try:
            pcm = bytes(range(256)) * 80  # 20480 bytes: five buffers' worth
            sender = asyncio.create_task(link.send_audio(1, pcm))
            await until(lambda: board.ring > 0)
            for _ in range(200):
                await asyncio.sleep(0.002)
                assert board.ring <= board.speaker_buffer
                assert link.credits.in_flight_bytes <= link.credits.free
                if sender.done():
                    break
                if board.ring >= board.speaker_buffer - 1000:
                    board.play(1500)
            await asyncio.wait_for(sender, 5)
            assert board.max_ring <= board.speaker_buffer
            assert board.audio_by_stream[1] == len(pcm)
        finally:
            await link.close()

    run(go())


def test_stop_drops_queued_audio_and_goes_ahead() -> None:
    async def go() -> None:
        board = FakeBoard(speaker_buffer=2048)
        link = await open_link(board)
        try:
            sender = asyncio.create_task(link.send_audio(3, b"\x10\x00" * 20000))
            await until(lambda: board.ring > 0)
            await asyncio.sleep(0.02)  # credits exhausted: the rest waits in the host queue
            sent_before = board.audio_by_stream[3]
            await link.stop(3)
            await asyncio.wait_for(sender, 1)  # the waiting sender is released
            assert board.stops == [3]
            board.play(2048)
            await asyncio.sleep(0.05)
            assert board.audio_by_stream[3] == sent_before
            assert board.after_stop == []
            assert link.stats.audio_frames_dropped > 0
            events = []
            while link._events:  # noqa: SLF001 - peek at what the harness would read
                events.append(link._events.popleft())  # noqa: SLF001
            assert any(isinstance(e, PlaybackReport) and e.state == "stopped" for e in events)
            # A later stream still plays.
            await asyncio.wait_for(link.send_audio(4, b"\x01\x00" * 100), 1)
            assert board.audio_by_stream[4] == 200
        finally:
            await link.close()

    run(go())


def test_unplug_then_replug_reattaches_the_same_session() -> None:
    async def go() -> None:
        board = FakeBoard(hello_on_connect=False)
        link = BoardLink("fake://board", fast_options(), transport_factory=board.open_port)
        task = asyncio.create_task(link.open())
        await asyncio.sleep(0.02)
        board.say_hello()
        await task
        try:
            token = link.session_token
            board.unplug()
            await until(lambda: "detached" in statuses(link))
            await asyncio.sleep(0.05)  # reopen attempts fail while unplugged
            assert link.stats.reopen_attempts >= 1
            board.replug()
            await until(lambda: board.connects >= 2)
            board.say_hello()  # same boot id: the board saw the host go silent
            await until(lambda: statuses(link)[-1:] == ["attached"] and link.attached)
            assert statuses(link) == ["attached", "detached", "attached"]
            assert board.welcomes[-1].session_token == token
            assert link.stats.resets == 0
            await link.send_command("volume", 40)
        finally:
            await link.close()

    run(go())


def test_new_boot_id_is_a_reset_and_the_session_continues() -> None:
    async def go() -> None:
        board = FakeBoard(speaker_buffer=2048)
        link = await open_link(board)
        try:
            sender = asyncio.create_task(link.send_audio(1, b"\x00\x01" * 3000))
            await until(lambda: board.ring >= 1500)
            board.reboot()
            await until(lambda: "reset" in statuses(link))
            assert len(board.welcomes) == 2
            assert board.welcomes[0].session_token == board.welcomes[1].session_token
            # Credits restart from the board's empty buffer: audio flows again.
            await until(lambda: board.ring > 0)
            for _ in range(100):
                if sender.done():
                    break
                board.play(10_000)
                await asyncio.sleep(0.01)
            await asyncio.wait_for(sender, 3)
            assert board.max_ring <= board.speaker_buffer
            events = []
            while link._events:  # noqa: SLF001
                events.append(link._events.popleft())  # noqa: SLF001
            assert [e.state for e in events if isinstance(e, LinkStatus)] == ["attached", "reset"]
        finally:
            await link.close()

    run(go())


def test_silent_board_is_reported_detached_then_attached_again() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board, detach_after_s=0.2)
        try:
            board.answer_pings = False
            await until(lambda: "detached" in statuses(link))
            assert not link.attached
            board.say_hello()
            await until(lambda: link.attached)
            assert statuses(link) == ["attached", "detached", "attached"]
        finally:
            await link.close()

    run(go())


def test_ping_pong_gives_a_clock_offset() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            await until(lambda: link.clock.synced)
            t1 = link.board_to_host_time(100_000)
            t2 = link.board_to_host_time(100_500)
            assert abs((t2 - t1) - 0.5) < 1e-6
            assert link.clock.rtts_ms
            # Wrap of the board's 2**30 ms ticks: just after the wrap is just after, not 12 days before.
            assert abs(link.board_to_host_time(5) - link.board_to_host_time((1 << 30) - 5) - 0.010) < 1e-6
        finally:
            await link.close()

    run(go())


def test_commands_wait_for_confirmation_and_bad_names_fail() -> None:
    async def go() -> None:
        board = FakeBoard()
        link = await open_link(board)
        try:
            await link.send_command("gpio:1", 1)
            cmds = [x for x in board.received if isinstance(x, m.Command)]
            assert (cmds[-1].command, cmds[-1].index, cmds[-1].value) == (wire.CMD_GPIO, 1, 1)
            with pytest.raises(LinkError):
                await link.send_command("launch", 1)
        finally:
            await link.close()

    run(go())


def test_frames_go_out_in_sequence_order() -> None:
    async def go() -> None:
        board = FakeBoard(speaker_buffer=1 << 20)
        link = await open_link(board)
        try:
            await asyncio.gather(link.send_audio(1, b"\x00\x00" * 5000), link.send_command("volume", 10))
            await link.stop(1)
            seqs = board.received_seqs
            assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
            assert board.decoder.lost == 0
        finally:
            await link.close()

    run(go())
