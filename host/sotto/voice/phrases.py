"""Speech for the turn engine: the one "synthesise, resample, join", and the short phrases
synthesised once per output rate, so the degradation ladder never waits for TTS."""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.audio.resample import resample_pcm16
from sotto.engines.base import SpeechSynthesizer

DEFAULT_ACKS = ("One moment.", "Let me think.", "Okay, let me see.")
# Said only when deep work is actually deferred (the model's check of the notes, see
# sotto.agent.Turn.deep_work), and it says what; the answer follows.
DEFAULT_DEFERRAL = "I'll check my notes on that later."


def synthesize_pcm(tts: SpeechSynthesizer, text: str, rate: int) -> bytes:
    """All of `text` as PCM16 at `rate` (blocking: run it on a worker)."""
    return b"".join(resample_pcm16(a.pcm, a.sample_rate, rate) for a in tts.synthesize(text))


@dataclass(frozen=True)
class Phrase:
    text: str
    pcm: bytes  # PCM16 at sample_rate; empty when the TTS was down at start-up (text only)
    sample_rate: int


@dataclass
class PhraseCache:
    acks: list[Phrase]
    deferral: Phrase
    _next_ack: int = field(default=0)

    def next_ack(self) -> Phrase:
        """Acknowledgements rotate so the agent does not say the same filler every turn."""
        phrase = self.acks[self._next_ack % len(self.acks)]
        self._next_ack += 1
        return phrase
