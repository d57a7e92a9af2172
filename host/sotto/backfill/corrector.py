"""Post-recognition entity correction: map a misheard span to a known entity by sound.

Public API:
- `EntityCorrector(known_entities, lang="auto", *, lexicon=None)`; `lang` is "en", "zh" or
  "auto" (each entity is matched by its own script: Latin letters by English sound keys,
  Chinese characters by pinyin).
- `.correct(transcript) -> (text, corrections)`: the corrected text and one `Correction`
  per replaced span (character offsets into the original transcript).

The rule, for a span of the transcript and a known entity:
- English: the span (one word, or as many words as the entity has, one fewer or one more,
  joined) has the entity's phonetic key, and its spelling shares more than half its letters
  with the entity (`EN_SPELLING_MIN`), or the two are listed spellings of one name (Sean /
  Shaun). Keys of one consonant need a closer spelling (`EN_SHORT_KEY_SPELLING_MIN`).
- Chinese: a span of the entity's length in characters whose toneless pinyin matches the
  entity's, syllable by syllable, at `ZH_SOUND_MIN` or more (one fuzzy z/zh, n/l, an/ang
  pair in a two-character name passes; anything more does not).
- Never for a span that is a frequent word (or, in Chinese, whose differing characters
  form one, or that would cut a frequent word in two) unless a name cue stands next to it
  (an honorific before an English name; 先生, 经理, 交给, 告诉... by a Chinese one). Cutting a
  word is never allowed.
- The entity text is only ever copied from the known list: nothing is invented. A span
  that already is an entity is left alone, and a span two entities claim equally is
  ambiguous and left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from sotto.backfill.lexicon import Lexicon, default_lexicon
from sotto.backfill.phonetic_en import letters, phonetic_key, same_name_variant, spelling_similarity
from sotto.backfill.phonetic_zh import is_cjk, syllable_similarity, syllables
from sotto.errors import ConfigError

Lang = Literal["en", "zh", "auto"]

EN_SPELLING_MIN = 0.55
EN_SHORT_KEY_SPELLING_MIN = 0.75
ZH_SOUND_MIN = 0.85
VARIANT_SCORE = 0.8
MAX_ENTITIES = 200
MAX_ENTITY_CHARS = 60
MAX_TRANSCRIPT_CHARS = 2000

# Honorifics, each spelling mapped to one form so "Mr." and "mister" compare equal.
_HONORIFICS = {
    "mr": "mister", "mister": "mister", "mrs": "missus", "missus": "missus", "misses": "missus",
    "ms": "miz", "miss": "miss", "dr": "doctor", "doctor": "doctor", "prof": "professor",
    "professor": "professor", "sir": "sir", "madam": "madam", "uncle": "uncle", "aunt": "aunt",
}
_ZH_CUES_BEFORE = ("交给", "转告", "告诉", "通知", "联系", "找", "叫", "问", "给", "跟", "让", "请", "接", "见")
_ZH_CUES_AFTER = ("先生", "女士", "小姐", "经理", "老师", "总", "说", "同学", "师傅")
_EN_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


@dataclass(frozen=True)
class Correction:
    heard: str
    entity: str
    start: int
    end: int
    score: float
    reason: str


@dataclass(frozen=True)
class _EnEntity:
    text: str
    words: tuple[str, ...]
    joined: str
    key: str


@dataclass(frozen=True)
class _Token:
    word: str  # canonical lowercase form
    start: int
    end: int


def _canonical_word(word: str) -> str:
    w = letters(word)
    return _HONORIFICS.get(w, w)


def _is_latin_entity(entity: str) -> bool:
    return any("a" <= ch.lower() <= "z" for ch in entity) and not any(is_cjk(ch) for ch in entity)


class EntityCorrector:
    def __init__(self, known_entities: Iterable[str], lang: Lang = "auto", *, lexicon: Lexicon | None = None) -> None:
        if lang not in ("en", "zh", "auto"):
            raise ConfigError(f"unknown language {lang!r} for entity correction", hint="use en, zh or auto")
        self.lang: Lang = lang
        self._lexicon = lexicon or default_lexicon()
        self._en: list[_EnEntity] = []
        self._zh: list[str] = []
        seen: set[str] = set()
        for raw in known_entities:
            entity = " ".join(str(raw).split())[:MAX_ENTITY_CHARS]
            if not entity or entity in seen or len(seen) >= MAX_ENTITIES:
                continue
            seen.add(entity)
            if lang in ("zh", "auto") and all(is_cjk(ch) for ch in entity) and len(entity) >= 2:
                self._zh.append(entity)
            elif lang in ("en", "auto") and _is_latin_entity(entity):
                words = tuple(w for w in (_canonical_word(t) for t in _EN_WORD.findall(entity)) if w)
                if words:
                    joined = "".join(words)
                    self._en.append(_EnEntity(entity, words, joined, phonetic_key(joined)))

    @property
    def entities(self) -> list[str]:
        return [e.text for e in self._en] + list(self._zh)

    def correct(self, transcript: str) -> tuple[str, list[Correction]]:
        text = transcript[:MAX_TRANSCRIPT_CHARS]
        candidates = self._english_candidates(text) + self._chinese_candidates(text)
        chosen = _choose(candidates, self._protected_spans(text))
        out = text
        for c in sorted(chosen, key=lambda c: c.start, reverse=True):
            out = out[: c.start] + c.entity + out[c.end :]
        return out, sorted(chosen, key=lambda c: c.start)

    # ------------------------------------------------------------------ spans already right

    def _protected_spans(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        tokens = _tokens(text)
        for entity in self._en:
            n = len(entity.words)
            for i in range(len(tokens) - n + 1):
                if tuple(t.word for t in tokens[i : i + n]) == entity.words:
                    spans.append((tokens[i].start, tokens[i + n - 1].end))
        for zh_entity in self._zh:
            start = text.find(zh_entity)
            while start >= 0:
                spans.append((start, start + len(zh_entity)))
                start = text.find(zh_entity, start + 1)
        return spans

    # ------------------------------------------------------------------ English

    def _english_candidates(self, text: str) -> list[Correction]:
        if not self._en:
            return []
        tokens = _tokens(text)
        found: list[Correction] = []
        for entity in self._en:
            n = len(entity.words)
            for length in range(max(1, n - 1), n + 2):
                for i in range(len(tokens) - length + 1):
                    span = tokens[i : i + length]
                    score, reason = self._english_score(span, entity)
                    if score <= 0.0:
                        continue
                    if self._english_is_common(span) and not _english_name_cue(tokens, i):
                        continue
                    start, end = span[0].start, span[-1].end
                    found.append(Correction(text[start:end], entity.text, start, end, score, reason))
        return found

    def _english_score(self, span: list[_Token], entity: _EnEntity) -> tuple[float, str]:
        joined = "".join(t.word for t in span)
        if joined == entity.joined:
            # Same letters: either already the entity, or the recognizer split or merged it
            # ("heath row" for Heathrow), which is worth joining.
            return (0.0, "") if len(span) == len(entity.words) else (1.0, "same letters, other spacing")
        if len(span) == 1 and len(entity.words) == 1 and same_name_variant(joined, entity.joined):
            return VARIANT_SCORE, "name variant"
        if phonetic_key(joined) != entity.key or not entity.key:
            return 0.0, ""
        similarity = spelling_similarity(joined, entity.joined)
        needed = EN_SHORT_KEY_SPELLING_MIN if len(entity.key) < 2 else EN_SPELLING_MIN
        if similarity < needed:
            return 0.0, ""
        return similarity, "same sound key"

    def _english_is_common(self, span: list[_Token]) -> bool:
        words = [t.word for t in span if t.word not in _HONORIFICS.values()]
        return bool(words) and all(self._lexicon.is_common_en(w) for w in words)

    # ------------------------------------------------------------------ Chinese

    def _chinese_candidates(self, text: str) -> list[Correction]:
        if not self._zh:
            return []
        found: list[Correction] = []
        for run_start, run in _cjk_runs(text):
            run_syllables = syllables(run)
            words = self._lexicon.zh_words_in(run)
            for entity in self._zh:
                m = len(entity)
                entity_syllables = syllables(entity)
                for i in range(len(run) - m + 1):
                    window = run[i : i + m]
                    if window == entity:
                        continue
                    score = sum(syllable_similarity(a, b) for a, b in zip(run_syllables[i : i + m], entity_syllables)) / m
                    if score < ZH_SOUND_MIN:
                        continue
                    if _cuts_a_word(words, i, i + m):
                        continue
                    if self._chinese_is_common(window, entity, words, i) and not _chinese_name_cue(run, i, i + m):
                        continue
                    start = run_start + i
                    found.append(Correction(window, entity, start, start + m, score, "same pinyin"))
        return found

    def _chinese_is_common(self, window: str, entity: str, words: list[tuple[int, int]], offset: int) -> bool:
        """The window is a listed word, or the characters it does not share with the entity are."""
        if self._lexicon.is_zh_word(window):
            return True
        differing = [offset + k for k, (a, b) in enumerate(zip(window, entity)) if a != b]
        inside = [(s, e) for s, e in words if s >= offset and e <= offset + len(window)]
        return bool(differing) and all(any(s <= d < e for s, e in inside) for d in differing)


def _tokens(text: str) -> list[_Token]:
    return [_Token(_canonical_word(m.group()), m.start(), m.end()) for m in _EN_WORD.finditer(text)]


def _english_name_cue(tokens: list[_Token], index: int) -> bool:
    """An honorific right before the span, or opening it."""
    honorifics = set(_HONORIFICS.values())
    return tokens[index].word in honorifics or (index > 0 and tokens[index - 1].word in honorifics)


def _cjk_runs(text: str) -> list[tuple[int, str]]:
    runs: list[tuple[int, str]] = []
    start = -1
    for i, ch in enumerate(text + " "):
        if is_cjk(ch) and start < 0:
            start = i
        elif not is_cjk(ch) and start >= 0:
            runs.append((start, text[start:i]))
            start = -1
    return runs


def _cuts_a_word(words: list[tuple[int, int]], start: int, end: int) -> bool:
    """A listed word overlaps the window without lying inside it."""
    return any(s < end and e > start and not (s >= start and e <= end) for s, e in words)


def _chinese_name_cue(run: str, start: int, end: int) -> bool:
    return any(run[:start].endswith(cue) for cue in _ZH_CUES_BEFORE) or any(run[end:].startswith(cue) for cue in _ZH_CUES_AFTER)


def _choose(candidates: list[Correction], protected: list[tuple[int, int]]) -> list[Correction]:
    """Best-scoring non-overlapping spans; a span two entities claim equally is skipped."""
    def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return a[0] < b[1] and b[0] < a[1]

    best: dict[tuple[int, int], list[Correction]] = {}
    for c in candidates:
        best.setdefault((c.start, c.end), []).append(c)
    unique: list[Correction] = []
    for claims in best.values():
        top = max(c.score for c in claims)
        winners = {c.entity for c in claims if c.score == top}
        if len(winners) == 1:
            unique.append(next(c for c in claims if c.score == top))
    chosen: list[Correction] = []
    taken = list(protected)
    for c in sorted(unique, key=lambda c: (-c.score, -(c.end - c.start), c.start)):
        if any(overlaps((c.start, c.end), t) for t in taken):
            continue
        chosen.append(c)
        taken.append((c.start, c.end))
    return chosen
