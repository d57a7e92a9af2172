"""One sentence of the user's, read into values with kinds and keys.

A statement is what the update step (`update.py`) compares with the stored items:
- its values, each a verbatim span with a kind (time, date, quantity with its unit,
  number/ID, name, place), what it is about (its key) and its qualifiers (the other
  values said with it, "on Wednesdays" for "1:30");
- its frame: the words that are not values, discourse or talk about the talk ("book a
  table", "bring a bunch of flowers to the pickup"), stored as a note when it says
  something of its own;
- its signals: a question, a cue of change ("instead", "better than", 改成), an
  admission ("I read it wrong", 我看错了), an additive word ("also", "another").

Nothing here decides what changes; it only reads the sentence. The reading is one
procedure (`read_sentence`); what differs between the languages is in `read_en.py` and
`read_zh.py`, what both share (the `Value` and `Statement` it fills) in `values.py`. The
names the rest of the code uses are exported from here, with the two that read both
languages' words: `content_stems` and `is_role_word`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from sotto.memory.clock import shift_minutes
from sotto.memory import language as L
from sotto.memory.items import KIND_DATE, KIND_NAME, KIND_NUMBER, KIND_QUANTITY, KIND_TIME
from sotto.memory.read_en import EN_NEGATED_AFTER, _EN_KIN, _en_copula_key, _en_is_question, _en_values, _en_without
from sotto.memory.read_zh import ZH_NEGATED_AFTER, _ZH_KIN, _ZH_NUM, _zh_content_words, _zh_copula_key, _zh_is_question, _zh_values, _zh_without, warm_up, zh_words
from sotto.memory.text import EN_STOPWORDS, stem
from sotto.memory.values import Statement, Value, _anaphoric_cue, _set_contexts, clause_at, _without_values, asked_kinds, choice_class, unit_key

__all__ = [
    "Statement",
    "Value",
    "asked_kinds",
    "choice_class",
    "content_stems",
    "is_role_word",
    "read_sentence",
    "unit_key",
    "warm_up",
    "zh_words",
]

def content_stems(text: str) -> set[str]:
    """Content words (stemmed, English) or character bigrams (Chinese) that can carry a key."""
    keys: set[str] = set()
    lowered = text.lower()
    for word in re.findall(r"[a-z][a-z'-]*", lowered):
        word = word.strip("'-")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) < 2 or word in EN_STOPWORDS or word in L.EN_EMPTY_WORDS:
            continue
        keys.add(stem(word))
    for run in re.findall(r"[\u3400-\u9fff]+", lowered):
        keys |= _zh_content_words(run)
    return keys


def is_role_word(text: str) -> bool:
    """A person named by their role ("my sister", 孩子奶奶) rather than by name."""
    return _EN_KIN.fullmatch(text.strip()) is not None or _ZH_KIN.fullmatch(text.strip()) is not None


def _rules_out_where_said(before: str, after: str, lang: str) -> bool:
    """The words of a value's clause say it is out: a negator anywhere (不, "can't"), or after it what
    the reader takes as ruling a value out when said right after it (满了, "is fully booked")."""
    if L.says_not(before + " " + after):
        return True
    ruling = ZH_NEGATED_AFTER if lang == "zh" else EN_NEGATED_AFTER
    starts = range(len(after)) if lang == "zh" else [0] + [m.start() for m in re.finditer(r"\s", after)]
    return any(ruling.match(after[i:]) for i in starts)


def _rule_out_contrasted(st: Statement) -> None:
    """"沙发十八号送不了，最早二十五号", "谭教练那个班满了，给我们安排的是孔教练": a value alone in a clause
    that rules it out, then a value of its kind in a later clause that does not, is the old one of a
    contrast, said as out wherever its clause's words stand."""
    text, lang = st.text, st.lang
    for old in st.values:
        if old.negated or old.delta or old.maybe_old or not old.kind:
            continue
        lo, hi = clause_at(text, old.start, lang)
        later = [o for o in st.values if o.start >= hi and o.kind == old.kind and not o.delta]
        if not later or later[0].negated or any(o is not old and lo <= o.start < hi for o in st.values):
            continue
        new_lo, new_hi = clause_at(text, later[0].start, lang)
        if _rules_out_where_said(text[lo:old.start], text[old.end:hi], lang) and not _rules_out_where_said(text[new_lo:later[0].start], text[later[0].end:new_hi], lang):
            old.negated = True


_PEOPLE_KEY = re.compile(r"人数|人头|headcount|head count|number of (?:people|guests)|party size|guest count|group size", re.I)


@dataclass(frozen=True)
class _Reader:
    """What differs between the languages; the reading itself is one procedure."""

    is_question: Callable[[str], bool]
    strip_discourse: Callable[[str], str]
    values: Callable[[str, frozenset[str]], list[Value]]
    without: Callable[..., str]
    copula_key: Callable[[str, Value], str]


_READERS = {
    "en": _Reader(_en_is_question, L.strip_en_discourse, _en_values, _en_without, _en_copula_key),
    "zh": _Reader(_zh_is_question, L.strip_zh_discourse, _zh_values, _zh_without, _zh_copula_key),
}


_NEW_THING = re.compile(r"\b(?:new|different)\b", re.I)


def read_sentence(sentence: str, lang: str, known_names: frozenset[str] = frozenset()) -> Statement:
    lang = "zh" if lang == "zh" else "en"
    reader = _READERS[lang]
    admission = L.has_admission(sentence, lang)
    text = reader.strip_discourse(sentence)
    st = Statement(text=text, lang=lang, raw=sentence, question=reader.is_question(sentence), admission=admission)
    st.change_cue = admission or L.has_change_cue(sentence, lang)
    st.additive = L.has_additive(text, lang) or (lang == "zh" and L.has_additive(sentence, lang))  # 还有 is a filler and adds
    if st.additive and st.change_cue and not admission and lang != "zh" and not L.has_change_cue(_NEW_THING.sub(" ", sentence), lang):
        # "There's a second pallet coming from a different yard", "also the pool table, it needs new
        # cushions": "new" and "different" describe the thing added, they change nothing stored.
        st.change_cue = False
    st.strong_cue = L.has_strong_cue(sentence, lang)
    st.proposal = not st.question and sentence.rstrip().endswith(("?", "？")) and not L.is_tag_check(sentence, lang)  # "…, wasn't it?" checks, it proposes nothing
    st.values = reader.values(text, known_names)
    for kind in (KIND_TIME, KIND_DATE):
        # "提前一个钟头，六点走", "pushed back a week to the 25th": the value said after the shift is
        # the new one; the shift only says why. Said before it, it is what moves ("十点我怕起不来，再往后挪一个钟头").
        shifts = [v for v in st.values if v.kind == kind and v.delta]
        if shifts and any(v.kind == kind and not v.delta and v.start > shifts[0].start for v in st.values):
            by = shift_minutes(shifts[0].text, lang) if kind == KIND_TIME else None
            for v in st.values:
                if by and v.kind == kind and not v.delta and v.start > shifts[0].start:
                    v.moved_by = shifts[0].delta_sign * by
            st.values = [v for v in st.values if v not in shifts]
    st.frame = reader.without(text, st.values, all_kinds=True)
    st.note = reader.without(text, st.values, all_kinds=False)
    st.frame_keys = content_stems(st.frame)
    for v in st.values:
        if lang == "en" and v.kind == KIND_TIME and v.text.endswith(".") and not re.search(r"[ap]\.m\.$", v.text, re.I):
            v.text = v.text[:-1]  # the sentence's full stop, not an "a.m."
            v.end -= 1
        said_key = reader.copula_key(text, v)
        v.key = _without_values(said_key, st.values).lstrip("把将")
        if said_key and not content_stems(v.key):
            # "Leo's is £18": whose it is, is all the key there is.
            v.key = _without_values(said_key, [o for o in st.values if o.kind != KIND_NAME]).lstrip("把将")
    for v in st.values:
        if v.kind == KIND_NUMBER and _PEOPLE_KEY.search(v.key) and re.fullmatch(rf"[{_ZH_NUM}]+|\d+|[a-z]+(?:[- ][a-z]+)?", v.text, re.I):
            v.kind, v.unit = KIND_QUANTITY, ("人" if lang == "zh" else "people")  # "人数改成四十": forty people
    _set_contexts(text, st.values, lang)
    _rule_out_contrasted(st)
    st.anaphoric_cue = _anaphoric_cue(text, st.values, lang)
    return st
