"""pocketsphinx streaming speech recognition behind the `Recognizer` protocol.

The `pocketsphinx` wheel (5.1.1) ships a complete US-English model (acoustic model,
CMU dictionary, trigram language model), so English is recognised from sound on a fresh
install without any download. `load()` returns a `PocketsphinxRecognizer`.

Per turn: the decoder starts an utterance when the audio first carries speech, with the
`PREROLL_MS` of audio before it (pocketsphinx needs silence before the speech to set its
noise and cepstral-mean estimates: with 300 ms, an utterance that followed another lost
its first word, "how many bikes" -> "many bikes"). Silence between turns costs no
decoding. The pre-roll is not decoded in one go: a second of audio takes pocketsphinx
100-160 ms, and the voice session calls `accept()` from the event loop that reads the
board, which drops microphone frames that wait more than ~70 ms. So audio goes through a
backlog, of which each `accept()` decodes at most `DECODE_PER_CALL_MS` (three times
real time: the pre-roll is caught up within half a second of speech). Growing partials
come from the running hypothesis, and the final comes at the trailing-silence endpoint
(`sotto.engines.endpoint`), at `MAX_UTTERANCE_S`, or at `flush()`. A final carries each
word with its posterior probability (`Transcript.words`).

Keyphrase mode (`keyphrases=[...]`) is the counterpart of Vosk's runtime grammar
(`sotto.backfill.vosk_grammar`): the decoder only spots the given phrases (known
entities, yes/no) in the speech and ignores everything else. Build the phrase list
with `sotto.backfill.sphinx_keyphrases.keyphrases_for_sphinx`.
"""

from __future__ import annotations

import re
import tempfile
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from sotto.engines.base import Transcript, WordConfidence, mean_confidence
from sotto.engines.endpoint import TrailingSilence, TurnStream
from sotto.models.embedded import sphinx_model_folder as model_folder
from sotto.errors import ModelLoadFailed, ModelNotFound

PREROLL_MS = 1000.0
DECODE_PER_CALL_MS = 60.0
# Trailing silence that ends an utterance. Shorter cuts synthesised sentences at their
# comma pauses (the energy detector also counts a soft word ending as silence), and a
# cut sentence is decoded without its context: word error rate on eval/memory/tune's
# English turns (Piper joe) was 0.45 at 600 ms, 0.43 at 750 ms, 0.41 at 900 ms. The
# latency budgets run from the final, so the wait is not on them.
ENDPOINT_SILENCE_MS = 900.0
MAX_UTTERANCE_S = 30.0
PARTIAL_EVERY_MS = 100.0  # a partial backtrace costs time: at most one per 100 ms of audio
FRAMES_PER_S = 100  # pocketsphinx's default frame rate
KEYPHRASE_SEARCH = "keyphrases"
KEYPHRASE_REPEAT_GAP_S = 0.5
_ALTERNATE_PRONUNCIATION = re.compile(r"\(\d+\)$")


def _word(segment_word: str) -> str | None:
    """A segment's word without its pronunciation variant; None for fillers (<s>, <sil>, [NOISE])."""
    if not segment_word or segment_word[0] in "<[+":
        return None
    return _ALTERNATE_PRONUNCIATION.sub("", segment_word.strip())


class PocketsphinxRecognizer(TurnStream):
    def __init__(
        self,
        decoder: Any,
        model_path: Path,
        *,
        sample_rate: int = 16000,
        endpoint_silence_ms: float = ENDPOINT_SILENCE_MS,
        silence_rms: float = 300.0,
        keyphrases: Sequence[str] | None = None,
    ) -> None:
        super().__init__(sample_rate)
        self.name = f"pocketsphinx:{model_path.name}" + (":keyphrases" if keyphrases else "")
        self.model_path = model_path
        self.keyphrases = tuple(keyphrases or ())
        self._decoder = decoder
        self._endpoint = TrailingSilence(sample_rate, endpoint_silence_ms=endpoint_silence_ms, silence_rms=silence_rms)
        self._preroll: deque[bytes] = deque()
        self._preroll_bytes = 0
        self._backlog: deque[bytes] = deque()  # audio of the utterance not yet decoded
        self._in_utterance = False
        self._turn_audio_s = 0.0  # audio seen this turn, for word times
        self._utterance_start_s = 0.0
        self._utterance_s = 0.0
        self._since_partial_ms = 0.0
        self._last_partial = ""

    # ------------------------------------------------------------------ Recognizer

    def flush(self, turn_id: int) -> list[Transcript]:
        if self._turn != turn_id or self._final_done or not self._in_utterance:
            return []
        final = self._end_utterance(turn_id)
        return [final] if final else []

    # ------------------------------------------------------------------ internals

    def _new_turn(self, turn_id: int) -> None:
        if self._in_utterance:
            self._decoder.end_utt()  # the previous turn ended without a final
        self._in_utterance = False
        self._backlog.clear()
        self._turn_audio_s = 0.0
        self._preroll.clear()
        self._preroll_bytes = 0
        self._endpoint.reset()

    def _feed(self, turn_id: int, pcm: bytes) -> list[Transcript]:
        seconds = len(pcm) / 2 / self.sample_rate
        ended = self._endpoint.update(pcm)
        if not self._in_utterance:
            if not self._endpoint.speech_seen:
                self._keep_preroll(pcm)
                self._turn_audio_s += seconds
                return []
            self._begin_utterance()
        self._turn_audio_s += seconds
        self._backlog.append(pcm)
        self._utterance_s += seconds
        if ended or self._utterance_s >= MAX_UTTERANCE_S:
            final = self._end_utterance(turn_id)
            return [final] if final else []
        self._decode(int(DECODE_PER_CALL_MS / 1000.0 * self.sample_rate) * 2)
        self._since_partial_ms += seconds * 1000.0
        if self._since_partial_ms < PARTIAL_EVERY_MS or self._backlog:
            return []
        self._since_partial_ms = 0.0
        hyp = self._decoder.hyp()
        partial = " ".join(hyp.hypstr.split()) if hyp is not None else ""
        if partial and partial != self._last_partial:
            self._last_partial = partial
            return [Transcript(turn_id, partial, final=False)]
        return []

    def _keep_preroll(self, pcm: bytes) -> None:
        self._preroll.append(pcm)
        self._preroll_bytes += len(pcm)
        limit = int(PREROLL_MS / 1000.0 * self.sample_rate) * 2
        while self._preroll and self._preroll_bytes - len(self._preroll[0]) >= limit:
            self._preroll_bytes -= len(self._preroll.popleft())

    def _begin_utterance(self) -> None:
        self._decoder.start_utt()
        self._in_utterance = True
        self._since_partial_ms = 0.0
        self._last_partial = ""
        self._utterance_start_s = self._turn_audio_s - self._preroll_bytes / 2 / self.sample_rate
        self._utterance_s = self._preroll_bytes / 2 / self.sample_rate
        self._backlog = self._preroll
        self._preroll = deque()
        self._preroll_bytes = 0

    def _decode(self, budget_bytes: int | None = None) -> None:
        """Decode the backlog: all of it, or about `budget_bytes` of it."""
        done = 0
        while self._backlog and (budget_bytes is None or done < budget_bytes):
            pcm = self._backlog.popleft()
            self._decoder.process_raw(pcm, False, False)
            done += len(pcm)

    def _end_utterance(self, turn_id: int) -> Transcript | None:
        self._decode()
        self._decoder.end_utt()
        self._in_utterance = False
        self._endpoint.reset()
        words = self._words()
        text = " ".join(w.word for w in words)
        if not text:
            return None  # noise, or no keyphrase spotted: the turn goes on
        self._final_done = True
        return Transcript(turn_id, text, final=True, confidence=mean_confidence(words), words=words)

    def _words(self) -> tuple[WordConfidence, ...]:
        words: list[WordConfidence] = []
        offset = self._utterance_start_s
        last_phrase, last_end = "", -1.0
        for segment in self._decoder.seg() or ():
            if self.keyphrases:
                # The search can spot one spoken phrase twice in overlapping windows: keep one.
                phrase = segment.word.strip()
                if phrase == last_phrase and segment.start_frame / FRAMES_PER_S - last_end < KEYPHRASE_REPEAT_GAP_S:
                    last_end = segment.end_frame / FRAMES_PER_S
                    continue
                last_phrase, last_end = phrase, segment.end_frame / FRAMES_PER_S
            # Keyphrase mode names a whole phrase per segment ("mr wang "): one entry per word.
            for piece in segment.word.split() if self.keyphrases else [segment.word]:
                word = _word(piece)
                if word is None:
                    continue
                words.append(WordConfidence(
                    word,
                    round(min(1.0, max(0.0, float(segment.prob))), 4),
                    word,
                    round(offset + segment.start_frame / FRAMES_PER_S, 2),
                    round(offset + (segment.end_frame + 1) / FRAMES_PER_S, 2),
                ))
        return tuple(words)


@dataclass(frozen=True)
class DecoderSettings:
    """The pocketsphinx search parameters sotto sets (the rest are the library's defaults)."""

    lw: float = 6.5  # language weight of the first (tree) pass
    wip: float = 0.65  # word insertion penalty
    beam: float = 1e-48  # HMM beam
    wbeam: float = 7e-29  # word-exit beam
    fwdflat: bool = True  # the second, flat-lexicon pass at the end of an utterance
    bestpath: bool = True  # the lattice best-path rescoring after it
    bestpathlw: float = 9.5  # language weight of that rescoring

    def params(self) -> dict[str, Any]:
        return {"lw": self.lw, "wip": self.wip, "beam": self.beam, "wbeam": self.wbeam,
                "fwdflat": self.fwdflat, "bestpath": self.bestpath, "bestpathlw": self.bestpathlw}


# The decoder settings sotto uses, chosen on the speech tuning list (10 English scripts of
# eval/memory/tune*, Piper joe, `sotto eval --speech`) with tools/sphinx_grid.py, and checked
# against the demo's latency budgets (`sotto demo --json`, medians of 3 runs). Language
# weight 4 (the library's 6.5 favours frequent word sequences over the sound, and names and
# numbers are rarely frequent): WER 0.448 -> 0.419, entity_retention 0.489 -> 0.549,
# correction_accuracy 0.333 either way, real-time factor 0.10 -> 0.14; demo first answer
# p50 201 -> 325 ms, barge-in p95 1.7 -> 1.7 ms (all budgets held). Weight 3 or 5, wider
# beams (4x the decoding time at weight 3), a smaller insertion penalty, rescoring the
# lattice at a lower weight or not at all, and the second (flat-lexicon) pass at the end of
# an utterance gave no more retention. That pass also cost 160 ms per final (p50, 290 ms
# max) on the event loop. The lattice for the word posteriors stays.
DECODER_SETTINGS = DecoderSettings(lw=4.0, fwdflat=False)


def _config(model: Path, sample_rate: int, settings: DecoderSettings) -> Any:
    import pocketsphinx

    name = model.name
    config = pocketsphinx.Config(
        hmm=str(model / name),
        lm=str(model / f"{name}.lm.bin"),
        dict=str(model / "cmudict-en-us.dict") if name == "en-us" else str(model / f"{name}.dict"),
        samprate=float(sample_rate),
        loglevel="FATAL",  # pocketsphinx logs every utterance to stderr otherwise
        **settings.params(),
    )
    return config


def load(
    lang: str = "en",
    *,
    model: Path | None = None,
    sample_rate: int = 16000,
    endpoint_silence_ms: float = ENDPOINT_SILENCE_MS,
    keyphrases: Sequence[str] | None = None,
    settings: DecoderSettings | None = None,
) -> PocketsphinxRecognizer:
    """A recognizer on the wheel's model for `lang` (or `model`, a folder laid out the same
    way); with `keyphrases`, in keyphrase-spotting mode; `settings`: DECODER_SETTINGS unless
    given. ModelNotFound / ModelLoadFailed."""
    path = model if model is not None else model_folder(lang)
    try:
        import pocketsphinx
    except ImportError as exc:
        raise ModelNotFound("package pocketsphinx is not installed", hint="pip install pocketsphinx") from exc
    try:
        decoder = pocketsphinx.Decoder(_config(path, sample_rate, settings or DECODER_SETTINGS))
        if keyphrases:
            with tempfile.NamedTemporaryFile("w", suffix=".kws", encoding="utf-8", delete=False) as handle:
                handle.write("".join(f"{line}\n" for line in keyphrases))
            try:
                decoder.add_kws(KEYPHRASE_SEARCH, handle.name)
            finally:
                Path(handle.name).unlink(missing_ok=True)
            decoder.activate_search(KEYPHRASE_SEARCH)
    except (RuntimeError, ValueError, KeyError) as exc:
        raise ModelLoadFailed(f"pocketsphinx could not load the model in {path}: {exc}",
                              hint="pip install --force-reinstall pocketsphinx") from exc
    return PocketsphinxRecognizer(decoder, path, sample_rate=sample_rate, endpoint_silence_ms=endpoint_silence_ms,
                                  keyphrases=keyphrases)
