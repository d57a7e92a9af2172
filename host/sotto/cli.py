"""The `sotto` command line.

Each command lives in its own module under `sotto.commands` and exposes
`add_arguments(parser)` and `run(args) -> int`. Only the chosen command's module is
imported, so `sotto --help` and light commands never pay for engine imports.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from typing import Protocol, Sequence

from sotto import __version__
from sotto.errors import InputRefused, SottoError
from sotto.untrusted import has_lone_surrogate

# name -> (module, one-line help). Order is the order shown by `sotto --help`.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("sotto.commands.demo", "simulated board speaks a scripted conversation to the full pipeline"),
    "run": ("sotto.commands.run", "serve a real board (device path or pyserial URL)"),
    "sim": ("sotto.commands.sim", "run the simulated board on a virtual serial port"),
    "chat": ("sotto.commands.chat", "type turns instead of speaking; shows reply and state diff"),
    "eval": ("sotto.commands.eval", "run memory scripts through monologue, reply and TTS"),
    "bench": ("sotto.commands.bench", "benchmarks: link, serve"),
    "state": ("sotto.commands.state", "show, fix or roll back a session's working memory"),
    "trace": ("sotto.commands.trace", "show a session's trace"),
    "models": ("sotto.commands.models", "list and fetch models"),
    "flash": ("sotto.commands.flash", "copy the firmware to a board with mpremote"),
    "serve": ("sotto.commands.serve", "WebSocket sessions on loopback"),
    "forget": ("sotto.commands.forget", "delete a session or a profile"),
    "stats": ("sotto.commands.stats", "latency and failure statistics over stored traces"),
    "backfill": ("sotto.commands.backfill", "measure ASR entity backfill on homophone and near-miss sets"),
    "profile": ("sotto.commands.profile", "show or edit a user's long-term profile"),
    "knowledge": ("sotto.commands.knowledge", "query the local system-knowledge file"),
}


class CommandModule(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def available_commands() -> dict[str, tuple[str, str]]:
    return {name: spec for name, spec in COMMANDS.items() if importlib.util.find_spec(spec[0]) is not None}


def _top_parser(commands: dict[str, tuple[str, str]]) -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<8} {help_}" for name, (_, help_) in commands.items())
    parser = argparse.ArgumentParser(
        prog="sotto",
        description="sotto: offline voice agent for MicroPython boards",
        epilog=f"commands:\n{lines}\n\nRun `sotto COMMAND --help` for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"sotto {__version__}")
    parser.add_argument("command", nargs="?", help="one of the commands below")
    return parser


def build_command_parser(name: str) -> tuple[argparse.ArgumentParser, CommandModule]:
    module_name, help_ = COMMANDS[name]
    module: CommandModule = importlib.import_module(module_name)  # type: ignore[assignment]
    parser = argparse.ArgumentParser(prog=f"sotto {name}", description=help_)
    module.add_arguments(parser)
    return parser, module


def _check_arguments(argv: Sequence[str]) -> None:
    """Bytes that are not UTF-8 arrive as lone surrogates (Python's surrogateescape): such an
    argument could be neither stored nor printed, so it is refused here, for every command."""
    for number, arg in enumerate(argv, 1):
        if has_lone_surrogate(arg):
            raise InputRefused(f"argument {number} ({arg.encode('utf-8', 'backslashreplace').decode()[:60]}) "
                               f"is not valid UTF-8 text", hint="sotto takes UTF-8 arguments")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = available_commands()
    if not argv or argv[0].startswith("-"):
        top = _top_parser(commands)
        top.parse_args(argv)
        top.print_help()
        return 0 if not argv else 2
    name, rest = argv[0], argv[1:]
    if name not in commands:
        print(f"sotto: unknown command {name!r}; choose from {', '.join(commands)}", file=sys.stderr)
        return 2
    try:
        _check_arguments(rest)
        parser, module = build_command_parser(name)
        args = parser.parse_args(rest)
        return int(module.run(args) or 0)
    except SottoError as exc:
        print(f"error[{exc.code}]: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print("sotto: interrupted", file=sys.stderr)
        return 130
