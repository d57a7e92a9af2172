"""Regenerate audio_vectors.json: `python tests/vectors/make_audio_vectors.py`.

Test signals encoded by the board's codec (sotto_fw.audiocodec). The host's numpy
codecs (tests/test_audio_codecs.py) and the MicroPython run (tests/mpy/) must
produce the same bytes. Anchors: G.711 mu-law of 0 is 0xFF, of full scale 0x80/0x00.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "device"))

from sotto_fw import audiocodec, wire  # noqa: E402

OUT = Path(__file__).with_name("audio_vectors.json")


def signal(name: str, n: int) -> list[int]:
    if name == "sine":
        return [int(12000 * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(n)]
    if name == "chirp":
        return [int(30000 * math.sin(2 * math.pi * (100 + 20 * i) * i / 16000)) for i in range(n)]
    if name == "extremes":
        base = [0, 1, -1, 32767, -32768, 32635, -32635, 32636, -32636, 100, -100, 8000, -8000]
        return (base * (n // len(base) + 1))[:n]
    if name == "silence":
        return [0] * n
    if name == "steps":
        return [(32767 if (i // 7) % 2 else -32768) for i in range(n)]
    raise ValueError(name)


def to_bytes(samples: list[int]) -> bytes:
    return b"".join((s & 0xFFFF).to_bytes(2, "little") for s in samples)


def main(out_path: Path = OUT) -> None:
    cases = []
    for fmt in (wire.FMT_PCM16, wire.FMT_MULAW, wire.FMT_ADPCM):
        for name, n, frames in (("sine", 320, 3), ("chirp", 160, 2), ("extremes", 26, 1), ("silence", 64, 1),
                                ("steps", 70, 2), ("extremes", 13, 1)):
            enc = audiocodec.AudioEncoder(fmt)
            dec = audiocodec.AudioDecoder(fmt)
            out = []
            for f in range(frames):
                pcm = bytearray(to_bytes(signal(name, n * frames)[f * n : (f + 1) * n]))
                buf = bytearray(audiocodec.encoded_size(fmt, n))
                k = enc.encode_into(pcm, len(pcm), buf, 0)
                back = bytearray(audiocodec.decoded_bytes(fmt, k))
                m = dec.decode_into(buf, 0, k, back)
                out.append({"pcm": pcm.hex(), "encoded": buf[:k].hex(), "decoded": back[:m].hex()})
            cases.append({"format": fmt, "signal": name, "samples": n, "frames": out})
    out_path.write_text(json.dumps({"comment": "audio codec vectors; regenerate with make_audio_vectors.py",
                               "mulaw_anchors": {"0": "ff", "32767": "80", "-32768": "00", "-1": "7f"},
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
