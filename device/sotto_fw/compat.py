# MicroPython / CPython differences, in one place, so every other firmware module runs
# unchanged on the board and in the host's simulated board.

import time

# MicroPython's compiler recognises `@micropython.native` by its spelling, so modules
# write `from sotto_fw.compat import micropython` and decorate with it; on CPython the
# name is a stand-in module whose decorator does nothing.
try:
    import micropython

    MICROPYTHON = True
except ImportError:  # CPython
    from sotto_fw import _cpython_micropython as micropython  # pyright: ignore[reportMissingImports]

    MICROPYTHON = False

const = micropython.const

import asyncio

try:
    import os

    _urandom = os.urandom
except (ImportError, AttributeError):  # pragma: no cover - every port we target has it
    _urandom = None

# MicroPython's ticks wrap at 2**30 ms; the CPython version wraps the same way so the
# wrap-handling code is exercised on the host too.
TICKS_PERIOD = const(1 << 30)
_TICKS_MASK = const((1 << 30) - 1)
_TICKS_HALF = const(1 << 29)

if hasattr(time, "ticks_ms"):
    ticks_ms = time.ticks_ms  # type: ignore
    ticks_diff = time.ticks_diff  # type: ignore
    ticks_add = time.ticks_add  # type: ignore
else:

    def ticks_ms():
        return int(time.monotonic() * 1000) & _TICKS_MASK  # pyright: ignore[reportAttributeAccessIssue]

    def ticks_diff(a, b):
        """a - b in ms, correct across one wrap (like time.ticks_diff)."""
        return ((a - b + _TICKS_HALF) & _TICKS_MASK) - _TICKS_HALF

    def ticks_add(a, delta):
        return (a + delta) & _TICKS_MASK


if hasattr(asyncio, "sleep_ms"):

    def sleep_ms(ms):
        return asyncio.sleep_ms(ms)  # type: ignore

else:

    def sleep_ms(ms):
        return asyncio.sleep(ms / 1000)


def random_u32():
    """A random 32-bit number (boot ids): hardware RNG on the board, os.urandom on the host."""
    if _urandom is not None:
        b = _urandom(4)
        return b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)
    return ticks_ms() * 2654435761 & 0xFFFFFFFF  # pragma: no cover


class SystemClock:
    """The clock BoardApp uses unless given another: the interpreter's own ticks."""

    def ticks_ms(self):
        return ticks_ms()

    def ticks_diff(self, a, b):
        return ticks_diff(a, b)
