"""Which stored value a new one replaces when no rule of the update step decides it.

The update step's rules decide what they recognise; a new value they leave unplaced would be
added beside the stored ones. Here a logistic model, over features of the pair (new value,
stored value of a compatible kind) that `update.replace_features` computes, scores how likely
the stored value is the one the user changed. The score is a logistic one: of a weighted sum of
the features and, when the fit grew them, of small decision trees (gradient boosting: the trees
weigh features together, "said last turn" counts otherwise when the old value's words are said
again). Weights and trees are fitted on the tuning sets by `tools/fit_replace_model.py` and
written into `replace_weights.json` next to this module; they are data, not code, so a refit on
more conversations changes no line here.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar
from pathlib import Path

WEIGHTS_FILE = Path(__file__).with_name("replace_weights.json")
_N = TypeVar("_N", int, float)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Tree:
    """One regression tree of the boosted sum. Node i asks `features[feature[i]] <= threshold[i]`
    and goes to `left[i]` if so, else to `right[i]`; a node whose feature is "" is a leaf adding
    `value[i]` to the log-odds."""

    feature: tuple[str, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def __call__(self, features: dict[str, float]) -> float:
        i = 0
        for _ in range(len(self.feature)):  # a bound, not a loop count: a malformed tree cannot cycle
            name = self.feature[i]
            if not name:
                return self.value[i]
            i = self.left[i] if features.get(name, 0.0) <= self.threshold[i] else self.right[i]
        raise ValueError("tree without a leaf on its path")

    def to_dict(self) -> dict[str, list[object]]:
        return {"feature": list(self.feature), "threshold": list(self.threshold), "left": list(self.left), "right": list(self.right), "value": list(self.value)}

    @classmethod
    def from_dict(cls, data: dict[str, list[object]]) -> "Tree":
        tree = cls(feature=tuple(str(f) for f in data["feature"]), threshold=tuple(_number(t, float) for t in data["threshold"]),
                   left=tuple(_number(n, int) for n in data["left"]), right=tuple(_number(n, int) for n in data["right"]),
                   value=tuple(_number(v, float) for v in data["value"]))
        size = len(tree.feature)
        if not size or any(len(column) != size for column in (tree.threshold, tree.left, tree.right, tree.value)):
            raise ValueError("tree columns differ in length")
        if any(f and not (0 < left < size and 0 < right < size) for f, left, right in zip(tree.feature, tree.left, tree.right)):
            raise ValueError("tree node points outside the tree")
        return tree


def _number(x: object, kind: type[_N]) -> _N:
    """A number read from JSON as `kind` (a node index must be a whole number; true is no number)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or (kind is int and x != int(x)):
        raise ValueError(f"not a {kind.__name__}: {x!r}")
    return kind(x)


@dataclass(frozen=True)
class ReplaceModel:
    weights: dict[str, float]
    bias: float
    threshold: float  # the lowest score at which the likeliest stored value is replaced
    margin: float = 0.0  # how far ahead of the next one it must be: two nearly as likely is a guess
    trees: tuple[Tree, ...] = ()

    def score(self, features: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(name, 0.0) * value for name, value in features.items())
        z += sum(tree(features) for tree in self.trees)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def choose(self, rows: list[dict[str, float]]) -> int | None:
        """The index of the row to replace, or None to add the new value beside them."""
        if not rows:
            return None
        scores = [self.score(r) for r in rows]
        best = max(range(len(rows)), key=lambda i: scores[i])
        runner_up = max((scores[i] for i in range(len(rows)) if i != best), default=0.0)
        return best if scores[best] >= self.threshold and scores[best] - runner_up >= self.margin else None

    def to_json(self) -> str:
        text = json.dumps({"bias": self.bias, "margin": self.margin, "threshold": self.threshold, "weights": self.weights}, indent=1, sort_keys=True)
        if self.trees:  # one line per tree: the weights stay readable, a refit's diff stays short
            trees = ",\n".join("  " + json.dumps(tree.to_dict(), separators=(",", ":")) for tree in self.trees)
            text = text[: -len("\n}")] + ',\n "trees": [\n' + trees + "\n ]\n}"
        return text + "\n"

    @classmethod
    def from_json(cls, text: str) -> "ReplaceModel":
        data = json.loads(text)
        return cls(weights={str(k): float(v) for k, v in data["weights"].items()}, bias=float(data["bias"]), threshold=float(data["threshold"]),
                   margin=float(data.get("margin", 0.0)), trees=tuple(Tree.from_dict(t) for t in data.get("trees", [])))


# Without fitted weights nothing is replaced by this step (threshold above any score).
NO_MODEL = ReplaceModel(weights={}, bias=0.0, threshold=2.0)


def load_weights(path: Path, fallback: ReplaceModel, without: str) -> ReplaceModel:
    """Weights fitted into `path`; without readable ones, `fallback` (and a warning saying `without`)."""
    try:
        return ReplaceModel.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        log.warning("memory: no usable weights in %s (%s: %s); %s", path, type(e).__name__, e, without)
        return fallback


@lru_cache(maxsize=1)
def load() -> ReplaceModel:
    """The shipped weights; without readable ones the update step runs on its rules alone (and says so once)."""
    return load_weights(WEIGHTS_FILE, NO_MODEL, "new values no rule places are added")


def choose(rows: list[dict[str, float]]) -> int | None:
    return load().choose(rows)


def score(features: dict[str, float]) -> float:
    return load().score(features)
