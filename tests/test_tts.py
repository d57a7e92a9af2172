"""The Piper engine: loading errors are clear, synthesis yields one chunk per sentence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from sotto.engines.base import SpeechSynthesizer
from sotto.engines.tts import PiperVoiceEngine, default_tts_threads, load, voice_name
from sotto.errors import ModelLoadFailed, ModelNotFound


class FakePiperChunk:
    def __init__(self, pcm: bytes) -> None:
        self.audio_int16_bytes = pcm


class FakePiperVoice:
    """Stands in for piper.PiperVoice: 100 samples of audio per input character."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def synthesize(self, text: str) -> Iterator[FakePiperChunk]:
        self.calls.append(text)
        yield FakePiperChunk(b"\x01\x00" * 100 * len(text))


def _fake_engine() -> PiperVoiceEngine:
    return PiperVoiceEngine(
        voice=FakePiperVoice(),  # type: ignore[arg-type]
        model_path=Path("fake.onnx"),
        name="fake",
        sample_rate=22050,
        threads=1,
        load_ms=0.0,
    )


def test_engine_satisfies_the_protocol() -> None:
    assert isinstance(_fake_engine(), SpeechSynthesizer)


def test_one_chunk_per_sentence_in_order() -> None:
    engine = _fake_engine()
    chunks = list(engine.synthesize("Hello Mr. Wang. The car is booked! 好的。"))
    assert [c.text for c in chunks] == ["Hello Mr. Wang.", "The car is booked!", "好的。"]
    assert all(c.sample_rate == 22050 for c in chunks)
    assert chunks[0].pcm == b"\x01\x00" * 100 * len("Hello Mr. Wang.")
    assert [t.text for t in engine.timings] == [c.text for c in chunks]


def test_chunks_are_yielded_lazily() -> None:
    engine = _fake_engine()
    stream = engine.synthesize("One. Two. Three.")
    next(stream)
    assert engine.voice.calls == ["One."]  # type: ignore[attr-defined]


def test_unspeakable_text_yields_nothing() -> None:
    assert list(_fake_engine().synthesize(" ... ")) == []


def test_threads_default_leaves_a_core_for_the_llm() -> None:
    assert default_tts_threads(2) == 1
    assert default_tts_threads(1) == 1
    assert default_tts_threads(8) == 4


def test_voice_name() -> None:
    assert voice_name(Path("/x/en_US-joe-medium.onnx")) == "en_US-joe-medium"


def test_missing_voice_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound, match="does not exist"):
        load(tmp_path / "nope.onnx")


def test_missing_voice_config(tmp_path: Path) -> None:
    model = tmp_path / "v.onnx"
    model.write_bytes(b"not a model")
    with pytest.raises(ModelNotFound, match=r"v\.onnx\.json is missing"):
        load(model)


def test_folder_with_several_voices_is_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "a.onnx").write_bytes(b"x")
    (tmp_path / "b.onnx").write_bytes(b"x")
    with pytest.raises(ModelNotFound, match="expected exactly one"):
        load(tmp_path)


def test_broken_config_json(tmp_path: Path) -> None:
    model = tmp_path / "v.onnx"
    model.write_bytes(b"x")
    (tmp_path / "v.onnx.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadFailed, match="cannot read Piper voice config"):
        load(model)


def test_config_that_is_not_piper(tmp_path: Path) -> None:
    model = tmp_path / "v.onnx"
    model.write_bytes(b"x")
    (tmp_path / "v.onnx.json").write_text(json.dumps({"hello": 1}), encoding="utf-8")
    with pytest.raises(ModelLoadFailed, match="not a Piper voice config"):
        load(model)


@pytest.mark.slow
def test_broken_onnx_file_is_a_load_failure(tmp_path: Path) -> None:
    from sotto.models.embedded import joe_voice_onnx

    joe = joe_voice_onnx()
    model = tmp_path / "broken.onnx"
    model.write_bytes(b"\x00" * 64)
    (tmp_path / "broken.onnx.json").write_bytes(Path(str(joe) + ".json").read_bytes())
    with pytest.raises(ModelLoadFailed, match="onnxruntime cannot load"):
        load(model)


@pytest.mark.slow
def test_joe_speaks_a_sentence() -> None:
    engine = load()
    assert engine.name == "en_US-joe-medium"
    assert engine.sample_rate == 22050
    chunks = list(engine.synthesize("Your car is booked for three p.m. tomorrow. Goodbye."))
    assert [c.text for c in chunks] == ["Your car is booked for three p.m. tomorrow.", "Goodbye."]
    first = chunks[0]
    assert first.sample_rate == 22050 and len(first.pcm) % 2 == 0
    # About nine words: well over half a second, well under eight seconds of speech.
    assert 0.8 < first.duration_s < 8.0
    samples = np.frombuffer(first.pcm, dtype="<i2")
    assert int(np.abs(samples.astype(np.int32)).max()) > 3000  # speech, not silence
