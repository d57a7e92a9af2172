"""Short phrases synthesised at start-up, so the degradation ladder never waits for TTS."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sotto.audio.resample import resample_pcm16
from sotto.engines.base import SpeechSynthesizer

DEFAULT_ACKS = ("One moment.", "Let me think.", "Okay, let me see.")
# Deep work (the model's memory refinement, a long answer) is deferred; the short answer follows.
DEFAULT_DEFERRAL = "The short version for now."


@dataclass(frozen=True)
class CachedPhrase:
    text: str
    pcm: bytes  # PCM16 at the speaker rate


@dataclass
class PhraseCache:
    acks: list[CachedPhrase]
    deferral: CachedPhrase
    _next_ack: int = field(default=0)

    def next_ack(self) -> CachedPhrase:
        """Acknowledgements rotate so the agent does not say the same filler every turn."""
        phrase = self.acks[self._next_ack % len(self.acks)]
        self._next_ack += 1
        return phrase


def _synthesize_all(tts: SpeechSynthesizer, text: str, speaker_rate: int) -> CachedPhrase:
    pcm = b"".join(resample_pcm16(a.pcm, a.sample_rate, speaker_rate) for a in tts.synthesize(text))
    return CachedPhrase(text, pcm)


async def build_phrase_cache(
    tts: SpeechSynthesizer,
    speaker_rate: int,
    acks: tuple[str, ...] = DEFAULT_ACKS,
    deferral: str = DEFAULT_DEFERRAL,
) -> PhraseCache:
    loop = asyncio.get_running_loop()
    cached = [await loop.run_in_executor(None, _synthesize_all, tts, text, speaker_rate) for text in (*acks, deferral)]
    return PhraseCache(cached[:-1], cached[-1])
