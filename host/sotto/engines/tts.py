"""Piper text-to-speech behind the SpeechSynthesizer protocol.

`load()` returns a `PiperVoiceEngine`: the embedded en_US-joe-medium voice by default,
or any Piper voice .onnx by path (with its .onnx.json beside it). `synthesize(text)`
yields one `SpeechAudio` per sentence as soon as each is ready, so the caller can
send the first sentence while the next is still being synthesised.

The onnxruntime session is built here rather than by `PiperVoice.load()` so that the
thread count can be set: on a 2-core host Piper shares the CPU with llama.cpp, and
spinning worker threads would steal cycles from token generation.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import sotto  # noqa: F401  (sets ORT_DISABLE_TELEMETRY before onnxruntime loads)
from sotto.engines.base import SpeechAudio
from sotto.errors import ModelLoadFailed, ModelNotFound
from sotto.text.sentences import split_sentences
from sotto.untrusted import clean_text

if TYPE_CHECKING:
    from piper import PiperVoice


def default_tts_threads(cpu_count: int | None = None) -> int:
    """Intra-op threads for Piper: one on a 2-core host (the LLM needs the other)."""
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    if cores <= 2:
        return 1
    return min(4, cores // 2)


@dataclass
class SentenceTiming:
    """How long one sentence took to synthesise (for latency reports)."""

    text: str
    synth_ms: float
    audio_ms: float

    @property
    def real_time_factor(self) -> float:
        return self.synth_ms / self.audio_ms if self.audio_ms > 0 else float("inf")


@dataclass
class PiperVoiceEngine:
    """A loaded Piper voice. Not thread-safe: use one engine per synthesis thread."""

    voice: "PiperVoice"
    model_path: Path
    name: str
    sample_rate: int
    threads: int
    load_ms: float
    timings: list[SentenceTiming] = field(default_factory=list)
    max_timings: int = 200

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        """One SpeechAudio per sentence, in order, each yielded as soon as it is ready."""
        for sentence in split_sentences(text):
            audio = self.synthesize_sentence(sentence)
            if audio.pcm:
                yield audio

    def synthesize_sentence(self, sentence: str) -> SpeechAudio:
        """The whole text as one chunk (Piper may phonemise it as several sentences)."""
        sentence = clean_text(sentence)  # Piper refuses an embedded NUL; a control character is never speech
        start = time.perf_counter()
        pcm = b"".join(chunk.audio_int16_bytes for chunk in self.voice.synthesize(sentence))
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        audio = SpeechAudio(text=sentence, pcm=pcm, sample_rate=self.sample_rate)
        self.timings.append(SentenceTiming(sentence, elapsed_ms, audio.duration_s * 1000.0))
        del self.timings[: -self.max_timings]
        return audio

    def warm_up(self) -> float:
        """Synthesise a short phrase once (first run allocates); returns its ms."""
        start = time.perf_counter()
        self.synthesize_sentence("Ready.")
        self.timings.pop()
        return (time.perf_counter() - start) * 1000.0

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.model_path),
            "sample_rate": self.sample_rate,
            "threads": self.threads,
            "load_ms": round(self.load_ms, 1),
        }


def voice_name(model_path: Path) -> str:
    """`en_US-joe-medium` for `.../en_US-joe-medium.onnx`."""
    return model_path.name[: -len(".onnx")] if model_path.name.endswith(".onnx") else model_path.stem


def _voice_paths(voice: str | Path | None) -> tuple[Path, Path]:
    if voice is None:
        from sotto.models.embedded import joe_voice_onnx

        model = joe_voice_onnx()
    else:
        model = Path(voice).expanduser()
        if model.is_dir():
            candidates = sorted(model.glob("*.onnx"))
            if len(candidates) != 1:
                raise ModelNotFound(
                    f"{model} holds {len(candidates)} .onnx files; expected exactly one Piper voice",
                    hint="pass the .onnx file itself",
                )
            model = candidates[0]
    if not model.is_file():
        raise ModelNotFound(f"Piper voice {model} does not exist", hint="sotto models list shows the voices found")
    config = model.with_name(model.name + ".json")
    if not config.is_file():
        raise ModelNotFound(
            f"Piper voice config {config} is missing",
            hint="a Piper voice is two files: NAME.onnx and NAME.onnx.json",
        )
    return model, config


def load(voice: str | Path | None = None, *, threads: int | None = None, warm_up: bool = True) -> PiperVoiceEngine:
    """Load a Piper voice: the embedded joe voice by default, or a .onnx path (or its folder).

    Raises ModelNotFound when a file is missing and ModelLoadFailed when the files exist
    but are not a usable Piper voice.
    """
    model_path, config_path = _voice_paths(voice)
    try:
        config_dict = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelLoadFailed(f"cannot read Piper voice config {config_path}: {exc}") from exc

    start = time.perf_counter()
    try:
        import onnxruntime
        from piper import PiperConfig, PiperVoice
        from piper.config import PhonemeType
    except ImportError as exc:
        raise ModelLoadFailed(f"piper-tts is not installed: {exc}", hint="pip install piper-tts") from exc

    try:
        piper_config = PiperConfig.from_dict(config_dict)
    except (KeyError, ValueError, TypeError) as exc:
        raise ModelLoadFailed(f"{config_path} is not a Piper voice config: {exc!r}") from exc
    if piper_config.phoneme_type == PhonemeType.PINYIN:
        # Piper would download its g2pW model from the internet on first use: never at run time.
        g2pw = model_path.parent / "g2pW" / "g2pw.onnx"
        if not g2pw.is_file():
            raise ModelNotFound(
                f"voice {model_path.name} needs the g2pW model at {g2pw}, which sotto will not download at run time",
                hint="use a Chinese voice with espeak phonemes (zh_CN-huayan-medium) or place g2pW beside the voice",
            )

    thread_count = threads if threads is not None else default_tts_threads()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = thread_count
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    # Idle ORT workers spin by default; on 2 cores that steals time from llama.cpp.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        session = onnxruntime.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors for bad model files
        raise ModelLoadFailed(f"onnxruntime cannot load Piper voice {model_path}: {exc}") from exc

    piper_voice = PiperVoice(session=session, config=piper_config, download_dir=model_path.parent)
    engine = PiperVoiceEngine(
        voice=piper_voice,
        model_path=model_path,
        name=voice_name(model_path),
        sample_rate=int(piper_config.sample_rate),
        threads=thread_count,
        load_ms=0.0,
    )
    if warm_up:
        try:
            engine.warm_up()
        except Exception as exc:  # a voice that loads but cannot speak is a load failure
            raise ModelLoadFailed(f"Piper voice {model_path.name} failed its first synthesis: {exc}") from exc
    engine.load_ms = (time.perf_counter() - start) * 1000.0
    return engine
