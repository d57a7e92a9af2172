"""Fake engines for the pipeline and demo tests: no weights, instant, deterministic."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from sotto.engines.base import SpeechAudio
from sotto.runtime import LoadedEngines
from fakes_llm import FakeLanguageModel

RATE = 22050


class FakeSpeechTTS:
    """Speech-like audio: one burst of seeded noise per word with short gaps, at 22050 Hz,
    so the replay recognizer and the echo gate see something that behaves like speech."""

    name = "fake-speech-tts"
    sample_rate = RATE

    def __init__(self, word_ms: float = 110.0, gap_ms: float = 40.0, amplitude: float = 4000.0) -> None:
        self.word_ms = word_ms
        self.gap_ms = gap_ms
        self.amplitude = amplitude
        self.texts: list[str] = []

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        self.texts.append(text)
        rng = np.random.default_rng(sum(text.encode()) % 10_000)
        pieces = []
        for _ in text.split() or [""]:
            word = rng.normal(0.0, self.amplitude, int(RATE * self.word_ms / 1000))
            pieces += [word, np.zeros(int(RATE * self.gap_ms / 1000))]
        pcm = np.clip(np.concatenate(pieces), -32768, 32767).astype("<i2").tobytes()
        yield SpeechAudio(text, pcm, RATE)


def fake_engines(replies: tuple[str, ...] = ("Okay, noted.",)) -> LoadedEngines:
    return LoadedEngines(FakeLanguageModel(replies=replies), FakeSpeechTTS(), "fake-llm.gguf", "fake-speech-tts")
