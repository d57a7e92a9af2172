"""Copy the firmware in device/ to a board with mpremote, and check what landed.

`plan_flash()` builds every command line (mpy-cross compiles, mpremote copies, the
profile write, the hash read-back); `flash()` runs them through an injectable runner,
so tests check the commands and the verification without a board.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from sotto.errors import FlashError, FlashVerifyFailed, PortNotFound

# mpy-cross -march per board profile (sotto_fw.config.PROFILES).
ARCH_BY_PROFILE = {"esp32s3": "xtensawin", "rp2040": "armv6m"}
# Only the board's entry points stay source: MicroPython runs boot.py/main.py by name.
SOURCE_ONLY = {"boot.py", "main.py"}
# Host-only helpers that never go to the board: the CPython stand-in for `micropython`,
# and the unix port's peripherals (the simulated board on real MicroPython).
HOST_ONLY = {"_cpython_micropython.py", "hw_unix.py"}
PROFILE_FILE = "sotto_profile.txt"
FIRMWARE_PACKAGE = "sotto_fw"


def device_dir() -> Path:
    """device/ of this checkout (the firmware is copied as-is from there)."""
    import sotto_fw.wire

    path = Path(sotto_fw.wire.__file__).resolve().parent.parent
    if not (path / "main.py").exists():
        raise FlashError(f"firmware sources not found next to {path}", hint="run sotto flash from a sotto checkout")
    return path


@dataclass(frozen=True)
class FirmwareFile:
    source: Path  # the file in device/
    upload: Path  # what is copied: source itself, or its compiled .mpy
    remote: str  # path on the board


@dataclass
class FlashPlan:
    port: str
    profile: str
    arch: str
    use_mpy: bool
    files: list[FirmwareFile]
    mpremote: str = "mpremote"
    mpy_cross: str = "mpy-cross"
    reset: bool = True
    expected_hashes: dict[str, str] = field(default_factory=dict)

    def _remote(self, *args: str) -> list[str]:
        return [self.mpremote, "connect", self.port, *args]

    def compile_commands(self) -> list[list[str]]:
        return [
            [self.mpy_cross, f"-march={self.arch}", "-o", str(f.upload), str(f.source)]
            for f in self.files
            if f.upload != f.source
        ]

    def prepare_command(self) -> list[str]:
        """Create the package folder and empty it: a stale .py would shadow a new .mpy."""
        script = (
            "import os\n"
            f'try:\n os.mkdir("{FIRMWARE_PACKAGE}")\nexcept OSError:\n pass\n'
            f'for n in os.listdir("{FIRMWARE_PACKAGE}"):\n os.remove("{FIRMWARE_PACKAGE}/" + n)\n'
        )
        return self._remote("exec", script)

    def copy_commands(self) -> list[list[str]]:
        by_dir: dict[str, list[FirmwareFile]] = {}
        for f in self.files:
            folder = f.remote.rpartition("/")[0]
            by_dir.setdefault(folder, []).append(f)
        commands = []
        for folder, files in sorted(by_dir.items()):
            dest = f":{folder}/" if folder else ":"
            commands.append(self._remote("fs", "cp", *(str(f.upload) for f in files), dest))
        return commands

    def profile_command(self) -> list[str]:
        return self._remote("exec", f'f = open("{PROFILE_FILE}", "w")\nf.write("{self.profile}")\nf.close()')

    def verify_command(self) -> list[str]:
        paths = [f.remote for f in self.files] + [PROFILE_FILE]
        script = (
            "import hashlib, binascii\n"
            f"for p in {json.dumps(paths)}:\n"
            " d = hashlib.sha256()\n"
            " try:\n"
            '  f = open(p, "rb")\n'
            "  while True:\n"
            "   b = f.read(512)\n"
            "   if not b:\n"
            "    break\n"
            "   d.update(b)\n"
            "  f.close()\n"
            '  print("SHA256", p, binascii.hexlify(d.digest()).decode())\n'
            " except OSError:\n"
            '  print("MISSING", p)\n'
        )
        return self._remote("exec", script)

    def reset_command(self) -> list[str]:
        return self._remote("reset")

    def commands(self) -> list[list[str]]:
        steps = self.compile_commands() + [self.prepare_command()] + self.copy_commands()
        steps += [self.profile_command(), self.verify_command()]
        if self.reset:
            steps.append(self.reset_command())
        return steps


def _tool(name: str) -> str:
    """A console script of this venv, else from PATH, else the bare name."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    return shutil.which(name) or name


def plan_flash(
    port: str,
    profile: str,
    *,
    use_mpy: bool = False,
    source_dir: Path | None = None,
    build_dir: Path | None = None,
    mpremote: str | None = None,
    mpy_cross: str | None = None,
    reset: bool = True,
) -> FlashPlan:
    if not port:
        raise FlashError("no port given", hint="pass --port, e.g. --port /dev/ttyACM0 (see `mpremote devs`)")
    if profile not in ARCH_BY_PROFILE:
        raise FlashError(f"unknown board profile {profile!r}", hint=f"choose from {', '.join(ARCH_BY_PROFILE)}")
    src = source_dir or device_dir()
    out = build_dir or (src.parent / "build" / "firmware" / profile)
    files = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if path.name in HOST_ONLY or "__pycache__" in rel:
            continue
        if use_mpy and rel not in SOURCE_ONLY:
            remote = rel[:-3] + ".mpy"
            files.append(FirmwareFile(path, out / remote, remote))
        else:
            files.append(FirmwareFile(path, path, rel))
    if not any(f.remote == "main.py" for f in files):
        raise FlashError(f"{src} has no main.py: not a firmware folder")
    return FlashPlan(
        port=port, profile=profile, arch=ARCH_BY_PROFILE[profile], use_mpy=use_mpy, files=files,
        mpremote=mpremote or _tool("mpremote"), mpy_cross=mpy_cross or _tool("mpy-cross"), reset=reset,
    )


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str
    stderr: str


class Runner(Protocol):
    def __call__(self, argv: Sequence[str]) -> CommandResult: ...


def run_subprocess(argv: Sequence[str]) -> CommandResult:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=120)
    except FileNotFoundError as exc:
        raise FlashError(f"{argv[0]} not found", hint="install the dev tools: tools/setup") from exc
    except subprocess.TimeoutExpired as exc:
        raise FlashError(f"{Path(argv[0]).name} timed out after {exc.timeout:.0f} s",
                         hint="is the board busy or in its bootloader?") from exc
    return CommandResult(done.returncode, done.stdout, done.stderr)


_HASH_LINE = re.compile(r"^(SHA256|MISSING)\s+(\S+)(?:\s+([0-9a-f]{64}))?\s*$")


def parse_hashes(output: str) -> dict[str, str | None]:
    """Board output of verify_command() -> {remote path: sha256 hex, or None if missing}."""
    found: dict[str, str | None] = {}
    for line in output.splitlines():
        m = _HASH_LINE.match(line.strip())
        if not m:
            continue
        kind, path, digest = m.groups()
        found[path] = digest if kind == "SHA256" else None
    return found


def verify_hashes(expected: dict[str, str], reported: dict[str, str | None]) -> list[str]:
    """Problems found comparing local and board hashes (empty when all match)."""
    problems = []
    for path, digest in sorted(expected.items()):
        got = reported.get(path, "not reported")
        if got == "not reported":
            problems.append(f"{path}: the board did not report it")
        elif got is None:
            problems.append(f"{path}: missing on the board")
        elif got != digest:
            problems.append(f"{path}: hash differs (board {got[:12]}, local {digest[:12]})")
    return problems


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_device_path(port: str) -> bool:
    return port.startswith("/dev/") or bool(re.fullmatch(r"COM\d+", port))


def _explain_failure(argv: Sequence[str], result: CommandResult) -> FlashError:
    text = (result.stderr or result.stdout).strip().splitlines()
    last = text[-1] if text else f"exit status {result.returncode}"
    tool = Path(argv[0]).name
    if "could not enter raw repl" in last.lower() or "failed to access" in last.lower() or "no device" in last.lower():
        return FlashError(f"{tool} could not talk to the board: {last}",
                          hint="check the cable and that no other program (sotto run, a terminal) holds the port")
    return FlashError(f"{tool} failed: {last}", hint="command: " + shlex.join(argv)[:200])


@dataclass
class FlashReport:
    files: int
    verified: list[str]
    profile: str


def flash(plan: FlashPlan, runner: Runner = run_subprocess, log: Callable[[str], None] = print) -> FlashReport:
    """Compile (with --mpy), copy, write the profile, read the hashes back, reset."""
    if _is_device_path(plan.port) and not Path(plan.port).exists() and plan.port.startswith("/dev/"):
        raise PortNotFound(f"{plan.port} does not exist", hint="is the board plugged in? `mpremote devs` lists ports")

    def step(argv: list[str]) -> CommandResult:
        result = runner(argv)
        if result.returncode != 0:
            raise _explain_failure(argv, result)
        return result

    for argv in plan.compile_commands():
        Path(argv[3]).parent.mkdir(parents=True, exist_ok=True)
        step(argv)
    expected = {f.remote: sha256_file(f.upload) for f in plan.files}
    expected[PROFILE_FILE] = hashlib.sha256(plan.profile.encode()).hexdigest()
    plan.expected_hashes = expected
    log(f"flash: {len(plan.files)} files to {plan.port} ({'mpy ' + plan.arch if plan.use_mpy else 'source'})")
    step(plan.prepare_command())
    for argv in plan.copy_commands():
        step(argv)
    step(plan.profile_command())
    reported = parse_hashes(step(plan.verify_command()).stdout)
    problems = verify_hashes(expected, reported)
    if problems:
        raise FlashVerifyFailed("what landed on the board differs: " + "; ".join(problems[:5]),
                                hint="run sotto flash again; if it persists, the board's filesystem may be full or damaged")
    log(f"flash: verified {len(expected)} files by sha256; profile {plan.profile}")
    if plan.reset:
        step(plan.reset_command())
    return FlashReport(files=len(plan.files), verified=sorted(expected), profile=plan.profile)
