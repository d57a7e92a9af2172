#!/usr/bin/env python3
"""sotto's eval path and the seed-article baseline, on the same scripts and engines, in one run.

    .venv/bin/python tools/bench_side_by_side.py [SCRIPT.json ...] [--json]

Default scripts: ../shared/eval/airport_en.json and restaurant_en.json. Prints both
first-audio medians and their ratio (target: sotto <= 30% of the baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host"))

import sotto  # noqa: E402,F401  (offline environment before engines load)
from sotto.errors import SottoError  # noqa: E402

DEFAULT_SCRIPTS = [ROOT.parent / "shared" / "eval" / "airport_en.json", ROOT.parent / "shared" / "eval" / "restaurant_en.json"]
TARGET_RATIO = 0.30


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scripts", nargs="*", type=Path)
    parser.add_argument("--json", action="store_true", help="one summary object on stdout")
    args = parser.parse_args(argv)
    try:
        from sotto.agent import Agent
        from sotto.baseline import run_baseline
        from sotto.commands.eval import run_scripts, summary
        from sotto.memory.evaluation import load_script
        from sotto.memory.store import Store
        from sotto.runtime import EngineOptions, load_engines

        paths = args.scripts or DEFAULT_SCRIPTS
        engines = load_engines(EngineOptions())
        scripts = [load_script(p) for p in paths]
        with tempfile.TemporaryDirectory(prefix="sotto-bench-") as tmp:
            store = Store(Path(tmp) / "bench.db")
            try:
                agent = Agent(engines.llm, store)
                synth = getattr(engines.tts, "synthesize_sentence", None)
                totals = run_scripts(scripts, agent, engines.tts, lambda line: None, synth_sentence=synth)
            finally:
                store.close()
        ours = summary(totals, len(scripts), engines.llm_file)
        base = run_baseline(paths, llm=engines.llm, tts=engines.tts).summary
        base_p50 = base.get("first_audio_ms_p50")
        ours_p50 = ours.get("first_answer_ms_p50")
        ratio = round(ours_p50 / base_p50, 3) if ours_p50 and base_p50 else None
        result = {
            "scripts": [p.name for p in paths],
            "sotto_first_answer_ms_p50": ours_p50,
            "baseline_first_audio_ms_p50": base_p50,
            "ratio": ratio,
            "target_ratio": TARGET_RATIO,
            "meets_target": ratio is not None and ratio <= TARGET_RATIO,
            "sotto": ours,
            "baseline": base,
            "llm": engines.llm_file,
            "tts": engines.tts_name,
        }
    except SottoError as exc:
        print(f"error[{exc.code}]: {exc}", file=sys.stderr)
        return exc.exit_status
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(f"sotto first_answer_ms_p50   {ours_p50} ms")
        print(f"baseline first_audio_ms_p50 {base_p50} ms")
        print(f"ratio {ratio} (target <= {TARGET_RATIO}) -> {'meets' if result['meets_target'] else 'misses'} the target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
