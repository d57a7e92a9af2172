#!/usr/bin/env python3
"""Compile the firmware to .mpy for a board profile: `tools/build_firmware.py [esp32s3|rp2040 ...]`.

Writes build/firmware/<profile>/ (main.py and boot.py stay source) and prints each
file's size, so the image that `sotto flash --mpy` copies can be inspected first.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "device"))

from sotto.flashing import ARCH_BY_PROFILE, plan_flash  # noqa: E402


def build(profile: str) -> int:
    plan = plan_flash("(none)", profile, use_mpy=True)
    total = 0
    for argv in plan.compile_commands():
        Path(argv[3]).parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"build_firmware: {argv[-1]}: {done.stderr.strip()}", file=sys.stderr)
            return 1
    for f in plan.files:
        size = f.upload.stat().st_size
        total += size
        print(f"{profile:8} {f.remote:28} {size:7d} bytes")
    print(f"{profile:8} {'total':28} {total:7d} bytes ({plan.arch})")
    return 0


def main(argv: list[str]) -> int:
    profiles = argv or sorted(ARCH_BY_PROFILE)
    for p in profiles:
        if p not in ARCH_BY_PROFILE:
            print(f"build_firmware: unknown profile {p!r}; choose from {', '.join(ARCH_BY_PROFILE)}", file=sys.stderr)
            return 2
        if build(p):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
