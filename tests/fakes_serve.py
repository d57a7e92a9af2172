"""Fakes for the `sotto serve` tests: deterministic speech engines (no weights)."""

from __future__ import annotations

import threading
import time
from typing import Iterator

from sotto.engines.base import AudioChunk, SpeechAudio, Transcript
from sotto.errors import RemoteEngineUnavailable
from sotto.text.sentences import split_sentences

FAKE_TTS_RATE = 16000


class FakeSynthesizer:
    """10 ms of a constant sample per character; `down` makes it fail like a remote TTS that is gone."""

    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.name = "fake-tts"
        self.sample_rate = FAKE_TTS_RATE
        self.delay_s = delay_s
        self.down = False
        self.spoken: list[str] = []
        self._lock = threading.Lock()

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        if self.down:
            raise RemoteEngineUnavailable("fake TTS server is down")
        for sentence in split_sentences(text):
            if self.delay_s:
                time.sleep(self.delay_s)
            with self._lock:
                self.spoken.append(sentence)
            yield SpeechAudio(sentence, b"\x10\x00" * (160 * len(sentence)), self.sample_rate)


class FakeRecognizer:
    """Hears `text` in any audio whose loudness is above a threshold (final at flush)."""

    def __init__(self, text: str, sample_rate: int = 16000) -> None:
        self.name = "fake-asr"
        self.sample_rate = sample_rate
        self.text = text
        self.bytes_heard = 0
        self._turns: set[int] = set()

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        self.bytes_heard += len(chunk.pcm)
        return []

    def flush(self, turn_id: int) -> list[Transcript]:
        if turn_id in self._turns or not self.bytes_heard:
            return []
        self._turns.add(turn_id)
        return [Transcript(turn_id, self.text, final=True)]


class FakeRecognizerSource:
    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts  # lang -> what the fake recognizer hears
        self.made: list[FakeRecognizer] = []

    def available(self, lang: str) -> bool:
        return lang in self.texts

    def languages(self) -> list[str]:
        return sorted(self.texts)

    def make(self, lang: str, *, sample_rate: int = 16000) -> FakeRecognizer:
        recognizer = FakeRecognizer(self.texts[lang], sample_rate)
        self.made.append(recognizer)
        return recognizer
