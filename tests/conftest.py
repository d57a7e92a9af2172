"""Shared pytest set-up.

Tests marked `realtime` run the simulated board, the serial link or the voice session
on the wall clock, on a 2-core machine shared with whatever else runs. A starved
scheduler can shift audio timing enough to fail one run; such a test gets two more
tries, and still fails when the behaviour is really broken (every try fails).
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("realtime") is not None:
            item.add_marker(pytest.mark.flaky(reruns=2, reruns_delay=1))
