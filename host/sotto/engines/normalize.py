"""Numbers and times in recognised words, written as a user would type them.

Recognizers spell numbers out ("tomorrow at three p m", "一三九零零一二三四五六"); the
memory keeps values verbatim and people type digits, so a final transcript is normalised
between recognition and memory: "tomorrow at 3 pm", "13900123456". The recognised words
stay in the transcript (`Transcript.raw_text`) and in the trace.

- English: `text2num` turns number words into digits. Its threshold keeps isolated
  "one" and "two" (and the ordinals "first", "second") as words, so "one of them", "a
  second", "once" are untouched. On top of it, the forms a time takes: "p m" -> "pm",
  a number word before am/pm, an hour and its minutes ("3 15") -> "3:15", and a spelled
  digit string ("oh four one two ...") -> "0412...".
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
from typing import Any

from sotto.engines.base import AudioChunk, Recognizer, Transcript, WordConfidence, mean_confidence

# ------------------------------------------------------------------ English

_EN_THRESHOLD = 3  # text2num converts an isolated number only from three up
_MERIDIEM = {"p.m.": "pm", "a.m.": "am", "pm": "pm", "am": "am"}
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


def _meridiem(tokens: list[str], i: int) -> tuple[str, int] | None:
    """am/pm at tokens[i] ("pm", "p.m.", or the letters "p m"): (form, tokens used)."""
    token = tokens[i]
    if token in _MERIDIEM:
        return _MERIDIEM[token], 1
    if token in ("p", "a") and i + 1 < len(tokens) and tokens[i + 1] == "m":
        return token + "m", 2
    return None


def _en_times(tokens: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        # "two p m" -> "2 pm": a number word right before am/pm is a time, however small.
        meridiem = _meridiem(tokens, i + 1) if i + 1 < len(tokens) else None
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
        if (
            i + 1 < len(out) and _is_number(token) and 1 <= int(token) <= 12 and len(out[i + 1]) == 2
            and _is_number(out[i + 1]) and int(out[i + 1]) < 60
        ):
            joined.append(f"{int(token)}:{out[i + 1]}")
            i += 2
            continue
        joined.append(token)
        i += 1
    return joined


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
_SPOKEN_DIGITS = re.compile(
    r"\b(?:(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|double (?:zero|oh|one|two|three|four|five|six|seven|eight|nine))"
    r"(?:,?\s+|-)){2,}(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)\b",
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


def normalize_en(text: str) -> str:
    from text_to_num import alpha2digit

    if not text.strip():
        return ""
    converted = alpha2digit(spoken_codes(spoken_digit_groups(text)), "en", _EN_THRESHOLD)
    return " ".join(_en_digit_strings(_en_times(converted.split())))


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
            value: Any = cn2an.cn2an(run, "strict")  # 万一, 千万: not well-formed numbers
        else:
            value = cn2an.cn2an(run.replace("两", "二"), "normal")
    except (ValueError, KeyError, IndexError):
        return None
    return str(int(value)) if float(value) == int(value) else str(value)


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


def normalize(text: str, lang: str) -> str:
    """Numbers and times in `text` as digits; other words unchanged (lang "en" or "zh")."""
    base = lang.lower().split("-")[0].split("_")[0]
    if base == "en":
        return normalize_en(text)
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
    tokens = _tokens(normalize(plain, lang))
    out: list[str] = []
    for token in tokens:
        if out and _is_number(token) and _is_number(out[-1]):
            out[-1] += token
        else:
            out.append(token)
    return out
