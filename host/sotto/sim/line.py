"""A virtual serial cable: a pty pair paced at a real baud rate, with fault injection.

The host opens the pty slave like a real device (`port_path`, a symlink that follows
replugs, or `pty_path`, the current /dev/pts/N). The board's end is either
`SimUartPort`, a non-blocking machine.UART look-alike with an RX buffer and a small TX
FIFO for the firmware imported into CPython, or `PtyBoardEnd`, a second pty whose slave
the MicroPython process reads and writes as its UART. The hardware thread calls
`pump()` about every millisecond: bytes move between the host's pty and the board's
end at baud/10 bytes a second in each direction, so a frame takes the time it would
take on the wire.

Back-pressure instead of overrun: when the board's RX buffer is full the line stops
taking bytes from the pty (as USB-CDC flow control would), so the host's writes wait.

Faults: flipped bits and dropped bytes (probabilities per byte), unplug/replug (the
pty is closed and a new one appears: the host's reads fail like a pulled USB cable),
and cutting one or both directions for a while (host silence, dead line).
"""

from __future__ import annotations

import errno
import fcntl
import os
import random
import struct
import tempfile
import termios
import threading
import tty
from dataclasses import dataclass
from typing import Protocol

BITS_PER_BYTE = 10
# An ESP32-S3 UART's hardware TX FIFO is 128 bytes. A deeper FIFO here would make every
# reply (PONG, CREDIT) wait behind more bulk data: ~1.4 ms per 128 bytes at 921600 baud.
UART_TX_FIFO = 128
# Line time a late pump may make up. The hardware thread is descheduled now and then
# (100-300 ms measured while the demo's LLM and TTS threads run on 2 cores), but a real
# line keeps carrying bytes meanwhile: the USB adapter and the kernel's tty buffer take
# them. With 20 ms here a stall cost the line its capacity, the board's TX ring filled and
# mic frames were dropped that no real line would have dropped.
CATCH_UP_S = 0.25


class SimUartPort:
    """The board's end of the line (machine.UART-like, non-blocking)."""

    def __init__(self, rx_capacity: int = 4096, tx_capacity: int = UART_TX_FIFO) -> None:
        self.rx_capacity = rx_capacity
        self.tx_capacity = tx_capacity
        self._rx = bytearray()
        self._tx = bytearray()
        self._lock = threading.Lock()

    # -- board side (BoardApp) --
    def readinto(self, buf: bytearray | memoryview) -> int | None:
        with self._lock:
            n = min(len(buf), len(self._rx))
            if n == 0:
                return None
            buf[:n] = self._rx[:n]
            del self._rx[:n]
            return n

    def write(self, buf: bytes | bytearray | memoryview, off: int = 0, n: int = -1) -> int:
        """Up to n bytes of buf[off:] (all of it when n < 0) into the TX FIFO; returns how many."""
        if n < 0:
            n = len(buf) - off
        with self._lock:
            k = min(n, self.tx_capacity - len(self._tx))
            if k <= 0:
                return 0
            self._tx += buf[off: off + k]
            return k

    def any(self) -> int:
        with self._lock:
            return len(self._rx)

    # -- line side (pump) --
    def rx_room(self) -> int:
        with self._lock:
            return self.rx_capacity - len(self._rx)

    def deliver(self, data: bytes) -> int:
        with self._lock:
            self._rx += data
            return len(data)

    def take_tx(self, n: int) -> bytes:
        with self._lock:
            out = bytes(self._tx[:n])
            del self._tx[:n]
            return out

    def clear(self) -> None:
        with self._lock:
            self._rx.clear()
            self._tx.clear()


class BoardEnd(Protocol):
    """The board's end of the line, as the pump moves bytes to and from it."""

    def rx_room(self) -> int: ...

    def deliver(self, data: bytes) -> int: ...

    def take_tx(self, n: int) -> bytes: ...

    def clear(self) -> None: ...


class PtyBoardEnd:
    """The board's UART as a pty for another process (the MicroPython interpreter).

    `board_fd` is the slave, opened non-blocking, for the board process to inherit: its
    reads return whatever has arrived, its writes what fits, like a UART with timeout 0.
    RX room is measured on the slave (bytes the board has not read yet), so a board that
    reads slowly holds the line back as an RX buffer of `rx_capacity` bytes would.
    """

    def __init__(self, rx_capacity: int = 4096) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)
        self.rx_capacity = rx_capacity
        self._master = master
        os.set_blocking(master, False)
        self.board_fd = os.open(os.ttyname(slave), os.O_RDWR | os.O_NONBLOCK | os.O_NOCTTY)
        self._slave = slave  # kept open: the pty lives across board restarts
        self._inq = bytearray(4)

    def unread(self) -> int:
        """Bytes delivered that the board has not read."""
        fcntl.ioctl(self._slave, termios.FIONREAD, self._inq)
        return int(struct.unpack("i", self._inq)[0])

    def rx_room(self) -> int:
        return max(0, self.rx_capacity - self.unread())

    def deliver(self, data: bytes) -> int:
        try:
            return os.write(self._master, data)
        except BlockingIOError:
            return 0

    def take_tx(self, n: int) -> bytes:
        if n <= 0:
            return b""
        try:
            return os.read(self._master, n)
        except (BlockingIOError, OSError):
            return b""

    def clear(self) -> None:
        """Bytes in flight are gone (a pulled cable, a reset board)."""
        termios.tcflush(self._slave, termios.TCIOFLUSH)
        while self.take_tx(65536):
            pass

    def close(self) -> None:
        for fd in (self.board_fd, self._slave, self._master):
            try:
                os.close(fd)
            except OSError:
                pass


@dataclass
class LineCounters:
    bytes_down: int = 0  # host -> board
    bytes_up: int = 0  # board -> host
    flipped: int = 0
    dropped: int = 0
    cut_bytes: int = 0  # discarded while a direction was cut
    unplugs: int = 0
    replugs: int = 0


class _FaultDice:
    """Which bytes to flip or drop: geometric gaps, so the cost is per fault, not per byte."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.probability = 0.0
        self.countdown = -1

    def set(self, probability: float) -> None:
        if not 0.0 <= probability < 1.0:
            raise ValueError(f"fault probability must be in [0, 1), got {probability}")
        self.probability = probability
        self.countdown = self._gap()

    def _gap(self) -> int:
        if self.probability <= 0.0:
            return -1
        return int(self.rng.expovariate(self.probability))

    def positions(self, n: int) -> list[int]:
        """Byte positions in the next n bytes that get the fault."""
        hits: list[int] = []
        if self.countdown < 0:
            return hits
        pos = self.countdown
        while pos < n:
            hits.append(pos)
            pos += 1 + self._gap()
        self.countdown = pos - n
        return hits


class VirtualSerialLine:
    def __init__(self, baud: int, *, rx_capacity: int = 4096, tx_capacity: int = UART_TX_FIFO, seed: int | None = None,
                 board_end: BoardEnd | None = None) -> None:
        """`board_end`: the board's side (default: an in-process SimUartPort)."""
        if baud <= 0:
            raise ValueError(f"baud must be positive, got {baud}")
        self.baud = baud
        self.byte_rate = baud / BITS_PER_BYTE
        self.port: BoardEnd = board_end if board_end is not None else SimUartPort(rx_capacity, tx_capacity)
        self.counters = LineCounters()
        rng = random.Random(seed)
        self._rng = rng
        self._flip = {"down": _FaultDice(rng), "up": _FaultDice(rng)}
        self._drop = {"down": _FaultDice(rng), "up": _FaultDice(rng)}
        self._cut_until = {"down": 0.0, "up": 0.0}
        self._dir = tempfile.mkdtemp(prefix="sotto-sim-")
        self.port_path = os.path.join(self._dir, "board")
        self.pty_path = ""
        self._master = -1
        self._slave = -1
        self._lock = threading.Lock()
        self._budget = {"down": 0.0, "up": 0.0}
        self._last = 0.0
        self._pending_up = b""  # bytes taken from the board's FIFO that the pty has not accepted yet
        self._pending_down = b""  # bytes from the host the board's end has not accepted yet
        self._plugged = False
        self._open_pty()

    # ------------------------------------------------------------------ pty

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line discipline: a byte pipe like a real serial port
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self.pty_path = os.ttyname(slave)
        tmp = self.port_path + ".new"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(self.pty_path, tmp)
        os.replace(tmp, self.port_path)
        self._plugged = True
        self._pending_up = b""

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = -1
        if os.path.lexists(self.port_path):
            os.unlink(self.port_path)
        self._plugged = False

    @property
    def plugged(self) -> bool:
        return self._plugged

    def unplug(self) -> None:
        """Pull the cable: the pty goes away, the host's reads and writes fail."""
        with self._lock:
            if not self._plugged:
                return
            self._close_pty()
            self._drop_in_flight()  # bytes on a pulled cable are gone
            self.counters.unplugs += 1

    def _drop_in_flight(self) -> None:
        self.port.clear()
        self._pending_down = b""

    def board_reset(self) -> None:
        """The board rebooted: what its UART held, and what was on its way to it, is lost."""
        with self._lock:
            self._drop_in_flight()

    def replug(self) -> None:
        """Plug it back: a new pty behind the same `port_path`."""
        with self._lock:
            if self._plugged:
                return
            self._open_pty()
            self.counters.replugs += 1

    def close(self) -> None:
        with self._lock:
            self._close_pty()
        try:
            os.rmdir(self._dir)
        except OSError:
            pass

    # ------------------------------------------------------------------ faults

    def set_corruption(self, flip_probability: float = 0.0, drop_probability: float = 0.0,
                       direction: str = "both") -> None:
        """Per-byte probabilities of a flipped bit and of a dropped byte on the line."""
        for d in self._directions(direction):
            self._flip[d].set(flip_probability)
            self._drop[d].set(drop_probability)

    def cut(self, seconds: float, direction: str = "both") -> None:
        """Discard bytes in one or both directions for a while ("down" = host silence for the board)."""
        import time

        until = time.monotonic() + seconds
        for d in self._directions(direction):
            self._cut_until[d] = until

    @staticmethod
    def _directions(direction: str) -> tuple[str, ...]:
        if direction == "both":
            return ("down", "up")
        if direction in ("down", "up"):
            return (direction,)
        raise ValueError(f"direction must be up, down or both, got {direction!r}")

    def _mangle(self, direction: str, data: bytes, now: float) -> bytes:
        if now < self._cut_until[direction]:
            self.counters.cut_bytes += len(data)
            return b""
        flips = self._flip[direction].positions(len(data))
        drops = self._drop[direction].positions(len(data))
        if not flips and not drops:
            return data
        buf = bytearray(data)
        for i in flips:
            buf[i] ^= 1 << self._rng.randrange(8)
        self.counters.flipped += len(flips)
        if drops:
            for i in sorted(drops, reverse=True):
                del buf[i]
            self.counters.dropped += len(drops)
        return bytes(buf)

    # ------------------------------------------------------------------ pacing

    def pump(self, now: float) -> None:
        """Move the bytes the line could carry since the last call (hardware thread)."""
        with self._lock:
            if self._last == 0.0:
                self._last = now
            elapsed = max(0.0, now - self._last)
            self._last = now
            cap = max(64.0, self.byte_rate * CATCH_UP_S)
            for d in ("down", "up"):
                self._budget[d] = min(cap, self._budget[d] + elapsed * self.byte_rate)
            if not self._plugged:
                return
            self._pump_down(now)
            self._pump_up(now)

    def _pump_down(self, now: float) -> None:
        if self._pending_down:
            k = self.port.deliver(self._pending_down)
            self._pending_down = self._pending_down[k:]
            if self._pending_down:
                return
        n = min(int(self._budget["down"]), self.port.rx_room())
        if n <= 0:
            return
        try:
            data = os.read(self._master, n)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno == errno.EIO:  # nobody has the slave open: nothing to carry
                return
            raise
        self._budget["down"] -= len(data)
        self.counters.bytes_down += len(data)
        data = self._mangle("down", data, now)
        if data:
            k = self.port.deliver(data)
            self._pending_down = data[k:]

    def _pump_up(self, now: float) -> None:
        budget = int(self._budget["up"])
        if not self._pending_up:
            take = self.port.take_tx(budget)
            if not take:
                return
            self._budget["up"] -= len(take)
            self.counters.bytes_up += len(take)
            self._pending_up = self._mangle("up", take, now)
        if self._pending_up:
            try:
                k = os.write(self._master, self._pending_up)
            except BlockingIOError:
                return  # the host is not reading: the bytes wait (and the board's FIFO fills)
            except OSError as exc:
                if exc.errno == errno.EIO:
                    self._pending_up = b""
                    return
                raise
            self._pending_up = self._pending_up[k:]
