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


def word_alignment(reference: Sequence[str], hypothesis: Sequence[str]) -> list[tuple[int | None, int | None]]:
    """A minimum-edit alignment of two word lists: (reference index, hypothesis index) pairs in
    order; None on one side is a deletion (reference word unheard) or an insertion."""
    n, m = len(reference), len(hypothesis)
    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        cost[i][0] = i
    for j in range(m + 1):
        cost[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(cost[i - 1][j] + 1, cost[i][j - 1] + 1, cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]))
    pairs: list[tuple[int | None, int | None]] = []
    i, j = n, m
    while i or j:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
            i, j = i - 1, j - 1
            pairs.append((i, j))
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            i -= 1
            pairs.append((i, None))
        else:
            j -= 1
            pairs.append((None, j))
    return pairs[::-1]


def word_errors(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """Substitutions + deletions + insertions turning `reference` into `hypothesis` (the
    numerator of the word error rate; the denominator is len(reference))."""
    return sum(r is None or h is None or reference[r] != hypothesis[h] for r, h in word_alignment(reference, hypothesis))
