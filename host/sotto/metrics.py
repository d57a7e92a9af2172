"""One definition of a percentile for every figure sotto reports.

Linear interpolation between closest ranks (numpy's default), so p50 is the median and
figures from the demo, eval, the baseline, the benches and `sotto stats` compare.
"""

from __future__ import annotations

from typing import Sequence


def percentile(values: Sequence[float], q: float, *, digits: int | None = 1) -> float | None:
    """The q-th percentile (q in 0..100) of values, rounded to `digits`; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * min(100.0, max(0.0, q)) / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    value = ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)
    return value if digits is None else round(value, digits)


def word_errors(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Substitutions + deletions + insertions turning `reference` into `hypothesis` (the
    numerator of the word error rate; the denominator is len(reference))."""
    previous = list(range(len(hypothesis) + 1))
    for i, ref in enumerate(reference, 1):
        current = [i] + [0] * len(hypothesis)
        for j, hyp in enumerate(hypothesis, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ref != hyp))
        previous = current
    return previous[-1]
