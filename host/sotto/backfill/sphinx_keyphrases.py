"""Recognition-time bias for pocketsphinx: spot the known entities as keyphrases.

The counterpart of `sotto.backfill.vosk_grammar`: pocketsphinx's keyphrase search
(`sotto.engines.sphinx_asr.load(keyphrases=...)`) listens only for the given phrases and
ignores all other speech, as Vosk's grammar maps it to "[unk]". A phrase needs every
word in the pronunciation dictionary; entities with a word it lacks are reported.

Each phrase carries a detection threshold that falls with its length in phones: a
longer phrase accumulates more acoustic evidence, so it needs a lower threshold to be
spotted at all, and a short one ("no") a higher one not to fire on every syllable.

Public API:
- `dictionary_words(model_folder) -> dict[str, str]`: word -> phones of the model's
  dictionary (first pronunciation).
- `keyphrases_for_sphinx(entities, base_phrases, pronounce) -> SphinxKeyphrases`:
  `.lines()` is what `sphinx_asr.load(keyphrases=...)` takes.
- `recognizer_keyphrases(entities, base_phrases, model_folder) -> list[str]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from sotto.backfill.phrases import phrase_list, phrase_words

THRESHOLD_EXPONENT_PER_PHONE = 1.0
MIN_EXPONENT = 2
MAX_EXPONENT = 49


@dataclass(frozen=True)
class SphinxKeyphrases:
    phrases: list[str]
    exponents: list[int]  # threshold 1e-N per phrase
    out_of_vocabulary: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{p} /1e-{n}/" for p, n in zip(self.phrases, self.exponents)]


@lru_cache(maxsize=2)
def _read_dictionary(path: Path) -> dict[str, str]:
    words: dict[str, str] = {}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            word, _, phones = line.strip().partition(" ")
            if word and phones and "(" not in word:
                words.setdefault(word, phones.strip())
    return words


def dictionary_words(model_folder: Path) -> dict[str, str]:
    dictionaries = sorted(model_folder.glob("*.dict"))
    return _read_dictionary(dictionaries[0].resolve()) if dictionaries else {}


def keyphrases_for_sphinx(
    entities: Iterable[str],
    base_phrases: Iterable[str],
    pronounce: Callable[[str], str | None],
) -> SphinxKeyphrases:
    plan = phrase_list(entities, base_phrases, lambda w: pronounce(w) is not None)
    exponents = []
    for phrase in plan.phrases:
        phones = sum(len((pronounce(w) or "").split()) for w in phrase_words(phrase))
        exponents.append(int(min(MAX_EXPONENT, max(MIN_EXPONENT, round(THRESHOLD_EXPONENT_PER_PHONE * phones)))))
    return SphinxKeyphrases(plan.phrases, exponents, plan.out_of_vocabulary)


def recognizer_keyphrases(entities: Iterable[str], base_phrases: Iterable[str], model_folder: Path) -> list[str]:
    words = dictionary_words(model_folder)
    return keyphrases_for_sphinx(entities, base_phrases, words.get).lines()
