"""The simulated board (real firmware on a paced pty) against the real host link."""

from __future__ import annotations

import asyncio
import wave
from pathlib import Path

import pytest

from sotto.errors import AudioFormatError
from sotto.link.board_link import BoardLink
from sotto.sim import SimulatedBoard
from sotto.sim.audio import read_wav
from sotto.link.events import LinkStatus, MicAudio, PortEvent

from sim_support import assert_bench_lost_nothing, audio_both_ways, collect, patient_link, until

BAUD = 921600


@pytest.mark.realtime
def test_mic_speaker_and_playback_reports_end_to_end() -> None:
    async def go() -> None:
        with SimulatedBoard(baud=BAUD, record_speaker=True, gap_s=0.1) as board:
            await audio_both_ways(board, BAUD)
            assert board.app.stats["speaker_overflow"] == 0

    asyncio.run(go())


@pytest.mark.realtime
def test_reset_and_unplug_are_reported_and_recovered() -> None:
    async def go() -> None:
        with SimulatedBoard(baud=BAUD) as board:
            # The detach must come from the unplug, never from a starved board looking silent.
            link = BoardLink(board.port_path, patient_link(BAUD, backoff_initial_s=0.02, backoff_max_s=0.1))
            await link.open()
            events: list[PortEvent] = []
            reader = asyncio.create_task(collect(link, events))
            try:
                token = link.session_token
                # Reset only once the board runs on our WELCOME (a PONG came back): a reset
                # between HELLO and WELCOME is a different race (the firmware takes the old WELCOME).
                await until(lambda: link.clock.synced)
                board.reset()
                await until(lambda: any(isinstance(e, LinkStatus) and e.state == "reset" for e in events))
                board.unplug()
                await until(lambda: any(isinstance(e, LinkStatus) and e.state == "detached" for e in events))
                await asyncio.sleep(0.2)
                board.replug()
                await until(lambda: link.attached and [e.state for e in events if isinstance(e, LinkStatus)][-1]
                            == "attached")
                assert [e.state for e in events if isinstance(e, LinkStatus)] == ["attached", "reset", "detached",
                                                                                  "attached"]
                assert link.session_token == token and link.stats.resets == 1
                await link.send_command("volume", 30)  # the session works after all that
                assert board.speaker.volume == 30
            finally:
                reader.cancel()
                await link.close()

    asyncio.run(go())


@pytest.mark.realtime
def test_flipped_bytes_are_rejected_and_the_link_keeps_running() -> None:
    async def go() -> None:
        with SimulatedBoard(baud=BAUD, seed=5) as board:
            link = BoardLink(board.port_path, patient_link(BAUD))
            await link.open()
            events: list[PortEvent] = []
            reader = asyncio.create_task(collect(link, events))
            try:
                # Garbage until 5000 bytes of mic audio crossed the line: at 0.2 % per byte, some
                # were flipped (the chance of none is 5e-5), however slowly the machine runs.
                await until(lambda: board.welcomed, what="the board on the host's WELCOME")
                up0 = board.line.counters.bytes_up
                board.set_corruption(flip_probability=0.002)
                await until(lambda: board.line.counters.bytes_up - up0 >= 5000, what="5000 bytes up")
                board.set_corruption(0.0)

                def mic_frames() -> int:
                    return sum(1 for e in events if isinstance(e, MicAudio))

                before = mic_frames()
                await until(lambda: mic_frames() > before + 10, what="mic audio after the garbage")  # audio still flows
                assert link.decoder.crc_errors + link.decoder.bad_frames > 0
                assert board.stats["line_flipped"] > 0
            finally:
                reader.cancel()
                await link.close()

    asyncio.run(go())


@pytest.mark.realtime
def test_short_bench_loses_nothing_on_a_clean_line() -> None:
    from sotto.link.bench import BenchOptions, LinkBench

    async def go() -> tuple[LinkBench, dict]:
        with SimulatedBoard(baud=BAUD) as board:
            link = BoardLink(board.port_path, patient_link(BAUD))
            await link.open()
            try:
                options = BenchOptions(seconds=1.5, audio_seconds=0.5, report_timeout_s=60.0)
                bench = LinkBench(link, options, faults=board)
                return bench, await bench.run()
            finally:
                await link.close()

    bench, result = asyncio.run(go())
    assert_bench_lost_nothing(bench, result)  # (how many frames and how fast: `sotto bench link --sim`)
    assert set(result["payload_kbps"]) == {"up", "down"} and result["rtt_ms_p50"] is not None
    assert result["uplink_audio"]["format"] == "pcm16@16000"


def test_broken_and_unusual_wavs(tmp_path: Path) -> None:
    broken = tmp_path / "broken.wav"
    broken.write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk")
    with pytest.raises(AudioFormatError):
        read_wav(broken)
    with pytest.raises(AudioFormatError):
        read_wav(tmp_path / "missing.wav")
    stereo8 = tmp_path / "stereo8.wav"
    with wave.open(str(stereo8), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(bytes([128, 128, 255, 255]) * 100)
    pcm, rate = read_wav(stereo8)
    assert rate == 8000 and pcm.size == 200 and pcm.max() > 10000
