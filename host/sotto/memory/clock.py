"""Clock times as minutes, for a relative change of a stored time ("ten minutes earlier",
"push it back half an hour", 再早十分钟, 推迟一个小时).

`clock_minutes` reads a stored time into minutes after midnight (or after the hour on a
12-hour clock when no half of the day is said); `shifted` writes the time moved by some
minutes in the way the stored one was written (digits and its am/pm, or 点 in Chinese);
`shift_minutes` reads how far a phrase moves a time.
"""

from __future__ import annotations

import re

from sotto.engines.normalize import normalize_en, number_value
from sotto.memory.text import EN_MONTHS, EN_WEEKDAYS


_HOUR_WORD = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# Longer words first: "forty-five" before "forty".
_MINUTE_WORD = "oh five|o five|twenty-five|twenty five|thirty-five|thirty five|forty-five|forty five|fifty-five|fifty five|fifteen|twenty|thirty|forty|fifty|ten|five"


def _minutes(word: str) -> int:
    return number_value(re.sub(r"^o(?:h)? ", "", word), "en") or 0


def _hour(word: str) -> int | None:
    hour = number_value(word, "en")
    return hour if hour is not None and 0 <= hour <= 24 else None


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
        step = {"half": 30, "quarter": 15}.get(m.group(1) or "", 0) or _minutes(m.group(3))
        toward = m.group(2) or m.group(4)
        return hour * 60 + (step if toward == "past" else -step), half
    m = re.search(rf"\bhalf (\d{{1,2}}|{_HOUR_WORD})\b", t)
    if m:
        hour = _hour(m.group(1))
        return (hour * 60 + 30, half) if hour is not None else None  # "half seven": 7:30
    m = re.search(rf"\b(\d{{1,2}}|{_HOUR_WORD})(?:[- ]({_MINUTE_WORD}))?(?:\s*(?:o'clock|a\.?m\.?|p\.?m\.?))?(?![\w-])", t)
    if m:
        hour = _hour(m.group(1))
        if hour is None or hour > 24:
            return None
        return hour * 60 + (_minutes(m.group(2)) if m.group(2) else 0), half
    return None


_ZH_HALVES = {"上午": "am", "早上": "am", "早晨": "am", "凌晨": "am", "中午": "pm", "下午": "pm", "晚上": "pm", "傍晚": "pm"}


def _zh_clock(t: str) -> tuple[int, str] | None:
    m = re.search(r"(上午|早上|早晨|凌晨|中午|下午|晚上|傍晚)?([零〇一二两三四五六七八九十\d]{1,3})[点:：]([零〇一二三四五六七八九十\d]{1,3}|半|一刻|三刻)?分?", t)
    if not m:
        return None
    hour = number_value(m.group(2), "zh")
    if hour is None:
        return None
    rest = m.group(3) or ""
    minutes = {"半": 30, "一刻": 15, "三刻": 45}.get(rest)
    if minutes is None:
        minutes = number_value(rest, "zh") if rest else 0
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
    """How many minutes a phrase moves a time, wherever the amount stands in it: "ten minutes
    earlier", "push it back half an hour", 再早十分钟, 推迟一个小时, 晚半小时."""
    t = text.strip().lower()
    if lang == "zh":
        half = re.search(r"(?:([零一二两三四五六七八九十\d]+)个?)?半个?(?:小时|钟头)", t)
        if half:
            return (number_value(half.group(1), "zh") or 0) * 60 + 30 if half.group(1) else 30
        quarters = re.search(r"([一二两三\d])刻", t)
        if quarters:
            return 15 * (number_value(quarters.group(1), "zh") or 1)
        said = re.search(r"([零一二两三四五六七八九十\d]+)个?(分钟|小时|钟头)", t)
        if not said:
            return None
        count = number_value(said.group(1), "zh")
        return None if count is None else count * (1 if said.group(2) == "分钟" else 60)
    if re.search(r"\b(?:a |one )?half (?:an |a )?hour", t):
        return 30
    if re.search(r"\b(?:a )?quarter (?:of )?an hour", t):
        return 15
    said_en = re.search(r"\b(\d+|[a-z]+(?:-[a-z]+)?)\s+(?:and a half\s+)?(minutes?|mins?|hours?|hrs?)\b", t)
    if not said_en:
        return None
    amount = 1 if said_en.group(1) in ("a", "an") else number_value(said_en.group(1), "en")
    if amount is None:
        return None
    if said_en.group(2).startswith("h"):
        return amount * 60 + (30 if "and a half" in t else 0)
    return amount


_WEEKDAY_FIRST = re.compile(r"^(?P<day>(?:mon|tues|wednes|thurs|fri|satur|sun)day),? (?:the )?(?P<n>.+)$", re.I)


def day_of_month(text: str) -> int | None:
    """The day of the month a date names ("the 16th", "the twenty-ninth", "16"), or None."""
    m = re.fullmatch(r"(?:the )?(\d{1,2})(?:st|nd|rd|th)?", normalize_en(text.strip(), every_number=True).strip(), re.I)
    return int(m.group(1)) if m and 1 <= int(m.group(1)) <= 31 else None


def weekday_kept(old: str, new: str) -> str | None:
    """"Thursday the 22nd" moved to "the 29th": a whole number of weeks later it is still a
    Thursday ("Thursday the 29th"); any other day of the month is another weekday (None)."""
    m = _WEEKDAY_FIRST.match(old.strip())
    if m is None:
        return None
    before, after = day_of_month(m.group("n")), day_of_month(new)
    if before is None or after is None or (after - before) % 7:
        return None
    return f"{m.group('day')} {new.strip()}"


# Relative change of a stored day ("pushed back a day", "a week later", 往后推两天, 提前一个礼拜).
_EN_DAYS = tuple(EN_WEEKDAYS.split("|"))
_ZH_DAYS = "一二三四五六日"
_ZH_DIGIT = "零一二三四五六七八九"
_MONTH_DAYS = dict(zip(EN_MONTHS.split("|"), (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)))  # February: no leap year guessed


def shift_days(text: str, lang: str) -> int | None:
    """How many days a phrase moves a day: "a day", "two weeks", "a fortnight", 两天, 一个礼拜."""
    t = text.strip().lower()
    if lang == "zh":
        said = re.search(r"([零一二两三四五六七八九十\d]+)个?(天|周|星期|礼拜)", t)
        count = number_value(said.group(1), "zh") if said else None
        return None if said is None or count is None else count * (1 if said.group(2) == "天" else 7)
    if "fortnight" in t:
        return 14
    if re.fullmatch(r"the (?:(?:day|week) (?:after|before)|(?:next|following|previous) (?:day|week))", t):
        return 7 if "week" in t else 1  # "the day after", "the following week"
    said_en = re.search(r"\b(\d+|an?|[a-z]+)\s+(days?|weeks?)\b", t)
    if not said_en:
        return None
    amount = 1 if said_en.group(1) in ("a", "an") else number_value(said_en.group(1), "en")
    return None if amount is None else amount * (7 if said_en.group(2).startswith("w") else 1)


def _zh_number(n: int) -> str:
    """1..31 in Chinese numerals, as a stored 九月六号 writes them."""
    tens, ones = divmod(n, 10)
    return ("" if tens == 0 else ("十" if tens == 1 else _ZH_DIGIT[tens] + "十")) + (_ZH_DIGIT[ones] if ones or not tens else "")


def shifted_date(text: str, by: int, lang: str) -> str | None:
    """The stored day moved by `by` days, written as the stored one was: "the 12th" -> "the 14th",
    "Friday the 13th" -> "Saturday the 14th", "Tuesday" -> "Thursday", 九月六号 -> 九月八号,
    周六 -> 周日. None when the day is no day of the month or of the week, or the month would end."""
    if lang == "zh":
        day = re.search(r"([零一二两三四五六七八九十\d]{1,3})(号|日)", text)
        if day:
            n = number_value(day.group(1), "zh")
            month_said = re.search(r"([一二三四五六七八九十\d]{1,2})月", text)
            month = number_value(month_said.group(1), "zh") if month_said else None
            last = list(_MONTH_DAYS.values())[month - 1] if month and 1 <= month <= 12 else 28
            if n is None or not 1 <= n + by <= last:
                return None
            digits = day.group(1).isdigit()
            return text[: day.start(1)] + (str(n + by) if digits else _zh_number(n + by)) + text[day.end(1):]
        week = re.search(rf"(周|星期|礼拜)([{_ZH_DAYS}天])", text)
        if not week or by % 7 == 0:
            return None
        index = _ZH_DAYS.index("日" if week.group(2) == "天" else week.group(2))
        return text[: week.start(2)] + _ZH_DAYS[(index + by) % 7] + text[week.end(2):]
    plain = normalize_en(text, every_number=True)
    day_n = re.search(r"\b(\d{1,2})(st|nd|rd|th)\b", plain)
    weekday = re.search(rf"\b({'|'.join(_EN_DAYS)})\b", plain, re.I)
    if day_n:
        n = int(day_n.group(1)) + by
        month_name = re.search(rf"\b({'|'.join(_MONTH_DAYS)})\b", plain, re.I)
        if not 1 <= n <= (_MONTH_DAYS[month_name.group(1).lower()] if month_name else 28):
            return None
        suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
        moved = plain[: day_n.start()] + f"{n}{suffix}" + plain[day_n.end():]
    elif weekday and by % 7:
        moved = plain
    else:
        return None
    if weekday:
        index = _EN_DAYS.index(weekday.group(1).lower())
        name = _EN_DAYS[(index + by) % 7]
        moved = moved[: weekday.start()] + (name.capitalize() if weekday.group(1)[0].isupper() else name) + moved[weekday.end():]
    return moved
