#!/usr/bin/env python3
"""Fit the weights of `sotto.memory.replace_model` on memory scripts (the tuning sets).

    python tools/fit_replace_model.py eval/memory/tune eval/memory/tune2 ... [--write] [--folds N]

Every script is read turn by turn with the update rules alone (the model answers "add" while
collecting). Each new value the rules left unplaced gives one row per stored value of a
compatible kind, labelled by the script: 1 when that turn forgets the stored value, 0 when the
script still expects it, -1 (left out of the fit) when nobody expects it. A logistic regression
(L2) is fitted on the labelled rows; the threshold and the margin (how far the best must lead
the next candidate) are chosen by the corrections they gain net of wrong replacements (a wrong
one costs --cost right ones), judged on held-out folds of whole scripts (summed over --repeats
splits into folds): among the settings within 1% of the best, the smallest margin and the
middle threshold (`near_best`). With --trees N, N small regression trees are grown on the
logistic loss after the regression (gradient boosting): they weigh features together, which a sum
of weights cannot. With --write the weights go to host/sotto/memory/replace_weights.json.
"""

from __future__ import annotations

import argparse
import glob
from dataclasses import dataclass
from typing import Any, Callable
import random
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host"))

from sotto.memory import replace_model, update  # noqa: E402
from sotto.memory.items import Item  # noqa: E402
from sotto.memory.statements import Value  # noqa: E402
from sotto.memory.evaluation import Script, load_script  # noqa: E402
from sotto.memory.rules import extract  # noqa: E402
from sotto.memory.state import SessionState  # noqa: E402



@dataclass(frozen=True)
class Row:
    script: str
    group: str  # one new value: its rows compete for it
    features: dict[str, float]
    label: int  # 1: the script forgets the stored value; 0: it still expects it; -1: no matter
    said: str  # "new <- old [old key]", for --show


def _said(alternatives: list[str], text: str) -> bool:
    low = text.lower()
    return any(a.lower() in low or (len(low) >= 2 and low in a.lower()) for a in alternatives)


def collect(script: Script) -> list[Row]:
    """One row per (new value the rules left unplaced, stored value of a compatible kind)."""
    rows: list[Row] = []
    state = SessionState(session_id="fit")
    lang = script.lang or "en"
    alive: list[list[str]] = []  # remember items still expected
    asked: list[list[tuple[str, str, str, dict[str, float]]]] = []  # per new value: (new, old, old key, features)
    pending: list[tuple[str, str, str, dict[str, float]]] = []

    def features(v: Value, s: Item, *args: Any) -> dict[str, float]:
        row = original(v, s, *args)
        pending.append((v.text, s.value, s.key, row))
        return row

    def answer(rows: list[dict[str, float]]) -> int | None:
        asked.append(pending[-len(rows):] if rows else [])
        return None  # collect what the rules alone do: the model adds

    original = update.replace_features
    original_choose = replace_model.choose
    update.replace_features = features  # type: ignore[assignment]
    replace_model.choose = answer  # type: ignore[assignment]
    try:
        for number, step in enumerate(script.turns, 1):
            alive = [a for a in alive if not any(set(a) & set(f) for f in step.forget)] + list(step.remember)
            asked.clear()
            state = extract(step.user, state, lang=lang, turn=number).state or state
            for index, group in enumerate(asked):
                for new, old, old_key, row in group:
                    if any(_said(alts, old) for alts in step.forget):
                        label = 1
                    elif any(_said(alts, old) for alts in alive):
                        label = 0  # a value the user still means: replacing it loses it
                    else:
                        label = -1  # a value nobody expects (a misread word): replacing it costs nothing
                    rows.append(Row(script.name, f"{script.name}#{number}.{index}", row, label, f"{new} <- {old} [{old_key}]"))
    finally:
        update.replace_features = original  # type: ignore[assignment]
        replace_model.choose = original_choose  # type: ignore[assignment]
    return rows


def fit(x: np.ndarray, y: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(60):  # Newton steps
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g_w = x.T @ (p - y) + l2 * w
        g_b = float(np.sum(p - y))
        s = p * (1 - p)
        xb = np.hstack([x, np.ones((x.shape[0], 1))])
        h = xb.T @ (xb * s[:, None]) + np.diag(np.r_[np.full(x.shape[1], l2), 1e-6])
        step = np.linalg.solve(h, np.r_[g_w, g_b])
        w -= step[:-1]
        b -= float(step[-1])
        if np.max(np.abs(step)) < 1e-8:
            break
    return w, b


def net_gain(groups: dict[str, list[tuple[float, int, int]]], threshold: float, margin: float = 0.0) -> tuple[int, int]:
    """Right and wrong replacements when the best-scored row of each group is replaced: at or above
    the threshold, and at least `margin` ahead of the group's next row."""
    right = wrong = 0
    for rows in groups.values():
        ranked = sorted(rows, reverse=True)
        score, label, _ = ranked[0]
        if score >= threshold and (len(ranked) == 1 or score - ranked[1][0] >= margin):
            if label == 1:
                right += 1
            elif label == 0:
                wrong += 1
    return right, wrong


@dataclass(frozen=True)
class Boosting:
    """How the trees grow: how many, how deep, how much each adds (its rate), the fewest rows a
    leaf holds, and the share of rows each tree sees (a seeded draw: refits are reproducible)."""

    trees: int = 0
    depth: int = 3
    rate: float = 0.05
    min_leaf: int = 10
    subsample: float = 0.8


@dataclass(frozen=True)
class Fitted:
    weights: np.ndarray
    bias: float
    trees: tuple[replace_model.Tree, ...]  # features named by column index, as strings

    def scores(self, x: np.ndarray) -> np.ndarray:
        z = x @ self.weights + self.bias
        for tree in self.trees:
            z = z + _tree_values(tree, x)
        return np.asarray(1 / (1 + np.exp(-z)))

    def model(self, names: list[str], threshold: float, margin: float = 0.0) -> replace_model.ReplaceModel:
        trees = tuple(replace_model.Tree(feature=tuple(names[int(f)] if f else "" for f in t.feature), threshold=tuple(round(v, 6) for v in t.threshold),
                                         left=t.left, right=t.right, value=tuple(round(v, 6) for v in t.value)) for t in self.trees)
        return replace_model.ReplaceModel(weights={n: round(float(v), 4) for n, v in zip(names, self.weights)}, bias=round(self.bias, 4),
                                          threshold=threshold, margin=margin, trees=trees)


def _tree_values(tree: replace_model.Tree, x: np.ndarray) -> np.ndarray:
    node = np.zeros(len(x), dtype=int)
    for _ in range(len(tree.feature)):
        inner = np.array([bool(tree.feature[i]) for i in node])
        if not inner.any():
            break
        for i in set(node[inner].tolist()):
            at = node == i
            go_left = x[at, int(tree.feature[i])] <= tree.threshold[i]
            node[at] = np.where(go_left, tree.left[i], tree.right[i])
    return np.array([tree.value[i] for i in node])


def fit_model(x: np.ndarray, y: np.ndarray, l2: float, boosting: Boosting) -> Fitted:
    """The regression, then `boosting.trees` trees each fitted to what the sum so far gets wrong
    (Friedman's gradient boosting: least squares on the residual, a Newton step in each leaf)."""
    w, b = fit(x, y, l2)
    trees: list[replace_model.Tree] = []
    if boosting.trees:
        cuts = [np.unique(x[:, j])[:-1] for j in range(x.shape[1])]  # "<= cut" splits between the values seen
        cuts = [c if len(c) <= 32 else np.unique(np.quantile(x[:, j], np.linspace(0, 1, 33)[1:-1])) for j, c in enumerate(cuts)]
        binned = np.stack([np.searchsorted(c, x[:, j], side="left") for j, c in enumerate(cuts)], axis=1)
        rng = np.random.default_rng(2026)
        z = x @ w + b
        for _ in range(boosting.trees):
            p = 1 / (1 + np.exp(-z))
            rows = np.flatnonzero(rng.random(len(y)) < boosting.subsample)
            tree = _grow(rows, y - p, p * (1 - p), binned, cuts, boosting)
            trees.append(tree)
            z = z + _tree_values(tree, x)
    return Fitted(w, b, tuple(trees))


def _grow(rows: np.ndarray, residual: np.ndarray, hessian: np.ndarray, binned: np.ndarray, cuts: list[np.ndarray], boosting: Boosting) -> replace_model.Tree:
    feature: list[str] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []

    def node(at: np.ndarray, depth: int) -> int:
        index = len(feature)
        feature.append(""); threshold.append(0.0); left.append(0); right.append(0)
        value.append(boosting.rate * float(residual[at].sum() / max(hessian[at].sum(), 1e-9)))
        best = _best_split(at, residual, binned, boosting.min_leaf) if depth < boosting.depth else None
        if best is not None:
            column, bin_ = best
            goes_left = binned[at, column] <= bin_
            feature[index], threshold[index] = str(column), float(cuts[column][bin_])
            left[index] = node(at[goes_left], depth + 1)
            right[index] = node(at[~goes_left], depth + 1)
        return index

    node(rows, 0)
    return replace_model.Tree(tuple(feature), tuple(threshold), tuple(left), tuple(right), tuple(value))


def _best_split(at: np.ndarray, residual: np.ndarray, binned: np.ndarray, min_leaf: int) -> tuple[int, int] | None:
    """The (column, bin) whose split of the rows `at` lowers the squared error of the residual most."""
    r = residual[at]
    total, count = r.sum(), len(at)
    best, best_gain = None, 1e-12
    for column in range(binned.shape[1]):
        b = binned[at, column]
        bins = int(b.max()) + 1
        if bins < 2:
            continue
        n_left = np.cumsum(np.bincount(b, minlength=bins))[:-1]
        r_left = np.cumsum(np.bincount(b, weights=r, minlength=bins))[:-1]
        ok = (n_left >= min_leaf) & (count - n_left >= min_leaf)
        if not ok.any():
            continue
        gain = r_left ** 2 / np.maximum(n_left, 1) + (total - r_left) ** 2 / np.maximum(count - n_left, 1) - total ** 2 / count
        gain[~ok] = -np.inf
        k = int(np.argmax(gain))
        if gain[k] > best_gain:
            best, best_gain = (column, k), float(gain[k])
    return best


def held_out_scores(scripts: list[str], x: np.ndarray, y: np.ndarray, fit_on: np.ndarray, folds: int, repeats: int, l2: float,
                    boosting: Boosting = Boosting()) -> list[np.ndarray]:
    """Each row's score by a model fitted without its script's fold, for each of `repeats` splits
    of the scripts into `folds` (one split's best threshold is partly luck of which scripts fell
    together). `scripts[i]` is row i's script; only rows where `fit_on` is true are fitted on."""
    names = sorted(set(scripts))
    out: list[np.ndarray] = []
    for repeat in range(repeats):
        order = list(names)
        random.Random(2026 + repeat).shuffle(order)
        fold_of = {s: i % folds for i, s in enumerate(order)}
        fold = np.array([fold_of[s] for s in scripts])
        scores = np.zeros(len(scripts))
        for k in range(folds):
            fitted = fit_model(x[(fold != k) & fit_on], y[(fold != k) & fit_on], l2, boosting)
            held = fold == k
            scores[held] = fitted.scores(x[held])
        out.append(scores)
    return out


def near_best(gains: dict[tuple[float, float], float], within: float = 0.01) -> tuple[float, float]:
    """The (threshold, margin) to ship: among the settings whose held-out gain is within `within` of
    the best, the smallest margin, and the middle one of its thresholds. The gain is flat near its
    top, so the very best is partly luck of the splits; the middle of the plateau is steadier."""
    top = max(gains.values())
    near = [key for key, gain in gains.items() if gain >= top - abs(top) * within]
    margin = min(m for _, m in near)
    thresholds = sorted(t for t, m in near if m == margin)
    return thresholds[len(thresholds) // 2], margin


def fit_arguments(cost_help: str, boosting: Boosting = Boosting()) -> argparse.ArgumentParser:
    """The options every fit tool takes: the script folders, the folds, the cost of a wrong answer."""
    parser = argparse.ArgumentParser()
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=20, help="splits into folds the threshold is chosen over")
    parser.add_argument("--show", type=float, default=None, metavar="THRESHOLD", help="print the held-out misses and wrong ones at this threshold")
    parser.add_argument("--cost", type=float, default=3.0, help=cost_help)
    parser.add_argument("--trees", type=int, default=boosting.trees, help="trees grown after the regression (0: the regression alone)")
    parser.add_argument("--depth", type=int, default=boosting.depth)
    parser.add_argument("--rate", type=float, default=boosting.rate)
    parser.add_argument("--min-leaf", type=int, default=boosting.min_leaf)
    return parser


def boosting_of(args: argparse.Namespace) -> Boosting:
    return Boosting(trees=args.trees, depth=args.depth, rate=args.rate, min_leaf=args.min_leaf)


def labelled_rows(dirs: list[str], collect: Callable[[Script], list[Any]]) -> tuple[list[Any], list[str], np.ndarray, np.ndarray]:
    """The rows of every script in `dirs`, their feature names, matrix and 0/1 labels (-1 counts as 0)."""
    rows: list[Any] = []
    for d in dirs:
        for path in sorted(glob.glob(f"{d}/*.json")):
            rows += collect(load_script(path))
    names = sorted(rows[0].features)
    x = np.array([[r.features[n] for n in names] for r in rows])
    y = np.array([max(0, r.label) for r in rows], dtype=float)
    return rows, names, x, y


def main() -> int:
    parser = fit_arguments("a wrong replacement costs this many right ones: it loses a value the user still means for the rest of the talk", Boosting(trees=100))
    args = parser.parse_args()
    rows, names, x, y = labelled_rows(args.dirs, collect)
    known = np.array([r.label >= 0 for r in rows])
    print(f"{len(rows)} rows, {int(y.sum())} positive, {int(known.sum() - y.sum())} negative, {len({r.group for r in rows})} new values, {len({r.script for r in rows})} scripts")
    # The threshold and margin chosen are the best summed over several splits into folds.
    splits: list[dict[str, list[tuple[float, int, int]]]] = []
    for scores in held_out_scores([r.script for r in rows], x, y, known, args.folds, args.repeats, args.l2, boosting_of(args)):
        split: dict[str, list[tuple[float, int, int]]] = {}  # group -> (held-out score, label, row index)
        for i, r in enumerate(rows):
            split.setdefault(r.group, []).append((float(scores[i]), r.label, i))
        splits.append(split)
    held = splits[0]
    threshold_shown = args.show
    if threshold_shown is not None:
        for scored in held.values():
            top = max(scored)
            for score, label, i in scored:
                if (label == 1 and score < threshold_shown) or (label == 0 and score >= threshold_shown and (score, label, i) == top):
                    print(f"{'MISS' if label else 'WRONG'} {score:.2f} {rows[i].said}")
    threshold, margin = near_best(
        {(t / 100, margin): sum(right - args.cost * wrong for right, wrong in (net_gain(split, t / 100, margin) for split in splits))
         for margin in (0.0, 0.1, 0.2, 0.3, 0.4) for t in range(20, 96)})
    right, wrong = (sum(counts) for counts in zip(*(net_gain(split, threshold, margin) for split in splits)))
    print(f"held-out folds ({args.repeats} splits): threshold {threshold:.2f}, margin {margin:.1f}: {right} right, {wrong} wrong replacements")
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        print(f"   at {t}: right, wrong = {net_gain(held, t, margin)}")
    model = fit_model(x[known], y[known], args.l2, boosting_of(args)).model(names, threshold, margin)
    show_and_write(model, replace_model.WEIGHTS_FILE, args.write)
    return 0


def show_and_write(model: replace_model.ReplaceModel, path: Path, write: bool) -> None:
    """Print the weights, largest first, and write them to `path` when asked."""
    for n, v in sorted(model.weights.items(), key=lambda kv: -abs(kv[1])):
        print(f"   {n:18s} {v:+.3f}")
    if write:
        path.write_text(model.to_json(), encoding="utf-8")
        print("wrote", path)


if __name__ == "__main__":
    raise SystemExit(main())
