"""How the confirmation threshold (AgentConfig.confirm_below) was chosen.

Run the tuning scripts through speech with every candidate value asked back, then read
the per-turn lines: each question carries the value's lowest word confidence and the
simulated user's answer ("Yes." when the recognised value was what the script said).

    sotto eval eval/memory/tune*/*_en.json --speech --json --confirm-below 1.01 > tune.jsonl
    python tools/confirm_threshold.py tune.jsonl

For each threshold: how many values would be asked back, how many of those were
misrecognised (a question that helps) and how many were right (a question that only
costs a turn, and risks the answer being misheard).
"""

from __future__ import annotations

import json
import sys

THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)


def main(path: str) -> int:
    asked: list[tuple[float, bool]] = []  # (confidence, the recognised value was wrong)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            turn = json.loads(line)
            confirm = turn.get("confirm")
            if isinstance(confirm, dict):
                asked.append((float(confirm["confidence"]), confirm["said"] not in ("Yes.", "对。")))
    wrong_total = sum(wrong for _, wrong in asked)
    print(f"{len(asked)} values asked at 1.01, {wrong_total} of them misrecognised")
    print("below  asked  wrong  right  wrong_caught  precision")
    for below in THRESHOLDS:
        hits = [wrong for confidence, wrong in asked if confidence < below]
        wrong = sum(hits)
        print(f"{below:5.2f}  {len(hits):5d}  {wrong:5d}  {len(hits) - wrong:5d}  "
              f"{wrong / wrong_total if wrong_total else 0:12.2f}  {wrong / len(hits) if hits else 0:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
