"""What the tests against the simulated board share: event collection, waiting, a tone."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import numpy as np

from sotto.link.bench import LinkBench
from sotto.link.board_link import BoardLink, LinkOptions
from sotto.link.events import MicAudio, PlaybackReport, PortEvent
from sotto.sim import SimulatedBoard


def patient_link(baud: int, **options: Any) -> LinkOptions:
    """Link options for tests that are not about the link's timers: the first HELLO, the
    detach watchdog and a command's confirmation wait far longer than any stall of a busy
    machine (the timers themselves are tested over the in-memory fake board,
    test_link_protocol.py)."""
    return LinkOptions(baud=baud, **{"hello_timeout_s": 60.0, "detach_after_s": 60.0, "command_timeout_s": 60.0,
                                     **options})


def assert_bench_lost_nothing(bench: LinkBench, result: dict[str, Any]) -> None:
    """A bench on a clean line: nothing corrupt, rejected or resynchronised, no gap in the
    host's frames as the board received them, and every frame the board sent arrived (its
    report follows them on the line). Not asserted: result["frames_lost"]. The board ends its
    run on its own clock, and host frames still queued in the simulated line then count as
    lost; on a busy machine the line's thread falls behind and hundreds can be (measured:
    312 and 853 of ~2000 at load average 17). That is a figure of `sotto bench link`."""
    reports = [segment.report for segment in bench.segments]
    seen = (result["directions"], reports, bench.link.decoder.bad_frames)
    assert result["corrupt_delivered"] == 0 and result["crc_rejected"] == 0 and result["resyncs"] == 0, seen
    up, down = result["directions"]["up"], result["directions"]["down"]
    assert up["received"] == up["sent"] > 0 and down["received"] > 0
    assert reports and all(r is not None and r["lost"] == 0 and r["bad"] == 0 for r in reports), reports


async def collect(link: BoardLink, out: list[PortEvent]) -> None:
    async for ev in link.events():
        out.append(ev)


async def until(cond: Callable[[], object], timeout: float = 20.0, what: str = "condition") -> None:
    """Poll `cond` until it holds. The deadline is generous on purpose: these tests run a real
    pty on a shared machine, so they wait for what they check, never for a fixed time."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError(f"{what} not reached within {timeout:g} s")
        await asyncio.sleep(0.01)


def tone(rate: int, seconds: float, freq: float = 440.0, amp: int = 8000) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * freq * t) * amp).astype(np.int16)


async def audio_both_ways(board: SimulatedBoard, baud: int) -> np.ndarray:
    """A beep into the board's mic reaches the host once, and a tone the host sends plays
    once, whole, with PLAYBACK started then drained. Returns the mic audio the host got."""
    link = BoardLink(board.port_path, patient_link(baud))
    await link.open()
    events: list[PortEvent] = []
    reader = asyncio.create_task(collect(link, events))
    try:
        # link.open() returns once the host sent WELCOME; until the board has it, its mic is discarded.
        await until(lambda: board.welcomed, what="the board on the host's WELCOME")
        board.play_utterance(tone(16000, 0.3).tobytes(), rate=16000, label="beep")
        await until(lambda: any(e.kind == "utterance_end" for e in board.events), what="the beep played")
        end_ms = next(e.board_ms for e in board.events if e.kind == "utterance_end")
        # The mic is a FIFO: once a frame captured well after the beep ended has arrived, all of it has.
        await until(lambda: any(isinstance(e, MicAudio) and board.clock.ticks_diff(e.board_ms, end_ms) > 300
                                for e in events), what="mic audio from after the beep")
        mic = np.frombuffer(b"".join(e.pcm for e in events if isinstance(e, MicAudio)), dtype="<i2")
        loud = np.abs(mic) > 2000
        # Frames the board drops when its line falls behind (a starved machine) are counted by the
        # board; they may shorten the beep, nothing may repeat it.
        stats = board.stats
        assert link.choice is not None
        dropped = int(stats.get("tx_dropped", 0)) * link.choice.frame_ms * 16 + int(stats["mic_overrun_bytes"]) // 2
        expected_mic = 0.3 * 16000 * 0.839  # share of a sine above a quarter of its peak
        assert expected_mic - 0.15 * expected_mic - dropped < loud.sum() < expected_mic + 0.15 * expected_mic, \
            (loud.sum(), dropped)  # the beep arrived, once

        out = tone(link.speaker_rate, 0.4, 330.0)
        await link.send_audio(7, out.tobytes())
        await link.end_stream(7)
        await until(lambda: any(isinstance(e, PlaybackReport) and e.state == "drained" for e in events),
                    what="the tone drained")
        states = [e.state for e in events if isinstance(e, PlaybackReport) and e.stream_id == 7]
        assert states == ["started", "drained"]

        def played() -> tuple[int, float]:
            pcm, rate = board.speaker_pcm()
            return int((np.abs(pcm) > 2000).sum()), 0.4 * rate * 0.839  # share of a sine above a quarter of its peak

        # The speaker records what it played a little after the board reports it drained
        # (on MicroPython the played audio comes back from the board's process).
        await until(lambda: played()[0] >= 0.9 * played()[1], what="the tone in the speaker's recording")
        loud_played, expected = played()
        assert abs(loud_played - expected) < 0.1 * expected  # the whole tone played, once
        return mic
    finally:
        reader.cancel()
        await link.close()
