# The serial link as the firmware loop uses it: readinto(buf) takes whatever bytes are
# waiting, in one block, and never waits; write(buf, off, n) takes what the line can
# carry now from buf[off:off+n] and returns how many (MicroPython streams take an
# offset and a length, so no slice is made). Shared by the board (sotto_fw.hw) and the
# unix port (sotto_fw.hw_unix), so the simulated board runs this very code.

from sotto_fw.compat import ticks_diff, ticks_ms


class StreamPort:
    """A non-blocking stream (UART with timeout=0, a non-blocking pty, a CDC interface)."""

    def __init__(self, stream):
        self.stream = stream

    def readinto(self, buf):
        return self.stream.readinto(buf) or 0

    def write(self, buf, off, n):
        return self.stream.write(buf, off, n) or 0


QUEUE_MS = 10  # most line time a paced port lets the driver queue


def paced_capacity(baud, txbuf):
    """Bytes a paced port may have queued in the driver: QUEUE_MS of line, within half
    the driver's buffer. Everything queued there is ahead of the next PONG or PLAYBACK
    report: half of an 8 KB buffer is 44 ms at 921600 baud (measured as the PING round
    trip under a saturating bench on the simulated board), 10 ms of line keeps the line
    busy across a slow loop pass and replies prompt."""
    n = baud * QUEUE_MS // 10000
    if n < 256:
        n = 256
    if n > txbuf // 2:
        n = txbuf // 2
    return n


class PacedPort(StreamPort):
    """A stream whose driver queues what it is given (a UART): writes are paced to the
    baud rate with a token bucket, so the driver never holds more than `capacity` bytes,
    a write never waits for the line, and what waits stays in the firmware's TX ring,
    where a PONG or a CREDIT can still overtake audio."""

    def __init__(self, stream, baud, capacity):
        StreamPort.__init__(self, stream)
        self.bytes_per_ms = baud // 10000 + 1
        self.capacity = capacity
        self.tokens = capacity
        self.last = ticks_ms()

    def write(self, buf, off, n):
        now = ticks_ms()
        self.tokens += ticks_diff(now, self.last) * self.bytes_per_ms
        self.last = now
        if self.tokens > self.capacity:
            self.tokens = self.capacity
        if n > self.tokens:
            n = self.tokens
        if n <= 0:
            return 0
        k = self.stream.write(buf, off, n) or 0
        self.tokens -= k
        return k
