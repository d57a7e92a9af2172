"""`sotto flash`: command building, hash read-back and errors, without a board.

The fake board runner keeps the board's filesystem in a temp folder and runs the
`mpremote exec` scripts with the real MicroPython interpreter there, so the scripts
sotto sends are exercised for real.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest

from sotto import cli
from sotto.errors import FlashError, FlashVerifyFailed, PortNotFound
from sotto.flashing import (
    PROFILE_FILE,
    CommandResult,
    flash,
    parse_hashes,
    plan_flash,
    sha256_file,
    verify_hashes,
)

MICROPYTHON = str(Path(sys.executable).with_name("micropython"))
ROOT = Path(__file__).resolve().parents[1]


class FakeBoardRunner:
    """Plays mpremote against a folder standing in for the board's filesystem."""

    def __init__(self, board_dir: Path, corrupt: str | None = None, fail_on: str | None = None) -> None:
        self.board_dir = board_dir
        self.corrupt = corrupt
        self.fail_on = fail_on
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> CommandResult:
        argv = list(argv)
        self.calls.append(argv)
        if Path(argv[0]).name.startswith("mpy-cross"):
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
            return CommandResult(done.returncode, done.stdout, done.stderr)
        assert argv[1] == "connect"
        action = argv[3:]
        if self.fail_on and action[0] == self.fail_on:
            return CommandResult(1, "", "mpremote: failed to access /dev/null (it may be in use by another program)")
        if action[0] == "exec":
            done = subprocess.run([MICROPYTHON, "-c", action[1]], capture_output=True, text=True, timeout=60,
                                  cwd=self.board_dir)
            return CommandResult(done.returncode, done.stdout, done.stderr)
        if action[:2] == ["fs", "cp"]:
            *sources, dest = action[2:]
            folder = self.board_dir / dest.lstrip(":")
            for src in sources:
                target = folder / Path(src).name
                shutil.copyfile(src, target)
                if self.corrupt and target.name == self.corrupt:
                    target.write_bytes(target.read_bytes()[:-1] + b"#")
            return CommandResult(0, "", "")
        if action == ["reset"]:
            return CommandResult(0, "", "")
        return CommandResult(1, "", f"unexpected mpremote call {action}")


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "board"
    path.mkdir()
    return path


def test_dry_run_prints_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["flash", "--port", "/dev/ttyACM0", "--profile", "rp2040", "--mpy", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "-march=armv6m" in out
    assert "connect /dev/ttyACM0 fs cp" in out
    assert "sotto_fw/app.mpy" in out and ":sotto_fw/" in out
    assert "sotto_profile.txt" in out and 'f.write("rp2040")' in out
    assert "hashlib.sha256" in out
    assert out.rstrip().endswith("connect /dev/ttyACM0 reset")


def test_plan_source_and_mpy() -> None:
    src = plan_flash("/dev/ttyACM0", "esp32s3")
    remotes = {f.remote for f in src.files}
    assert {"main.py", "boot.py", "sotto_fw/app.py", "sotto_fw/wire.py", "sotto_fw/hw.py"} <= remotes
    assert "sotto_fw/_cpython_micropython.py" not in remotes  # host-only helper
    assert src.compile_commands() == []
    mpy = plan_flash("/dev/ttyACM0", "esp32s3", use_mpy=True)
    assert mpy.arch == "xtensawin"
    assert {"main.py", "boot.py", "sotto_fw/app.mpy"} <= {f.remote for f in mpy.files}
    assert all(cmd[1] == "-march=xtensawin" for cmd in mpy.compile_commands())
    assert len(mpy.compile_commands()) == len(mpy.files) - 2


def test_flash_source_files_verifies_hashes(board: Path) -> None:
    runner = FakeBoardRunner(board)
    report = flash(plan_flash("/dev/null", "rp2040"), runner=runner, log=lambda s: None)
    assert (board / "sotto_fw" / "app.py").read_bytes() == (ROOT / "device" / "sotto_fw" / "app.py").read_bytes()
    assert (board / PROFILE_FILE).read_text() == "rp2040"
    assert report.profile == "rp2040" and report.files >= 10
    assert runner.calls[-1][3:] == ["reset"]


def test_flash_mpy_compiles_and_removes_stale_sources(board: Path, tmp_path: Path) -> None:
    (board / "sotto_fw").mkdir()
    (board / "sotto_fw" / "app.py").write_text("stale = True\n")  # would shadow app.mpy
    plan = plan_flash("/dev/null", "esp32s3", use_mpy=True, build_dir=tmp_path / "build")
    flash(plan, runner=FakeBoardRunner(board), log=lambda s: None)
    assert not (board / "sotto_fw" / "app.py").exists()
    mpy = board / "sotto_fw" / "app.mpy"
    assert mpy.read_bytes()[:1] == b"M"  # .mpy magic
    assert plan.expected_hashes["sotto_fw/app.mpy"] == sha256_file(mpy)


def test_a_corrupted_copy_fails_verification(board: Path) -> None:
    with pytest.raises(FlashVerifyFailed, match="wire.py: hash differs"):
        flash(plan_flash("/dev/null", "esp32s3"), runner=FakeBoardRunner(board, corrupt="wire.py"), log=lambda s: None)


def test_mpremote_failure_is_a_clear_error(board: Path) -> None:
    with pytest.raises(FlashError, match="could not talk to the board"):
        flash(plan_flash("/dev/null", "esp32s3"), runner=FakeBoardRunner(board, fail_on="fs"), log=lambda s: None)


def test_missing_port_is_reported() -> None:
    with pytest.raises(PortNotFound, match="/dev/ttyNOPE9 does not exist"):
        flash(plan_flash("/dev/ttyNOPE9", "esp32s3"), runner=FakeBoardRunner(Path(".")), log=lambda s: None)
    with pytest.raises(FlashError, match="no port"):
        plan_flash("", "esp32s3")
    with pytest.raises(FlashError, match="unknown board profile"):
        plan_flash("/dev/ttyACM0", "esp8266")


def test_cli_reports_errors_without_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["flash", "--port", "/dev/ttyNOPE9", "--no-reset"]) != 0
    assert "error[link_port_not_found]" in capsys.readouterr().err


def test_parse_and_verify_hashes() -> None:
    out = "\n".join([
        "MicroPython noise line",
        "SHA256 main.py " + "a" * 64,
        "SHA256 sotto_fw/app.mpy " + "b" * 64,
        "MISSING sotto_fw/wire.mpy",
        "SHA256 broken-line deadbeef",
    ])
    reported = parse_hashes(out)
    assert reported == {"main.py": "a" * 64, "sotto_fw/app.mpy": "b" * 64, "sotto_fw/wire.mpy": None}
    expected = {"main.py": "a" * 64, "sotto_fw/app.mpy": "c" * 64, "sotto_fw/wire.mpy": "d" * 64, "boot.py": "e" * 64}
    problems = verify_hashes(expected, reported)
    assert problems == [
        "boot.py: the board did not report it",
        "sotto_fw/app.mpy: hash differs (board bbbbbbbbbbbb, local cccccccccccc)",
        "sotto_fw/wire.mpy: missing on the board",
    ]
    assert verify_hashes({"main.py": "a" * 64}, reported) == []
