"""Engines for the composition root (sotto.runtime): the one loader of the language model,
the voice and the recognizers, in-process or remote as configured.

    engines = load_engines(EngineOptions())                   # LLM + Piper, loaded side by side
    # or EngineOptions(engine_config=EngineConfig.from_args(args)): the LLM behind an
    # OpenAI-compatible server, TTS behind wyoming-piper, whichever is configured
    recognizer, asr_label = make_recognizer("en", transcripts=[...])
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Sequence

import sotto  # noqa: F401  (offline environment before any engine import)
from sotto.engines.base import LanguageModel, Recognizer, SpeechSynthesizer
from sotto.engines.config import EngineConfig, RecognizerFactory
from sotto.errors import ConfigError

if TYPE_CHECKING:
    from sotto.agent.capability import ModelCapabilities

REPLAY_ENDPOINT_MS = 650.0


@dataclass(frozen=True)
class EngineOptions:
    model: str | None = None  # GGUF path or name (default: resolution order, the embedded SmolLM2)
    voice: str | None = None  # Piper .onnx path or name (default: joe)
    asr_model: str | None = None  # Vosk model folder or name
    lang: str = "en"
    n_ctx: int | None = None  # default: the engine config's (2048)
    llm_threads: int | None = None  # default: sotto.engines.llm.default_threads()
    tts_threads: int | None = None
    # Remote engines (--llm-url, --tts-wyoming, --asr-wyoming, --engines-config); in-process
    # for whatever it does not configure. Its llm_path / tts_voice / asr_model are used when
    # model / voice / asr_model above are not given.
    engine_config: EngineConfig = field(default_factory=EngineConfig)


@dataclass
class LoadedEngines:
    llm: LanguageModel
    tts: SpeechSynthesizer | None  # None: loaded without a voice (sotto chat)
    llm_file: str  # e.g. SmolLM2-135M-Instruct.Q4_1.gguf
    tts_name: str  # e.g. en_US-joe-medium
    load_ms: dict[str, float] = field(default_factory=dict)
    engine_config: EngineConfig = field(default_factory=EngineConfig)
    # The jobs the model passed in its capability probe (cached per model file; None: not probed).
    capabilities: "ModelCapabilities | None" = None

    @property
    def recognizers(self) -> RecognizerFactory:
        """A fresh recognizer per session (sotto serve); Vosk models shared per language."""
        if self._recognizers is None:
            self._recognizers = self.engine_config.recognizers()
        return self._recognizers

    _recognizers: RecognizerFactory | None = field(default=None, repr=False)

    def labels(self) -> dict[str, Any]:
        described = self.engine_config.describe()
        return {"llm": f"{self.llm_file} ({described['llm']})", "tts": f"{self.tts_name} ({described['tts']})",
                "asr": described["asr"]}


def _load_llm(options: EngineOptions) -> tuple[LanguageModel, str, float]:
    from sotto.engines import llm
    from sotto.models.resolve import resolve_llm

    started = time.perf_counter()
    remote = options.engine_config.remote_llm()
    if remote is not None:
        return remote, remote.name, (time.perf_counter() - started) * 1000.0
    resolved = resolve_llm(options.model or options.engine_config.llm_path)
    n_ctx = options.n_ctx or options.engine_config.n_ctx
    model = llm.load(resolved.path, n_ctx=n_ctx, n_threads=options.llm_threads or llm.default_threads())
    return model, resolved.path.name, (time.perf_counter() - started) * 1000.0


def _load_tts(options: EngineOptions) -> tuple[SpeechSynthesizer, str, float]:
    from sotto.engines import tts
    from sotto.models.resolve import resolve_voice

    started = time.perf_counter()
    remote = options.engine_config.remote_tts()
    if remote is not None:
        return remote, remote.name, (time.perf_counter() - started) * 1000.0
    resolved = resolve_voice(options.voice or options.engine_config.tts_voice, lang=options.lang)
    voice = tts.load(resolved.path, threads=options.tts_threads)
    return voice, voice.name, (time.perf_counter() - started) * 1000.0


def _load_llm_gated(options: EngineOptions) -> tuple[LanguageModel, str, float, "ModelCapabilities", float]:
    """The model and the jobs it passed (the probe runs once per model file, then it is cached)."""
    from sotto.agent.capability import capabilities_for

    model, name, load_ms = _load_llm(options)
    started = time.perf_counter()
    capabilities = capabilities_for(model)
    return model, name, load_ms, capabilities, (time.perf_counter() - started) * 1000.0


def _warm_backfill_lexicon() -> None:
    """The ASR backfill's word lexicon (jieba's dictionary: ~1 s) loads here, not inside the
    first turn whose state holds a name (it sat on that turn's first answer)."""
    from sotto.backfill.lexicon import default_lexicon

    default_lexicon()


def load_engines(options: EngineOptions, *, voice: bool = True) -> LoadedEngines:
    """Load the language model and (unless `voice` is False) the voice side by side
    (start-up is on the 5 s budget); a remote engine configured in `options.engine_config`
    is used instead of loading one. The model's capability probe runs the first time a
    model file (or server) is seen (sotto.agent.capability)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="sotto-load") as pool:
        llm_future = pool.submit(_load_llm_gated, options)
        tts_future = pool.submit(_load_tts, options) if voice else None
        lexicon_future = pool.submit(_warm_backfill_lexicon)
        model, llm_file, llm_ms, capabilities, probe_ms = llm_future.result()
        tts, tts_name, tts_ms = tts_future.result() if tts_future is not None else (None, "none", 0.0)
        lexicon_future.result()
    load_ms = {"llm": round(llm_ms, 1), "tts": round(tts_ms, 1), "capability_probe": round(probe_ms, 1)}
    return LoadedEngines(model, tts, llm_file, tts_name, load_ms, engine_config=options.engine_config,
                         capabilities=capabilities)


def make_recognizer(
    lang: str,
    *,
    asr_model: str | None = None,
    transcripts: Sequence[str] | None = None,
    durations_s: Sequence[float] | None = None,
    replay_transcripts: bool = False,
    sample_rate: int = 16000,
    engine_config: EngineConfig | None = None,
) -> tuple[Recognizer, str]:
    """The recognizer for `lang` and its label: with `replay_transcripts` (asked for
    explicitly, e.g. `sotto demo --replay-transcripts`), transcript replay of `transcripts`;
    otherwise the resolution order of `RecognizerFactory` (Wyoming when configured, a Vosk
    model, for English pocketsphinx). ModelNotFound, with the fetch hint, when none fits."""
    config = engine_config or EngineConfig()
    if asr_model is not None:
        config = replace(config, asr_model=asr_model)
    if replay_transcripts:
        from sotto.engines.replay_asr import ReplayConfig, TranscriptReplayRecognizer

        if transcripts is None:
            raise ConfigError("transcript replay needs the script's transcripts")
        # Endpoint like Vosk's (600 ms): a comma pause in synthesised speech can reach ~470 ms.
        replay = TranscriptReplayRecognizer(list(transcripts), sample_rate=sample_rate, durations_s=durations_s,
                                            config=ReplayConfig(endpoint_silence_ms=REPLAY_ENDPOINT_MS))
        return replay, "transcript-replay (asked for; the words are the script's, not recognised)"
    factory = config.recognizers()
    label = factory.label(lang)
    return factory.make(lang, sample_rate=sample_rate), label


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux ru_maxrss is in KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
