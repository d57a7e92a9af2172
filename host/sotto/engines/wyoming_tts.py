"""Text-to-speech served by a Wyoming TTS service (e.g. `wyoming-piper`), behind `SpeechSynthesizer`.

One `synthesize` event per sentence, one connection per sentence: the first sentence's
audio is yielded as soon as the server has sent it, like the in-process Piper engine.
A server that is down or stalls raises `RemoteEngineUnavailable` within the timeout;
the caller (the voice harness, `sotto serve`) degrades the turn.

    tts = WyomingSynthesizer("127.0.0.1:10200")           # wyoming-piper on loopback
    for audio in tts.synthesize("Hello there. How are you?"): ...
"""

from __future__ import annotations

import time
from typing import Iterator

from sotto.engines.base import SpeechAudio, SpeechSynthesizer
from sotto.engines.wyoming_common import WyomingAddress, WyomingConnection, parse_address
from sotto.errors import RemoteEngineUnavailable
from sotto.text.sentences import split_sentences
from sotto.untrusted import clean_text

MAX_SENTENCE_AUDIO_S = 60.0  # bound what a server may send for one sentence
DEFAULT_SAMPLE_RATE = 22050  # until the server has told us (wyoming-piper's medium voices)


class WyomingSynthesizer:
    def __init__(
        self,
        address: str | WyomingAddress,
        *,
        voice: str | None = None,
        connect_timeout_s: float = 2.0,
        read_timeout_s: float = 10.0,
    ) -> None:
        self.address = parse_address(address) if isinstance(address, str) else address
        self.voice = voice
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.name = f"wyoming:{voice or self.address.label}"
        self.sample_rate = DEFAULT_SAMPLE_RATE  # updated from each audio-start
        self.last_synth_ms = 0.0

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        for sentence in split_sentences(text):
            audio = self.synthesize_sentence(sentence)
            if audio.pcm:
                yield audio

    def synthesize_sentence(self, sentence: str) -> SpeechAudio:
        from wyoming.audio import AudioChunk, AudioStart, AudioStop
        from wyoming.error import Error
        from wyoming.event import Event
        from wyoming.tts import Synthesize, SynthesizeVoice

        sentence = clean_text(sentence)  # a control character is never speech (Piper refuses NUL)
        started = time.perf_counter()
        request = Synthesize(text=sentence, voice=SynthesizeVoice(name=self.voice) if self.voice else None)
        pieces: list[bytes] = []
        total = 0
        rate, width, channels = self.sample_rate, 2, 1
        with WyomingConnection(self.address, connect_timeout_s=self.connect_timeout_s,
                               read_timeout_s=self.read_timeout_s, what="Wyoming TTS") as conn:
            conn.write(request.event())
            while True:
                event = conn.read()
                assert isinstance(event, Event)
                if AudioStart.is_type(event.type):
                    start = AudioStart.from_event(event)
                    rate, width, channels = start.rate, start.width, start.channels
                elif AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    rate, width, channels = chunk.rate, chunk.width, chunk.channels
                    total += len(chunk.audio)
                    if total > MAX_SENTENCE_AUDIO_S * rate * width * channels:
                        raise RemoteEngineUnavailable(f"Wyoming TTS at {self.address.label} sent over {MAX_SENTENCE_AUDIO_S:g} s for one sentence")
                    pieces.append(chunk.audio)
                elif AudioStop.is_type(event.type):
                    break
                elif Error.is_type(event.type):
                    raise RemoteEngineUnavailable(f"Wyoming TTS at {self.address.label}: {Error.from_event(event).text}")
        if width != 2:
            raise RemoteEngineUnavailable(f"Wyoming TTS at {self.address.label} sent {8 * width}-bit audio; sotto needs 16-bit")
        pcm = b"".join(pieces)
        if channels > 1:
            pcm = _first_channel(pcm, channels)
        self.sample_rate = rate
        self.last_synth_ms = (time.perf_counter() - started) * 1000.0
        return SpeechAudio(text=sentence, pcm=pcm, sample_rate=rate)


def _first_channel(pcm: bytes, channels: int) -> bytes:
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % (2 * channels)], dtype="<i2")
    return samples.reshape(-1, channels)[:, 0].astype("<i2").tobytes()


def _check_protocol(engine: WyomingSynthesizer) -> SpeechSynthesizer:
    return engine
