"""The composition root: the one place that builds engines, agent, responder and harness.

    engines = load_engines(PipelineOptions())                  # LLM + Piper, loaded side by side
    # or PipelineOptions(engine_config=EngineConfig.from_args(args)): the LLM behind an
    # OpenAI-compatible server, TTS behind wyoming-piper, whichever is configured
    recognizer, asr_label = make_recognizer("en", transcripts=[...])
    pipeline = Pipeline(engines, Store(), knowledge=load_configured_knowledge(path))
    session, responder = pipeline.session(port, recognizer, session_id="kitchen", profile="board:kiosk-1")
    usage = await session.run()
    pipeline.close()                                           # ends the sessions (profile promotion)

Speech out streams: the agent yields reply sentences as the model writes them, the
harness synthesises each with Piper on a worker thread, resamples it to the board's
speaker rate and sends it in pieces within the board's credits (the link encodes it in
the negotiated wire format), so the first sentence plays while the next is written.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import sotto  # noqa: F401  (offline environment before any engine import)
from sotto.engines.base import LanguageModel, Recognizer, SpeechSynthesizer
from sotto.engines.config import EngineConfig
from sotto.errors import ModelNotFound
from sotto.voice.harness import VoiceConfig, VoiceSession
from sotto.voice.trace import TraceSink
from sotto.voice.turn_runner import TurnRunner

if TYPE_CHECKING:
    from sotto.agent.capability import ModelCapabilities
    from sotto.knowledge.base import KnowledgeBase
    from sotto.memory.store import Store
    from sotto.link.events import BoardPort

REPLAY_ENDPOINT_MS = 650.0


@dataclass(frozen=True)
class PipelineOptions:
    model: str | None = None  # GGUF path or name (default: resolution order, the embedded SmolLM2)
    voice: str | None = None  # Piper .onnx path or name (default: joe)
    asr_model: str | None = None  # Vosk model folder or name
    lang: str = "en"
    n_ctx: int = 2048
    llm_threads: int | None = None  # default: sotto.engines.llm.default_threads()
    tts_threads: int | None = None
    # Remote engines (--llm-url, --tts-wyoming, --asr-wyoming, --engines-config); in-process
    # for whatever it does not configure. Its llm_path / tts_voice / asr_model are used when
    # model / voice / asr_model above are not given.
    engine_config: EngineConfig = field(default_factory=EngineConfig)


@dataclass
class LoadedEngines:
    llm: LanguageModel
    tts: SpeechSynthesizer
    llm_file: str  # e.g. SmolLM2-135M-Instruct.Q4_1.gguf
    tts_name: str  # e.g. en_US-joe-medium
    load_ms: dict[str, float] = field(default_factory=dict)
    # The jobs the model passed in its capability probe (cached per model file; None: not probed).
    capabilities: "ModelCapabilities | None" = None


def _load_llm(options: PipelineOptions) -> tuple[LanguageModel, str, float]:
    from sotto.engines import llm
    from sotto.models.resolve import resolve_llm

    started = time.perf_counter()
    remote = options.engine_config.remote_llm()
    if remote is not None:
        return remote, remote.name, (time.perf_counter() - started) * 1000.0
    resolved = resolve_llm(options.model or options.engine_config.llm_path)
    model = llm.load(resolved.path, n_ctx=options.n_ctx, n_threads=options.llm_threads or llm.default_threads())
    return model, resolved.path.name, (time.perf_counter() - started) * 1000.0


def _load_tts(options: PipelineOptions) -> tuple[SpeechSynthesizer, str, float]:
    from sotto.engines import tts
    from sotto.models.resolve import resolve_voice

    started = time.perf_counter()
    remote = options.engine_config.remote_tts()
    if remote is not None:
        return remote, remote.name, (time.perf_counter() - started) * 1000.0
    resolved = resolve_voice(options.voice or options.engine_config.tts_voice, lang=options.lang)
    voice = tts.load(resolved.path, threads=options.tts_threads)
    return voice, voice.name, (time.perf_counter() - started) * 1000.0


def _load_llm_gated(options: PipelineOptions) -> tuple[LanguageModel, str, float, "ModelCapabilities", float]:
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


def load_engines(options: PipelineOptions) -> LoadedEngines:
    """Load the language model and the voice side by side (start-up is on the 5 s budget);
    a remote engine configured in `options.engine_config` is used instead of loading one."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=3, thread_name_prefix="sotto-load") as pool:
        llm_future = pool.submit(_load_llm_gated, options)
        tts_future = pool.submit(_load_tts, options)
        lexicon_future = pool.submit(_warm_backfill_lexicon)
        model, llm_file, llm_ms, capabilities, probe_ms = llm_future.result()
        voice, tts_name, tts_ms = tts_future.result()
        lexicon_future.result()
    load_ms = {"llm": round(llm_ms, 1), "tts": round(tts_ms, 1), "capability_probe": round(probe_ms, 1)}
    return LoadedEngines(model, voice, llm_file, tts_name, load_ms, capabilities)


def vosk_available(lang: str, asr_model: str | None = None) -> bool:
    from sotto.models.resolve import resolve_vosk

    try:
        resolve_vosk(lang, asr_model)
    except ModelNotFound:
        if asr_model is not None:
            raise  # an explicit model that is missing is an error, not a fallback
        return False
    return True


def make_recognizer(
    lang: str,
    *,
    asr_model: str | None = None,
    transcripts: Sequence[str] | None = None,
    durations_s: Sequence[float] | None = None,
    sample_rate: int = 16000,
    engine_config: EngineConfig | None = None,
) -> tuple[Recognizer, str]:
    """A Wyoming ASR service when configured; else Vosk when a model for `lang` is
    installed (or given); else, for a scripted conversation, transcript replay, labelled
    as such. Returns (recognizer, label)."""
    from sotto.models.resolve import resolve_vosk

    if engine_config is not None and engine_config.asr_wyoming:
        remote = engine_config.recognizers().make(lang, sample_rate=sample_rate)
        return remote, f"wyoming {engine_config.asr_wyoming}"
    asr_model = asr_model or (engine_config.asr_model if engine_config is not None else None)
    try:
        resolved = resolve_vosk(lang, asr_model)
    except ModelNotFound:
        if asr_model is not None or transcripts is None:
            raise
        from sotto.engines.replay_asr import TranscriptReplayRecognizer

        from sotto.engines.replay_asr import ReplayConfig

        # Endpoint like Vosk's (600 ms): a comma pause in synthesised speech can reach ~470 ms.
        replay = TranscriptReplayRecognizer(list(transcripts), sample_rate=sample_rate, durations_s=durations_s,
                                            config=ReplayConfig(endpoint_silence_ms=REPLAY_ENDPOINT_MS))
        return replay, f"transcript-replay (no Vosk model for {lang} installed)"
    from sotto.engines import asr

    recognizer = asr.load(resolved.path, lang=lang, sample_rate=sample_rate)
    return recognizer, f"vosk {resolved.name}"


def default_voice_config() -> VoiceConfig:
    return VoiceConfig()


class Pipeline:
    """Engines + working memory + the turn engine, ready to serve sessions on any `BoardPort`."""

    def __init__(self, engines: LoadedEngines, store: "Store", *, lang: str = "en",
                 voice_config: VoiceConfig | None = None, knowledge: "KnowledgeBase | None" = None) -> None:
        """`knowledge`: system knowledge for the replies (`sotto.knowledge.load_configured_knowledge`)."""
        from sotto.agent import Agent

        self.engines = engines
        self.store = store
        self.lang = lang
        self.agent = Agent(engines.llm, store, knowledge=knowledge, capabilities=engines.capabilities)
        self.runner = TurnRunner(self.agent, engines.tts)
        self.voice_config = voice_config or default_voice_config()
        self.sessions: list[str] = []

    def session(
        self,
        port: "BoardPort",
        recognizer: Recognizer,
        *,
        session_id: str,
        sinks: tuple[TraceSink, ...] = (),
        trace_folder: Path | None = None,
        profile: str | None = None,
    ) -> VoiceSession:
        """`profile`: the long-term profile the session is seeded from and promoted to at
        its end (a user name or a key like "board:kiosk-1"; None: none until a name is said)."""
        self.runner.open_session(session_id, profile=profile)  # on the model worker, ahead of the first turn
        self.sessions.append(session_id)
        return VoiceSession(port, recognizer, self.runner, session_id=session_id, lang=self.lang,
                            config=self.voice_config, sinks=sinks, trace_folder=trace_folder)

    def close(self) -> None:
        """End every session (each promotes its profile) and stop the workers. Blocking."""
        ends = [self.runner.end_session(session_id) for session_id in self.sessions]
        self.sessions.clear()
        concurrent.futures.wait(ends)
        self.runner.close()


def peak_rss_mb() -> float:
    """This process's peak resident memory (Linux ru_maxrss is in KiB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
