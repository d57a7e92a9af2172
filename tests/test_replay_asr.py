"""Transcript replay recognizer: partials follow the speech, the final comes at the endpoint."""

import numpy as np

from sotto.engines.base import AudioChunk
from sotto.engines.replay_asr import TranscriptReplayRecognizer

RATE = 16000


def _tone(seconds: float, amplitude: float = 3000.0) -> bytes:
    t = np.arange(int(seconds * RATE)) / RATE
    return (amplitude * np.sin(2 * np.pi * 220 * t)).astype("<i2").tobytes()


def _silence(seconds: float) -> bytes:
    return bytes(2 * int(seconds * RATE))


def _chunks(turn: int, pcm: bytes, size: int = 640) -> list[AudioChunk]:
    return [AudioChunk(turn, i, pcm[o : o + size], RATE) for i, o in enumerate(range(0, len(pcm), size))]


def test_partials_grow_then_one_final_at_the_endpoint() -> None:
    asr = TranscriptReplayRecognizer(["please water the basil at seven"], durations_s=[1.5])
    results = []
    for chunk in _chunks(1, _silence(0.3) + _tone(1.5) + _silence(0.8)):
        results.extend(asr.accept(chunk))
    partials = [r.text for r in results if not r.final]
    finals = [r.text for r in results if r.final]
    assert finals == ["please water the basil at seven"]
    assert partials and all(len(a.split()) < len(b.split()) for a, b in zip(partials, partials[1:]))
    assert results[-1].final
    assert asr.remaining == 0


def test_noise_burst_shorter_than_min_speech_is_not_an_utterance() -> None:
    asr = TranscriptReplayRecognizer(["hello there"])
    results = []
    for chunk in _chunks(1, _silence(0.2) + _tone(0.05) + _silence(1.0)):
        results.extend(asr.accept(chunk))
    assert results == []
    assert asr.flush(1) == []
    assert asr.remaining == 1


def test_repeated_and_out_of_order_chunks_are_dropped() -> None:
    asr = TranscriptReplayRecognizer(["one two three"])
    chunks = _chunks(1, _tone(1.0))
    assert asr.accept(chunks[0]) == []
    assert asr.accept(chunks[0]) == []  # repeated
    assert asr.accept(chunks[5]) == []  # out of order: skipped ahead
    got = []
    for chunk in chunks[1:]:
        got.extend(asr.accept(chunk))
    assert got and not any(r.final for r in got)


def test_flush_gives_the_final_when_input_ends_mid_utterance() -> None:
    asr = TranscriptReplayRecognizer(["stop talking"])
    for chunk in _chunks(2, _tone(0.6)):
        asr.accept(chunk)
    finals = asr.flush(2)
    assert [f.text for f in finals] == ["stop talking"] and finals[0].final
    assert asr.flush(2) == []  # a second flush commits nothing more
