"""Speaker credits: never more audio in flight than the board said it has room for.

The board's CREDIT(stream, last_seq, free_bytes) says: after taking in every AUDIO_DOWN
up to sequence number last_seq, my ring buffer has free_bytes of PCM16 room. Frames
sent after last_seq are in flight and will use that room, so the host may send a new
frame only while in_flight + frame <= free_bytes. A lost CREDIT is repaired by the
next one; a lost AUDIO_DOWN is never acknowledged, so an entry older than LOST_AFTER_S
when a newer CREDIT arrives is taken as lost (otherwise one bad frame would stall the
speaker forever).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

LOST_AFTER_S = 1.0


def seq_at_or_before(seq: int, last: int) -> bool:
    """seq <= last in 16-bit serial arithmetic."""
    return ((last - seq) & 0xFFFF) < 0x8000


def stream_at_or_before(stream_id: int, ref: int) -> bool:
    return seq_at_or_before(stream_id, ref)


@dataclass
class InFlight:
    seq: int
    stream_id: int
    pcm_bytes: int
    sent_t: float


class SpeakerCredits:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free = capacity
        self._in_flight: deque[InFlight] = deque()
        self.credits_received = 0
        self.presumed_lost = 0
        self.max_in_flight = 0

    def reset(self, capacity: int) -> None:
        """A (re)started board: empty ring, nothing in flight."""
        self.capacity = capacity
        self.free = capacity
        self._in_flight.clear()

    @property
    def in_flight_bytes(self) -> int:
        return sum(f.pcm_bytes for f in self._in_flight)

    def can_send(self, pcm_bytes: int) -> bool:
        return pcm_bytes == 0 or self.in_flight_bytes + pcm_bytes <= self.free

    def on_sent(self, seq: int, stream_id: int, pcm_bytes: int, t: float) -> None:
        self._in_flight.append(InFlight(seq, stream_id, pcm_bytes, t))
        self.max_in_flight = max(self.max_in_flight, self.in_flight_bytes)

    def on_credit(self, last_seq: int, free_bytes: int, t: float) -> None:
        self.credits_received += 1
        kept: deque[InFlight] = deque()
        for f in self._in_flight:
            if seq_at_or_before(f.seq, last_seq):
                continue
            if t - f.sent_t > LOST_AFTER_S:
                self.presumed_lost += 1
                continue
            kept.append(f)
        self._in_flight = kept
        self.free = min(free_bytes, self.capacity) if self.capacity else free_bytes

    def drop_stream(self, stream_id: int) -> None:
        """STOP: the board flushes that stream (and older ones) and drops any still arriving."""
        self._in_flight = deque(f for f in self._in_flight if not stream_at_or_before(f.stream_id, stream_id))
