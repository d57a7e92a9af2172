"""Board clock -> host clock, from PING/PONG round trips.

The board stamps audio and events with its ticks_ms (wrapping at 2**30 like
MicroPython's). Each PONG gives one estimate: the board read its clock roughly halfway
through the round trip. The estimate from the shortest recent round trip is the least
disturbed by queueing, so that one is the reference.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Callable

TICKS_PERIOD = 1 << 30
_HALF = TICKS_PERIOD // 2
WINDOW = 16  # recent PONGs considered; old ones go so slow drift is followed


def ticks_diff(a: int, b: int) -> int:
    """a - b in board ms, across one wrap."""
    return ((a - b + _HALF) % TICKS_PERIOD) - _HALF


class BoardClock:
    def __init__(self, host_now: Callable[[], float] = time.monotonic) -> None:
        self._host_now = host_now  # the host clock board times are mapped onto
        self._samples: deque[tuple[float, float, int]] = deque(maxlen=WINDOW)  # (rtt_s, host_mid_s, board_ms)
        self._rough: tuple[float, int] | None = None
        self.rtts_ms: list[float] = []

    def reset(self) -> None:
        """The board rebooted: its clock started again."""
        self._samples.clear()
        self._rough = None

    def observe_pong(self, sent_t: float, received_t: float, board_ms: int) -> float:
        """Record one round trip; returns its RTT in ms."""
        rtt = max(0.0, received_t - sent_t)
        self._samples.append((rtt, sent_t + rtt / 2, board_ms % TICKS_PERIOD))
        rtt_ms = rtt * 1000.0
        self.rtts_ms.append(rtt_ms)
        if len(self.rtts_ms) > 100_000:
            del self.rtts_ms[:50_000]
        return rtt_ms

    def observe_rough(self, host_t: float, board_ms: int) -> None:
        """A stamp that arrived just now (audio): good to ~a frame until the first PONG."""
        if not self._samples:
            self._rough = (host_t, board_ms % TICKS_PERIOD)

    @property
    def synced(self) -> bool:
        return bool(self._samples)

    def to_host(self, board_ms: int) -> float:
        if self._samples:
            _, host_ref, board_ref = min(self._samples)
        elif self._rough is not None:
            host_ref, board_ref = self._rough
        else:
            return self._host_now()
        return host_ref + ticks_diff(board_ms % TICKS_PERIOD, board_ref) / 1000.0
