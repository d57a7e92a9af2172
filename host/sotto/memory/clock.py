"""Clock times as minutes, for a relative change of a stored time ("ten minutes earlier",
"push it back half an hour", 再早十分钟, 推迟一个小时).

`clock_minutes` reads a stored time into minutes after midnight (or after the hour on a
12-hour clock when no half of the day is said); `shifted` writes the time moved by some
minutes in the way the stored one was written (digits and its am/pm, or 点 in Chinese);
`shift_minutes` reads how far a phrase moves a time.
"""

from __future__ import annotations

import re



def zh_number(text: str) -> int | None:
    """十 -> 10, 二十 -> 20, 两 -> 2, "07" -> 7; None when it is not a number."""
    if text.isdigit():
        return int(text)
    try:
        import cn2an  # type: ignore[import-not-found,import-untyped]

        return int(cn2an.cn2an(text.replace("两", "二").replace("〇", "零"), "smart"))
    except Exception:  # not a numeral after all
        return None

_EN_HOURS = {w: i for i, w in enumerate("twelve one two three four five six seven eight nine ten eleven".split())}
_EN_MINUTES = {
    "oh five": 5, "o five": 5, "five": 5, "ten": 10, "fifteen": 15, "twenty": 20, "twenty-five": 25, "twenty five": 25, "thirty": 30,
    "thirty-five": 35, "thirty five": 35, "forty": 40, "forty-five": 45, "forty five": 45, "fifty": 50, "fifty-five": 55, "fifty five": 55,
}
_EN_WORD_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "fifteen": 15, "twenty": 20, "twenty-five": 25, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "ninety": 90,
}
_HOUR_WORD = "|".join(_EN_HOURS)


def _hour(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _EN_HOURS.get(word)


def clock_minutes(text: str, lang: str) -> tuple[int, str] | None:
    """(minutes, half) of a stored time: half is "am", "pm" or "" when the day's half is not said."""
    t = text.strip().lower()
    if lang == "zh":
        return _zh_clock(t)
    half = ""
    m = re.search(r"\b(a\.?m\.?|p\.?m\.?)(?![a-z])|\bin the (morning|afternoon|evening)\b|\b(tonight|at night)\b", t)
    if m:
        half = "am" if (m.group(1) or "").startswith("a") or m.group(2) == "morning" else "pm"
    if re.search(r"\b(?:noon|midday)\b", t):
        return 12 * 60, "pm"
    if re.search(r"\bmidnight\b", t):
        return 0, "am"
    m = re.search(r"\b(\d{1,2})[:.](\d{2})\b", t)
    if m:
        h = int(m.group(1))
        return h * 60 + int(m.group(2)), half or ("pm" if h >= 13 else "")
    m = re.search(rf"\b(?:(half|quarter) (past|to)|(five|ten|twenty|twenty-five) (past|to)) (\d{{1,2}}|{_HOUR_WORD})\b", t)
    if m:
        hour = _hour(m.group(5))
        if hour is None:
            return None
        step = {"half": 30, "quarter": 15}.get(m.group(1) or "", 0) or _EN_MINUTES[m.group(3)]
        toward = m.group(2) or m.group(4)
        return hour * 60 + (step if toward == "past" else -step), half
    m = re.search(rf"\bhalf (\d{{1,2}}|{_HOUR_WORD})\b", t)
    if m:
        hour = _hour(m.group(1))
        return (hour * 60 + 30, half) if hour is not None else None  # "half seven": 7:30
    minute_words = "|".join(sorted(_EN_MINUTES, key=len, reverse=True))
    m = re.search(rf"\b(\d{{1,2}}|{_HOUR_WORD})(?:[- ]({minute_words}))?(?:\s*(?:o'clock|a\.?m\.?|p\.?m\.?))?(?![\w-])", t)
    if m:
        hour = _hour(m.group(1))
        if hour is None or hour > 24:
            return None
        return hour * 60 + (_EN_MINUTES[m.group(2)] if m.group(2) else 0), half
    return None


_ZH_HALVES = {"上午": "am", "早上": "am", "早晨": "am", "凌晨": "am", "中午": "pm", "下午": "pm", "晚上": "pm", "傍晚": "pm"}


def _zh_clock(t: str) -> tuple[int, str] | None:
    m = re.search(r"(上午|早上|早晨|凌晨|中午|下午|晚上|傍晚)?([零〇一二两三四五六七八九十\d]{1,3})[点:：]([零〇一二三四五六七八九十\d]{1,3}|半|一刻|三刻)?分?", t)
    if not m:
        return None
    hour = zh_number(m.group(2))
    if hour is None:
        return None
    rest = m.group(3) or ""
    minutes = {"半": 30, "一刻": 15, "三刻": 45}.get(rest)
    if minutes is None:
        minutes = zh_number(rest) if rest else 0
    if minutes is None:
        return None
    return hour * 60 + minutes, _ZH_HALVES.get(m.group(1) or "", "")


def shifted(text: str, by: int, lang: str) -> str | None:
    """The stored time moved by `by` minutes, written as the stored one was: "7:20" -> "7:10",
    "8 am" -> "9 am", 七点二十 -> 7点10, 下午三点 -> 下午3点半."""
    read = clock_minutes(text, lang)
    if read is None:
        return None
    minutes, half = read
    total = minutes + by
    twenty_four = re.search(r"\b(?:1[3-9]|2[0-3]|0\d):\d{2}\b", text) is not None
    hour, minute = divmod(total % (24 * 60 if twenty_four or half else 12 * 60), 60)
    if lang == "zh":
        prefix = re.match(r"(上午|早上|早晨|凌晨|中午|下午|晚上|傍晚)", text.strip())
        shown = hour if hour <= 12 or not prefix else hour - 12
        tail = "" if minute == 0 else ("半" if minute == 30 else f"{minute:02d}" if minute < 10 else str(minute))
        return f"{prefix.group(1) if prefix else ''}{shown}点{tail}"
    if twenty_four:
        return f"{hour:02d}:{minute:02d}"
    if half:
        if total >= 12 * 60 and half == "am" and minutes < 12 * 60:
            half = "pm"
        shown = hour % 12 or 12
        return f"{shown}:{minute:02d} {half}" if minute else f"{shown} {half}"
    shown = hour % 12 or 12
    return f"{shown}:{minute:02d}"


def shift_minutes(text: str, lang: str) -> int | None:
    """How many minutes a phrase moves a time: "ten minutes", "half an hour", 十分钟, 一个小时, 半小时."""
    t = text.strip().lower()
    if lang == "zh":
        if "半" in t and ("小时" in t or "钟头" in t):
            whole = re.match(r"([零一二两三四五六七八九十\d]+)个?半", t)
            return (zh_number(whole.group(1)) or 0) * 60 + 30 if whole else 30
        if "刻" in t:
            quarters = re.match(r"([一二两三\d])", t)
            return 15 * (zh_number(quarters.group(1)) or 1) if quarters else 15
        said = re.match(r"([零一二两三四五六七八九十\d]+)个?(分钟|小时|钟头)", t)
        if not said:
            return None
        count = zh_number(said.group(1))
        return None if count is None else count * (1 if said.group(2) == "分钟" else 60)
    if re.match(r"(?:a |one )?half (?:an |a )?hour", t) or t.startswith("half an hour"):
        return 30
    if re.match(r"(?:a )?quarter (?:of )?an hour", t):
        return 15
    said_en = re.match(r"(\d+|[a-z]+(?:-[a-z]+)?)\s+(?:and a half\s+)?(minutes?|mins?|hours?|hrs?)\b", t)
    if not said_en:
        return None
    amount = int(said_en.group(1)) if said_en.group(1).isdigit() else _EN_WORD_NUMBERS.get(said_en.group(1))
    if amount is None:
        return None
    if said_en.group(2).startswith("h"):
        return amount * 60 + (30 if "and a half" in t else 0)
    return amount
