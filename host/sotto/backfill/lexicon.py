"""Frequent-word lists that keep the corrector from "fixing" ordinary words.

Public API:
- `Lexicon(words)`: `.is_common_en(word)` (inflections of a listed word count: plurals,
  -ed, -ing, -er), `.zh_words_in(text) -> list[(start, end)]` (every listed Chinese word
  occurring in `text`), `.is_zh_word(text)`.
- `default_lexicon() -> Lexicon`: the lists shipped in `sotto/backfill/data/`, plus, when
  the `jieba` package is installed, the words of its dictionary seen at least
  `JIEBA_MIN_FREQ` times (read from its dict.txt; jieba itself is not imported). Without
  it the short shipped Chinese list is used, and fewer ordinary words are protected.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable

from sotto.errors import ConfigError
from sotto.untrusted import ascii_int

_EN_FILE = "common_en.txt"
_ZH_FILE = "common_zh.txt"
JIEBA_MIN_FREQ = 10
_ZH_MAX_WORD = 4  # longer dictionary words are idioms and names: not needed to guard a span
_SUFFIXES = ("ies", "es", "s", "ed", "ing", "er", "ers", "ly")


def _read_words(name: str) -> list[str]:
    try:
        text = resources.files("sotto.backfill").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError) as exc:
        raise ConfigError(f"the word list {name} is missing from the sotto package", hint="reinstall sotto") from exc
    words: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        words.extend(line.split())
    return words


class Lexicon:
    def __init__(self, en_words: Iterable[str], zh_words: Iterable[str]) -> None:
        self._en = frozenset(w.lower() for w in en_words)
        self._zh = frozenset(w for w in zh_words if 2 <= len(w) <= _ZH_MAX_WORD)
        self._zh_lengths = sorted({len(w) for w in self._zh}, reverse=True)

    def is_common_en(self, word: str) -> bool:
        w = word.lower()
        if w in self._en:
            return True
        for suffix in _SUFFIXES:
            if w.endswith(suffix) and len(w) - len(suffix) >= 2:
                stem = w[: -len(suffix)]
                # walked -> walk, hoped -> hope, stopped -> stop, cities -> city
                candidates = {stem, stem + "e", stem + "y"}
                if len(stem) >= 2 and stem[-1] == stem[-2]:
                    candidates.add(stem[:-1])
                if candidates & self._en:
                    return True
        return False

    def is_zh_word(self, text: str) -> bool:
        return text in self._zh

    def zh_words_in(self, text: str) -> list[tuple[int, int]]:
        found: list[tuple[int, int]] = []
        for length in self._zh_lengths:
            for start in range(len(text) - length + 1):
                if text[start : start + length] in self._zh:
                    found.append((start, start + length))
        return found


def jieba_words(min_freq: int = JIEBA_MIN_FREQ) -> list[str]:
    """Words of jieba's dictionary (2 to 4 characters, frequency >= min_freq); [] without jieba."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = Path(list(spec.submodule_search_locations)[0]) / "dict.txt"
    words: list[str] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 2 and 2 <= len(parts[0]) <= _ZH_MAX_WORD and (ascii_int(parts[1]) or 0) >= min_freq:
                    words.append(parts[0])
    except OSError:
        return []
    return words


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    return Lexicon(_read_words(_EN_FILE), _read_words(_ZH_FILE) + jieba_words())
