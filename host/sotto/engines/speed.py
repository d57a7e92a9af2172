"""Measure each model's speed on this host, cache it, and check it against the budgets.

- LLM: prompt tokens/s (a ~300-token prompt from an empty cache) and generation tokens/s.
- TTS: real-time factor (synthesis time / audio time) over two sentences.
- Vosk, pocketsphinx: real-time factor on a short clip of synthesised speech (Piper joe at 16 kHz).

Results are cached in `cache_dir()/model_speed.json`, keyed by path, size and mtime,
so `sotto models list` is fast after the first run.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sotto.models.resolve import ResolvedModel
from sotto.paths import cache_dir

CACHE_FILE = "model_speed.json"
CACHE_VERSION = 1

# Speed is measured on a ~300-token prompt from an empty cache and ~40 generated tokens.
BUDGET_PROMPT_TOKENS = 300
BUDGET_GENERATED_TOKENS = 40
# The budget check models a reply turn as the pipeline runs it: the static prompt prefix
# is already in llama.cpp's KV cache, so only the turn's new tokens (state + words) are
# evaluated, then tokens are generated up to the end of the first sentence, which is
# then synthesised.
TURN_PROMPT_TOKENS = 80
FIRST_SENTENCE_TOKENS = 15
FIRST_SENTENCE_AUDIO_S = 1.5
FIRST_ANSWER_TARGET_MS = 1500.0
FIRST_ANSWER_LIMIT_MS = 2500.0
TTS_RTF_LIMIT = 0.5  # slower than this and speech stalls while the reply is generated
VOSK_RTF_LIMIT = 0.8  # recognition must keep up with the microphone

_MEASURE_TEXT = (
    "The user is planning a trip. They need a business car at the airport tomorrow at three in the "
    "afternoon to pick up Mr. Wang, who arrives on the flight from Shanghai. They prefer a quiet driver, "
    "no music, and a bottle of water in the back seat. After the pickup they go to the hotel near the "
    "station, check in, and then have dinner at a restaurant that serves vegetarian food. "
)
_TTS_SENTENCES = ("Your car is booked for three in the afternoon.", "Mr. Wang will be waiting at gate five.")


@dataclass
class SpeedReport:
    kind: str
    path: str
    measured_at: float
    load_ms: float
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def _cache_key(model: ResolvedModel) -> str:
    stat = model.path.stat()
    return f"{model.kind}|{model.path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


class SpeedCache:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or cache_dir() / CACHE_FILE
        self._data: dict[str, Any] = {}
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and loaded.get("version") == CACHE_VERSION:
                self._data = loaded.get("entries", {})
        except (OSError, ValueError):
            self._data = {}  # missing or corrupt cache: measure again

    def get(self, model: ResolvedModel) -> SpeedReport | None:
        raw = self._data.get(_cache_key(model))
        if not isinstance(raw, dict):
            return None
        try:
            return SpeedReport(**raw)
        except TypeError:
            return None

    def put(self, model: ResolvedModel, report: SpeedReport) -> None:
        self._data[_cache_key(model)] = asdict(report)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": CACHE_VERSION, "entries": self._data}, indent=1), encoding="utf-8")
        tmp.replace(self.path)


# ------------------------------------------------------------------ measurements


def measure_llm(path: Path) -> SpeedReport:
    from sotto.engines import llm
    from sotto.engines.base import ChatMessage

    start = time.perf_counter()
    engine = llm.load(path, n_threads=llm.default_threads())  # measured as the pipeline runs it
    load_ms = (time.perf_counter() - start) * 1000
    # Build a prompt of about BUDGET_PROMPT_TOKENS tokens from a realistic text.
    text = _MEASURE_TEXT
    while engine.count_tokens(text) < BUDGET_PROMPT_TOKENS - 20:
        text += _MEASURE_TEXT
    messages = [ChatMessage("system", "Summarise the notes in one short sentence."), ChatMessage("user", text)]
    # Best of two runs from an empty KV cache: the host is shared and one run is noisy.
    runs = []
    for _ in range(2):
        engine.reset_cache()
        engine.complete(messages, max_tokens=BUDGET_GENERATED_TOKENS, temperature=0.0)
        runs.append(engine.last_call)
    timing = min(runs, key=lambda t: t.total_ms)
    prompt_tps = timing.prompt_tokens / (timing.first_token_ms / 1000) if timing.first_token_ms > 0 else 0.0
    gen_ms = timing.total_ms - timing.first_token_ms
    gen_tokens = max(timing.completion_tokens - 1, 0)
    gen_tps = gen_tokens / (gen_ms / 1000) if gen_ms > 0 and gen_tokens else 0.0
    return SpeedReport(
        kind="llm",
        path=str(path),
        measured_at=time.time(),
        load_ms=round(load_ms, 1),
        metrics={
            "threads": float(llm.default_threads()),
            "prompt_tokens": float(timing.prompt_tokens),
            "prompt_tok_s": round(prompt_tps, 1),
            "gen_tokens": float(gen_tokens),
            "gen_tok_s": round(gen_tps, 1),
        },
    )


def measure_tts(path: Path) -> SpeedReport:
    from sotto.engines import tts

    start = time.perf_counter()
    engine = tts.load(path)
    load_ms = (time.perf_counter() - start) * 1000
    synth_ms = audio_ms = 0.0
    for sentence in _TTS_SENTENCES:
        engine.synthesize_sentence(sentence)
        synth_ms += engine.timings[-1].synth_ms
        audio_ms += engine.timings[-1].audio_ms
    return SpeedReport(
        kind="tts",
        path=str(path),
        measured_at=time.time(),
        load_ms=round(load_ms, 1),
        metrics={
            "rtf": round(synth_ms / audio_ms, 3) if audio_ms else math.inf,
            "sentence_ms": round(synth_ms / len(_TTS_SENTENCES), 1),
            "sample_rate": float(engine.sample_rate),
        },
    )


def _speech_clip_16k() -> bytes:
    """About three seconds of real speech (Piper joe), resampled to 16 kHz."""
    from sotto.audio.resample import resample_pcm16
    from sotto.engines import tts

    engine = tts.load(warm_up=False)
    audio = engine.synthesize_sentence("Please book a business car for tomorrow at three in the afternoon.")
    return resample_pcm16(audio.pcm, audio.sample_rate, 16000)


def measure_vosk(path: Path) -> SpeedReport:
    from vosk import KaldiRecognizer, Model, SetLogLevel

    SetLogLevel(-1)
    clip = _speech_clip_16k()
    start = time.perf_counter()
    model = Model(str(path))
    load_ms = (time.perf_counter() - start) * 1000
    recognizer = KaldiRecognizer(model, 16000)
    start = time.perf_counter()
    step = 3200  # 100 ms of 16 kHz PCM16, as the link delivers it
    for offset in range(0, len(clip), step):
        recognizer.AcceptWaveform(clip[offset : offset + step])
    recognizer.FinalResult()
    decode_ms = (time.perf_counter() - start) * 1000
    audio_ms = len(clip) / 2 / 16000 * 1000
    return SpeedReport(
        kind="vosk",
        path=str(path),
        measured_at=time.time(),
        load_ms=round(load_ms, 1),
        metrics={"rtf": round(decode_ms / audio_ms, 3), "clip_ms": round(audio_ms, 1)},
    )


def measure_pocketsphinx(path: Path) -> SpeedReport:
    from sotto.engines import sphinx_asr
    from sotto.engines.transcribe import transcribe

    clip = _speech_clip_16k()
    start = time.perf_counter()
    recognizer = sphinx_asr.load(model=path)
    load_ms = (time.perf_counter() - start) * 1000
    transcribe(recognizer, clip, 16000)
    return SpeedReport(
        kind="pocketsphinx",
        path=str(path),
        measured_at=time.time(),
        load_ms=round(load_ms, 1),
        metrics={"rtf": round(recognizer.real_time_factor or 0.0, 3), "clip_ms": round(len(clip) / 32.0, 1)},
    )


MEASURERS = {"llm": measure_llm, "tts": measure_tts, "vosk": measure_vosk, "pocketsphinx": measure_pocketsphinx}


def speed_of(model: ResolvedModel, cache: SpeedCache, *, force: bool = False) -> SpeedReport:
    """The cached measurement, or a fresh one (errors are reported in the result, not raised)."""
    if not force:
        cached = cache.get(model)
        if cached is not None:
            return cached
    try:
        report = MEASURERS[model.kind](model.path)
    except Exception as exc:  # a model that cannot be measured is listed with the reason
        report = SpeedReport(model.kind, str(model.path), time.time(), 0.0, {}, f"{type(exc).__name__}: {exc}")
    cache.put(model, report)
    return report


# ------------------------------------------------------------------ budgets


def estimate_first_answer_ms(llm: SpeedReport, tts: SpeedReport | None) -> float | None:
    """First answer audio of a model-written reply: the turn's new prompt tokens, the first sentence, its TTS."""
    prompt_tps = llm.metrics.get("prompt_tok_s", 0.0)
    gen_tps = llm.metrics.get("gen_tok_s", 0.0)
    if prompt_tps <= 0 or gen_tps <= 0:
        return None
    ms = TURN_PROMPT_TOKENS / prompt_tps * 1000 + FIRST_SENTENCE_TOKENS / gen_tps * 1000
    if tts is not None and "rtf" in tts.metrics:
        ms += tts.metrics["rtf"] * FIRST_SENTENCE_AUDIO_S * 1000
    return round(ms, 1)


def budget_warnings(model: ResolvedModel, report: SpeedReport, tts: SpeedReport | None = None) -> list[str]:
    if report.error:
        return [f"{model.name}: could not be measured ({report.error})"]
    warnings: list[str] = []
    if model.kind == "llm":
        estimate = estimate_first_answer_ms(report, tts)
        if estimate is None:
            warnings.append(f"{model.name}: no usable speed measurement")
        elif estimate > FIRST_ANSWER_TARGET_MS:
            level = "over the hard limit" if estimate > FIRST_ANSWER_LIMIT_MS else "over the target"
            warnings.append(
                f"{model.name}: a reply it writes would reach first audio in about {estimate:.0f} ms "
                f"({TURN_PROMPT_TOKENS} new prompt tokens, {FIRST_SENTENCE_TOKENS} tokens to the first sentence, "
                f"its speech), {level} ({FIRST_ANSWER_TARGET_MS:.0f} ms target, {FIRST_ANSWER_LIMIT_MS:.0f} ms limit) "
                f"on this host: turns will fall back to replies composed from memory"
            )
    elif model.kind == "tts" and report.metrics.get("rtf", 0.0) > TTS_RTF_LIMIT:
        warnings.append(f"{model.name}: real-time factor {report.metrics['rtf']:.2f} > {TTS_RTF_LIMIT}: speech will stall")
    elif model.kind in ("vosk", "pocketsphinx") and report.metrics.get("rtf", 0.0) > VOSK_RTF_LIMIT:
        warnings.append(f"{model.name}: real-time factor {report.metrics['rtf']:.2f} > {VOSK_RTF_LIMIT}: recognition lags the microphone")
    return warnings
