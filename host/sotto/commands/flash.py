"""`sotto flash --port P`: copy the firmware to a board with mpremote and verify it."""

from __future__ import annotations

import argparse
import shlex

from sotto.flashing import ARCH_BY_PROFILE, flash, plan_flash


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", required=True, help="the board's serial port, e.g. /dev/ttyACM0 (see `mpremote devs`)")
    parser.add_argument("--profile", choices=sorted(ARCH_BY_PROFILE), default="esp32s3",
                        help="board profile written to the board (default esp32s3)")
    parser.add_argument("--mpy", action="store_true",
                        help="compile the firmware modules to .mpy with mpy-cross for the board's architecture")
    parser.add_argument("--dry-run", action="store_true", help="print the commands instead of running them")
    parser.add_argument("--no-reset", action="store_true", help="leave the board running after the copy")


def run(args: argparse.Namespace) -> int:
    plan = plan_flash(args.port, args.profile, use_mpy=args.mpy, reset=not args.no_reset)
    if args.dry_run:
        for argv in plan.commands():
            print(shlex.join(argv))
        return 0
    flash(plan)
    return 0
