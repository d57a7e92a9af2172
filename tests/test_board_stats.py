"""The board's own loop reports (`stats ...` LOG lines): parsing and the `board` summary."""

from __future__ import annotations

import pytest

from sotto.link import messages as m
from sotto.link.board_stats import BoardStatsCollector, describe, parse_report, summarize_reports

LINE = "stats ms=1000 frames=93 alloc=0 gc=0 loop_us=812 mic_drop=1 heap_free=16672 heap=161920"


def test_a_report_line_is_parsed() -> None:
    r = parse_report(LINE, 10.0)
    assert r is not None
    assert (r.ms, r.frames, r.alloc, r.gc, r.loop_us, r.mic_drop, r.heap_free, r.heap) == \
        (1000, 93, 0, 0, 812, 1, 16672, 161920)
    assert r.started_at == 9.0


def test_other_and_broken_lines_are_not_reports() -> None:
    assert parse_report("bench rx=1 bad=0", 0.0) is None
    assert parse_report("stats ms=1000 frames=3", 0.0) is None  # fields missing
    assert parse_report(LINE.replace("ms=1000", "ms=0"), 0.0) is None
    assert parse_report("host silent: HELLO again", 0.0) is None


def test_summary_counts_allocation_only_where_no_collection_hid_it() -> None:
    reports = [parse_report(LINE.replace("alloc=0", "alloc=200").replace("frames=93", "frames=100"), 1.0),
               parse_report(LINE.replace("alloc=0 gc=0", "alloc=-1 gc=1").replace("loop_us=812", "loop_us=4100"), 2.0),
               parse_report(LINE.replace("heap_free=16672", "heap_free=9000"), 3.0)]
    board = summarize_reports([r for r in reports if r is not None])
    assert board is not None
    assert board["alloc_bytes_per_frame"] == round(200 / 193, 2)  # the collection's period is left out
    assert board["gc_collections"] == 1
    assert board["loop_ms_max"] == 4.1
    assert board["mic_frames_dropped"] == 3
    assert board["heap_free_min"] == 9000
    assert "1 collections" in describe(board)


def test_collector_keeps_steady_state_only() -> None:
    c = BoardStatsCollector()
    for t in (1.0, 2.0, 3.0, 4.0, 5.0):
        alloc = "alloc=96" if t == 4.0 else "alloc=0"
        c.on_message(m.Log(10, LINE.replace("alloc=0", alloc)), t)
    c.on_message(m.Log(20, "something else"), 5.5)
    assert len(c.reports) == 5
    everything = c.summary()
    assert everything is not None and everything["alloc_bytes"] == 96
    # After the first second, and not the second after a command at t=3.2.
    steady = c.summary(since=1.0, skip=((3.2, 4.2),))
    assert steady is not None and steady["alloc_bytes"] == 0 and steady["seconds"] == 2.0
    assert c.summary(since=100.0) is None


def test_runtime_options_are_for_the_simulated_board(capsys: pytest.CaptureFixture[str]) -> None:
    from sotto.cli import main

    assert main(["bench", "link", "--port", "/dev/null", "--runtime", "micropython"]) != 0
    assert "--runtime and --board are for the simulated board" in capsys.readouterr().err
    assert main(["sim", "--heap", "100000"]) != 0
    assert "--heap is for --runtime micropython" in capsys.readouterr().err


def test_a_heap_too_small_for_the_firmware_is_refused() -> None:
    from sotto.sim import SimulatedBoard
    from sotto.sim.board import SimError

    with pytest.raises(SimError, match="too small"):
        SimulatedBoard(runtime="micropython", heap_bytes=16 * 1024)
    with pytest.raises(SimError, match="unknown runtime"):
        SimulatedBoard(runtime="jython")
