"""Recognise one whole recording with a streaming `Recognizer`, as the voice session would.

The audio is resampled to the recognizer's rate, put between silences (a microphone
hears some before the user speaks, and the recognizer's own endpoint ends the utterance
on the silence after), and fed in link-sized chunks. A final
before the end closes its turn, as in the voice session: the rest of the audio goes on
under the next turn id, and the finals are joined. Used by `sotto eval --speech` and
the recognizer benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.audio.resample import resample_pcm16
from sotto.engines.base import AudioChunk, Recognizer, Transcript, WordConfidence, mean_confidence

CHUNK_MS = 20
LEAD_SILENCE_MS = 1000  # a pause before the user speaks (pocketsphinx sets its noise and mean estimates on it)
TAIL_SILENCE_MS = 1200


@dataclass(frozen=True)
class Recognised:
    text: str  # the finals joined (normalised, when the recognizer normalises)
    heard: str  # the recognised words before normalisation
    finals: list[Transcript] = field(default_factory=list)
    words: tuple[WordConfidence, ...] = ()
    next_turn_id: int = 1

    @property
    def confidence(self) -> float | None:
        return mean_confidence(self.words)


def transcribe(recognizer: Recognizer, pcm: bytes, sample_rate: int, *, turn_id: int = 1,
               chunk_ms: int = CHUNK_MS, lead_silence_ms: int = LEAD_SILENCE_MS,
               tail_silence_ms: int = TAIL_SILENCE_MS) -> Recognised:
    """The recognizer's finals for PCM16 mono `pcm` at `sample_rate`, starting at `turn_id`."""
    rate = recognizer.sample_rate
    audio = resample_pcm16(pcm, sample_rate, rate) if sample_rate != rate else pcm
    audio = bytes(2 * rate * lead_silence_ms // 1000) + audio + bytes(2 * rate * tail_silence_ms // 1000)
    step = 2 * rate * chunk_ms // 1000
    finals: list[Transcript] = []
    seq = 0
    for offset in range(0, len(audio), step):
        for result in recognizer.accept(AudioChunk(turn_id, seq, audio[offset : offset + step], rate)):
            if result.final:
                finals.append(result)
        seq += 1
        if finals and finals[-1].turn_id == turn_id:
            turn_id, seq = turn_id + 1, 0  # the final closed its turn: the rest is the next one
    finals.extend(r for r in recognizer.flush(turn_id) if r.final)
    if finals and finals[-1].turn_id == turn_id:
        turn_id += 1
    return Recognised(
        text=" ".join(f.text for f in finals if f.text),
        heard=" ".join((f.raw_text or f.text) for f in finals if f.text),
        finals=finals,
        words=tuple(w for f in finals for w in f.words),
        next_turn_id=turn_id,
    )
