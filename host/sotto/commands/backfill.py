"""`sotto backfill [--json] [--errors FILE] [--near-misses FILE] [--show]`.

Runs the entity corrector over the homophone-error set and the near-miss set (the shipped
ones by default) and prints: errors corrected / injected, and correct words changed on
each set. With --json: one object per item (with --show), then one summary line.
Exit status 0 whatever the figures: this is a measurement, not a gate (the tests gate).
"""

from __future__ import annotations

import argparse
import json

from sotto.backfill.evaluate import BackfillReport, ItemResult, run_backfill


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--errors", metavar="FILE", help="transcripts with injected homophone errors (default: shipped set)")
    parser.add_argument("--near-misses", metavar="FILE", help="transcripts that must stay unchanged (default: shipped set)")
    parser.add_argument("--show", action="store_true", help="also list every item that did not come out as expected")


def _missed(item: ItemResult) -> bool:
    return item.errors_corrected < item.errors_injected or item.correct_words_changed > 0


def run(args: argparse.Namespace) -> int:
    report: BackfillReport = run_backfill(args.errors, args.near_misses)
    misses = [r for r in report.errors.results + report.near_misses.results if _missed(r)] if args.show else []
    if args.json:
        for r in misses:
            print(json.dumps({"id": r.id, "heard": r.heard, "expected": r.expected, "output": r.output,
                              "errors_injected": r.errors_injected, "errors_corrected": r.errors_corrected,
                              "correct_words_changed": r.correct_words_changed}, ensure_ascii=False))
        print(json.dumps({"summary": True, **report.summary()}, ensure_ascii=False))
        return 0
    s = report.summary()
    for r in misses:
        print(f"  {r.id}: {r.heard!r} -> {r.output!r} (expected {r.expected!r})")
    print(f"homophone errors: {s['errors_corrected']}/{s['errors_injected']} corrected "
          f"({s['correction_rate']:.1%}) over {s['error_items']} transcripts; target >= 90%")
    print(f"near misses: {s['near_miss_words_changed']} correct words changed over {s['near_miss_items']} transcripts; target 0")
    print(f"error set: {s['error_set_words_changed']} correct words changed")
    return 0
