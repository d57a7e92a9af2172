"""A learned last word on a new value the rules would only add: does it replace a stored one?

The rules in `update.py` decide most values. When none of them fires, a new value is added
beside the old ones, which is how most missed corrections look ("so we'll be printing
twenty-two", "Eighty-eight for me"). Here a logistic model scores each stored candidate of
a compatible kind from what the reader saw (same kind, shared key words, cues of change,
a reason, an admission, how recent, how close the amounts are, ...) and the best one is
replaced when its score clears the threshold.

The weights are learned from our own tuning conversations (`tools/train_replace_model.py`
writes `replace_model.json`; the features are defined once, here). No phrase is listed:
the model only weighs the reader's signals. Without the weights file the rules stand alone.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME, Item
from sotto.memory.statements import Statement, Value, content_stems, is_role_word, unit_key

MODEL_PATH = Path(__file__).with_name("replace_model.json")
_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_NAME, KIND_PLACE, KIND_ITEM)
_REASON = re.compile(r"\b(?:so|because|since|'cause|cos|then)\b|因为|所以|不然|怕|那就|那", re.I)


@dataclass
class Pair:
    """What the features see: a new value, one stored candidate, and their surroundings."""

    value: Value
    stored: Item
    statement: Statement
    candidates: list[Item]
    turn: int
    amount: Callable[[str], float | None]
    shape: Callable[[str], str]
    unit: Callable[[Item], str]


def features(p: Pair) -> list[float]:
    v, s, st = p.value, p.stored, p.statement
    same_kind = [c for c in p.candidates if c.kind == v.kind]
    latest_same = max(same_kind, key=lambda c: (c.turn, p.candidates.index(c))) if same_kind else None
    own = content_stems(v.key) | content_stems(v.context)
    keys = content_stems(s.key)
    key_overlap = len(keys & own)
    frame_overlap = len(keys & st.frame_keys)
    named = bool(content_stems(s.value) & content_stems(st.text))
    a, b = p.amount(s.value), p.amount(v.text)
    closeness = math.exp(-abs(math.log(a / b))) if a and b and a > 0 and b > 0 else 0.0
    news_same = sum(1 for o in st.values if not o.negated and o.kind == v.kind)
    reason = _REASON.search(st.raw or st.text) is not None
    bare = len([o for o in st.values if not o.negated]) == 1 and len(st.frame_keys) <= 2
    is_same = float(s.kind == v.kind)
    is_latest = float(s is latest_same)
    only_one = float(len(same_kind) == 1 and s.kind == v.kind)
    cues = [float(st.change_cue), float(st.strong_cue), float(st.admission), float(reason), float(bare), float(v.cue), float(st.proposal)]
    base = [
        is_same,
        min(key_overlap, 3) / 3,
        min(frame_overlap, 3) / 3,
        float(named),
        float(st.additive),
        float(any(o.negated for o in st.values)),
        1.0 / max(1, len(same_kind)),
        is_latest,
        only_one,
        1.0 / (1 + max(0, p.turn - s.turn)),
        float(s.turn == p.turn),
        float(bool(v.key)),
        float(news_same == 1),
        closeness,
        float(s.kind == KIND_QUANTITY and v.unit != "" and p.unit(s) == unit_key(v.unit, st.lang)),
        float(p.shape(s.value) == p.shape(v.text)),
        float(st.lang == "zh"),
        float(bool(v.qualifiers)),
        float(is_role_word(s.value)),
        float(v.weak),
        float(st.question),
    ]
    kinds = [float(v.kind == k) for k in _KINDS]
    crossed = [c * x for c in cues for x in (is_same, is_latest, only_one, float(key_overlap > 0), closeness)]
    kind_crossed = [k * x for k in kinds for x in (is_latest, float(key_overlap > 0), only_one)]
    return base + cues + kinds + crossed + kind_crossed


@dataclass
class ReplaceModel:
    weights: list[float]
    bias: float
    threshold: float

    def score(self, row: list[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, row))
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@functools.lru_cache(maxsize=1)
def load(path: Path = MODEL_PATH) -> ReplaceModel | None:
    """The trained weights, or None when there are none (the rules then stand alone)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        model = ReplaceModel(weights=[float(w) for w in data["weights"]], bias=float(data["bias"]), threshold=float(data["threshold"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return model


# Training records what the rules left to an add, instead of deciding (see tools/train_replace_model.py).
RECORDER: list[tuple[list[float], str, str]] | None = None


def replaced_by_model(pairs: list[Pair]) -> Item | None:
    """The stored item the new value replaces, when the model is sure enough; else None."""
    if not pairs:
        return None
    rows = [features(p) for p in pairs]
    if RECORDER is not None:
        RECORDER.extend((row, p.value.text, p.stored.value) for row, p in zip(rows, pairs))
        return None
    model = load(MODEL_PATH)
    if model is None or len(model.weights) != len(rows[0]):
        return None
    scored = [(model.score(row), i) for i, row in enumerate(rows)]
    best, index = max(scored)
    return pairs[index].stored if best >= model.threshold else None
