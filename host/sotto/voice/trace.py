"""One trace per run: the session's events as JSON lines under `sotto.paths.traces_dir()`.

Extra sinks (e.g. the memory store's SQLite event table) receive the same events. A
sink that fails is reported once and detached: the voice turn must not die of it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import IO, Any, Callable, Iterator

from sotto import paths
from sotto.errors import InputRefused, SessionNotFound, StoreError
from sotto.ids import SessionId
from sotto.untrusted import MAX_JSON_DEPTH, load_json
from sotto.voice.events import TraceEvent

TraceSink = Callable[[TraceEvent], None]

MAX_TRACE_LINE = 1_000_000  # one event is at most a few KB; a longer line is not a trace


def trace_path(session_id: str, folder: Path | None = None) -> Path:
    """The session's trace file, always directly inside the traces folder."""
    return SessionId(session_id).file_in(folder or paths.traces_dir(), ".jsonl")


class TraceLog:
    """Appends events to the session's JSON-lines file (flushed per event) and to extra sinks."""

    def __init__(
        self,
        session_id: str,
        *,
        folder: Path | None = None,
        sinks: tuple[TraceSink, ...] = (),
        clock: Callable[[], float] = time.monotonic,
        persist: bool = True,
        redact: bool | None = None,
    ) -> None:
        from sotto.text.redact import redaction_enabled

        # Write-time redaction (SOTTO_REDACT=1): the file keeps lengths and hashes, not words.
        self.redact = redaction_enabled() if redact is None else redact
        self.session_id = SessionId(session_id)
        self.path = trace_path(session_id, folder) if persist else None
        self._file: IO[str] | None = self.path.open("a", encoding="utf-8") if self.path else None
        self._sinks = list(sinks)
        self._clock = clock
        self._t0 = clock()
        self.events: list[TraceEvent] = []

    def now_ms(self) -> float:
        return (self._clock() - self._t0) * 1000.0

    def ms_at(self, host_t: float) -> float:
        return (host_t - self._t0) * 1000.0

    def emit(self, type_: str, turn_id: int | None, **data: Any) -> TraceEvent:
        event = TraceEvent(type_, self.session_id, turn_id, self.now_ms(), data)
        self.events.append(event)
        if self._file is not None:
            record = event.to_json_dict()
            if self.redact:
                from sotto.text.redact import redact_event

                record = redact_event(record)
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._file.flush()
        for sink in list(self._sinks):
            try:
                sink(event)
            except Exception as exc:  # a broken sink must not break the voice turn
                print(f"sotto: trace sink {sink!r} failed and was detached: {exc}", file=sys.stderr)
                self._sinks.remove(sink)
        return event

    def of_type(self, type_: str) -> list[TraceEvent]:
        return [e for e in self.events if e.type == type_]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_trace(session: str, folder: Path | None = None) -> Iterator[TraceEvent]:
    """Events of a stored trace, by session id or by path to a .jsonl file."""
    candidate = Path(session)
    if session.endswith(".jsonl") and candidate.is_file():
        path = candidate
    else:
        path = trace_path(session, folder)
    if not path.is_file():
        raise SessionNotFound(f"no trace for session {session!r}", hint=f"traces live in {path.parent}")
    with path.open("rb") as handle:
        number = 0
        while True:
            raw = handle.readline(MAX_TRACE_LINE + 1)
            if not raw:
                return
            number += 1
            if len(raw) > MAX_TRACE_LINE:
                raise StoreError(f"{path}:{number}: a line longer than {MAX_TRACE_LINE} bytes: not a sotto trace")
            if not raw.strip():
                continue
            try:
                obj = load_json(raw, what="the line", max_bytes=MAX_TRACE_LINE, max_depth=MAX_JSON_DEPTH)
                yield TraceEvent.from_json_dict(obj)
            except (InputRefused, ValueError, KeyError, TypeError) as exc:
                raise StoreError(f"{path}:{number}: unreadable trace line ({exc})") from exc
