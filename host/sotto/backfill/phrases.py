"""The phrase list a recognizer is biased with: base phrases, then known entities.

Both recognition-time modes (Vosk's runtime grammar, pocketsphinx's keyphrase search)
take phrases of lowercase words that their model can pronounce; this builds that list
once for both.

- `phrase_words(phrase) -> list[str]`: "Mr. Wang" -> ["mr", "wang"].
- `phrase_list(entities, base_phrases, known_word=None) -> PhraseList`: phrases in order,
  deduplicated and bounded; with `known_word`, a phrase with a word the model does not
  know is left out (entities left out are reported in `out_of_vocabulary`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

MAX_PHRASES = 500
MAX_PHRASE_CHARS = 80


@dataclass(frozen=True)
class PhraseList:
    phrases: list[str]
    out_of_vocabulary: list[str] = field(default_factory=list)


def phrase_words(phrase: str) -> list[str]:
    # Recognizer phrases are lowercase words; punctuation ("Mr.") is not part of any model word.
    return [w for w in re.split(r"[^\w']+", phrase.lower()) if w]


def phrase_list(
    entities: Iterable[str],
    base_phrases: Iterable[str] = (),
    known_word: Callable[[str], bool] | None = None,
) -> PhraseList:
    phrases: list[str] = []
    seen: set[str] = set()
    skipped: list[str] = []

    def add(raw: str, *, is_entity: bool) -> None:
        words = phrase_words(raw[:MAX_PHRASE_CHARS])
        phrase = " ".join(words)
        if not phrase or phrase in seen or len(phrases) >= MAX_PHRASES:
            return
        if known_word is not None and not all(known_word(w) for w in words):
            if is_entity:
                skipped.append(raw)
            return
        seen.add(phrase)
        phrases.append(phrase)

    for phrase in base_phrases:
        add(phrase, is_entity=False)
    for entity in entities:
        add(entity, is_entity=True)
    return PhraseList(phrases, skipped)
