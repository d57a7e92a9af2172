"""What the board says its own loop costs: the `stats ...` LOG lines the firmware sends
once a second on MicroPython (sotto_fw.loopstats), parsed and summed.

    collector = BoardStatsCollector()
    remove = link.add_listener(collector.on_message)
    ...
    collector.summary(since=t_start + 1.0)   # the `board` object of `sotto bench link --json`

A real board and the simulated board on MicroPython both send them; the firmware
imported into CPython has no heap counters and sends none (summary() is then None).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from sotto.link import messages as m

PREFIX = "stats "
_FIELD = re.compile(r"(\w+)=(-?\d+)")
_NEEDED = ("ms", "frames", "alloc", "gc", "loop_us", "mic_drop", "heap_free", "heap")


@dataclass(frozen=True)
class LoopReport:
    """One period of the board's loop (see sotto_fw/loopstats.py for the fields)."""

    ms: int
    frames: int
    alloc: int  # heap growth over the period, bytes; -1 when a collection made it unknown
    gc: int
    loop_us: int
    mic_drop: int
    heap_free: int
    heap: int
    received_at: float  # host time.monotonic()

    @property
    def started_at(self) -> float:
        return self.received_at - self.ms / 1000.0


def parse_report(text: str, received_at: float) -> LoopReport | None:
    """A `stats ...` LOG text as a LoopReport; None for any other text or a malformed one."""
    if not text.startswith(PREFIX):
        return None
    fields = {k: int(v) for k, v in _FIELD.findall(text)}
    if any(k not in fields for k in _NEEDED) or fields["ms"] <= 0:
        return None
    return LoopReport(received_at=received_at, **{k: fields[k] for k in _NEEDED})


def summarize_reports(reports: list[LoopReport]) -> dict[str, Any] | None:
    """The `board` object: bytes allocated per frame (over the periods without a
    collection), collections, the longest loop pass, mic frames dropped, least free heap."""
    if not reports:
        return None
    clean = [r for r in reports if r.gc == 0 and r.alloc >= 0]
    frames = sum(r.frames for r in clean)
    allocated = sum(r.alloc for r in clean)
    per_frame = round(allocated / frames, 2) if frames else None
    return {
        "alloc_bytes_per_frame": per_frame,
        "gc_collections": sum(r.gc for r in reports),
        "loop_ms_max": round(max(r.loop_us for r in reports) / 1000.0, 2),
        "mic_frames_dropped": sum(r.mic_drop for r in reports),
        "heap_free_min": min(r.heap_free for r in reports),
        "heap_bytes": max(r.heap for r in reports),
        "alloc_bytes": allocated,
        "frames": sum(r.frames for r in reports),
        "seconds": round(sum(r.ms for r in reports) / 1000.0, 1),
    }


class BoardStatsCollector:
    """A link listener keeping the board's loop reports."""

    def __init__(self) -> None:
        self.reports: list[LoopReport] = []

    def on_message(self, message: m.Message, t: float | None = None) -> None:
        if isinstance(message, m.Log):
            report = parse_report(message.text, time.monotonic() if t is None else t)
            if report is not None:
                self.reports.append(report)

    def summary(self, since: float | None = None, until: float | None = None,
                skip: tuple[tuple[float, float], ...] = ()) -> dict[str, Any] | None:
        """Over the periods that started at or after `since`, ended by `until` and overlap
        none of the `skip` windows (host monotonic times). Steady state leaves out the
        first second of each phase: a command or a handshake is not the loop's steady work."""
        slack = 0.05  # a report's arrival lags its period's end by the line and the loop

        def chosen(r: LoopReport) -> bool:
            if since is not None and r.started_at < since - slack:
                return False
            if until is not None and r.received_at > until:
                return False
            return all(r.received_at - slack <= a or r.started_at + slack >= b for a, b in skip)

        return summarize_reports([r for r in self.reports if chosen(r)])


def describe(board: dict[str, Any]) -> str:
    """One line for people."""
    per_frame = board.get("alloc_bytes_per_frame")
    alloc = "?" if per_frame is None else f"{per_frame:g}"
    return (f"board: {alloc} bytes allocated per frame, {board['gc_collections']} collections, "
            f"longest loop pass {board['loop_ms_max']:g} ms, {board['mic_frames_dropped']} mic frames dropped, "
            f"heap free at least {board['heap_free_min']} of {board['heap_bytes']} bytes "
            f"({board['seconds']:g} s, {board['frames']} frames)")
