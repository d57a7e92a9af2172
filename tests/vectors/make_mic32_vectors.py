"""Regenerate mic32_vectors.json: `python tests/vectors/make_mic32_vectors.py`.

Microphone frames as 32-bit I2S slots, laid out as the microphones send them (MicroPython's
I2S with bits=32 hands over little-endian 32-bit words): the INMP441 puts 24 data bits
at the top of each slot (the low byte is zero), the SPH0645 18 bits (the low 14 bits are
zero). The signals are synthesised in that layout, not recorded from a part. The
expected PCM16 is the slot as a signed 32-bit integer shifted right by the profile's
`shift` and clipped to int16, computed here without the firmware's code; the MicroPython
run (tests/mpy/hw_checks.py through sotto_fw.hw.I2SMic) must produce the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

OUT = Path(__file__).with_name("mic32_vectors.json")


def slots(values: list[int], data_bits: int) -> bytes:
    """Signed `data_bits`-bit samples at the top of 32-bit little-endian slots."""
    out = bytearray()
    for v in values:
        word = (v << (32 - data_bits)) & 0xFFFFFFFF
        out += word.to_bytes(4, "little")
    return bytes(out)


def expected(raw: bytes, shift: int) -> bytes:
    out = bytearray()
    for i in range(0, len(raw), 4):
        v = int.from_bytes(raw[i:i + 4], "little", signed=True) >> shift
        v = max(-32768, min(32767, v))
        out += (v & 0xFFFF).to_bytes(2, "little")
    return bytes(out)


def sine(n: int, amplitude: float, bits: int) -> list[int]:
    full = (1 << (bits - 1)) - 1
    return [int(amplitude * full * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(n)]


def extremes(n: int, bits: int) -> list[int]:
    top, bottom = (1 << (bits - 1)) - 1, -(1 << (bits - 1))
    base = [0, 1, -1, top, bottom, top // 3, bottom // 3, 255, -256, 4096, -4097]
    return (base * (n // len(base) + 1))[:n]


def main() -> None:
    cases = []
    for name, bits, shift, values in (
        ("inmp441 speech level, shift 12", 24, 12, sine(640, 0.003, 24)),
        ("inmp441 loud, clipped at shift 12", 24, 12, sine(640, 0.5, 24)),
        ("inmp441 extremes, shift 16", 24, 16, extremes(640, 24)),
        ("sph0645 speech level, shift 12", 18, 12, sine(640, 0.01, 18)),
        ("sph0645 extremes, shift 14", 18, 14, extremes(640, 18)),
    ):
        raw = slots(values, bits)
        cases.append({"name": name, "data_bits": bits, "shift": shift, "slots": raw.hex(),
                      "pcm16": expected(raw, shift).hex()})
    OUT.write_text(json.dumps({"comment": "32-bit I2S mic slots -> PCM16; regenerate with make_mic32_vectors.py",
                               "cases": cases}, indent=1) + "\n")


if __name__ == "__main__":
    main()
