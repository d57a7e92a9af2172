"""One guard around every handler of board or client input.

A frame from a board or a message from a client is untrusted: its handler may meet a
case nobody thought of (a digit that `int()` refuses, a nesting that recurses too
deep). Such an exception must cost that one input, never the receive loop that
serves every later one. So each dispatch point runs its handler as

    with guard.handling("ERROR frame", seq) as handled:
        handle(message)
    if handled.failed: ...  # optional: answer the client

An unexpected exception is logged with the input's kind and sequence number, counted,
and the input is dropped; the caller goes on with the next one. Cancellation and
KeyboardInterrupt are not exceptions of the input (they derive from BaseException)
and pass through untouched. The first few failures of each kind are logged with their
traceback; later ones in one line, so a hostile peer cannot flood the log with stacks.

This module imports nothing of sotto, so every layer may use it.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Iterator

TRACEBACKS_PER_KIND = 3


@dataclass
class Handled:
    """What became of one input under the guard."""

    kind: str
    seq: int | None
    error: Exception | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


class InputGuard:
    """Counts and logs handler failures for one source of input (a board link, a server)."""

    def __init__(self, log: logging.Logger, source: str) -> None:
        self.log = log
        self.source = source
        self.failures = 0
        self.by_kind: Counter[str] = Counter()
        self.last: Handled | None = None

    @contextlib.contextmanager
    def handling(self, kind: str, seq: int | None = None) -> Iterator[Handled]:
        handled = Handled(kind, seq)
        try:
            yield handled
        except Exception as exc:  # noqa: BLE001 - the point of the guard: one input never ends the loop
            handled.error = exc
            self.failures += 1
            self.by_kind[kind] += 1
            self.last = handled
            where = f"{self.source}: dropped {kind}" + (f" seq {seq}" if seq is not None else "")
            if self.by_kind[kind] <= TRACEBACKS_PER_KIND:
                self.log.error("%s: handler failed with %s: %s", where, type(exc).__name__, exc, exc_info=exc)
            else:
                self.log.warning("%s: handler failed with %s: %s (%d such failures)", where, type(exc).__name__, exc,
                                 self.by_kind[kind])
