"""The one percentile every reported figure uses."""

from sotto.metrics import percentile


def test_p50_is_the_median_and_p95_interpolates() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0], 50) == 2.0
    assert percentile([float(v) for v in range(1, 21)], 95) == 19.1
    assert percentile([7.25], 95) == 7.2  # rounded to one decimal by default
    assert percentile([7.25], 95, digits=None) == 7.25


def test_no_values_is_none_and_q_is_clamped() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 9.0], 150) == 9.0
    assert percentile([1.0, 9.0], -5) == 1.0
