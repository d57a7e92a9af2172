"""The demo conversation: a memory script (docs/DESIGN.md) plus `barge_in_after_ms` on the
turn whose reply the simulated user talks over, and its utterances as audio.

The user's utterances are synthesised with the Piper voice once and cached as WAV
files under `sotto.paths.cache_dir()/demo`, keyed by voice and text.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from sotto import paths
from sotto.engines.base import SpeechSynthesizer
from sotto.errors import AudioFormatError, ConfigError, InputRefused
from sotto.memory.evaluation import MAX_SCRIPT_BYTES
from sotto.untrusted import read_json_file

MAX_TURNS = 50
MAX_USER_CHARS = 400
CACHE_VERSION = "1"
LEAD_SILENCE_S = 0.05


@dataclass(frozen=True)
class DemoTurn:
    user: str
    barge_in_after_ms: float | None = None  # the user talks over this turn's reply after this long


@dataclass(frozen=True)
class DemoScript:
    name: str
    lang: str
    turns: tuple[DemoTurn, ...]
    source: str

    @property
    def barge_in_turns(self) -> list[int]:
        return [i + 1 for i, t in enumerate(self.turns) if t.barge_in_after_ms is not None]


def builtin_script_path() -> Path:
    return Path(str(resources.files("sotto.demo").joinpath("conversation_en.json")))


def load_demo_script(path: str | Path | None = None) -> DemoScript:
    """Read and check a demo script; ConfigError says what is wrong and where."""
    source = Path(path) if path is not None else builtin_script_path()
    if not source.exists():
        raise ConfigError(f"{source}: no such script file")
    try:  # bounded before the read, nesting refused
        data: Any = read_json_file(source, what="demo script", max_bytes=MAX_SCRIPT_BYTES)
    except InputRefused as exc:
        raise ConfigError(exc.message) from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list) or not data["turns"]:
        raise ConfigError(f"{source}: a memory script needs a non-empty \"turns\" list")
    if len(data["turns"]) > MAX_TURNS:
        raise ConfigError(f"{source}: at most {MAX_TURNS} turns")
    turns: list[DemoTurn] = []
    for number, raw in enumerate(data["turns"], 1):
        if not isinstance(raw, dict) or not isinstance(raw.get("user"), str) or not raw["user"].strip():
            raise ConfigError(f"{source}: turn {number} needs a non-empty \"user\" string")
        user = " ".join(raw["user"].split())
        if len(user) > MAX_USER_CHARS:
            raise ConfigError(f"{source}: turn {number} is longer than {MAX_USER_CHARS} characters")
        after = raw.get("barge_in_after_ms")
        if after is not None:
            if isinstance(after, bool) or not isinstance(after, (int, float)) or not 0 <= after <= 30000:
                raise ConfigError(f"{source}: turn {number}: barge_in_after_ms must be 0..30000")
            if number == len(data["turns"]):
                raise ConfigError(f"{source}: the last turn cannot be talked over (the next utterance does it)")
        turns.append(DemoTurn(user, None if after is None else float(after)))
    lang = data.get("lang", "en")
    if not isinstance(lang, str) or not lang:
        raise ConfigError(f"{source}: \"lang\" must be a language code such as \"en\"")
    return DemoScript(str(data.get("name") or source.stem), lang, tuple(turns), str(source))


@dataclass(frozen=True)
class Utterance:
    text: str
    pcm: bytes  # PCM16 mono
    sample_rate: int

    @property
    def duration_s(self) -> float:
        return len(self.pcm) / 2 / self.sample_rate


def _cache_file(voice_name: str, text: str) -> Path:
    key = hashlib.sha256(f"{CACHE_VERSION}\0{voice_name}\0{text}".encode("utf-8")).hexdigest()[:24]
    folder = paths.cache_dir() / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{key}.wav"


def _read_cached(path: Path) -> tuple[bytes, int] | None:
    from sotto.sim.audio import read_wav

    try:
        samples, rate = read_wav(path)
    except AudioFormatError:
        return None  # a broken cache file is just re-synthesised
    return samples.astype("<i2").tobytes(), rate


def synthesize_utterances(script: DemoScript, tts: SpeechSynthesizer) -> tuple[list[Utterance], int]:
    """Every user utterance as audio (cached); returns them and how many were synthesised now."""
    return synthesize_texts([turn.user for turn in script.turns], tts)


def synthesize_texts(texts: list[str], tts: SpeechSynthesizer) -> tuple[list[Utterance], int]:
    """Each text as one utterance (cached by voice and text); and how many were synthesised now."""
    from sotto.sim.audio import write_wav

    out: list[Utterance] = []
    made = 0
    for text in texts:
        path = _cache_file(tts.name, text)
        cached = _read_cached(path) if path.is_file() else None
        if cached is None:
            chunks = list(tts.synthesize(text))
            if not chunks:
                raise ConfigError(f"the voice produced no audio for {text!r}")
            rate = chunks[0].sample_rate
            lead = bytes(2 * int(rate * LEAD_SILENCE_S))
            pcm = lead + b"".join(c.pcm for c in chunks)
            tmp = path.with_suffix(".tmp.wav")
            write_wav(tmp, np.frombuffer(pcm, dtype="<i2"), rate)
            tmp.replace(path)  # never a half-written cache file
            cached = (pcm, rate)
            made += 1
        out.append(Utterance(text, cached[0], cached[1]))
    return out, made
