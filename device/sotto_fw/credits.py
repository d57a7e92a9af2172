# Speaker-buffer credits: the board tells the host how many PCM16 bytes it may have in
# flight. A CREDIT says "after AUDIO_DOWN seq `last_seq`, `free_bytes` were free", so a
# lost CREDIT is repaired by the next one (they are absolute, not increments).

from sotto_fw.compat import const

CREDIT_INTERVAL_MS = const(100)
FLOWING_MS = const(500)  # audio counts as flowing this long after the last AUDIO_DOWN
# Idle, a CREDIT still goes out this often. On a noisy line the host may have sent frames
# that never arrived; it takes them as lost only when a newer CREDIT comes (host
# sotto/link/credits.py), and a board that heard no audio has no other reason to send one:
# without this the host's speaker audio could wait forever.
REFRESH_MS = const(1000)


class CreditGranter:
    def __init__(self, buffer_size, interval_ms=CREDIT_INTERVAL_MS):
        self.buffer_size = buffer_size
        self.step = buffer_size // 4
        self.interval_ms = interval_ms
        self.stream_id = 0
        self.last_seq = 0
        self.granted = 0
        self.reset()

    def reset(self):
        """Start over (boot, WELCOME, STOP): the next check grants at once."""
        self.pending = True
        self.low_free = self.buffer_size
        self.last_ms = 0
        self.last_audio_ms = 0
        self.audio_seen = False

    def took(self, stream_id, seq, now):
        """An AUDIO_DOWN frame was taken into the ring buffer."""
        self.stream_id = stream_id & 0xFFFF
        self.last_seq = seq & 0xFFFF
        self.last_audio_ms = now
        self.audio_seen = True

    def force(self):
        self.pending = True

    def due(self, free, now, ticks_diff):
        """True when a CREDIT should go out now for `free` free ring bytes."""
        if free < self.low_free:
            self.low_free = free
        if self.pending:
            return True
        if free - self.low_free >= self.step:
            return True
        flowing = self.audio_seen and ticks_diff(now, self.last_audio_ms) < FLOWING_MS
        since = ticks_diff(now, self.last_ms)
        if (flowing or free < self.buffer_size) and since >= self.interval_ms:
            return True
        return since >= REFRESH_MS

    def granted_now(self, free, now):
        self.pending = False
        self.low_free = free
        self.last_ms = now
        self.granted += 1
