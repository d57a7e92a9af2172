"""Bounds on what one client can make the server do."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class ServeLimits:
    max_message_bytes: int = 2 * 1024 * 1024  # over this: an error message, the connection stays
    hard_frame_bytes: int = 4 * 1024 * 1024  # over this the WebSocket library closes the connection (1009)
    max_text_chars: int = 600  # longer text is refused (the agent keeps at most 600 characters anyway)
    max_audio_s: float = 30.0
    max_sessions: int = 32  # distinct session ids kept live at once
    max_connections: int = 64
    max_queued_turns_per_session: int = 2  # a session may not flood the shared model queue
    messages_per_s: float = 5.0  # sustained rate per connection
    burst: int = 10
    binary_frames_per_s: float = 400.0  # wire frames from a board (50 fps audio + control, with margin)
    binary_burst: int = 800
    # One client (a remote address) may not take every slot: loopback clients share one address.
    max_sessions_per_client: int = 8
    max_connections_per_client: int = 16
    # A client that does not take what the server writes within this long is closed (it would
    # otherwise hold its turn, its session and a buffer forever; keepalive pings cannot tell).
    write_timeout_s: float = 10.0
    max_json_depth: int = 16  # client JSON nests 2 levels; deeper is refused before any handler recurses


class TokenBucket:
    """`allow()` is False once the client has used its burst and sends faster than `rate`."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.clock = clock
        self.stamp = clock()

    def allow(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
