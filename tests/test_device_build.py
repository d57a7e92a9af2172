"""Every firmware file compiles with mpy-cross for both boards and with plain `mpy-cross
FILE` (no -march: the project checklist and the pre-submit hook run exactly that), and
device/ type-checks against the ESP32-S3 and RP2040 MicroPython stubs (installed by
tools/setup)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVICE_FILES = sorted((ROOT / "device").rglob("*.py"))
BIN = Path(sys.executable).parent


def test_device_has_the_expected_modules() -> None:
    names = {p.relative_to(ROOT / "device").as_posix() for p in DEVICE_FILES}
    for needed in ("main.py", "boot.py", "sotto_fw/app.py", "sotto_fw/wire.py", "sotto_fw/hw.py"):
        assert needed in names


@pytest.mark.parametrize("arch", ["xtensawin", "armv6m"])
def test_every_device_file_compiles_with_mpy_cross(arch: str, tmp_path: Path) -> None:
    mpy_cross = BIN / "mpy-cross"
    assert mpy_cross.exists(), "mpy-cross is not installed: run tools/setup"
    failures = []
    for src in DEVICE_FILES:
        out = tmp_path / (src.stem + ".mpy")
        result = subprocess.run([str(mpy_cross), f"-march={arch}", "-o", str(out), str(src)],
                                capture_output=True, text=True, timeout=120)
        if result.returncode != 0 or not out.exists():
            failures.append(f"{src.relative_to(ROOT)}: {result.stderr.strip()}")
    assert not failures, "\n".join(failures)


def compile_without_arch(src: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "mpy-cross"), "-o", str(out), str(src)], capture_output=True, text=True, timeout=120)


def test_every_device_file_compiles_with_plain_mpy_cross(tmp_path: Path) -> None:
    """No -march: a @micropython.native/viper decorator in a file fails here ("invalid
    arch"); the hot loops are compiled at import by the board instead (sotto_fw.compat)."""
    assert (BIN / "mpy-cross").exists(), "mpy-cross is not installed: run tools/setup"
    failures = []
    for src in DEVICE_FILES:
        out = tmp_path / (src.stem + ".mpy")
        result = compile_without_arch(src, out)
        if result.returncode != 0 or not out.exists():
            failures.append(f"{src.relative_to(ROOT)}: {result.stderr.strip()}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("decorator", ["native", "viper"])
def test_plain_mpy_cross_rejects_a_native_decorator(decorator: str, tmp_path: Path) -> None:
    """Why the test above matters: plain mpy-cross has no arch for machine code."""
    src = tmp_path / "loop.py"
    src.write_text(f"import micropython\n\n@micropython.{decorator}\ndef f(n: int) -> int:\n    return n + 1\n")
    result = compile_without_arch(src, tmp_path / "loop.mpy")
    assert result.returncode != 0
    assert "invalid arch" in result.stderr + result.stdout


def test_mpy_cross_rejects_broken_code(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    result = subprocess.run([str(BIN / "mpy-cross"), str(bad)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0


@pytest.mark.parametrize("board", ["esp32s3", "rp2"])
def test_device_type_checks_against_board_stubs(board: str) -> None:
    stubs = ROOT / ".stubs" / board
    if not (stubs / "machine.pyi").exists():
        pytest.skip(f"board stubs missing in {stubs}: run tools/setup to install them")
    config = ROOT / "tests" / "mpy" / f"pyright-{board}.json"
    result = subprocess.run([str(BIN / "pyright"), "-p", str(config)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 errors" in result.stdout


def accelerated_sources() -> list[tuple[str, str, str]]:
    """(name, emitter, source) of every loop the firmware compiles to machine code at import."""
    from sotto_fw import loopsrc

    viper = {"COPY_INTO", "CRC_PUT", "CRC_OK", "COBS_ENCODE", "COBS_DECODE"}
    names = [n for n in dir(loopsrc) if n.isupper()]
    assert len(names) >= 12
    return [(n, "viper" if n in viper else "native", getattr(loopsrc, n)) for n in names]


@pytest.mark.parametrize("arch", ["xtensawin", "armv6m"])
def test_machine_code_loops_compile_for_the_boards(arch: str, tmp_path: Path) -> None:
    """The boards compile these loops themselves at import; mpy-cross with the board's
    arch runs the same native/viper emitter, so a loop it rejects would fall back to slow
    bytecode (or allocating slices) on that board."""
    failures = []
    for name, emitter, source in accelerated_sources():
        src = tmp_path / f"{name}.py"
        src.write_text(f"import micropython\n\n@micropython.{emitter}\n{source}")
        result = subprocess.run([str(BIN / "mpy-cross"), f"-march={arch}", "-o", str(tmp_path / f"{name}.mpy"),
                                 str(src)], capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            failures.append(f"{name}: {result.stderr.strip()}")
    assert not failures, "\n".join(failures)
