"""`sotto sim`: run the simulated board standalone on a virtual serial port.

Prints `port: /dev/pts/N` (one line, flushed) so a user without hardware can run
`sotto run --port /dev/pts/N` against it; Ctrl+C stops it cleanly.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time

from sotto.errors import ConfigError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--baud", type=int, default=921600, help="line rate the pty is paced at (default 921600)")
    parser.add_argument("--mic", metavar="WAV", nargs="*", default=[],
                        help="WAV files the microphone speaks, in order, with silence between (any PCM WAV; resampled)")
    parser.add_argument("--gap", type=float, default=1.5, metavar="S", help="silence between --mic utterances (s)")
    parser.add_argument("--mic-delay", type=float, default=0.0, metavar="S",
                        help="start speaking S seconds after a host has WELCOMEd the board")
    parser.add_argument("--echo", type=float, default=0.0, metavar="LEVEL",
                        help="feed the speaker back into the mic at this gain (0..1), as a nearby speaker would")
    parser.add_argument("--echo-delay", type=float, default=0.03, metavar="S", help="echo path delay (s)")
    parser.add_argument("--speaker-out", metavar="WAV", help="write what the speaker played, on the board's timeline")
    parser.add_argument("--profile", default="esp32s3", help="firmware board profile (esp32s3, rp2040)")
    parser.add_argument("--runtime", choices=("cpython", "micropython"), default="cpython",
                        help="run the firmware imported into CPython (default), or whole in the MicroPython "
                             "interpreter, its heap limited to the profile's (the board then reports its loop "
                             "and heap once a second: `sotto run` sums it up at the end)")
    parser.add_argument("--heap", type=int, metavar="BYTES",
                        help="--runtime micropython: the heap (default: the profile's free heap)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log line and board events")


def run(args: argparse.Namespace) -> int:
    from sotto.sim import SimulatedBoard
    from sotto.sim.audio import read_wav

    if args.baud <= 0:
        raise ConfigError("--baud must be positive")
    if args.heap is not None and args.runtime != "micropython":
        raise ConfigError("--heap is for --runtime micropython")
    if not 0.0 <= args.echo <= 4.0:
        raise ConfigError("--echo must be between 0 and 4")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s: %(message)s")
    utterances = [(read_wav(path), path) for path in args.mic]  # bad WAVs fail before the board starts
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with SimulatedBoard(baud=args.baud, profile=args.profile, echo_gain=args.echo, echo_delay_s=args.echo_delay,
                        speaker_out=args.speaker_out, gap_s=args.gap, runtime=args.runtime,
                        heap_bytes=args.heap) as board:
        print(f"port: {board.pty_path}", flush=True)
        runtime = f"MicroPython, heap {board.heap_bytes} bytes" if board.heap_bytes else "CPython"
        print(f"sim: {args.profile} firmware on {runtime}, {args.baud} baud; the same board stays at "
              f"{board.port_path} across replugs; Ctrl+C to stop", file=sys.stderr, flush=True)
        try:
            queued = False
            seen_events = 0
            while not stop.is_set():
                if utterances and not queued and board.welcomed:
                    time.sleep(args.mic_delay)
                    for (pcm, rate), path in utterances:
                        board.play_utterance(pcm, rate=rate, label=path)
                    queued = True
                if args.verbose:
                    for ev in board.events[seen_events:]:
                        print(f"sim: {ev.board_ms} ms {ev.kind} {ev.detail}", file=sys.stderr, flush=True)
                    seen_events = len(board.events)
                board.check_alive()
                stop.wait(0.1)
        except KeyboardInterrupt:
            pass
    if args.speaker_out:
        print(f"speaker: {args.speaker_out}", file=sys.stderr)
    return 0
