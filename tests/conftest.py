"""Shared pytest set-up.

Tests marked `realtime` pace a real pty: the simulated board speaks to the host over a
pseudo-terminal at a real baud rate, on a 2-core machine shared with whatever else runs.
A starved scheduler can shift that audio timing enough to fail one run; such a test gets
two more tries, and still fails when the behaviour is really broken (every try fails).
Everything else that is about timing (the ladder, barge-in, late answers, the echo gate)
runs on simulated time (tests/fakes_clock.py) and gets no retry.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("realtime") is not None:
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=1))
