# What the firmware loop costs on the interpreter it runs on, reported to the host once a
# period as a LOG line the host parses (sotto/link/board_stats.py):
#
#   stats ms=1000 frames=93 alloc=0 gc=0 loop_us=812 mic_drop=0 heap_free=123456 heap=163840
#
#   ms         length of the period (board ms)
#   frames     wire frames in + out during it
#   alloc      growth of gc.mem_alloc() over the period, bytes (-1: a collection ran, unknown)
#   gc         garbage collections seen (the heap in use went down between two samples)
#   loop_us    the longest pass of the loop (BoardApp.step), microseconds
#   mic_drop   mic frames lost: dropped because the line was behind, or overrun in the driver
#   heap_free  the least free heap seen, bytes; heap: the heap's size
#
# Only on MicroPython (CPython's gc has no heap counters). The heap is sampled once a
# period, outside the loop pass being timed: gc.mem_alloc() walks the heap's allocation
# table (about 25 us for 160 KB on a PC, much more on a board). The line is written
# into a preallocated buffer, digit by digit, so reporting allocates nothing either.

from sotto_fw.compat import const, copy_into, heap_alloc, heap_free

PERIOD_MS = const(1000)


def put_int(buf, off, v):
    """The decimal digits of int v at buf[off:]; returns the offset after them."""
    if v < 0:
        buf[off] = 45  # "-"
        off += 1
        v = -v
    start = off
    while True:
        buf[off] = 48 + v % 10
        v //= 10
        off += 1
        if v == 0:
            break
    i = start
    j = off - 1
    while i < j:
        t = buf[i]
        buf[i] = buf[j]
        buf[j] = t
        i += 1
        j -= 1
    return off


def put_text(buf, off, text):
    """bytes `text` at buf[off:]; returns the offset after it."""
    n = len(text)
    copy_into(buf, off, text, 0, n)
    return off + n


class LoopStats:
    def __init__(self, period_ms=PERIOD_MS):
        self.enabled = heap_alloc is not None
        self.period_ms = period_ms
        self.loop_us_max = 0
        self.started_ms = 0
        self.frames0 = 0
        self.mic_drop0 = 0
        self.alloc0 = 0
        self.heap_free_min = 0
        self.heap_size = 0
        self.periods = 0

    def start(self, now_ms, frames, mic_dropped):
        """Begin a period."""
        self.started_ms = now_ms
        self.frames0 = frames
        self.mic_drop0 = mic_dropped
        self.loop_us_max = 0
        if self.enabled:
            self.alloc0 = heap_alloc()
            free = heap_free()
            self.heap_free_min = free
            self.heap_size = self.alloc0 + free

    def loop_pass(self, us):
        if us > self.loop_us_max:
            self.loop_us_max = us

    def due(self, now_ms, ticks_diff):
        return self.enabled and ticks_diff(now_ms, self.started_ms) >= self.period_ms

    def report_into(self, buf, off, now_ms, ticks_diff, frames, mic_dropped):
        """Close the period: its LOG text at buf[off:] (returns the end offset); the next
        period starts here."""
        alloc = heap_alloc()
        free = heap_free()
        if free < self.heap_free_min:
            self.heap_free_min = free
        grown = alloc - self.alloc0
        collections = 0
        if grown < 0:
            collections = 1
            grown = -1
        o = put_text(buf, off, b"stats ms=")
        o = put_int(buf, o, ticks_diff(now_ms, self.started_ms))
        o = put_text(buf, o, b" frames=")
        o = put_int(buf, o, frames - self.frames0)
        o = put_text(buf, o, b" alloc=")
        o = put_int(buf, o, grown)
        o = put_text(buf, o, b" gc=")
        o = put_int(buf, o, collections)
        o = put_text(buf, o, b" loop_us=")
        o = put_int(buf, o, self.loop_us_max)
        o = put_text(buf, o, b" mic_drop=")
        o = put_int(buf, o, mic_dropped - self.mic_drop0)
        o = put_text(buf, o, b" heap_free=")
        o = put_int(buf, o, self.heap_free_min)
        o = put_text(buf, o, b" heap=")
        o = put_int(buf, o, alloc + free)
        self.periods += 1
        # The next period starts from this sample: the text above allocated nothing.
        self.started_ms = now_ms
        self.frames0 = frames
        self.mic_drop0 = mic_dropped
        self.loop_us_max = 0
        self.alloc0 = alloc
        self.heap_free_min = free
        self.heap_size = alloc + free
        return o
