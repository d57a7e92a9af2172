"""Host numpy codecs == board codecs, byte for byte, and both actually code audio."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sotto_fw import audiocodec, wire

import reference_codecs as codecs  # an independent numpy implementation: the oracle for the board's codec

VECTORS = json.loads((Path(__file__).with_name("vectors") / "audio_vectors.json").read_text())


def board_encode(fmt: int, pcm: bytes, encoder: audiocodec.AudioEncoder | None = None) -> bytes:
    enc = encoder or audiocodec.AudioEncoder(fmt)
    buf = bytearray(audiocodec.encoded_size(fmt, len(pcm) // 2))
    k = enc.encode_into(bytearray(pcm), len(pcm), buf, 0)
    return bytes(buf[:k])


def board_decode(fmt: int, data: bytes) -> bytes:
    out = bytearray(audiocodec.decoded_bytes(fmt, len(data)))
    k = audiocodec.AudioDecoder(fmt).decode_into(data, 0, len(data), out)
    return bytes(out[:k])


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: f"{wire.FORMAT_NAMES[c['format']]}-{c['signal']}-{c['samples']}")
def test_vectors_host_and_board(case: dict[str, Any]) -> None:
    fmt = case["format"]
    host = codecs.Encoder(fmt)
    board = audiocodec.AudioEncoder(fmt)
    for frame in case["frames"]:
        pcm = bytes.fromhex(frame["pcm"])
        assert host.encode(pcm).hex() == frame["encoded"]
        assert board_encode(fmt, pcm, board).hex() == frame["encoded"]
        encoded = bytes.fromhex(frame["encoded"])
        assert codecs.decode(fmt, encoded).astype("<i2").tobytes().hex() == frame["decoded"]
        assert board_decode(fmt, encoded).hex() == frame["decoded"]


def test_mulaw_anchor_values() -> None:
    for sample, byte in VECTORS["mulaw_anchors"].items():
        assert codecs.mulaw_encode(np.array([int(sample)], dtype=np.int16)).hex() == byte
    assert codecs.mulaw_decode(b"\xff\x80\x00").tolist() == [0, 32124, -32124]


def sine(n: int, freq: float = 440.0, rate: int = 16000, amp: float = 12000) -> np.ndarray:
    return (amp * np.sin(2 * np.pi * freq * np.arange(n) / rate)).astype(np.int16)


def snr_db(ref: np.ndarray, got: np.ndarray) -> float:
    noise = ref.astype(np.float64) - got.astype(np.float64)
    return 10 * math.log10(float(np.sum(ref.astype(np.float64) ** 2)) / max(float(np.sum(noise**2)), 1e-9))


@pytest.mark.parametrize("fmt,min_snr", [(codecs.PCM16, 200.0), (codecs.MULAW, 30.0), (codecs.ADPCM, 20.0)])
def test_round_trip_quality_over_a_stream_of_frames(fmt: int, min_snr: float) -> None:
    signal = sine(16000)
    enc = codecs.Encoder(fmt)
    decoded = np.concatenate([codecs.decode(fmt, enc.encode(signal[i : i + 320])) for i in range(0, 16000, 320)])
    assert len(decoded) == len(signal)
    assert snr_db(signal, decoded) >= min_snr


def test_adpcm_frames_are_independent_of_lost_frames() -> None:
    signal = sine(3200)
    enc = codecs.Encoder(codecs.ADPCM)
    blocks = [enc.encode(signal[i : i + 320]) for i in range(0, 3200, 320)]
    # Decode only every other block: each still decodes to its own samples.
    for i in range(0, 10, 2):
        got = codecs.decode(codecs.ADPCM, blocks[i])
        assert snr_db(signal[i * 320 : (i + 1) * 320], got) > 15


def test_adpcm_reset_restarts_the_stream_state() -> None:
    enc = codecs.Encoder(codecs.ADPCM)
    first = enc.encode(sine(320))
    enc.encode(sine(320))
    enc.reset()
    assert enc.encode(sine(320)) == first


def test_corrupt_adpcm_block_decodes_to_nothing() -> None:
    block = bytearray(codecs.Encoder(codecs.ADPCM).encode(sine(64)))
    block[2] = 200  # step index out of range
    assert len(codecs.decode(codecs.ADPCM, bytes(block))) == 0
    assert board_decode(codecs.ADPCM, bytes(block)) == b""


def test_sizes_and_byte_rates() -> None:
    assert codecs.bytes_per_second(codecs.PCM16, 16000) == audiocodec.bytes_per_second(wire.FMT_PCM16, 16000) == 32000
    assert codecs.bytes_per_second(codecs.MULAW, 16000) == 16000
    assert codecs.bytes_per_second(codecs.ADPCM, 16000, 20) == 8000 + 4 * 50
    for fmt in codecs.FORMATS:
        for samples in (0, 1, 2, 319, 320):
            assert codecs.encoded_size(fmt, samples) == audiocodec.encoded_size(fmt, samples)


@given(st.lists(st.integers(-32768, 32767), min_size=0, max_size=700), st.sampled_from(codecs.FORMATS))
def test_random_pcm_host_equals_board(samples: list[int], fmt: int) -> None:
    pcm = np.array(samples, dtype=np.int16)
    raw = pcm.astype("<i2").tobytes()
    host = codecs.Encoder(fmt).encode(pcm)
    assert host == board_encode(fmt, raw)
    assert codecs.decode(fmt, host).astype("<i2").tobytes() == board_decode(fmt, host)
