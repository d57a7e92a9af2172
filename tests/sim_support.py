"""What the tests against the simulated board share: event collection, waiting, a tone."""

from __future__ import annotations

import asyncio
from typing import Callable

import numpy as np

from sotto.link.board_link import BoardLink, LinkOptions
from sotto.link.events import MicAudio, PlaybackReport, PortEvent
from sotto.sim import SimulatedBoard


async def collect(link: BoardLink, out: list[PortEvent]) -> None:
    async for ev in link.events():
        out.append(ev)


async def until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not cond():
        if loop.time() > end:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


def tone(rate: int, seconds: float, freq: float = 440.0, amp: int = 8000) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (np.sin(2 * np.pi * freq * t) * amp).astype(np.int16)


async def audio_both_ways(board: SimulatedBoard, baud: int) -> np.ndarray:
    """A beep into the board's mic reaches the host once, and a tone the host sends plays
    once, whole, with PLAYBACK started then drained. Returns the mic audio the host got."""
    link = BoardLink(board.port_path, LinkOptions(baud=baud))
    await link.open()
    events: list[PortEvent] = []
    reader = asyncio.create_task(collect(link, events))
    try:
        board.play_utterance(tone(16000, 0.3).tobytes(), rate=16000, label="beep")
        await until(lambda: any(e.kind == "utterance_end" for e in board.events))
        await asyncio.sleep(0.3)
        mic = np.frombuffer(b"".join(e.pcm for e in events if isinstance(e, MicAudio)), dtype="<i2")
        loud = np.abs(mic) > 2000
        assert abs(loud.sum() - 0.3 * 16000 * 0.839) < 0.15 * 0.3 * 16000  # the beep arrived, once

        out = tone(link.speaker_rate, 0.4, 330.0)
        await link.send_audio(7, out.tobytes())
        await link.end_stream(7)
        await until(lambda: any(isinstance(e, PlaybackReport) and e.state == "drained" for e in events))
        states = [e.state for e in events if isinstance(e, PlaybackReport) and e.stream_id == 7]
        assert states == ["started", "drained"]
        await asyncio.sleep(0.1)
        pcm, rate = board.speaker_pcm()
        played = np.abs(pcm) > 2000
        expected = 0.4 * rate * 0.839  # share of a sine above a quarter of its peak
        assert abs(played.sum() - expected) < 0.1 * expected  # the whole tone played, once
        return mic
    finally:
        reader.cancel()
        await link.close()
