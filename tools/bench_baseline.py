#!/usr/bin/env python3
"""Run memory scripts through the seed-article baseline on the embedded models.

    .venv/bin/python tools/bench_baseline.py [SCRIPT.json ...] [--llm PATH] [--voice PATH]

Prints one JSON object per turn, then a summary line with first_audio_ms_p50
(first audio = final words -> the whole reply synthesised). Default scripts:
../shared/eval/airport_en.json and restaurant_en.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host"))

import sotto  # noqa: E402,F401  (offline environment before engines load)
from sotto.errors import SottoError  # noqa: E402

DEFAULT_SCRIPTS = [ROOT.parent / "shared" / "eval" / "airport_en.json", ROOT.parent / "shared" / "eval" / "restaurant_en.json"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scripts", nargs="*", type=Path, help="memory scripts (sotto eval format)")
    parser.add_argument("--llm", default=None, help="GGUF path or name (default: resolution order)")
    parser.add_argument("--voice", default=None, help="Piper voice .onnx path or name (default: resolution order)")
    args = parser.parse_args(argv)
    try:
        from sotto.baseline import run_baseline
        from sotto.engines import llm, tts
        from sotto.models.resolve import resolve_llm, resolve_voice

        scripts = args.scripts or DEFAULT_SCRIPTS
        language_model = llm.load(resolve_llm(args.llm).path)
        voice = tts.load(resolve_voice(args.voice, lang="en").path)
        result = run_baseline(scripts, llm=language_model, tts=voice, on_turn=lambda r: print(json.dumps(r, ensure_ascii=False), flush=True))
        print(json.dumps(result.summary, ensure_ascii=False))
    except SottoError as exc:
        print(f"error[{exc.code}]: {exc}", file=sys.stderr)
        return exc.exit_status
    return 0


if __name__ == "__main__":
    sys.exit(main())
