#!/usr/bin/env python3
"""Fit the weights of `sotto.memory.rejected` on memory scripts (the tuning sets).

    python tools/fit_reject_model.py eval/memory/tune eval/memory/tune2 ... [--write] [--folds N]

Every script is read turn by turn with the update step as it is, the rejection step answering
"keep" while collecting. Each stored thing a turn says again gives one row, labelled by the
script: 1 when that turn forgets it (and no item still expected says it), else 0. A logistic
regression (L2) is fitted on the rows; the threshold is the one that gains most turned-down things
net of wrong ones (a wrong one costs --cost right ones: it loses what the user still means), judged
on held-out folds of whole scripts over --repeats splits. With --write the weights go to
host/sotto/memory/reject_weights.json. --trees grows boosted trees after the regression as the
replace fit does; here they were measured no better on held-out folds (seventeenth round: 244 right,
14 wrong against 256 and 8 over five splits), so the regression alone is the default.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_replace_model import boosting_of, fit_arguments, fit_model, held_out_scores, labelled_rows, near_best, net_gain, show_and_write  # noqa: E402
from sotto.memory import rejected  # noqa: E402
from sotto.memory.evaluation import Script  # noqa: E402
from sotto.memory.rules import extract  # noqa: E402
from sotto.memory.state import SessionState  # noqa: E402
from sotto.memory.statements import content_stems  # noqa: E402


@dataclass(frozen=True)
class Row:
    script: str
    features: dict[str, float]
    label: int  # 1: the script forgets the thing this turn; 0: an item still expected says it; -1: neither
    said: str  # the turn's words, for --show


def _names(alternatives: list[str], m: rejected.Mention, lang: str) -> bool:
    if lang == "zh":
        return any(m.said in a or (len(a) >= 2 and a in m.said) for a in alternatives)
    return any(content_stems(a) & m.keys for a in alternatives)


def collect(script: Script) -> list[Row]:
    rows: list[Row] = []
    lang = script.lang or "en"
    state = SessionState(session_id="fit")
    alive: list[list[str]] = []
    asked: list[tuple[list[rejected.Mention], list[dict[str, float]]]] = []

    def answer(found: list[rejected.Mention], features: list[dict[str, float]]) -> list[bool]:
        asked.append((found, features))
        return [False] * len(found)  # collect what the step sees when it keeps everything

    original = rejected.turned_down
    rejected.turned_down = answer  # type: ignore[assignment]
    try:
        for number, step in enumerate(script.turns, 1):
            alive = [a for a in alive if not any(set(a) & set(f) for f in step.forget)] + list(step.remember)
            asked.clear()
            state = extract(step.user, state, lang=lang, turn=number).state or state
            for found, features in asked:
                for m, row in zip(found, features):
                    meant = any(_names(a, m, lang) for a in alive)
                    gone = any(_names(f, m, lang) for f in step.forget) and not meant
                    rows.append(Row(script.name, row, 1 if gone else 0 if meant else -1, f"{m.said!r} in {step.user}"))
    finally:
        rejected.turned_down = original  # type: ignore[assignment]
    return rows


def main() -> int:
    parser = fit_arguments("a wrong rejection costs this many right ones: it loses a thing the user still means")
    parser.add_argument("--unexpected-cost", type=float, default=1.0,
                        help="what dropping a word nobody expects costs: no value the script tests, but words the user said")
    args = parser.parse_args()
    rows, names, x, y = labelled_rows(args.dirs, collect)
    # Trained on every row (a word nobody expects is still no thing to drop); judged, like the
    # replace step, by what the script expects: dropping a word nobody expects loses no value it tests.
    print(f"{len(rows)} rows, {int(y.sum())} turned down, {sum(r.label == 0 for r in rows)} still meant, {len({r.script for r in rows})} scripts")
    # Each row is its own group: every mention is turned down or kept on its own score.
    splits = [
        {str(i): [(float(scores[i]), r.label, i)] for i, r in enumerate(rows)}
        for scores in held_out_scores([r.script for r in rows], x, y, np.ones(len(rows), dtype=bool), args.folds, args.repeats, args.l2, boosting_of(args))
    ]
    if args.show is not None:
        for (score, label, i), in splits[0].values():
            if (label == 1 and score < args.show) or (label <= 0 and score >= args.show):
                print(f"{ {1: 'MISS', 0: 'WRONG', -1: 'UNEXPECTED'}[label]} {score:.2f} {rows[i].said}")

    def dropped(split: dict[str, list[tuple[float, int, int]]], t: float) -> int:
        return sum(1 for ((score, label, _),) in split.values() if label == -1 and score >= t)

    threshold, _ = near_best(
        {(t / 100, 0.0): sum(right - args.cost * wrong - args.unexpected_cost * dropped(split, t / 100) for split, (right, wrong) in ((split, net_gain(split, t / 100)) for split in splits))
         for t in range(20, 96)})
    right, wrong = (sum(counts) for counts in zip(*(net_gain(split, threshold) for split in splits)))
    unexpected = sum(dropped(split, threshold) for split in splits)
    print(f"held-out folds ({args.repeats} splits): threshold {threshold:.2f}: {right} right, {wrong} wrong, {unexpected} words nobody expects dropped")
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        print(f"   at {t}: right, wrong = {net_gain(splits[0], t)}")
    model = fit_model(x, y, args.l2, boosting_of(args)).model(names, threshold)
    show_and_write(model, rejected.WEIGHTS_FILE, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
