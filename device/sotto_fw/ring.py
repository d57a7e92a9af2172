# Byte ring buffer for audio and outgoing frames: one bytearray allocated at start,
# reads and writes copy straight between it and the caller's buffers (copy_into: no
# slice objects, so nothing is allocated per call on the board).

from sotto_fw.compat import copy_into


class RingBuffer:
    def __init__(self, size):
        self.size = size
        self.buf = bytearray(size)
        self.mv = memoryview(self.buf)
        self.head = 0  # next byte to read
        self.count = 0

    def used(self):
        return self.count

    def free(self):
        return self.size - self.count

    def clear(self):
        self.head = 0
        self.count = 0

    def write(self, src, n=-1, soff=0):
        """Copy src[soff:soff+n] in, as much as fits. Returns bytes taken."""
        if n < 0:
            n = len(src) - soff
        room = self.size - self.count
        if n > room:
            n = room
        if n <= 0:
            return 0
        tail = self.head + self.count
        if tail >= self.size:
            tail -= self.size
        first = self.size - tail
        if first > n:
            first = n
        copy_into(self.buf, tail, src, soff, first)
        rest = n - first
        if rest:
            copy_into(self.buf, 0, src, soff + first, rest)
        self.count += n
        return n

    def tail(self):
        """Where the next written byte goes."""
        tail = self.head + self.count
        return tail - self.size if tail >= self.size else tail

    def commit(self, n):
        """n bytes were written in place from tail() on (wrapping): they are now readable."""
        self.count += n

    def write_all(self, src, n=-1):
        """Copy src[:n] in only if all of it fits (whole frames). Returns True if taken."""
        if n < 0:
            n = len(src)
        if n > self.size - self.count:
            return False
        self.write(src, n)
        return True

    def contiguous(self):
        """Length of the readable region starting at head without wrapping."""
        end = self.head + self.count
        if end > self.size:
            end = self.size
        return end - self.head

    def read_into(self, dst, n=-1, doff=0):
        """Copy up to n bytes out into dst[doff:]. Returns bytes copied."""
        if n < 0 or n > len(dst) - doff:
            n = len(dst) - doff
        if n > self.count:
            n = self.count
        if n <= 0:
            return 0
        first = self.size - self.head
        if first > n:
            first = n
        copy_into(dst, doff, self.buf, self.head, first)
        rest = n - first
        if rest:
            copy_into(dst, doff + first, self.buf, 0, rest)
        self.skip(n)
        return n

    def skip(self, n):
        """Drop n bytes from the read side (consumed or flushed)."""
        if n > self.count:
            n = self.count
        self.head += n
        if self.head >= self.size:
            self.head -= self.size
        self.count -= n
        if self.count == 0:
            self.head = 0
        return n
