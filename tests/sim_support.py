"""What the tests against the simulated board share: event collection, waiting, a tone."""

from __future__ import annotations

import asyncio
from typing import Callable

import numpy as np

from sotto.link.board_link import BoardLink
from sotto.link.events import PortEvent


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
