"""A fake pocketsphinx decoder: the `pocketsphinx.Decoder` calls sotto makes, scripted.

Each utterance "recognises" the next scripted text, one word per 100 ms of audio fed;
`seg()` gives one segment per word with the scripted posterior. Injected into
`PocketsphinxRecognizer` exactly where the real decoder goes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FakeSegment:
    word: str
    prob: float
    start_frame: int
    end_frame: int


@dataclass
class FakeHypothesis:
    hypstr: str


class FakeDecoder:
    def __init__(self, *utterances: list[tuple[str, float]]) -> None:
        self.utterances = list(utterances)
        self.fed_bytes: list[int] = []  # bytes fed per utterance
        self.started = 0
        self.ended = 0
        self.bytes_per_call: list[int] = [0]  # bytes decoded per accept() (the test marks each call)
        self._current: list[tuple[str, float]] = []
        self._bytes = 0

    def start_utt(self) -> None:
        self.started += 1
        self._current = self.utterances.pop(0) if self.utterances else []
        self._bytes = 0

    def process_raw(self, data: bytes, no_search: bool = False, full_utt: bool = False) -> None:
        self._bytes += len(data)
        self.bytes_per_call[-1] += len(data)

    def new_call(self) -> None:
        self.bytes_per_call.append(0)

    def _heard(self) -> list[tuple[str, float]]:
        words = max(0, self._bytes - 32000) // 3200  # after the 1 s pre-roll, a word per 100 ms
        return self._current[:words]

    def hyp(self) -> FakeHypothesis | None:
        heard = self._heard()
        # The real hypothesis string names words without their pronunciation variant.
        return FakeHypothesis(" ".join(w.split("(")[0] for w, _ in heard)) if heard else None

    def end_utt(self) -> None:
        self.ended += 1
        self.fed_bytes.append(self._bytes)

    def seg(self) -> list[FakeSegment]:
        segments = [FakeSegment("<s>", 1.0, 0, 9)]
        for i, (word, prob) in enumerate(self._current):
            segments.append(FakeSegment(word, prob, 10 + 10 * i, 19 + 10 * i))
        return segments + [FakeSegment("</s>", 1.0, 0, 0)]
