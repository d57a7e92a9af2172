"""Train the learned last word of the memory update (`sotto/memory/learned.py`).

    python tools/train_replace_model.py --train eval/memory/tune eval/memory/tune2 ... \
        --validate eval/memory/tune12 --out host/sotto/memory/replace_model.json

Only tuning conversations are used: the held-out sets are never read here. For every new value
the rules would only add, each stored candidate is one row: its features (defined in
`learned.py`) and a label, 1 when the turn's script says that candidate is forgotten and the new
value remembered. A logistic regression (L2, classes balanced) is fitted with numpy; the
threshold is the one that scores best on the validation sets (correction_accuracy plus
entity_retention, rules and model together), and is written beside the weights.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from sotto.memory import learned
from sotto.memory.evaluation import ScriptScorer, load_script
from sotto.memory.rules import extract
from sotto.memory.state import SessionState


def scripts(folders: list[str]) -> list[Path]:
    return sorted(p for f in folders for p in Path(f).glob("*.json"))


def matches(text: str, items: list[list[str]]) -> bool:
    low = text.lower()
    return any(alt.lower() in low or (len(low) >= 2 and low in alt.lower()) for item in items for alt in item)


def collect(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    rows: list[list[float]] = []
    labels: list[int] = []
    for path in paths:
        script = load_script(path)
        state = SessionState(session_id="train")
        for i, turn in enumerate(script.turns):
            learned.RECORDER = []
            try:
                result = extract(turn.user, state, turn=i + 1, lang=script.lang or None)
            finally:
                recorded, learned.RECORDER = learned.RECORDER, None
            for row, new, old in recorded:
                positive = bool(turn.forget) and matches(old, turn.forget) and matches(new, turn.remember)
                rows.append(row)
                labels.append(int(positive))
            assert result.state is not None
            state = result.state
    return np.array(rows, dtype=float), np.array(labels, dtype=float)


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 3000, rate: float = 0.5, balanced: bool = False) -> tuple[np.ndarray, float]:
    """Logistic regression by gradient descent (the classes weighted equally when `balanced`)."""
    w = np.zeros(x.shape[1])
    b = 0.0
    pos = max(1.0, y.sum())
    neg = max(1.0, len(y) - y.sum())
    weight = np.where(y > 0, len(y) / (2 * pos), len(y) / (2 * neg)) if balanced else np.ones(len(y))
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * weight
        w -= rate * (x.T @ g / len(y) + l2 * w / len(y))
        b -= rate * g.mean()
    return w, float(b)


def evaluate(paths: list[Path]) -> tuple[float, float]:
    ok = turns = present = checks = 0
    for path in paths:
        script = load_script(path)
        state = SessionState(session_id="eval")
        scorer = ScriptScorer(script)
        for i, turn in enumerate(script.turns):
            result = extract(turn.user, state, turn=i + 1, lang=script.lang or None)
            assert result.state is not None
            state = result.state
            scorer.observe(i, state.memory_view(), "")
        s = scorer.score
        ok, turns, present, checks = ok + s.corrections_ok, turns + s.correction_turns, present + s.retention_present, checks + s.retention_checks
    return ok / max(1, turns), present / max(1, checks)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", nargs="+", required=True)
    ap.add_argument("--validate", nargs="+", required=True)
    ap.add_argument("--out", default=str(learned.MODEL_PATH))
    args = ap.parse_args(argv)
    if any("heldout" in f for f in args.train + args.validate):
        print("held-out sets are never used for training or choosing the threshold", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists():
        out.unlink()  # rows are collected with the rules alone
    learned.load.cache_clear()
    x, y = collect(scripts(args.train))
    print(f"rows {len(y)}, positive {int(y.sum())}")
    w, b = fit(x, y)
    validate = scripts(args.validate)
    learned.load.cache_clear()
    base = evaluate(validate)
    print(f"rules alone on validation: corrections {base[0]:.3f}, retention {base[1]:.3f}")
    best: tuple[float, float] = (-1.0, 1.0)
    for threshold in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.98):
        out.write_text(json.dumps({"weights": w.tolist(), "bias": b, "threshold": threshold}), encoding="utf-8")
        learned.load.cache_clear()
        corrections, retention = evaluate(validate)
        print(f"threshold {threshold}: corrections {corrections:.3f}, retention {retention:.3f}")
        if corrections + retention > best[0] + 1e-9:
            best = (corrections + retention, threshold)
    meta = {"train": args.train, "validate": args.validate, "rows": int(len(y)), "positive": int(y.sum())}
    out.write_text(json.dumps({"weights": [round(float(v), 6) for v in w], "bias": round(b, 6), "threshold": best[1], "trained_on": meta}, indent=1) + "\n", encoding="utf-8")
    learned.load.cache_clear()
    print(f"chose threshold {best[1]}; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
