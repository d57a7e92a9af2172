"""`sotto bench link`: link benchmark against the simulated board or a real one.

Subcommands live in BENCHES (name -> (add_arguments, run)); `serve` is added there by
its own module without touching `link`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Callable

from sotto.errors import ConfigError

AddArguments = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]


def _link_arguments(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--sim", action="store_true", help="run against the simulated board (a pty paced at --baud)")
    where.add_argument("--port", metavar="URL", help="a real board: device path or pyserial URL")
    p.add_argument("--runtime", choices=("cpython", "micropython"), default="cpython",
                   help="--sim: run the firmware imported into CPython (default), or whole in the MicroPython "
                        "interpreter with the board profile's heap; the result then adds the board's own report")
    p.add_argument("--board", choices=("esp32s3", "rp2040"), default="esp32s3",
                   help="--sim: the board profile the simulated board runs (default esp32s3)")
    p.add_argument("--baud", type=int, default=921600, help="line rate in baud (default 921600)")
    p.add_argument("--seconds", type=float, default=10.0, help="how long to saturate the line (default 10)")
    p.add_argument("--payload", type=int, default=128,
                   help="BENCH payload bytes, a multiple of 8 (default 128: short frames keep PING RTT low)")
    p.add_argument("--corrupt", type=float, default=0.0, metavar="P",
                   help="--sim: flip a bit in this fraction of line bytes while the bench traffic runs")
    p.add_argument("--unplug-at", type=float, metavar="S", help="--sim: pull the virtual cable S seconds in")
    p.add_argument("--unplug-for", type=float, default=0.5, metavar="S", help="--sim: and plug it back after S s")
    p.add_argument("--reset-at", type=float, metavar="S", help="--sim: reboot the board S seconds in")
    p.add_argument("--audio-seconds", type=float, default=2.0,
                   help="first measure the negotiated uplink audio for this long (0 to skip)")
    p.add_argument("--json", action="store_true",
                   help='one JSON object: frames_sent, frames_received, frames_lost, crc_rejected, corrupt_delivered, '
                        'resyncs, payload_kbps {"up": board->host, "down": host->board} in kbit/s of BENCH payload, '
                        'rtt_ms_p50, rtt_ms_p95, board (on MicroPython: alloc_bytes_per_frame, gc_collections, '
                        'loop_ms_max, mic_frames_dropped, heap_free_min), plus details')
    p.add_argument("-v", "--verbose", action="store_true", help="log link events")


def _run_link(args: argparse.Namespace) -> int:
    from sotto.link.bench import BenchOptions, summarize

    if args.seconds <= 0:
        raise ConfigError("--seconds must be positive")
    if not 0.0 <= args.corrupt < 0.5:
        raise ConfigError("--corrupt must be a probability below 0.5")
    if not args.sim and (args.corrupt or args.unplug_at is not None or args.reset_at is not None):
        raise ConfigError("--corrupt, --unplug-at and --reset-at need --sim")
    if not args.sim and (args.runtime != "cpython" or args.board != "esp32s3"):
        raise ConfigError("--runtime and --board are for the simulated board (--sim)")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s: %(message)s")
    options = BenchOptions(seconds=args.seconds, payload=args.payload, corrupt=args.corrupt,
                           unplug_at=args.unplug_at, unplug_for=args.unplug_for, reset_at=args.reset_at,
                           audio_seconds=args.audio_seconds)
    result = asyncio.run(_bench_link(args, options))
    if args.json:
        print(json.dumps(result))
    else:
        print(summarize(result))
    return 0


async def _bench_link(args: argparse.Namespace, options: "BenchOptions") -> dict:  # type: ignore[name-defined]
    from sotto.link.bench import LinkBench
    from sotto.link.board_link import BoardLink, LinkOptions

    link_options = LinkOptions(baud=args.baud)
    if args.sim:
        from sotto.sim import SimulatedBoard

        with SimulatedBoard(baud=args.baud, runtime=args.runtime, profile=args.board) as board:
            link = BoardLink(board.port_path, link_options)
            await link.open()
            try:
                return await LinkBench(link, options, faults=board).run()
            finally:
                await link.close()
    link = BoardLink(args.port, link_options)
    await link.open()
    try:
        return await LinkBench(link, options).run()
    finally:
        await link.close()


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    from sotto.server.bench import add_arguments as add_serve_arguments  # owned by the serve engineer

    add_serve_arguments(p)


def _run_serve(args: argparse.Namespace) -> int:
    from sotto.server.bench import run as run_serve

    return run_serve(args)


BENCHES: dict[str, tuple[str, AddArguments, Run]] = {
    "link": ("saturate the serial link both ways with checkable frames", _link_arguments, _run_link),
    "serve": ("concurrent simulated clients against sotto serve", _serve_arguments, _run_serve),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for name, (help_, add, _) in BENCHES.items():
        add(sub.add_parser(name, help=help_, description=help_))


def run(args: argparse.Namespace) -> int:
    _, _, run_bench = BENCHES[args.bench]
    return run_bench(args)
