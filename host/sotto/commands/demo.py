"""`sotto demo [--json]`: the main job on the embedded models, no hardware needed.

A simulated board on a paced pty speaks the built-in conversation (with a correction
and a barge-in) to the full host pipeline. Human view by default; `--json` prints one
object per turn and a summary line (DESIGN.md "Contracts").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

from sotto.errors import ConfigError

_STARTED = time.monotonic()  # the command module loads first thing: "ready within 5 s" counts from here


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per turn, then a summary line")
    parser.add_argument("--baud", type=int, default=921600, help="simulated serial line rate (default 921600)")
    parser.add_argument("--script", metavar="FILE", help="a memory-script JSON to speak instead of the built-in one")
    parser.add_argument("--session", metavar="ID", help="session id for the working memory (default: a new one)")
    parser.add_argument("--model", metavar="GGUF", help="a GGUF model (default: the embedded SmolLM2-135M)")
    parser.add_argument("--voice", metavar="ONNX", help="a Piper voice .onnx (default: the embedded joe voice)")
    parser.add_argument("--asr-model", metavar="DIR", help="a Vosk model folder for the script's language")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    parser.add_argument("--echo", type=float, default=0.3, metavar="GAIN", help="speaker-to-mic echo gain (default 0.3)")
    parser.add_argument("--speaker-buffer", type=int, metavar="BYTES",
                        help="the simulated board's speaker ring in PCM16 bytes (default 262144, ~5.9 s at 22050 Hz)")
    parser.add_argument("--speaker-format", choices=("pcm16", "mulaw", "adpcm"), default="adpcm",
                        help="the speaker format the simulated board offers (default adpcm: a quarter of PCM16's line time)")
    parser.add_argument("--verbose", action="store_true", help="details (formats, load times, board counters) on stderr")


def _check(args: argparse.Namespace) -> None:
    if args.baud < 9600 or args.baud > 12_000_000:
        raise ConfigError("--baud must be between 9600 and 12000000")
    if not 0.0 <= args.echo <= 2.0:
        raise ConfigError("--echo must be between 0 and 2")
    if args.threads is not None and not 1 <= args.threads <= 64:
        raise ConfigError("--threads must be between 1 and 64")
    if args.speaker_buffer is not None and not 4096 <= args.speaker_buffer <= 4 * 1024 * 1024:
        raise ConfigError("--speaker-buffer must be between 4096 and 4194304 bytes")


def run(args: argparse.Namespace) -> int:
    from sotto.demo.runner import DEMO_SPEAKER_BUFFER, DemoOptions, run_demo
    from sotto.demo.view import HumanView, JsonView
    from sotto.pipeline import PipelineOptions

    _check(args)
    options = DemoOptions(
        pipeline=PipelineOptions(model=args.model, voice=args.voice, asr_model=args.asr_model, llm_threads=args.threads),
        script=args.script,
        baud=args.baud,
        session_id=args.session,
        echo_gain=args.echo,
        speaker_buffer=args.speaker_buffer or DEMO_SPEAKER_BUFFER,
        speaker_format=args.speaker_format,
        started_at=_STARTED,
    )
    view: Any = JsonView(sys.stdout) if args.json else HumanView()
    try:
        result = asyncio.run(run_demo(options, view.emit))
    except KeyboardInterrupt:
        print("demo interrupted", file=sys.stderr)
        return 130
    view.finish(result)
    if args.verbose:
        print(json.dumps(result.details, ensure_ascii=False), file=sys.stderr)
    return 0
