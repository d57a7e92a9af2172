"""How the pocketsphinx decoder settings (sotto.engines.sphinx_asr.DECODER_SETTINGS) were chosen.

Each candidate runs `sotto eval --speech --json` on the speech tuning scripts in a process of its
own, with the candidate in place of DECODER_SETTINGS; its summary line gets the candidate's name,
settings and the recognizers' real-time factor (decoding time over audio time, silences included):

    python tools/sphinx_grid.py run lw3 OUT.json eval/memory/tune/dinner_party_en.json ... --no-tts
    python tools/sphinx_grid.py table OUT1.json OUT2.json ...
    python tools/sphinx_grid.py demo lw3     # `sotto demo --json` with the candidate (run it 3 times)

A candidate is adopted only if entity_retention rises on the tuning scripts and `sotto demo --json`
still meets its latency budgets (medians of 3 runs). Never run this on the reporting set.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from dataclasses import asdict, replace
from typing import Any

from sotto.engines import sphinx_asr

BASE = sphinx_asr.DecoderSettings(fwdflat=False)  # sotto's settings before the grid
CANDIDATES: dict[str, sphinx_asr.DecoderSettings] = {
    "base": BASE,
    "lw3": replace(BASE, lw=3.0),
    "lw3_bplw5": replace(BASE, lw=3.0, bestpathlw=5.0),
    "lw3_nobp": replace(BASE, lw=3.0, bestpath=False),
    "bplw5": replace(BASE, bestpathlw=5.0),
    "wip02": replace(BASE, wip=0.2),
    "wide": replace(BASE, beam=1e-60, wbeam=1e-40),
    "fwdflat": replace(BASE, fwdflat=True),
    "lw3_wip02": replace(BASE, lw=3.0, wip=0.2),
    "lw4": replace(BASE, lw=4.0),
    "lw5": replace(BASE, lw=5.0),
    "lw3_wide": replace(BASE, lw=3.0, beam=1e-60, wbeam=1e-40),
}


def _use(name: str) -> list[sphinx_asr.PocketsphinxRecognizer]:
    """Every recognizer loaded from now on uses candidate `name`; the list fills with them."""
    settings = CANDIDATES[name]
    loaded: list[sphinx_asr.PocketsphinxRecognizer] = []
    real_load = sphinx_asr.load

    def load(*args: Any, **kwargs: Any) -> sphinx_asr.PocketsphinxRecognizer:
        kwargs.setdefault("settings", settings)
        recognizer = real_load(*args, **kwargs)
        loaded.append(recognizer)
        return recognizer

    sphinx_asr.load = load  # type: ignore[assignment]  # every loader looks the function up at call time
    return loaded


def _cli(argv: list[str]) -> tuple[int, list[str]]:
    from sotto.cli import main as cli_main

    captured = io.StringIO()
    with contextlib.redirect_stdout(captured):
        code = cli_main(argv)
    return int(code or 0), captured.getvalue().splitlines()


def run(name: str, out_path: str, eval_args: list[str]) -> int:
    loaded = _use(name)
    code, lines = _cli(["eval", *eval_args, "--speech", "--json"])
    summary = json.loads(lines[-1])
    busy = sum(r.busy_s for r in loaded)
    audio = sum(r.audio_s for r in loaded)
    result = {"name": name, "settings": asdict(CANDIDATES[name]), "rtf": round(busy / audio, 3) if audio else None, **summary}
    with open(out_path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines[:-1]) + "\n")  # the turn lines, for tools/speech_losses.py
        handle.write(json.dumps(result) + "\n")
    return code


def demo(name: str) -> int:
    """`sotto demo --json` with candidate `name`: its summary line, with the candidate's name."""
    _use(name)
    code, lines = _cli(["demo", "--json"])
    summary = json.loads(lines[-1])
    print(json.dumps({"name": name, **{k: summary.get(k) for k in
                                       ("asr", "first_answer_ms_p50", "barge_in_ms_p95", "first_byte_ms_p50", "total_turn_ms_p50")}}))
    return code


def table(paths: list[str]) -> int:
    print("name        wer     retention  correction  confirmations                 rtf")
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            result = json.loads(handle.read().splitlines()[-1])
        print(f"{result['name']:<11} {result['wer']:<7} {result['entity_retention']:<10} "
              f"{result['correction_accuracy']:<11} {json.dumps(result.get('confirmations', {})):<29} {result['rtf']}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "run":
        sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4:]))
    if sys.argv[1] == "demo":
        sys.exit(demo(sys.argv[2]))
    sys.exit(table(sys.argv[2:]))
