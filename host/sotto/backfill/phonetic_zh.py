"""Chinese sound matching on toneless pinyin.

Public API:
- `is_cjk(ch) -> bool`: a CJK unified ideograph.
- `syllables(text) -> list[str]`: toneless pinyin, one syllable per character (pypinyin,
  which picks the reading of a character from the phrase it is in).
- `syllable_similarity(a, b) -> float`: 1.0 for the same syllable, `FUZZY_SCORE` for a pair
  that speakers and recognisers confuse (z/zh, c/ch, s/sh, n/l, an/ang, en/eng, in/ing;
  `FUZZY_SCORE` less 0.25 when both the initial and the final are confused), 0.0 otherwise.
- `sound_similarity(a, b) -> float`: mean syllable similarity of two strings of equal
  length in characters (0.0 when the lengths differ).
"""

from __future__ import annotations

from functools import lru_cache

from sotto.errors import ConfigError

FUZZY_SCORE = 0.75

_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h", "j", "q", "x", "r", "z", "c", "s", "y", "w")
_FUZZY_INITIALS = {frozenset(p) for p in (("z", "zh"), ("c", "ch"), ("s", "sh"), ("n", "l"))}
_FUZZY_FINALS = {frozenset(p) for p in (("an", "ang"), ("en", "eng"), ("in", "ing"), ("ian", "iang"), ("uan", "uang"))}


def is_cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf"


def _lazy_pinyin(text: str) -> list[str]:
    try:
        from pypinyin import lazy_pinyin  # pyright: ignore[reportMissingImports]
    except ImportError as exc:  # pragma: no cover - pypinyin is a dependency
        raise ConfigError("Chinese entity correction needs the pypinyin package", hint="pip install pypinyin") from exc
    # Characters without a reading come back as they are; syllables() then falls back to
    # one character at a time and marks them "?".
    return list(lazy_pinyin(text))


@lru_cache(maxsize=4096)
def _syllables_cached(text: str) -> tuple[str, ...]:
    return tuple(_lazy_pinyin(text))


def syllables(text: str) -> list[str]:
    """One toneless syllable per character of `text` (which should be CJK only)."""
    found = list(_syllables_cached(text))
    if len(found) != len(text):  # non-CJK mixed in: fall back to character by character
        found = [_syllables_cached(ch)[0] if is_cjk(ch) else "?" for ch in text]
    return found


def _split(syllable: str) -> tuple[str, str]:
    for initial in _INITIALS:
        if syllable.startswith(initial) and len(syllable) > len(initial):
            return initial, syllable[len(initial):]
    return "", syllable


def syllable_similarity(a: str, b: str) -> float:
    if a == b:
        return 1.0 if a != "?" else 0.0
    ia, fa = _split(a)
    ib, fb = _split(b)
    score = 1.0
    if ia != ib:
        if frozenset((ia, ib)) not in _FUZZY_INITIALS:
            return 0.0
        score -= 1.0 - FUZZY_SCORE
    if fa != fb:
        if frozenset((fa, fb)) not in _FUZZY_FINALS:
            return 0.0
        score -= 1.0 - FUZZY_SCORE
    return score


def sound_similarity(a: str, b: str) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    sa, sb = syllables(a), syllables(b)
    return sum(syllable_similarity(x, y) for x, y in zip(sa, sb)) / len(sa)
