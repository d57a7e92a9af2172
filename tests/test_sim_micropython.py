"""The simulated board with the whole firmware in the real MicroPython interpreter
(`--runtime micropython`), its heap limited to the board profile's, against the real
host link: audio both ways, the link bench with the board's own report, and faults
(garbage on the line, the host gone, the host restarting, the board resetting).
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from sotto.link.bench import BenchOptions, LinkBench
from sotto.link.board_link import BoardLink
from sotto.link.board_stats import BoardStatsCollector
from sotto.sim import SimulatedBoard
from sotto.link.events import LinkStatus, MicAudio, PortEvent

from sim_support import assert_bench_lost_nothing, audio_both_ways, collect, patient_link, tone, until

pytestmark = pytest.mark.realtime  # every test here runs the board on a real pty: see pyproject.toml

BAUD = 921600


def assert_board_healthy(board: SimulatedBoard) -> dict[str, Any]:
    board.check_alive()
    stats = board.stats
    assert board.firmware is not None
    assert board.firmware.memory_errors == 0, list(board.firmware.output)
    assert stats["memory_errors"] == 0 and stats["errors"] == 0, stats
    assert not any("MemoryError" in line or "Traceback" in line for line in board.firmware.output), \
        list(board.firmware.output)
    return stats


@pytest.mark.parametrize("profile", ["rp2040", "esp32s3"])
def test_audio_both_ways_through_the_firmware_on_micropython(profile: str) -> None:
    """The mic's 32-bit slots become the PCM16 the host hears; the host's speech plays."""
    async def go() -> None:
        with SimulatedBoard(baud=BAUD, profile=profile, runtime="micropython", record_speaker=True,
                            gap_s=0.1) as board:
            assert board.heap_bytes == board.profile["heap_free"]
            assert board.profile["mic_i2s"]["bits"] == 32  # the host sends slots; the board shifts them
            mic = await audio_both_ways(board, BAUD)
            assert np.abs(mic).max() < 8100  # at its level: shifted back exactly, not clipped
            stats = assert_board_healthy(board)
            assert stats["speaker_overflow"] == 0

    asyncio.run(go())


def test_link_bench_in_an_rp2040_heap_allocates_nothing() -> None:
    """The board's own report over a short bench: no allocation and no collection after
    the first second, in 160 KB of heap, with nothing lost or corrupted on the line.
    (How fast the line and the loop run is measured by `sotto bench link --sim --runtime
    micropython`, not here.)"""
    async def go() -> tuple[LinkBench, dict[str, Any]]:
        with SimulatedBoard(baud=BAUD, profile="rp2040", runtime="micropython") as board:
            link = BoardLink(board.port_path, patient_link(BAUD))
            await link.open()
            try:
                # 4 s: the steady-state window (after the bench's first second) then holds at least
                # one whole report period of the board (1 s, longer when its process is starved),
                # even when the report reaches the host late; 3 s left it empty on a busy machine.
                # The board's final counts may come late too (8 s by default: missed once).
                options = BenchOptions(seconds=4.0, audio_seconds=2.0, report_timeout_s=60.0)
                bench = LinkBench(link, options, faults=board)
                result = await bench.run()
            finally:
                await link.close()
            assert_board_healthy(board)
            return bench, result

    bench, result = asyncio.run(go())
    assert_bench_lost_nothing(bench, result)
    assert "board" in result, "no steady-state report from the board"
    board = result["board"]
    assert board["alloc_bytes_per_frame"] == 0 and board["alloc_bytes"] == 0
    assert board["gc_collections"] == 0
    assert board["frames"] > 0 and board["seconds"] >= 1  # the first second of each phase is left out
    assert board["loop_ms_max"] > 0  # reported; how long is the bench's figure, not a unit test's
    assert board["heap_bytes"] <= 170 * 1024 and 0 < board["heap_free_min"] < board["heap_bytes"]
    assert board["mic_frames_dropped"] >= 0  # depends on how this machine schedules the board: not asserted


def test_faults_on_micropython_garbage_host_gone_host_restart_board_reset() -> None:
    """The board recovers from each fault, in an RP2040's heap, and never runs out of it."""
    async def go() -> None:
        with SimulatedBoard(baud=BAUD, profile="rp2040", runtime="micropython", seed=3) as board:
            stats = BoardStatsCollector()
            link = BoardLink(board.port_path, patient_link(BAUD, backoff_initial_s=0.02, backoff_max_s=0.1))
            link.add_listener(stats.on_message)
            await link.open()
            events: list[PortEvent] = []
            reader = asyncio.create_task(collect(link, events))

            def mic_frames() -> int:
                return sum(1 for e in events if isinstance(e, MicAudio))

            try:
                # Garbage on the line, both ways, while speech goes down to the speaker, until
                # 5000 bytes crossed each way (at 0.3 % per byte the chance of no flip is 3e-7).
                await until(lambda: board.welcomed, what="the board on the host's WELCOME")
                down0, up0 = board.line.counters.bytes_down, board.line.counters.bytes_up
                board.set_corruption(flip_probability=0.003)
                speech = asyncio.create_task(link.send_audio(3, tone(link.speaker_rate, 1.5).tobytes()))
                await until(lambda: board.line.counters.bytes_down - down0 >= 5000
                            and board.line.counters.bytes_up - up0 >= 5000, what="5000 bytes each way")
                board.set_corruption(0.0)
                # Frames lost on the line are written off at the board's next CREDIT: the rest goes out.
                await asyncio.wait_for(speech, 30.0)
                await asyncio.wait_for(link.end_stream(3), 30.0)
                before = mic_frames()
                await until(lambda: mic_frames() > before + 10)
                assert link.decoder.crc_errors + link.decoder.bad_frames > 0
                assert board.stats["crc_errors"] + board.stats["bad_frames"] > 0  # the board saw garbage too

                # The host goes away (its process stopped: nothing is read or sent) until the
                # board notices the silence and says HELLO again; then a new host process opens
                # the port: a new session.
                await link.close()
                reader.cancel()
                await until(lambda: not board.welcomed, what="the board giving up on the host")
                link = BoardLink(board.port_path, patient_link(BAUD, backoff_initial_s=0.02, backoff_max_s=0.1))
                link.add_listener(stats.on_message)
                await link.open()
                events.clear()
                reader = asyncio.create_task(collect(link, events))
                await until(lambda: mic_frames() > 10)
                assert board.stats["host_lost"] >= 1

                # The board resets: the interpreter restarts with empty RAM; the host re-attaches.
                await until(lambda: link.clock.synced)
                pid = board.firmware.pid if board.firmware else None
                board.reset()
                assert board.firmware is not None and board.firmware.pid != pid and board.firmware.boots == 2
                await until(lambda: any(isinstance(e, LinkStatus) and e.state == "reset" for e in events))
                before = mic_frames()
                await until(lambda: mic_frames() > before + 10)
                await link.send_command("volume", 30)
                assert_board_healthy(board)
                loop = stats.summary()
                assert loop is not None and loop["heap_free_min"] > 0
            finally:
                reader.cancel()
                await link.close()

    asyncio.run(go())
