# MicroPython / CPython differences, in one place, so every other firmware module runs
# unchanged on the board and in the host's simulated board.

import time

# `micropython` (const, kbd_intr) for the other modules: the real module on the board, a
# stand-in on CPython. Not for @micropython.native/viper decorators in module source:
# see compile_accelerated below.
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
    ticks_us = time.ticks_us  # type: ignore
    ticks_diff = time.ticks_diff  # type: ignore
    ticks_add = time.ticks_add  # type: ignore
else:

    def ticks_ms():
        return int(time.monotonic() * 1000) & _TICKS_MASK  # pyright: ignore[reportAttributeAccessIssue]

    def ticks_us():
        return int(time.monotonic() * 1000000) & _TICKS_MASK  # pyright: ignore[reportAttributeAccessIssue]

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


# The heap, where the interpreter can say (MicroPython's gc): bytes in use and free.
# None on CPython, whose gc has no such counters.
try:
    import gc

    heap_alloc = gc.mem_alloc  # type: ignore
    heap_free = gc.mem_free  # type: ignore
    collect = gc.collect
except (ImportError, AttributeError):  # CPython
    heap_alloc = None
    heap_free = None
    collect = None


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


# ------------------------------------------------------------------ machine-code loops
#
# A `@micropython.native` / `@micropython.viper` decorator in a module's source makes
# `mpy-cross FILE.py` fail without -march ("invalid arch"), and every firmware file must
# compile that way. So the few hot loops are kept as source strings and compiled at
# import time by the interpreter's own compiler, which knows the board's arch. The
# board still gets machine code; a port without a native emitter (or too little RAM to
# compile one) silently gets bytecode instead.

ACCELERATED = []  # names compiled to machine code by compile_accelerated on this interpreter


def compile_function(source, name):
    """The function `name` defined by `source`, as bytecode: one plain `def`, no decorator,
    using only its arguments and builtins (it gets a namespace of its own)."""
    namespace = {}
    exec(source, namespace)
    return namespace[name]


def compile_accelerated(source, name, emitter):
    """`name` from `source` compiled with @micropython.<emitter> ("native" or "viper").

    None on CPython, or when this port cannot (no native emitter, too little RAM): the
    caller then keeps a bytecode version.
    """
    if not MICROPYTHON:
        return None
    try:
        fn = compile_function("@micropython." + emitter + "\n" + source, name)
    except Exception:  # SyntaxError "invalid micropython decorator" without an emitter, MemoryError
        return None
    ACCELERATED.append(name)
    return fn


def loop_source(name):
    """The source text of one machine-code loop (sotto_fw.loopsrc)."""
    from sotto_fw import loopsrc

    return getattr(loopsrc, name)


def forget_loop_sources():
    """Drop the loops' source text once they are compiled: the board's heap gets it back."""
    import sys

    sys.modules.pop("sotto_fw.loopsrc", None)
    package = sys.modules.get("sotto_fw")
    if package is not None and hasattr(package, "loopsrc"):
        delattr(package, "loopsrc")


def native_or_bytecode(source, name):
    """`name` from `source` as @micropython.native code where the port can, else bytecode."""
    fast = compile_accelerated(source, name, "native")
    return compile_function(source, name) if fast is None else fast


# ------------------------------------------------------------------ copying without slices
#
# On MicroPython `src[a:b]` allocates (a new memoryview or a copy) every time, so the
# audio loop copies between buffers at offsets with copy_into instead: viper machine code
# that allocates nothing. CPython (and a port without viper) copies with slices.


def _copy_slices(dst, doff, src, soff, n):
    """dst[doff:doff+n] = src[soff:soff+n]; returns n."""
    dst[doff : doff + n] = src[soff : soff + n]
    return n


copy_into = compile_accelerated(loop_source("COPY_INTO"), "copy_into", "viper") or _copy_slices
