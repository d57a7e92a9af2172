"""`sotto serve`: WebSocket sessions at /ws/{session_id} on shared models.

Binds to 127.0.0.1 by default. Any other address needs --token (or SOTTO_SERVE_TOKEN),
and then every client must present it (`Authorization: Bearer T` or `?token=T`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from sotto.engines.config import EngineConfig, add_engine_arguments
from sotto.errors import ConfigError
from sotto.knowledge import load_configured_knowledge
from sotto.memory.profile import profile_key
from sotto.memory.store import Store
from sotto.privacy.forget import apply_retention
from sotto.runtime import EngineOptions, Runtime, RuntimeOptions, load_engines
from sotto.server.app import ServeOptions, SottoServer
from sotto.server.auth import check_bind
from sotto.server.limits import ServeLimits


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; others need --token)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--token", default=None, help="access token clients must present (default: $SOTTO_SERVE_TOKEN)")
    parser.add_argument("--lang", default="en", help="language of text turns and default for audio (default en)")
    parser.add_argument("--db", type=Path, default=None, help="working-memory store (default: the sotto data dir)")
    parser.add_argument("--max-sessions", type=int, default=32, help="sessions kept live at once (default 32)")
    parser.add_argument("--max-sessions-per-client", type=int, default=8, metavar="N",
                        help="sessions one client address may hold at once (default 8; loopback clients share one "
                             "address, so raise it for `sotto bench serve --url` with more clients)")
    parser.add_argument("--knowledge", metavar="FILE",
                        help="system knowledge file for the replies (default: $SOTTO_KNOWLEDGE, else none)")
    parser.add_argument("--profile", metavar="OWNER",
                        help="long-term profile every session is seeded from and promoted to: a user name or a key "
                             "(default: a Wi-Fi board's own, board:<board id>; text sessions learn their user's name)")
    add_engine_arguments(parser)


def run(args: argparse.Namespace) -> int:

    token = args.token or os.environ.get("SOTTO_SERVE_TOKEN") or None
    if not 0 <= args.port < 65536:
        raise ConfigError(f"--port {args.port} is not a port number")
    if args.max_sessions < 1 or args.max_sessions_per_client < 1:
        raise ConfigError("--max-sessions and --max-sessions-per-client must be at least 1")
    check_bind(args.host, token)  # before loading any model: refuse fast
    if args.profile is not None:
        profile_key(args.profile)  # a bad name fails before the models load
    knowledge = load_configured_knowledge(args.knowledge)  # a bad file fails before the models load
    options = ServeOptions(host=args.host, port=args.port, token=token, lang=args.lang,
                           limits=ServeLimits(max_sessions=args.max_sessions,
                                              max_sessions_per_client=args.max_sessions_per_client,
                                              max_connections_per_client=2 * args.max_sessions_per_client))
    engines = EngineOptions(lang=args.lang, engine_config=EngineConfig.from_args(args))
    runtime_options = RuntimeOptions(lang=args.lang, knowledge=knowledge, profile=args.profile, answer_from_memory=True)
    return asyncio.run(_serve(options, engines, runtime_options, args.db))


async def _serve(options: ServeOptions, engine_options: EngineOptions, runtime_options: RuntimeOptions,
                 db: Path | None) -> int:
    engines = await asyncio.to_thread(load_engines, engine_options)
    store = Store(db)
    apply_retention(store)  # what is past the retention goes before the first session
    runtime = Runtime(engines, store, runtime_options)
    server = SottoServer.from_runtime(runtime, options)
    try:
        await server.start()
        print(json.dumps({"listening": f"{server.url}/ws/{{session_id}}", "token_required": options.token is not None,
                          **engines.labels(), "load_ms": engines.load_ms}), flush=True)
        print(f"sotto serve: listening on {server.url}/ws/{{session_id}} (Ctrl+C to stop)", file=sys.stderr, flush=True)
        try:
            await server.serve_forever()
        except asyncio.CancelledError:
            pass
    finally:
        await server.close()
        await asyncio.to_thread(runtime.close)
        store.close()
    return 0
