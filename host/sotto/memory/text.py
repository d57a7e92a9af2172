"""Language helpers for the working memory: language, keys, overlap, entities, pronouns.

English and Chinese. Chinese has no spaces, so overlap uses character bigrams.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable

from sotto.text.sentences import is_cjk


def cjk_ratio(text: str) -> float:
    letters = [c for c in text if c.isalnum()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if is_cjk(c)) / len(letters)


def detect_lang(text: str, default: str = "en") -> str:
    if not text.strip():
        return default
    return "zh" if cjk_ratio(text) >= 0.3 else "en"


def norm_key(text: str) -> str:
    """Case-, width- and punctuation-insensitive key used for de-duplication."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if c.isalnum() or c == " ").strip()


def contains_ci(haystack: str, needle: str) -> bool:
    return needle.lower() in haystack.lower()


EN_STOPWORDS = frozenset(
    """a an the and or but so of to for in on at by with from as is are was were be been being am
    i me my mine you your yours we us our he him his she her it its they them their this that these those
    do does did done have has had will would can could should shall may might must please just also
    what when where who whom which why how again there here then than too very really okay ok oh hi hello
    need want like get got make let say said tell know about into up down out over if not no yes""".split()
)
ZH_FUNCTION_CHARS = frozenset("我你他她它们的了是吗呢吧么啊呀哦嗯来着什要在和就都也还把给被让这那有个一")


def stem(word: str) -> str:
    """A crude English stem: "drivers", "driving", "driver" -> "driv"; good enough to
    match a key said two ways, never shown to anyone."""
    word = word.lower()
    for suffix in ("ings", "ing", "ers", "er", "ed", "ies", "es", "s", "ly"):
        if suffix == "s" and word.endswith("ss"):
            break  # "mattress", "glass": no plural to fold
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if suffix == "ies":
                word += "y"
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # "courgette" and "courgettes", "tube" and "tubes" are one stem
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # "stopp(ed)" -> "stop"
    return word


_stem = stem


def content_keys(text: str) -> set[str]:
    """Content words (stemmed) and CJK bigrams, for matching a question to a fact."""
    keys: set[str] = set()
    lowered = unicodedata.normalize("NFKC", text).lower()
    for word in re.findall(r"[a-z0-9']+", lowered):
        word = word.strip("'")
        if word.endswith("'s"):
            word = word[:-2]
        if word and word not in EN_STOPWORDS:
            keys.add(_stem(word))
    for run in re.findall(r"[\u3400-\u9fff]+", lowered):
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if not (set(pair) & ZH_FUNCTION_CHARS):
                keys.add(pair)
        if len(run) == 1 and run not in ZH_FUNCTION_CHARS:
            keys.add(run)
    return keys


# ------------------------------------------------------------------ entities

EN_NUMBER_WORDS = (
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    "dozen|half"
)
_EN_NUM = rf"(?:\d+(?:[.,]\d+)?|(?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?)"
_EN_TIME = re.compile(
    rf"\b(?:\d{{1,2}}(?::\d{{2}})?\s*(?:a\.?m\.?|p\.?m\.?)(?!\w)|\d{{1,2}}:\d{{2}}|(?:{EN_NUMBER_WORDS})(?:[- ](?:thirty|fifteen|forty-five|o'clock))?\s*(?:a\.?m\.?|p\.?m\.?|o'clock)(?!\w)|noon|midnight|(?<=\bat )(?:{_EN_NUM}))",
    re.IGNORECASE,
)
EN_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
EN_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|"
    "fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|twenty[- ](?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|thirtieth|thirty[- ]first"
)
EN_ORDINALS = _ORDINALS  # a pattern: "first" ... "thirty-first"
# "a third place": the ordinals that say a count in all (second to tenth).
EN_COUNT_ORDINALS = tuple(_ORDINALS.split("|")[1:10])
EN_DATE = re.compile(
    rf"\b(?:(?:the )?(?:first|second|third|fourth|last) (?:{EN_WEEKDAYS})(?: of (?:the |every |each )?(?:month|{EN_MONTHS}))?"  # "the first Monday of every month"
    rf"|(?:{EN_WEEKDAYS}) (?:to|through|till|until|-) (?:{EN_WEEKDAYS})"  # "Monday to Wednesday": one span of days
    rf"|(?:{EN_WEEKDAYS}),? (?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)|{_ORDINALS})(?: of (?:{EN_MONTHS}))?"  # "Wednesday the 18th": one day
    rf"|(?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)|{_ORDINALS})(?: of (?:{EN_MONTHS}))?,? (?:a|on a) (?:{EN_WEEKDAYS})"  # "the twenty-third, a Tuesday"
    rf"|(?:the )?\d{{1,2}}(?:st|nd|rd|th)? (?:{EN_MONTHS})(?: \d{{4}})?"  # "28 December", "the 14th March"
    rf"|(?:the )?day after tomorrow|(?:the )?day before yesterday|tomorrow(?: (?:morning|afternoon|evening|night))?|today|tonight|yesterday"
    rf"|this (?:morning|afternoon|evening)"
    rf"|(?:next |this |last |every )?(?:{EN_WEEKDAYS})s?(?: (?:morning|afternoon|evening|night)s?)?"
    rf"|(?:next |this )(?:week|weekend|month|year)|(?:the )?weekend"
    rf"|(?:{EN_MONTHS}) (?:\d{{1,2}}(?:st|nd|rd|th)?|{_ORDINALS})|(?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)|{_ORDINALS})(?: of (?:{EN_MONTHS}))?"
    rf"|(?:{EN_MONTHS}))\b",
    re.I,
)
_EN_DATE = EN_DATE
_EN_NUMBER = re.compile(rf"\b{_EN_NUM}\b", re.IGNORECASE)

_ZH_DIGITS = "零〇一二两三四五六七八九十百千万\\d"
_ZH_TIME = re.compile(rf"(?:[{_ZH_DIGITS}]+点(?:半|一刻|三刻|[{_ZH_DIGITS}]+分?)?|\d{{1,2}}:\d{{2}}|中午|半夜)")
_ZH_DATE = re.compile(
    rf"(?:大后天|后天|明天|今天|昨天|前天|今晚|明晚|明早|(?:下个?|这个?|上个?)?(?:周|星期|礼拜)[一二三四五六日天末]|[{_ZH_DIGITS}]+月[{_ZH_DIGITS}]+[日号]|[{_ZH_DIGITS}]+[日号])"
)
_ZH_NUMBER = re.compile(rf"[{_ZH_DIGITS}]+")

ENTITY_KINDS = ("date", "time", "number")


def entities(text: str, kind: str) -> list[str]:
    """Entities of one kind in order of appearance: "date", "time" or "number"."""
    if kind == "date":
        pats = [_EN_DATE, _ZH_DATE]
    elif kind == "time":
        pats = [_EN_TIME, _ZH_TIME]
    else:
        pats = [_EN_NUMBER, _ZH_NUMBER]
    found: list[tuple[int, str]] = []
    for pat in pats:
        found += [(m.start(), m.group(0).strip()) for m in pat.finditer(text) if m.group(0).strip()]
    found.sort()
    return [t for _, t in found]


def entity_kind(text: str) -> str | None:
    """The kind of a short value when it is wholly one entity: "date", "time", "number"."""
    value = text.strip().lower()
    for kind in ENTITY_KINDS:
        for ent in entities(value, kind):
            if ent.lower() == value or (kind == "date" and ent.lower().removeprefix("the ") == value.removeprefix("the ")):
                return kind
    return None


def numbers_in(text: str) -> set[str]:
    """Digits and number words, lower case: used to refuse invented numbers."""
    return {n.lower() for n in entities(text, "number")}


# ------------------------------------------------------------------ person

_EN_PRONOUNS = [
    (r"\bI am\b", "you are"),
    (r"\bI'm\b", "you're"),
    (r"\bI'd\b", "you'd"),
    (r"\bI'll\b", "you'll"),
    (r"\bI've\b", "you've"),
    (r"\bI\b", "you"),
    (r"\bme\b", "you"),
    (r"\bmy\b", "your"),
    (r"\bmine\b", "yours"),
    (r"\bmyself\b", "yourself"),
    (r"\bwe're\b", "you're"),
    (r"\bwe'll\b", "you'll"),
    (r"\bwe\b", "you"),
    (r"\bour\b", "your"),
    (r"\bus\b", "you"),
]


def second_person(text: str) -> str:
    """The user's words turned to address them: "I need my car" -> "you need your car"."""
    if detect_lang(text) == "zh":
        return text.replace("我们", "你们").replace("我", "你")
    out = text
    for pattern, repl in _EN_PRONOUNS:
        out = re.sub(pattern, _replacer(repl), out, flags=re.IGNORECASE)
    return out


def _replacer(repl: str) -> "Callable[[re.Match[str]], str]":
    def replace(m: re.Match[str]) -> str:
        # Capitalised only where a sentence starts: "I am" inside a sentence is "you are".
        original = m.group(0)
        at_start = m.start() == 0 or m.string[: m.start()].rstrip()[-1:] in (".", "!", "?")
        return repl[0].upper() + repl[1:] if at_start and original[:1].isupper() else repl

    return replace


# An amount of money as said: its currency sign or word (£5, 5p, 三百块, 60 quid, twenty dollars).
MONEY_VALUE = re.compile(r"[£$€¥]|\d\s*p\b|块|元|钱|\b(?:pounds?|quid|dollars?|euros?|pence|bucks?)\b", re.I)
