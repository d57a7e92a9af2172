# Fake board peripherals for BoardApp tests, in the Python subset MicroPython runs, so
# the same fakes serve the CPython tests (tests/test_device_app.py) and the scripts
# under tests/mpy/ run by real MicroPython.

from sotto_fw.compat import copy_into


class FakeClock:
    """A clock the test moves by hand (ticks wrap at 2**30 like MicroPython's)."""

    def __init__(self, start=0):
        self.now = start & 0x3FFFFFFF

    def ticks_ms(self):
        return self.now

    def ticks_diff(self, a, b):
        return ((a - b + 0x20000000) & 0x3FFFFFFF) - 0x20000000

    def advance(self, ms):
        self.now = (self.now + ms) & 0x3FFFFFFF


class FakePort:
    """Non-blocking serial port: `to_board` is what the host wrote (read from `rx_off`
    on), `from_board` what the board wrote. `tx_room` limits how much one write()
    accepts (None: no limit). Reads copy at offsets, so a test can measure the board's
    allocations with host traffic queued in `to_board`."""

    def __init__(self):
        self.to_board = bytearray()
        self.rx_off = 0
        self.from_board = bytearray()
        self.tx_room = None
        self.written = 0
        self.discard = False  # True: count written bytes only (allocation measurements)

    def any(self):
        return len(self.to_board) - self.rx_off

    def readinto(self, buf):
        n = len(self.to_board) - self.rx_off
        if n > len(buf):
            n = len(buf)
        if n <= 0:
            return None
        copy_into(buf, 0, self.to_board, self.rx_off, n)
        self.rx_off += n  # read bytes stay: dropping them would allocate in the read
        return n

    def write(self, buf, off, n):
        if self.tx_room is not None:
            if n > self.tx_room:
                n = self.tx_room
            self.tx_room -= n
        self.written += n
        if not self.discard:
            self.from_board.extend(bytes(buf[off : off + n]))
        return n

    def take_output(self):
        out = bytes(self.from_board)
        self.from_board = bytearray()
        return out


class FakeMic:
    """Produces `level`-valued PCM16 samples, `per_read` bytes per readinto."""

    def __init__(self, per_read=64, level=0):
        self.per_read = per_read
        self.level = level
        self.rate = 0
        self.bytes_read = 0

    def configure(self, rate):
        self.rate = rate

    def readinto(self, buf, off, n):
        if n > self.per_read:
            n = self.per_read
        n &= ~1
        v = self.level & 0xFFFF
        lo = v & 0xFF
        hi = v >> 8
        i = off
        end = off + n
        while i < end:
            buf[i] = lo
            buf[i + 1] = hi
            i += 2
        self.bytes_read += n
        return n


class FakeSpeaker:
    """Accepts up to `room` bytes per write() call; keeps what it got (unless `discard`:
    allocation measurements). `queue` models the output stage: stop() returns (and
    discards) `queue` bytes."""

    def __init__(self, room=256, queue=0):
        self.room = room
        self.queue = queue
        self.played = bytearray()
        self.taken = 0
        self.discard = False
        self.stops = 0
        self.volume = 100
        self.rate = 0

    def configure(self, rate):
        self.rate = rate

    def write(self, buf, off, n):
        if n > self.room:
            n = self.room
        self.taken += n
        if not self.discard:
            self.played.extend(bytes(buf[off : off + n]))
        return n

    def stop(self):
        self.stops += 1
        dropped = self.queue
        self.queue = 0
        return dropped

    def set_volume(self, percent):
        self.volume = percent


class FakeButton:
    def __init__(self):
        self.level = 0

    def value(self):
        return self.level


class FakeLed:
    def __init__(self):
        self.phases = []

    def show(self, phase):
        self.phases.append(phase)


class FakePin:
    def __init__(self):
        self.level = 0

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = v
