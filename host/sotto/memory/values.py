"""What a sentence is read into, and the reading steps both languages share.

- `Value` (a verbatim span with its kind, key, qualifiers and signals) and `Statement`
  (the sentence's values, frame, note and signals), built by `statements.read_sentence`
  from the English (`read_en.py`) or Chinese (`read_zh.py`) patterns;
- the steps after the patterns, the same for both languages: each value's clause and the
  days said with a time (`_set_contexts`), a change said only by pointing back
  (`_anaphoric_cue`), a key without values in it (`_without_values`), whether a yes/no
  question proposes a value (`_carries_value`);
- what a question asks for (`asked_kinds`), which closed set a choice is from
  (`choice_class`), and the counted thing as a key (`unit_key`), used by the update step.

The language modules import this one; it imports neither of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sotto.backfill.phonetic_en import edit_distance, phonetic_key
from sotto.memory import language as L
from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME
from sotto.memory.text import stem

_EN_FREQUENCY_CHOICE = r"daily|weekly|fortnightly|monthly|quarterly|annual|annually|yearly"
_QUOTED = re.compile(r"“(?P<q>[^”]{1,40})”|\"(?P<q2>[^\"]{1,40})\"|《[^》]{1,30}》|「[^」]{1,30}」")


@dataclass
class Value:
    text: str
    kind: str
    start: int
    end: int
    unit: str = ""  # for a quantity: the thing counted, as a key ("people", "bike", "milligram")
    prep: str = ""  # the preposition said before it ("at", "on", "from")
    delta: bool = False  # "two more": a change relative to a stored quantity
    delta_sign: int = 1  # -1 for "two fewer", 少一个人
    negated: bool = False  # said as the value that no longer holds ("not 6", "than Thursday")
    maybe_old: bool = False  # "from 6 to 7": the old value when it is stored, else a value
    weak: bool = False  # a role word standing for a person ("my sister"): never replaces a name by a cue alone
    key: str = ""  # what the value is about (a copula subject: "the dose is ...")
    qualifiers: list[str] = field(default_factory=list)  # days said with a time ("1:30 on Wednesdays")
    context: str = ""  # the words of its own clause, without values: what else it may be about
    cue: bool = False  # its own clause carries a cue of change ("make it 7", "推到九点")
    factor: float = 0.0  # "double the chilli", 减半: a stored amount multiplied (0: none)
    each: bool = False  # "one more of each", 各加一个: every count of the latest list changes by it
    moved_by: int = 0  # minutes the sentence says the new time moved ("on by an hour, so half eleven"): which stored time it was
    per: str = ""  # the measure an amount is said per: 套 of 一套一百三 ("130 a set"), a price, not a count
    anchored: bool = False  # a change only of a stored value: a shift of a day the turn names (提前一天去, not
    # 提前五天停), one more of a stored count ("another grown-up"; with no count stored, nothing)


@dataclass
class Statement:
    text: str  # the sentence without discourse words
    lang: str
    raw: str = ""  # the sentence as said
    values: list[Value] = field(default_factory=list)
    frame: str = ""  # the words that are not values ("book a table")
    note: str = ""  # the sentence without discourse, times, dates and counts: what a note keeps
    frame_keys: set[str] = field(default_factory=set)  # content stems of the frame
    question: bool = False
    change_cue: bool = False
    admission: bool = False
    additive: bool = False
    anaphoric_cue: bool = False  # a clause with a cue and a pronoun only: "let's go with her", "就这个吧"
    proposal: bool = False  # a yes/no question carrying a value: "could he go last, say 4:40?"
    strong_cue: bool = False  # a preference said anywhere in the sentence ("the later slot works better")



_EN_ASKS = [
    (re.compile(r"\b(?:what|which) (?:colou?r|shade|size)\b", re.I), (KIND_ITEM, KIND_NUMBER, KIND_QUANTITY)),
    (re.compile(r"\bhow (?:wide|long|tall|high|heavy|hot|warm|cold|deep|far|fast)\b|\bwhat (?:width|length|height|weight|pace|speed|temperature|depth|dose|gauge|setting)\b", re.I), (KIND_QUANTITY, KIND_NUMBER, KIND_TIME)),
    (re.compile(r"\b(?:what time|when|how late|how early|what hour)\b", re.I), (KIND_TIME, KIND_DATE)),
    (re.compile(r"\b(?:what day|which day|what date|which date|what night)\b", re.I), (KIND_DATE, KIND_TIME)),
    (re.compile(r"\bhow (?:many|much)\b|\bhow big\b|\bwhat size\b|\bwhat(?:'s| is) the (?:count|number of|total|dose|amount)\b", re.I), (KIND_QUANTITY, KIND_NUMBER)),
    (re.compile(r"\b(?:who|whom|whose|which (?:person|teacher|doctor|driver|coach|guide))\b", re.I), (KIND_NAME,)),
    (re.compile(r"\b(?:where|which (?:street|road|address|place|hotel|station|gate|room|floor|city|town)|what address)\b", re.I), (KIND_PLACE,)),
    (re.compile(r"\b(?:what(?:'s| is| was)? (?:the |my |our |his |her |their )?(?:[\w'’]+ )?(?:number|id|code|phone|reference|model|plate|pin)|which (?:number|model|code))\b", re.I), (KIND_NUMBER, KIND_QUANTITY)),
]
_ZH_ASKS = [
    (re.compile(r"什么颜色|啥颜色|什么色|哪个颜色|多大号|什么码|几码"), (KIND_ITEM, KIND_NUMBER, KIND_QUANTITY)),
    (re.compile(r"几点|什么时候|什么时间|几时"), (KIND_TIME, KIND_DATE)),
    (re.compile(r"哪天|几号|星期几|周几|礼拜几|哪一天|什么日子"), (KIND_DATE, KIND_TIME)),
    (re.compile(r"多少|几[个位张只件台辆瓶杯份次天晚间本盒包袋箱斤克米块片粒支条把双套碗盘桌束朵人]|几公斤"), (KIND_QUANTITY, KIND_NUMBER)),
    (re.compile(r"谁|哪位"), (KIND_NAME,)),
    (re.compile(r"哪里|哪儿|在哪|什么地方|去哪|地址"), (KIND_PLACE,)),
    (re.compile(r"号码|电话|编号|多少号"), (KIND_NUMBER, KIND_QUANTITY)),
]

def asked_kinds(question: str) -> tuple[str, ...]:
    for pattern, kinds in (*_EN_ASKS, *_ZH_ASKS):
        if pattern.search(question):
            return kinds
    return ()


_EN_IRREGULAR_PLURALS = {"feet": "foot", "teeth": "tooth", "children": "child", "men": "man", "women": "woman", "mice": "mouse", "geese": "goose", "pence": "penny"}


def unit_key(unit: str, lang: str) -> str:
    """The counted thing as a key: people-words share one key, plurals fold."""
    u = unit.lower().strip()
    if lang == "zh":
        if u in L.ZH_PEOPLE_UNITS or u.endswith("人"):
            return "people"
        if u == "个":
            return ""  # the general measure word says nothing of what is counted
        u = u.replace("钟头", "小时")  # 四个钟头 counts what 四个小时 counts
        return u[1:] if u.startswith("个") and len(u) > 1 else u
    if u in L.EN_PEOPLE_UNITS or u.split(" ")[-1] in L.EN_PEOPLE_UNITS or u.replace(" ", "-") in L.EN_PEOPLE_UNITS:  # "grown ups"
        return "people"
    return " ".join(stem(_EN_IRREGULAR_PLURALS.get(w, w).replace("’", "'").removesuffix("'s")) for w in u.split())


def without_appositive_roles(values: list["Value"], text: str) -> list["Value"]:
    """"his brother Tom Baxter", 我女儿小雨: a role word right before a name is that person,
    not another one; the name is the value (values sorted by position)."""
    return [
        v for i, v in enumerate(values)
        if not (v.kind == KIND_NAME and v.weak and i + 1 < len(values) and values[i + 1].kind == KIND_NAME
                and not values[i + 1].weak and not text[v.end: values[i + 1].start].strip(" ,"))
    ]


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)



# A code written as one token: letters and digits, maybe joined by - . _ / · ("3B-208", "B.07",
# "run_0412", "0x3C", "91330106MA27C4K8XQ", "20-45-77"). The same shape in both languages.
_CODE_TOKEN = re.compile(r"(?<![A-Za-z0-9_./·-])[A-Za-z0-9]+(?:[-._/·][A-Za-z0-9]+)*(?![A-Za-z0-9_/·-]|\.[A-Za-z0-9])")
_CODE_SEP = re.compile(r"[-._/·]")
_CODE_GROUP = re.compile(r" (?=[A-Z0-9]*[A-Z])[A-Z0-9]{2,4}(?![\w'’])")
# The same groups said before the code ("LK 07ABC"): a plate's letters come first.
_CODE_LEAD = re.compile(r"(?<![\w'’.])(?!(?:AM|PM|OK|TV|ID)\b)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{2,4} $")
# Not codes: an ordinal, a decade, a clock time, a measure with its unit symbol.
_NOT_CODE = re.compile(
    r"\d+(?:st|nd|rd|th|s|am|pm)|\d+(?:[.:]\d+)?(?:am|pm)"
    r"|\d+(?:\.\d+)?(?:k|km|kg|g|mg|mcg|ml|l|mm|cm|m|GB|MB|TB|KB|mAh|Ah|W|kW|V|mV|A|mA|Hz|kHz|MHz|GHz|x|ft|in|oz|lb|lbs|p)",
    re.I,
)
_DATE_WRITTEN = re.compile(r"\d{1,2}([./])\d{1,2}\1(?:\d{4}|\d{2})|\d{4}([./-])\d{1,2}\2\d{1,2}")


def code_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` writes a code, serial, plate or reference as one token.

    A token of letters and digits is a code when it mixes both ("S24", "A3K729") or joins
    parts with a separator and a letter ("B.07", "run_0412"); digits alone are a code when
    joined three times or more ("20-45-77"), not a range ("2-4"), a decimal or a date."""
    spans: list[tuple[int, int]] = []
    for m in _CODE_TOKEN.finditer(text):
        token = m.group(0)
        if not any(c.isdigit() for c in token) or _NOT_CODE.fullmatch(token) or _DATE_WRITTEN.fullmatch(token):
            continue
        parts = _CODE_SEP.split(token)
        if any(p.isalpha() and p.islower() and len(p) >= 3 and not token.count("_") for p in parts):
            continue  # "9-volt", "covid-19": a word joined to a number, not a code
        letters = any(c.isalpha() for c in token)
        if (letters and any(c.isdigit() for c in token)) or len(parts) >= 3:
            end = m.end()
            if token.upper() == token:
                while (more := _CODE_GROUP.match(text, end)) is not None:
                    end = more.end()  # "KX19 PLM": a plate read in groups is one code
                lead = _CODE_LEAD.search(text, 0, m.start())
                start = lead.start() if lead is not None and not _overlaps(spans, lead.start(), m.start()) else m.start()
            else:
                start = m.start()
            spans.append((start, end))
    return spans
# The kinds a proposal carries: "Could the driver come at quarter to six?" offers a value; a
# yes/no question with none of them ("Is Dale coming?") asks.
_PROPOSED_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_ITEM)


_VAGUE_PERIOD = re.compile(r"today|now|(?:(?:this|next|last|the) )?(?:weekend|week|month|year|summer|winter|spring|autumn)|今天|现在|(?:这|下|上)(?:个)?(?:周末|周|星期|月)|今年|明年|去年", re.I)


def _carries_value(values: list["Value"]) -> bool:
    # "Is it going to rain this weekend?", "Any news today?" ask: a period or today is not a proposed day.
    return any(v.kind in _PROPOSED_KINDS and not v.negated and not (v.kind == KIND_DATE and _VAGUE_PERIOD.fullmatch(v.text)) for v in values)


_SLOT_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER)
# What a note leaves out: the values most often corrected on their own. Counts stay in
# the note ("a dozen eggs", "一束花" are what the note is about).
_NOTE_CUTS = (KIND_TIME, KIND_DATE, KIND_NUMBER)


def choice_class(text: str) -> str:
    """Which closed set a choice belongs to: "colour", "size" or "frequency"."""
    if re.fullmatch(_EN_FREQUENCY_CHOICE, text.strip(), re.I):
        return "frequency"
    if re.search(r"\b(?:extra[- ]small|small|medium|large|extra[- ]large|XS|XL|XXL|king[- ]size|queen[- ]size|single|double)\b|[大中小](?:号|杯|码|包|份|碗|盒|瓶|桶|袋)|加大码", text, re.I):
        return "size"
    return "colour"


_EN_CLAUSE_BREAK = re.compile(r"[,;]|:(?=\s)|\s(?:and|but|so|except|while|whereas|when)\s", re.I)  # not the colon of "6:40"
_ZH_CLAUSE_BREAK = re.compile(r"[，,；;：。]|:(?!\d)|但是|不过|而且")


def clause_starts(text: str, lang: str) -> list[int]:
    """Where each clause of `text` starts (0 first): one way to cut a sentence into clauses."""
    return [0] + [m.end() for m in (_ZH_CLAUSE_BREAK if lang == "zh" else _EN_CLAUSE_BREAK).finditer(text)]


def clause_at(text: str, pos: int, lang: str) -> tuple[int, int]:
    """The span of the clause of `text` that holds position `pos`."""
    starts = clause_starts(text, lang) + [len(text) + 1]
    lo = max(b for b in starts if b <= pos)
    hi = min(b for b in starts if b > pos)
    return lo, hi


_EN_ANAPHOR = re.compile(r"\b(?:her|him|them|it|that|that one|this one|those|these)\b", re.I)
_ZH_ANAPHOR = re.compile(r"她|他|它|这个|那个|这位|那位|这家|那家")


def _anaphoric_cue(text: str, values: list[Value], lang: str) -> bool:
    """A clause that changes something only by pointing back at a value of the sentence."""
    starts = clause_starts(text, lang) + [len(text) + 1]
    for lo, hi in zip(starts, starts[1:]):
        if any(lo <= v.start < hi for v in values):
            continue
        clause = text[lo:hi]
        if L.has_change_cue(clause, lang) and (_ZH_ANAPHOR if lang == "zh" else _EN_ANAPHOR).search(clause):
            return True
    return False


# 得 ("has to") right before a value: the value is what it must be now. Elsewhere 得 is only a
# modal ("我爱人那天得带孙子") or a complement (拿得多), no word of change.
_ZH_MUST_BE = re.compile(r"(?<![拿吃要做说来去买多少记舍觉晓懂认])得(?:等到|推到|拖到|改到|挪到|用|要|是)?$")


_EN_DAYPART = re.compile(r"\b(?:morning|afternoon|evening|night|bedtime|lunchtime|daytime|weekday|weekend)s?\b|\b(?:during|in) the day\b", re.I)
_ZH_DAYPART = re.compile(r"早上|早晨|上午|中午|下午|晚上|夜里|睡前|白天|平时|周末|工作日")


def part_of_day(text: str, lang: str, near: tuple[int, int] | None = None) -> str:
    """The part of the day (or week) the words name: "morning" of "the morning dose", 睡前 ("" if none).
    The one nearest to the span `near` ("all night plus four hours during the day": the day's
    four hours), else the last one (a key ends with what its value was said for)."""
    found = list((_ZH_DAYPART if lang == "zh" else _EN_DAYPART).finditer(text))
    if not found:
        return ""
    m = min(found, key=lambda f: max(near[0] - f.end(), f.start() - near[1])) if near is not None else found[-1]
    part = m.group(0).lower().removesuffix("s")
    return "day" if part in ("daytime", "during the day", "in the day") else part


def _set_contexts(text: str, values: list[Value], lang: str) -> None:
    """Each value's clause (its words without the values), and the days said with a time."""
    for v in values:
        lo, hi = clause_at(text, v.start, lang)
        clause = text[lo:hi]
        for o in sorted(values, key=lambda o: -o.start):
            # Names and places stay in the others' context ("the office at 9 Bell Yard").
            if lo <= o.start and o.end <= hi and (o is v or o.kind in _SLOT_KINDS):
                clause = clause[: o.start - lo] + " " + clause[o.end - lo :]
        v.context = " ".join(clause.split())
        v.cue = L.has_change_cue(text[lo:hi], lang) or (lang != "zh" and re.search(r"\b(?:so|that makes|making it)\s+$", text[: v.start], re.I) is not None) or (  # "..., so three"
            lang == "zh" and _ZH_MUST_BE.search(text[lo: v.start]) is not None)  # 估计得十点一刻, 得等到下周三: what it has to be now
        if v.kind == KIND_TIME:
            own = [o.text for o in values if o.kind == KIND_DATE and lo <= o.start < hi]
            # Else the day said last before it in the sentence ("on Tuesday, so 6:30").
            before = [o for o in values if o.kind == KIND_DATE and o.start < lo]
            v.qualifiers = own or ([before[-1].text] if before else [])
        elif v.kind in (KIND_NUMBER, KIND_QUANTITY):
            # "the evening dose is 30 mg" beside "the morning dose is 400 mg": a part of the day
            # tells two amounts of one key apart.
            around = text[lo: v.start] + " " * (v.end - v.start) + text[v.end: hi]  # "three nights" is a count, not a part of the day
            part = part_of_day(around, lang, near=(v.start - lo, v.end - lo))
            v.qualifiers = [part] if part else []
        else:
            v.qualifiers = []


def _without_values(key: str, values: list[Value]) -> str:
    """A key never carries a value: "把七点" is about the time, not "七点"."""
    for v in values:
        if v.text and v.text in key:
            key = key.replace(v.text, " ")
    return " ".join(key.split())



def spelled_again(a: str, b: str) -> bool:
    """Two spellings of one name: one or two letters apart from the same start, or the same
    sound ("Kaitlyn" for "Caitlin", "Filips" for "Phillips")."""
    x, y = a.lower(), b.lower()
    if x == y or not x or not y or abs(len(x) - len(y)) > 2 or min(len(x), len(y)) < 3:
        return False
    if x[0] != y[0]:
        return phonetic_key(x) == phonetic_key(y)
    return edit_distance(x, y) <= 2
