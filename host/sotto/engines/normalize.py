"""Numbers and times in recognised words, written as a user would type them.

Recognizers spell numbers out ("tomorrow at three p m", "一三九零零一二三四五六"); the
memory keeps values verbatim and people type digits, so a final transcript is normalised
between recognition and memory: "tomorrow at 3 pm", "13900123456". The recognised words
stay in the transcript (`Transcript.raw_text`) and in the trace.

- English: `text2num` turns number words into digits. Its threshold keeps an isolated
  number under ten a word, as people write one ("for six", "we're three", "one of them",
  "a second"); in a time, a sequence or with a larger number it becomes digits. On top
  of it, the forms a time takes: "p m" -> "pm", a number word before am/pm or o'clock,
  an hour and its minutes ("3 15") -> "3:15", "half past nine" / "half nine" -> "9:30",
  "quarter to six" -> "5:45", and a spelled digit string ("oh four one two ...") -> "0412...".
  Numbers read as a phone number is read ("oh one six one, four hundred ninety six") stay
  apart: a digit word that is the multiplier of "hundred" or the units of "ninety" is not
  one of the spelled digits, and a second "hundred" starts a new number ("nine hundred
  four hundred twelve" -> "900 412").
- Chinese: `cn2an` converts a run of numerals only where it is a number: a positional
  number (二十, 三十五), a digit string of three or more (a phone number), or a numeral
  before a time or date unit (三点, 六点半, 十二号). Numerals inside words (一起, 统一,
  万一, 三明治, 周二) stay, and so does a lone 一 before 点 (一点 is also "a little").

`normalize(text, lang)` returns the text; `normalize_final(transcript, lang)` returns
the transcript with its words re-aligned (a digit carries the lowest confidence of the
words it came from). `NormalizingRecognizer` wraps any `Recognizer` and normalises its
finals.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from typing import Any, Sequence

from sotto.engines.base import AudioChunk, Recognizer, Transcript, WordConfidence, mean_confidence

# ------------------------------------------------------------------ English

_EN_THRESHOLD = 10  # text2num converts an isolated number only from ten up ("we're three" stays)
_MERIDIEM = {"p.m.": "pm", "a.m.": "am", "pm": "pm", "am": "am"}
_MULTIPLIERS = ("hundred", "thousand", "million")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# Before a time of day: "by half eleven" is 11:30 (British); "half" elsewhere is a half.
_TIME_PREPOSITIONS = ("at", "by", "from", "till", "til", "until", "to", "around", "about", "before", "after", "for")
_NUMERIC = re.compile(r"^\d+$")


def _is_number(token: str) -> bool:
    return bool(_NUMERIC.match(token))


def _word_number(token: str) -> str | None:
    """A single number word ("two") as digits, or None."""
    from text_to_num import text2num

    try:
        return str(text2num(token, "en"))
    except ValueError:
        return None


def _meridiem(tokens: Sequence[str], i: int) -> tuple[str, int] | None:
    """am/pm at tokens[i] ("pm", "p.m.", or the letters "p m"): (form, tokens used)."""
    token = tokens[i]
    if token in _MERIDIEM:
        return _MERIDIEM[token], 1
    if token in ("p", "a") and i + 1 < len(tokens) and tokens[i + 1] == "m":
        return token + "m", 2
    return None


def _en_times(tokens: Sequence[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        # "two p m" -> "2 pm": a number word right before am/pm (or o'clock) is a time, however small.
        meridiem = _meridiem(tokens, i + 1) if i + 1 < len(tokens) else None
        if i + 1 < len(tokens) and tokens[i + 1] == "o'clock":
            meridiem = ("o'clock", 1)
        if meridiem is not None and not _is_number(token):
            number = _word_number(token)
            if number is not None:
                token = number
        meridiem_here = _meridiem(tokens, i)
        if meridiem_here is not None and out and _is_number(out[-1].replace(":", "")):
            out.append(meridiem_here[0])
            i += meridiem_here[1]
            continue
        out.append(token)
        i += 1
    # "3 15 pm", "at 3 15", "8 45 would be": an hour then two-digit minutes is a time -> "3:15"
    joined: list[str] = []
    i = 0
    while i < len(out):
        token = out[i]
        hour = _hour(token)
        if (
            i + 1 < len(out) and hour is not None and len(out[i + 1]) == 2
            and _is_number(out[i + 1]) and int(out[i + 1]) < 60
        ):
            joined.append(f"{hour}:{out[i + 1]}")
            i += 2
            continue
        joined.append(token)
        i += 1
    return _en_half_quarter(joined)


def _hour(token: str) -> int | None:
    """An hour of a 12-hour clock, as digits or as a word ("9", "nine"), or None."""
    value = token if _is_number(token) else (_word_number(token) if token in _UNITS or token in ("ten", "eleven", "twelve") else None)
    return int(value) if value is not None and 1 <= int(value) <= 12 else None


def _en_half_quarter(tokens: list[str]) -> list[str]:
    """"half past 9" -> "9:30", "quarter past 5" -> "5:15", "quarter to 6" -> "5:45", and
    (British) "half 11" after a time preposition ("by half 11") -> "11:30"."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("half", "quarter") and i + 2 < len(tokens) and tokens[i + 1] in ("past", "to") and (
            hour := _hour(tokens[i + 2])
        ) is not None and not (token == "half" and tokens[i + 1] == "to"):
            if tokens[i + 1] == "past":
                out.append(f"{hour}:{30 if token == 'half' else 15}")
            else:
                out.append(f"{12 if hour == 1 else hour - 1}:45")
            if out[-2:-1] == ["a"]:
                out.pop(-2)  # "a quarter to six"
            i += 3
            continue
        if (token == "half" and i + 1 < len(tokens) and (hour := _hour(tokens[i + 1])) is not None
                and out and out[-1] in _TIME_PREPOSITIONS
                and not (i + 2 < len(tokens) and tokens[i + 2] in _MULTIPLIERS)):
            out.append(f"{hour}:30")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _en_digit_strings(tokens: list[str]) -> list[str]:
    """Three or more spelled digits in a row ("0 4 1 2", "oh 4 1 2") are one number."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        j = i
        while j < len(tokens) and (
            (_is_number(tokens[j]) and len(tokens[j]) <= 2)
            or (tokens[j] == "oh" and j + 1 < len(tokens) and _is_number(tokens[j + 1]))
        ):
            j += 1
        if j - i >= 3:
            out.append("".join("0" if t == "oh" else t for t in tokens[i:j]))
            i = j
        else:
            out.append(tokens[i])
            i += 1
    return out


_SPOKEN_DIGIT = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
                 "six": "6", "seven": "7", "eight": "8", "nine": "9"}
# A spelled digit is not the units of a tens word ("ninety six") nor the multiplier of a
# "hundred" ("four hundred"): those belong to a number said as a number.
_NOT_AFTER_TENS = "".join(f"(?<!{tens} )(?<!{tens}-)" for tens in
                          ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"))
_SPOKEN_DIGITS = re.compile(
    rf"{_NOT_AFTER_TENS}\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double (?:zero|oh|one|two|three|four|five|six|seven|eight|nine))"
    r"(?:,?\s+|-)){2,}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b(?!\s+(?:hundred|thousand|million)\b)",
    re.I,
)


def spoken_digit_groups(text: str) -> str:
    """Digits read one by one, in groups ("six three three oh, one nine four eight") -> "6330 1948":
    a pause (a comma) between groups stays a space."""

    def digits(m: "re.Match[str]") -> str:
        groups = []
        for group in re.split(r",\s*", m.group(0)):
            words = re.findall(r"[a-z]+", group.lower())
            out, i = "", 0
            while i < len(words):
                if words[i] == "double" and i + 1 < len(words):
                    out += _SPOKEN_DIGIT[words[i + 1]] * 2
                    i += 2
                    continue
                out += _SPOKEN_DIGIT[words[i]]
                i += 1
            groups.append(out)
        return " ".join(groups)

    def spoken(m: "re.Match[str]") -> str:
        count = len(re.findall(r"[a-z]+", m.group(0), re.I))
        tail = re.search(r"\b(?:ends?(?: in| with)?|ending(?: in| with)?|digits(?: are| is)?|not)\s*$", text[: m.start()], re.I)
        return digits(m) if count >= 4 or "oh" in m.group(0).lower().split() or (count == 3 and tail) else m.group(0)

    return _SPOKEN_DIGITS.sub(spoken, text)  # "ends four one eight, not four eight one": the last digits


_SPOKEN_CODE = re.compile(r"\b(?:[A-Z]|\d+)(?:(?:\s+|\s*,\s*then\s+)(?:[A-Z]\b|\d+\b|dash\b|hyphen\b))+(?:\s+[A-Z]\b)?")


_SPELLED = re.compile(r"\b[A-Z](?:(?:-|, ?| )[A-Z]\b){2,}")


def spelled_words(text: str) -> str:
    """A name spelled letter by letter ("D-O-U-G-H-E-R-T-Y", "P, R, Y, C, E") as the word."""
    return _SPELLED.sub(lambda m: "".join(re.findall(r"[A-Z]", m.group(0))).capitalize() if "I" not in m.group(0).split() else m.group(0), text)


def spoken_codes(text: str) -> str:
    """A code spelled out ("B X dash 4471 dash T") written as one ("BX-4471-T"); run after
    `spoken_digit_groups`, so its digits are already digits."""

    def join(m: "re.Match[str]") -> str:
        tokens = re.split(r"\s+", m.group(0))
        letters = sum(1 for t in tokens if re.fullmatch(r"[A-Z]", t))
        dashes = sum(1 for t in tokens if t.lower() in ("dash", "hyphen"))
        if letters < 2 and not (letters and dashes) or "I" in tokens:
            return m.group(0)  # "Flat 41", "I 2": not a spelled code
        return "".join("-" if t.lower() in ("dash", "hyphen") else t for t in tokens if t.lower() not in (",", "then"))

    return _SPOKEN_CODE.sub(join, text)


def normalize_en(text: str, *, every_number: bool = False) -> str:
    """`every_number`: an isolated number under ten becomes digits too (words compared, not stored)."""
    from text_to_num import alpha2digit

    if not text.strip():
        return ""
    spelled = spoken_codes(spoken_digit_groups(text))
    converted = " ".join(alpha2digit(part, "en", 0 if every_number else _EN_THRESHOLD) for part in _number_phrases(spelled))
    return " ".join(_en_digit_strings(_en_times(converted.split())))


def _number_phrases(text: str) -> list[str]:
    """`text` cut where a new number starts inside a run of number words: before "<unit>
    hundred" when the number running already has its hundreds ("nine hundred | four hundred
    twelve"), which text2num would read as one number and a rest ("904 112")."""
    tokens = text.split(" ")
    parts: list[list[str]] = [[]]
    hundreds = False  # the number running has its hundreds (since its last thousand)
    for i, token in enumerate(tokens):
        low = token.lower()
        next_low = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
        if low in _UNITS and next_low == "hundred" and hundreds:
            parts.append([])
            hundreds = False
        if low == "hundred":
            hundreds = True
        elif low in ("thousand", "million"):
            hundreds = False
        elif _word_number(low) is None and low != "and":
            hundreds = False  # the run of number words ended
        parts[-1].append(token)
    return [" ".join(p) for p in parts if p]


# ------------------------------------------------------------------ Chinese

_ZH_DIGITS = "零〇一二三四五六七八九"
_ZH_DIGIT_VALUES = "零一二三四五六七八九"
_ZH_POSITIONAL = "十百千万亿"
_ZH_NUMERAL_RUN = re.compile(f"[{_ZH_DIGITS}两{_ZH_POSITIONAL}]+")
# Units after which a numeral is a time or a date: 三点 (3 o'clock), 十二号, 五月, 八岁, 三刻.
_ZH_TIME_UNITS = "点时号日月岁"
_ZH_CJK = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")


def _zh_in_a_word(text: str, start: int, end: int) -> bool:
    """The numerals text[start:end] belong to a frequent word that reaches past them with
    something other than a time unit or a numeral (一起, 统一, 周二, 星期一, 三明治)."""
    from sotto.backfill.lexicon import default_lexicon

    left = max(0, start - 3)
    window = text[left : end + 3]
    for a, b in default_lexicon().zh_words_in(window):
        a, b = a + left, b + left
        if a < end and b > start and (a < start or b > end):
            outside = text[a:start] + text[end:b]
            if any(ch not in _ZH_TIME_UNITS and not _ZH_NUMERAL_RUN.match(ch) for ch in outside):
                return True
    return False


def _zh_is_word(run: str) -> bool:
    from sotto.backfill.lexicon import default_lexicon

    return default_lexicon().is_zh_word(run)


def _zh_number(run: str) -> str | None:
    import cn2an

    try:
        if any(ch in _ZH_POSITIONAL for ch in run):
            value: Any = cn2an.cn2an(run.replace("两", "二"), "strict")  # 万一, 千万: not well-formed numbers; 两千 is 二千
        else:
            value = cn2an.cn2an(run.replace("两", "二"), "normal")
    except (ValueError, KeyError, IndexError):
        return None
    return str(int(value)) if float(value) == int(value) else str(value)


def number_value(text: str, lang: str) -> int | None:
    """A number said in words or digits as an integer ("twenty-five", "07", 十, 两), or None."""
    text = text.strip().lower()
    if text.isdigit():
        return int(text)
    said = _zh_number(text.replace("〇", "零")) if lang == "zh" else _word_number(text)
    if said is None and lang == "zh" and re.fullmatch(r"[一二两三四五六七八九]+[百千万][一二三四五六七八九]", text):
        said = _zh_number(text + {"百": "十", "千": "百", "万": "千"}[text[-2]])  # 两千四 is 两千四百, 三百五 is 三百五十
    try:
        return int(said) if said is not None else None
    except ValueError:
        return None  # a fraction is no count of minutes or hours


def _zh_convert(run: str, after: str) -> str:
    if any(ch in _ZH_POSITIONAL for ch in run):
        return _zh_number(run) or run if len(run) >= 2 else run
    if len(run) >= 3 and "两" not in run and not _zh_is_word(run):
        # A digit string: each digit as it is, leading zeros kept (a phone number).
        return "".join(str(_ZH_DIGIT_VALUES.index(ch)) if ch != "〇" else "0" for ch in run)
    if after and after in _ZH_TIME_UNITS and not (run == "一" and after == "点"):
        return _zh_number(run) or run
    return run


def normalize_zh(text: str) -> str:
    text = _ZH_CJK.sub("", text.strip())  # recognizers put spaces between Chinese words

    def convert(match: re.Match[str]) -> str:
        run = match.group()
        positional = len(run) >= 2 and any(ch in _ZH_POSITIONAL for ch in run)
        # A well-formed positional number (二十, 三十五) is a number even inside a word (二十个);
        # 万一 and 千万 are not well-formed and stay.
        if not positional and _zh_in_a_word(text, match.start(), match.end()):
            return run
        after = text[match.end()] if match.end() < len(text) else ""
        return _zh_convert(run, after)

    return _ZH_NUMERAL_RUN.sub(convert, text)


# ------------------------------------------------------------------ both


def normalize(text: str, lang: str, *, every_number: bool = False) -> str:
    """Numbers and times in `text` as digits; other words unchanged (lang "en" or "zh")."""
    base = lang.lower().split("-")[0].split("_")[0]
    if base == "en":
        return normalize_en(text, every_number=every_number)
    if base in ("zh", "cn"):
        return normalize_zh(text)
    return text


_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\s\u3400-\u9fff]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _aligned_words(raw: tuple[WordConfidence, ...], text: str, lang: str) -> tuple[WordConfidence, ...]:
    """The normalised text's tokens, each with the confidence of the recognised words it came from."""
    heard: list[WordConfidence] = []
    for word in raw:  # one entry per token (a Chinese word gives one per character)
        for token in _tokens(word.word):
            heard.append(replace(word, word=token, heard=token))
    said = _tokens(text)
    out: list[WordConfidence] = []
    matcher = difflib.SequenceMatcher(a=[h.word.lower() for h in heard], b=[s.lower() for s in said], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(replace(heard[i1 + k], word=said[j1 + k]) for k in range(j2 - j1))
            continue
        out.extend(_split_block(heard[i1:i2], said[j1:j2], lang))
    return tuple(out)


def _split_block(source: list[WordConfidence], tokens: list[str], lang: str) -> list[WordConfidence]:
    """Written tokens for recognised words that normalisation changed ("3 pm" for "three p m"):
    each token takes the shortest run of words that normalises to it, the last one the rest."""
    out: list[WordConfidence] = []
    rest = list(source)
    for n, token in enumerate(tokens):
        take = len(rest)
        if n < len(tokens) - 1:
            take = next((k for k in range(1, len(rest)) if
                         normalize(" ".join(w.word for w in rest[:k]), lang).replace(" ", "") == token), 1)
        used, rest = rest[:take], rest[take:]
        known = [w.confidence for w in used if w.confidence is not None]
        out.append(WordConfidence(
            token,
            min(known) if known else None,
            " ".join(w.word for w in used),
            used[0].start_s if used else None,
            used[-1].end_s if used else None,
        ))
    return out


def normalize_final(transcript: Transcript, lang: str) -> Transcript:
    """A final with numbers and times normalised; `raw_text` keeps the recognised words."""
    if not transcript.final:
        return transcript
    text = normalize(transcript.text, lang)
    if text == transcript.text:
        return transcript
    words = _aligned_words(transcript.words, text, lang) if transcript.words else ()
    return replace(transcript, text=text, raw_text=transcript.text, words=words,
                   confidence=mean_confidence(words) if words else transcript.confidence)


class NormalizingRecognizer:
    """A `Recognizer` whose finals have numbers and times normalised (partials pass as heard)."""

    def __init__(self, inner: Recognizer, lang: str) -> None:
        self.inner = inner
        self.lang = lang
        self.name = inner.name
        self.sample_rate = inner.sample_rate

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        return [normalize_final(t, self.lang) for t in self.inner.accept(chunk)]

    def flush(self, turn_id: int) -> list[Transcript]:
        return [normalize_final(t, self.lang) for t in self.inner.flush(turn_id)]

    def __getattr__(self, name: str) -> Any:
        # real_time_factor, model_path, keyphrases...: the wrapped engine's
        return getattr(self.inner, name)


_WER_PUNCTUATION = re.compile(r"(?<!\d)[:.]|[:.](?!\d)|[,;!?\"()\[\]{}\-–—/、，。！？：；“”]|(?<!\w)'|'(?!\w)")


def comparable_words(text: str, lang: str) -> list[str]:
    """The words of `text` as the word error rate compares them: lowercase, no punctuation,
    numbers normalised, digit groups joined ("0412 556 781" = "0412556781"); Chinese by
    character (there are no spaces to count words by)."""
    plain = _WER_PUNCTUATION.sub(" ", text.lower())
    tokens = _tokens(normalize(plain, lang, every_number=True))  # "three" and "3" are one word
    out: list[str] = []
    for token in tokens:
        if out and _is_number(token) and _is_number(out[-1]):
            out[-1] += token
        else:
            out.append(token)
    return out
