"""When the demo's simulated user talks over a reply.

The script says `barge_in_after_ms`: how far into the reply's playback the user starts
talking. It counts from the board's first speaker frame (its PLAYBACK started report),
not from when the host sent the first byte nor from the user's previous words: the reply
may start late or early, and answers got short enough to end before a point counted from
anywhere else (the demo then measured no barge-in at all). The point is pulled earlier when
the reply's audio (as much of it as the host has sent) would end before the user had
talked over it long enough to be heard (`overlap_ms`: the barge-in detector's minimum run
of speech plus the utterance's own lead-in); a reply too short for any talk-over plays to
its end, and the result says so instead of pretending.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sotto.clock import Clock

# The user's voice must overlap the reply this long to interrupt it: the detector's minimum
# voiced run (200 ms), the synthesised utterance's leading silence and onset, and a margin.
DEFAULT_OVERLAP_MS = 600.0


@dataclass(frozen=True)
class InterruptAt:
    """Start talking now: `after_ms` into the reply's playback (earlier than scripted: `pulled_in`)."""

    after_ms: float
    pulled_in: bool


@dataclass(frozen=True)
class ReplyTooShort:
    """The reply ended (or will, before the user could be heard) ahead of any interruption point."""

    reply_ms: float
    scripted_ms: float

    def describe(self) -> str:
        return (f"the reply ({self.reply_ms:.0f} ms of audio) ended before the scripted interruption at "
                f"{self.scripted_ms:.0f} ms could be heard over it: no barge-in measured")


class InterruptionTimer:
    """Fed with the reply's playback start, its audio as sent and its end; `wait()` decides."""

    def __init__(self, clock: Clock, scripted_ms: float, *, overlap_ms: float = DEFAULT_OVERLAP_MS) -> None:
        self.clock = clock
        self.scripted_ms = scripted_ms
        self.overlap_ms = overlap_ms
        self.started_at: float | None = None  # the board's first speaker frame (clock time)
        self.audio_ms = 0.0  # reply audio the host has sent so far
        self.ended = False  # the board drained or stopped the reply
        self._changed = asyncio.Event()

    def playback_started(self, at: float) -> None:
        if self.started_at is None:
            self.started_at = at
            self._changed.set()

    def audio_sent(self, ms: float) -> None:
        self.audio_ms += ms
        self._changed.set()

    def playback_ended(self) -> None:
        self.ended = True
        self._changed.set()

    def _point_ms(self) -> float:
        """Where the user starts talking, ms into the playback, by what is known now."""
        return min(self.scripted_ms, self.audio_ms - self.overlap_ms)

    async def wait(self, timeout_s: float) -> InterruptAt | ReplyTooShort:
        """Until it is time to talk, or the reply ended first (then no talk-over can be heard).
        TimeoutError if the reply does not start playing within `timeout_s`, or started but
        neither ended nor reached the point within `timeout_s` of its start (its end report
        lost, e.g. the board detached mid-reply: this used to wait forever)."""
        waiting_since = self.clock.now()
        while True:
            self._changed.clear()
            now = self.clock.now()
            point_at: float | None = None
            if self.started_at is not None:
                if self.ended:
                    return ReplyTooShort(self.audio_ms, self.scripted_ms)
                point = self._point_ms()
                if point >= 0.0:  # below 0, too little audio is known yet: wait for more, or the end
                    point_at = self.started_at + point / 1000.0  # compared as clock times: no rounding loop
                    if now >= point_at:
                        return InterruptAt(round((now - self.started_at) * 1000.0, 1), point < self.scripted_ms)
            left_s = (waiting_since if self.started_at is None else self.started_at) + timeout_s - now
            if left_s <= 0:
                raise asyncio.TimeoutError
            wait_s = left_s if point_at is None else min(point_at - now, left_s)
            try:
                await self.clock.wait_for(self._changed.wait(), wait_s)
            except asyncio.TimeoutError:
                pass
