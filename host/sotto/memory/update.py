"""The update step: each value the user states is compared with the stored items that
could be about the same thing, and code decides ADD, UPDATE, DELETE or NOOP (in the
spirit of mem0's update phase, without a model).

Candidates for a new value are the stored items of a compatible kind (a quantity with
the same unit; a time with a time; a bare number with quantities, numbers and times).
Among them:
1. a stored value the sentence names as the one that no longer holds ("not 6",
   "better than Thursday", "Two won't work") is the one replaced;
2. the same value again is a repeat (NOOP);
3. an item with the same key ("the ID is 88421", "the garage is on Oak Street", a
   quantity of the same unit: "so eight people now") is replaced, unless the sentence
   adds ("another", "also") or qualifies the value differently ("1:30 on Wednesdays"
   beside "3:15") without a cue of change;
4. a value with no key of its own and a cue of change ("make it 7", "the 15th suits
   them better", 改成七点) replaces the latest item of its kind;
5. anything else is added: two values of one kind about different things both stay.
A replaced value is replaced everywhere (notes, steps, the task) so no old text lingers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

from sotto.engines.normalize import number_value
from sotto.memory import replace_model
from sotto.memory.clock import clock_minutes, shift_days, shift_minutes, shifted, shifted_date, weekday_kept
from sotto.memory.items import (
    KIND_DATE,
    KIND_ITEM,
    KIND_NAME,
    KIND_NUMBER,
    KIND_NOTE,
    KIND_PLACE,
    KIND_QUANTITY,
    KIND_TIME,
    VALUE_KINDS,
    Item,
)
from sotto.memory.language import EN_PEOPLE_NOUNS, counts_people, has_additive, has_change_cue, says_not
from sotto.memory.statements import Statement, Value, choice_class, content_stems, is_role_word, unit_key
from sotto.memory.values import _VAGUE_PERIOD, clause_at, part_of_day
from sotto.memory.read_en import EN_LABEL_WORDS, _is_name_word
from sotto.memory.read_zh import ZH_BUILDING, ZH_FLAT
from sotto.memory.text import EN_COUNT_ORDINALS, EN_MONTHS, EN_NUMBER_WORDS, EN_WEEKDAYS, MONEY_VALUE, stem
from sotto.memory.values import spelled_again as _spelled_again

ADD, UPDATE, DELETE, NOOP = "add", "update", "delete", "noop"


@dataclass
class Decision:
    op: str
    item: Item | None = None  # the new item (add, update)
    target: Item | None = None  # the stored item replaced or removed
    reason: str = ""

    def describe(self) -> str:
        if self.op == UPDATE and self.target is not None and self.item is not None:
            return f"update {self.target.value!r} -> {self.item.value!r} ({self.reason})"
        if self.op == ADD and self.item is not None:
            return f"add {self.item.kind} {self.item.value!r} ({self.reason})"
        if self.op == DELETE and self.target is not None:
            return f"delete {self.target.value!r} ({self.reason})"
        return f"{self.op} ({self.reason})"


@dataclass
class ValueUpdate:
    decisions: list[Decision] = field(default_factory=list)
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (old, new) value texts
    consumed: set[int] = field(default_factory=set)  # ids of the statement values used
    mentioned: list[Item] = field(default_factory=list)  # stored values a sentence of change named


_UNIT_SYNONYMS = (("个钟头", "小时"), ("钟头", "小时"), ("个小时", "小时"), ("hrs", "hours"), ("hr", "hour"), ("mins", "minutes"), ("kilos", "kg"))


RULED_OUT_BEFORE = "a new person after one ruled out before"


def _norm(text: str) -> str:
    out = " ".join(re.sub(r"[^\w:\u3400-\u9fff]+", " ", text.lower()).split())
    for said, unit in _UNIT_SYNONYMS:  # "四个钟头" is "四个小时"
        out = re.sub(rf"(?<![a-z]){said}(?![a-z])", unit, out)
    return re.sub(r"[零〇一二两三四五六七八九十百]+", _zh_digits, out)  # 十二层 and 12层 are one value


def _zh_digits(m: "re.Match[str]") -> str:
    try:
        import cn2an  # type: ignore[import-not-found,import-untyped]

        return str(cn2an.cn2an(m.group(0), "smart"))
    except Exception:  # not a numeral after all ("一点" of 一点点): leave it
        return m.group(0)




def number_of(text: str) -> float | None:
    """The leading number of a value: "eight people" -> 8, "250 mg" -> 250, "二十个" -> 20,
    "two hundred and forty pounds" -> 240, 一千二百六十元 -> 1260, "a dozen eggs" -> 12."""
    t = text.strip()
    m = re.match(r"[$£€¥]?\s*(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)", t)
    if m:
        return float(m.group(1).replace(",", ""))  # "3,000" is three thousand
    zh = re.match(r"[零〇一二两三四五六七八九十百千万]+", t)
    if zh:
        value = number_value(zh.group(0), "zh")
        return float(value) if value is not None else None
    if re.match(r"(?:a |one )?dozen\b", t, re.I):
        return 12.0
    if re.match(r"an? (?:hundred|thousand)\b", t, re.I):
        t = "one" + t[t.index(" "):]  # "a thousand points": one thousand
    more = re.match(r"(?:another|an? extra|an additional|one extra)\s+", t, re.I)
    if more:
        return number_of(t[more.end():]) or 1.0  # "another grown-up": one more; "another eight people": eight
    words = re.match(rf"(?:(?:{EN_NUMBER_WORDS}|thousand|million)\b(?:\s+and\s+|[- ])?)+", t, re.I)
    if words:
        value = number_value(words.group(0).strip(" -").removesuffix(" and"), "en")
        half = re.match(r"(?:and )?a half\b", t[words.end():].strip(), re.I) is not None  # "two and a half"
        return float(value) + (0.5 if half else 0.0) if value is not None else None
    return None


def _kind_compatible(stored: Item, value: Value, lang: str) -> bool:
    if value.per and stored.kind == KIND_QUANTITY and not MONEY_VALUE.search(stored.value) and not re.search(r"[块元毛角]$", item_unit(stored, lang)):
        return False  # 一套一百三 is a price a set: it counts no people ("八个人")
    if stored.kind == value.kind == KIND_TIME and _by_meal(stored.value) != _by_meal(value.text):
        return False  # "after breakfast" is another sort of time than "8 am": neither replaces the other
    if stored.kind == value.kind == KIND_NUMBER and _misread_code(stored.value, value.text) is not None:
        return True  # "7H239" after 苏A7K239: the same plate read again, one character otherwise
    if stored.kind == value.kind == KIND_NUMBER and _room_of(stored.value) is not None and (
            _ZH_ROOM_ALONE.fullmatch(value.text.strip()) or _ZH_BUILDING.fullmatch(value.text.strip())):
        return True  # 五零一 or 十三栋 after 十二栋五零二: the flat or the building said alone
    if stored.kind == value.kind == KIND_NUMBER:
        a, b = _label(stored.value), _label(value.text)
        structural = {*_SIZE_WORDS, "-"}
        if (a in structural or b in structural) and a != b:
            return False  # "fifty by eighty-five" is a size: it replaces a size, not "one point six"
        if a and b and a != b:
            return False  # "£21" never replaces "Year 5": numbers said with different labels are different things
        if a.isalpha() and not b and _shape(value.text) == "code" and stem(a) not in content_stems(value.context + " " + value.key):
            return False  # "proof code H7K2P" is not "pack A": a code replaces a labelled thing only when said of it
    if stored.kind == value.kind:
        if value.kind == KIND_ITEM:
            return choice_class(stored.value) == choice_class(value.text)  # a colour replaces a colour, not a size
        if value.kind == KIND_NUMBER and _is_bare_number(value.text) and re.fullmatch(r"\d+(?:\.\d+)?\s[a-z]{1,3}", stored.value.strip()):
            return True  # "280" for "300 mm": a measure said without its unit
        if value.kind == KIND_NUMBER and _is_bare_number(value.text) != _is_bare_number(stored.value):
            return False  # "book four" does not replace the code "AV-6620-K"
        if value.kind == KIND_QUANTITY:
            a, b = item_unit(stored, lang), unit_key(value.unit, lang)
            if lang != "zh" and MONEY_VALUE.search(stored.value) and MONEY_VALUE.search(value.text) and number_of(value.text) is not None:
                return True  # "thirty-eight quid" prices what "thirty-two pounds" did (块 and 元 stay the writer's choice of unit)
            if lang == "zh":
                # "两份" counts what "三份炒饭" counts; a bare 个 counts anything.
                return a == b or not a or not b or a.startswith(b) or b.startswith(a)
            if number_of(value.text) is not None and number_of(stored.value) is None:
                return False  # "make it a dozen" counts; "half pepperoni" is a share, not a count
            if a and b and a != b and _dimension(a) == _dimension(b) != "":
                return True  # "two microseconds a division" after "500 nanoseconds per division": one measure, rescaled
            if value.unit == "people" and a in EN_PEOPLE_NOUNS:
                return True  # "we've got twenty-two coming" counts the "fifteen kids"
            if value.unit == "people" and not item_unit_words(Item(key="", value=value.text, kind=KIND_QUANTITY)) and a and not _dimension(a) and not MONEY_VALUE.search(stored.value):
                return True  # "we're down to 312" after "340 hens": a total said without its noun may count anything counted
            if a and b and len(b.split()) == 1 and (a.split()[-1] == b or (len(a.split()) == 2 and a.split()[0] == b and not _dimension(b))):
                # "three pizzas" counts the "two large pizzas", "twelve neons" the "8 neon tetras";
                # "adult bikes" and "child bikes" stay apart
                return True
            return a == b or not b  # "down to one dozen": a count without a noun
        return True
    if {stored.kind, value.kind} == {KIND_NAME, KIND_NUMBER}:
        # "a Peugeot 308" after "a Renault Clio", "the Deus 2" after "the Equinox 800": a make or model
        # said with its number is a name like the other.
        number = (stored.value if stored.kind == KIND_NUMBER else value.text).strip()
        # A make is a proper noun ("Milliken"), not a word that labels a reading ("Pulse 72").
        return _PRODUCT_NUMBER.fullmatch(number) is not None and any(_is_name_word(w) for w in number.split()[:-1])
    bare = {KIND_NUMBER, KIND_QUANTITY}
    if value.kind == KIND_NUMBER and stored.kind in bare:
        if stored.kind == KIND_QUANTITY and MONEY_VALUE.search(value.text) and not MONEY_VALUE.search(stored.value) and item_unit(stored, lang):
            return False  # "the quote was £650" prices something; it is not the "4 metres" of the tree
        decimal = re.match(r"\d+\.\d", value.text) is not None
        if decimal != (re.match(r"\d+\.\d", stored.value) is not None):
            return False  # "0.12" is a measure, not a count of "one enclosure"
        return _is_bare_number(value.text)
    if value.kind == KIND_QUANTITY and stored.kind == KIND_NUMBER:
        return _is_bare_number(stored.value)
    return False


_SIZE_WORDS = ("by", "over", "x", "×", "*", "/", "乘")  # "fifty by eighty-five": a size, whose words are no key
_PRODUCT_NUMBER = re.compile(r"(?:[A-Z][a-z]+ )+[A-Z]?\d+[A-Za-z]?")


def _other_count(stored: Item, value: Value, lang: str) -> bool:
    """Both count things (not measures, not money, not relative), under nouns that differ."""
    if not (stored.kind == value.kind == KIND_QUANTITY) or value.delta or not value.unit:
        return False
    a, b = item_unit(stored, lang), unit_key(value.unit, lang)
    if not a or a == b or _dimension(a) or _dimension(b) or MONEY_VALUE.search(stored.value) or MONEY_VALUE.search(value.text):
        return False
    return number_of(stored.value) is not None and number_of(value.text) is not None


def _said_with(stored: list[Item], notes: list[Item]) -> dict[int, set[str]]:
    """For each stored value (by id), the content words of the notes of the turn it was said in:
    what that turn was about (the notes' words are read once per turn)."""
    by_turn: dict[int, set[str]] = {}
    for note in notes:
        if note.turn:
            by_turn.setdefault(note.turn, set()).update(content_stems(note.value))
    return {id(s): by_turn[s.turn] - content_stems(s.value) for s in stored if s.turn in by_turn}


def _alone_in_clause(v: Value, statement: Statement) -> bool:
    """A count that is its whole clause, the sentence's first value, and no price: the total the
    sentence arrives at ("我表弟也要去，四个人"), not one of a list ("标准模式，六十度" after 七号机)."""
    if MONEY_VALUE.search(v.text) or any(o.start < v.start for o in statement.values):
        return False
    lo, hi = clause_at(statement.text, v.start, statement.lang)
    return statement.text[lo:hi].strip(" ,，。.!?！？、;；:：") == v.text


def _is_bare_number(text: str) -> bool:
    if re.fullmatch(r"[零〇一二三四五六七八九幺]{3,}", text.strip()):
        return False  # "二五零八": digits read one by one, a code
    # An amount, with its currency if any ("£400", "six hundred", "two hundred and forty"); not a code.
    return re.fullmatch(rf"[£$€¥]?(?:\d{{1,3}}(?:,\d{{3}})*(?:\.\d+)?|(?:{EN_NUMBER_WORDS})(?:(?:[- ]| and )(?:{EN_NUMBER_WORDS}|thousand|million))*(?: and a half)?|[零〇一二两三四五六七八九十百千万]+)", text.strip(), re.I) is not None


def _same_unit(stored: Item, value: Value, lang: str) -> bool:
    """Counted in the same unit, so one count: 三棵 for 两棵石榴树 (the same measure word), "twenty
    people" for "eight people", 六个 for 八个人. Not a bare 个 for 四个小时 or 一百五十个 for 五十斤 (个
    counts anything), not two prices said in other words ("quid" and "pounds fifty", 块 and 元: may
    be two things), and not a measure (a 3.3 volt rail beside a 1.6 volt trigger: its key must say so)."""
    a, b = item_unit(stored, lang), unit_key(value.unit, lang)
    if MONEY_VALUE.search(stored.value) and a != b:
        return False
    if lang == "zh":
        return a == b or (bool(a and b) and a[0] == b[0]) or (not b and a == "people")  # 剩六个 after 八个人
    return _dimension(a) == ""


def item_unit(item: Item, lang: str) -> str:
    """The unit key of a stored quantity: the words after its number (else its key's)."""
    rest = re.sub(r"^(?:more|extra|additional|多|来)\s*", "", item_unit_words(item), flags=re.I)
    if rest:
        return unit_key(rest, lang)
    return "people" if item.key and unit_key(item.key.split()[0], lang) == "people" else ""


def item_unit_words(item: Item) -> str:
    """The unit as said: "twenty guests" -> "guests", "a dozen eggs" -> "eggs"."""
    return re.sub(
        rf"^[$£€¥]?\s*(?:\d+(?:[.,]\d+)?|(?:(?:{EN_NUMBER_WORDS}|a dozen|a couple of|a couple|a few|a pair of)(?![a-z])(?:(?:[- ]| and )(?:{EN_NUMBER_WORDS})(?![a-z]))*)|[零〇一二两三四五六七八九十百千万\d]+|几|半)\s*",
        "", item.value, flags=re.I).strip(" -")  # "six-seater" -> "seater"


def _key_stems(item: Item) -> set[str]:
    return content_stems(item.key)


def _value_key(value: Value, statement: Statement, lang: str) -> str:
    """What a new value is about: its copula subject, else the words of its clause (with
    the unit of a count), else the sentence's words."""
    if value.key:
        return value.key
    words = value.context if content_stems(value.context) else statement.frame
    if lang == "zh":
        key = re.sub(r"[，,。.！!？?；;：:、\s]+", "", words)
        key = re.sub(r"^(?:我们|我|你|请|帮我|要|想|得|需要|的)+", "", key)[:30]
    else:
        content = [w for w in re.findall(r"[A-Za-z][\w'’-]*", words) if content_stems(w)]
        key = " ".join(content[:6])
    if value.kind == KIND_QUANTITY and value.unit and value.unit not in key:
        key = (value.unit + " " + key).strip()  # a space keeps 台 apart from 一等奖 for the segmenter too
    if lang != "zh" and value.kind in (KIND_DATE, KIND_TIME) and "until" not in key.lower() and (
        value.prep in ("until", "till", "through") or (value.prep == "to" and re.search(r"\bfrom\b", value.context, re.I))
    ):
        key = f"{key} until".strip()  # the end of a stay or a slot: "from the 3rd to the 10th" ... "until the 11th"
    for q in value.qualifiers:
        if q not in key:
            key = f"{key} {q}".strip() if lang != "zh" else key + q
    return key[:60]


def decide_values(
    statement: Statement,
    stored: list[Item],
    turn: int,
    *,
    earlier_olds: list[Value] | None = None,
    earlier_mentioned: list[Item] | None = None,
    earlier_names: list[Item] | None = None,
    earlier_text: str = "",
    turn_steady: list[Item] | None = None,
    later_kinds: frozenset[str] = frozenset(),
    earlier_replaced: list[Item] | None = None,
    earlier_out: list[Item] | None = None,
    earlier_added: list[Item] | None = None,
    notes: list[Item] | None = None,
) -> ValueUpdate:
    """Decisions for the typed values of one statement against the stored items.

    `earlier_olds`: values an earlier sentence of the same turn rejected with no new
    value of their own ("Friday's tricky after all. Is Saturday possible?"). `turn_steady`:
    stored values any sentence of the turn says are unchanged ("The width's staying at 3").
    `later_kinds`: the kinds of the values later sentences of the turn give. `earlier_replaced`:
    stored values earlier sentences of the turn replaced. `notes`: the stored notes, whose words say
    what the values said in their turn were about."""
    out = ValueUpdate()
    said_with = _said_with(stored, notes or [])
    lang = statement.lang
    stored_ids = {id(s) for s in stored}
    maybe = [v for v in statement.values if v.maybe_old and any(same_value(s, v.text) for s in stored)]
    mentioned: list[Item] = [s for s in (earlier_mentioned or []) if s in stored]
    if statement.change_cue or statement.strong_cue or statement.admission or statement.proposal:
        # "黄老师那边换人了，现在是赵老师": a stored value named beside a new one of its kind, in
        # a sentence of change, is the one that changes (when no key says otherwise).
        for v in statement.values:
            if v.negated or v in maybe:
                continue
            # "Ravi's got the flu" names Ravi Menon; "Declan's office just rang" names Declan.
            same = [s for s in stored if same_value(s, v.text) or _part_of_name(s, v) or (s.kind == KIND_NAME and re.match(rf"{re.escape(s.value)}['’]s\b", v.text) is not None)]
            mentioned += same
            # "Saturday's changed hands": what was said with Saturday (Nadia drives) changes too.
            for anchor in same:
                mentioned += [s for s in stored if s is not anchor and s.kind != anchor.kind and s.kind in VALUE_KINDS and _contains_value(Item(key="", value=anchor.key, kind=anchor.kind), s.value)]
    # "送回去还是一点半", "still Dr Lindqvist", "周六照旧": a value said as unchanged is no target.
    steady = said_unchanged(statement, stored) + [s for s in (turn_steady or []) if s in stored]
    mentioned = [s for s in mentioned if s not in steady]
    out.mentioned = mentioned
    said_again: list[Item] = []
    alone: list[Item] = []
    olds = [v for v in statement.values if v.negated] + maybe + list(earlier_olds or [])
    news = [v for v in statement.values if not v.negated and v not in maybe]
    current = list(stored)
    known_names: set[str] = set()
    for item in stored:
        if item.kind == KIND_NAME:
            known_names |= content_stems(item.value)
    # "Three more signed up, so make that twenty-one": the total comes from the stored eighteen.
    led_from: dict[int, float] = {}
    for change in news:
        n_change = number_of(change.text) if change.kind == KIND_QUANTITY and change.delta else None
        for said_total in _totals_of_change(change, news, statement) if n_change is not None else []:
            n_total = number_of(said_total.text)
            if n_total is not None and n_change is not None:
                led_from[id(said_total)] = n_total - change.delta_sign * n_change
    # A negated value that is not stored and has no new value of its kind is just said.
    # A count that says what it counts is decided first: "报名的到了三十二个，房间我加到十六间" - 十六间
    # takes the rooms' count, so the bare 三十二个 is left the people's.
    for v in sorted(news, key=lambda v: v.kind == KIND_QUANTITY and not unit_key(v.unit, lang)):
        if not v.delta and any(_says_replaced(r, v) for r in list(earlier_replaced or []) + [d.target for d in out.decisions if d.op == UPDATE and d.target is not None]):
            # "It's £35 an hour. Thirty-two was what she charged last year.": the value this turn
            # just replaced, said again, is talk about the old one, not a new value.
            out.consumed.add(id(v))
            continue
        if not v.delta and any(o.start > v.start and not o.delta and _says_same(v, o) and not said_steady(statement, o) for o in news) and not any(same_value(s, v.text) for s in stored):
            # Said again later in the sentence ("就剩五点的位置了，那就五点吧", "start them at 7:30"
            # after "half seven"): the last saying, with its own words, decides ("Friday's fine
            # for her as well" only agrees). A stored value said twice is a repeat either way.
            out.consumed.add(id(v))
            continue
        if v.delta and v.kind in (KIND_TIME, KIND_DATE):
            # "ten minutes earlier", 再早十分钟, "pushed back a day", 往后推两天: the stored time or day
            # said before the shift, else the one its words name, else the latest, moved. A shift from
            # a value new in this sentence is another moment, not a move ("collecting on the sixth and
            # bringing them back three weeks later", 九点半…提前二十分钟到).
            out.consumed.add(id(v))
            if any(o.kind == v.kind and not o.delta and o.start < v.start and not any(same_value(s, o.text) or _contains_value(s, o.text) for s in stored) for o in statement.values):
                continue
            timed = v.kind == KIND_TIME
            by = shift_minutes(v.text, lang) if timed else shift_days(v.text, lang)
            if by is None:
                continue
            by *= v.delta_sign
            move = shifted if timed else shifted_date
            movable = [s for s in current if s.kind == v.kind and s not in steady and move(s.value, by, lang) is not None and (not v.anchored or _said_before_shift(s, v, statement, olds))]
            if not movable:
                continue
            said_of = statement.frame_keys | content_stems(v.text)  # "pulled the assembly forward": what moves is said inside the shift
            target = max(movable, key=lambda s: (_said_before_shift(s, v, statement, olds), len(_key_stems(s) & said_of), s.turn, current.index(s)))
            new_item = Item(key=target.key, value=move(target.value, by, lang) or target.value, kind=v.kind, turn=turn)
            out.decisions.append(Decision(UPDATE, new_item, target, f"a relative change of a stored {'time' if timed else 'day'}"))
            out.replaced.append((target.value, new_item.value))
            current = [s for s in current if s is not target] + [new_item]
            continue
        # An amount changed by a sum ("up by £10", 每晚多收六十) or a factor ("double the flour", 翻一倍).
        relative = (_multiplied, "a stored amount multiplied") if v.factor else (_changed_amount, "a relative change of a stored amount") if v.kind == KIND_NUMBER and v.delta else None
        if relative is not None:
            changed = relative[0](v, [s for s in current if (s.turn != turn or not turn) and s not in steady], statement, lang)
            if changed is not None:
                target, new_item = changed
                new_item.turn = turn
                out.decisions.append(Decision(UPDATE, new_item, target, relative[1]))
                out.replaced.append((target.value, new_item.value))
                current = [s for s in current if s is not target] + [new_item]
            if changed is not None or v.factor:
                out.consumed.add(id(v))  # a multiplier is no value of its own; a sum with nothing to change is kept as said
                continue
        if v.kind == KIND_QUANTITY and v.delta and v.each:
            # "one more of each": the counts given together most lately, each moved by the number said.
            counts = [s for s in current if s.kind == KIND_QUANTITY and s.turn != turn and number_of(s.value) is not None and not MONEY_VALUE.search(s.value) and not _dimension(item_unit(s, lang))]
            each_said = re.sub(r"^a couple\b", "two", v.text, flags=re.I)  # "another of each" is one more
            numeral = re.search(r"[零一两二三四五六七八九十\d]+", each_said) if lang == "zh" else None
            each_by = number_of(numeral.group(0) if numeral else each_said)
            latest = max((s.turn for s in counts), default=None)
            out.consumed.add(id(v))
            for target in [s for s in counts if s.turn == latest] if each_by else []:
                n_old = number_of(target.value)
                assert n_old is not None and each_by is not None
                total = n_old + v.delta_sign * each_by
                if total < 0:
                    continue
                new_item = _with_amount(target, total, lang)
                new_item.turn = turn
                out.decisions.append(Decision(UPDATE, new_item, target, "a relative change of every count of a list"))
                out.replaced.append((target.value, new_item.value))
                current = [s for s in current if s is not target] + [new_item]
            continue
        base: list[Item] = []
        if v.kind == KIND_QUANTITY and v.delta:
            wanted_unit = unit_key(v.unit, lang) if v.unit else ""
            base = [s for s in current if s.kind == KIND_QUANTITY and (not wanted_unit or _kind_compatible(s, v, lang))]
            if not wanted_unit:
                people = [s for s in base if item_unit(s, lang) == "people"]
                base = people or base
            if not base:
                base = [s for s in current if s.kind == KIND_QUANTITY and item_unit(s, lang) == "people"] if unit_key(v.unit, lang) != "people" and counts_people(v.unit, lang) else []
            absolute = _totals_of_change(v, news, statement)
            if absolute:
                for said_total in absolute:
                    if v.unit and unit_key(said_total.unit, lang) in ("", "people"):
                        said_total.unit = v.unit  # "three more adults ..., so twenty-five": twenty-five adults
                out.consumed.add(id(v))  # "two more friends, so eight people": the total says it
                continue
        if v.kind == KIND_QUANTITY and v.delta and v.anchored and not base:
            out.consumed.add(id(v))  # "a second coat" with no coats counted: no count to change
            continue
        if v.kind == KIND_QUANTITY and v.delta and base and lang == "zh" and _zh_new_thing(statement.text, v, base):
            base = []  # "再来一袋豆腐猫砂" after 三袋猫粮: one bag of something not counted before, a new item
        if v.kind == KIND_QUANTITY and v.delta and base:
            # "陶盆多买一个": the stored count whose words the sentence says, else the latest.
            # The things the sentence names count too ("大碗还是不够…再加一百个": the bowls' count).
            said_of = statement.frame_keys | content_stems(" ".join(o.text for o in statement.values if o is not v and o.kind in (KIND_ITEM, KIND_NAME, KIND_PLACE)))
            if v.delta_sign < 0:
                base = [s for s in base if (number_of(s.value) or 0) >= (number_of(v.text) or 0)] or base  # "少来五袋" leaves 一袋 alone
            # Then the count in the unit said ("再短两米": the 米, not 五十个), then the latest.
            target = max(base, key=lambda s: (len(content_stems(s.value + " " + s.key) & said_of), bool(wanted_unit) and unit_key(item_unit(s, lang), lang) == wanted_unit, base.index(s)))
            n_old, n_delta = number_of(target.value), number_of(v.text)
            ordinal = _ORDINAL_TOTAL.match(v.text)  # "a third place": three in all
            if n_old is None or (n_delta is None and ordinal is None):
                continue
            sign = v.delta_sign
            total = EN_COUNT_ORDINALS.index(ordinal.group(1).lower()) + 2 if ordinal else int(n_old + sign * (n_delta or 0))
            new_item = _with_amount(target, total, lang)  # "six hinges", 三十五个手机: its unit and its thing kept
            new_item.kind, new_item.turn = KIND_QUANTITY, turn
            out.decisions.append(Decision(UPDATE, new_item, target, "a relative change of a stored quantity"))
            out.replaced.append((target.value, new_item.value))
            current = [s for s in current if s is not target] + [new_item]
            out.consumed.add(id(v))
            continue
        if v.kind == KIND_NUMBER and v.key and _is_bare_number(v.text) and clock_minutes(v.text, lang) is not None and any(
                s.kind == KIND_TIME and content_stems(v.key) and content_stems(v.key) <= _key_stems(s) for s in current):
            v.kind = KIND_TIME  # "kick-off's eleven now" after "kick-off is at half ten": the number is the time
        key = _value_key(v, statement, lang)
        new_item = Item(key=key, value=v.text if not (v.kind == KIND_PLACE and v.prep and lang == "en") else f"{v.prep} {v.text}", kind=v.kind, turn=turn)
        unit_of = _unit_said_before(v, statement) if lang == "en" else None
        if unit_of is not None:
            # "31 inches for Dad and 33 for me": the bare number is a measure in the unit said before it.
            keep_unit(new_item, unit_of, lang)
        # Values said together in one sentence never replace each other ("Tuesdays and Thursdays").
        candidates = [s for s in current if id(s) in stored_ids and s.kind in VALUE_KINDS and _kind_compatible(s, v, lang) and s not in steady]
        if v.kind in (KIND_NUMBER, KIND_QUANTITY) and v.qualifiers:
            # "3 litres at night" beside "2 litres in the daytime": another part of the day, another amount.
            candidates = [s for s in candidates if not part_of_day(s.key, lang) or v.qualifiers[0] in (s.key.lower() if lang == "zh" else s.key.lower().split())]
        if v.kind == KIND_DATE and _PRESENT_PERIOD.fullmatch(v.text.strip()):
            # "Moss has gone lame this week": the period the sentence is said in, not a new day for anything.
            candidates = [s for s in candidates if s.kind != KIND_DATE or _PRESENT_PERIOD.fullmatch(s.value.strip())]
        # "He moved rooms. Twenty-one now.": a bare number is the labelled one whose label the turn says.
        relabelled = [s for s in current if id(s) in stored_ids and s not in candidates and _label_said(s, v, statement, earlier_text)]
        candidates += relabelled
        decision: Decision | None = None
        if _STEADY.search(v.context) and not v.negated:
            # "Neil stays at half eleven", "Freddos stay as they are": said as unchanged, it replaces nothing.
            same = [s for s in current if _said_as(s, v.text)]
            out.consumed.add(id(v))
            if same:
                out.decisions.append(Decision(NOOP, None, same[0], SAID_AS_UNCHANGED))
            else:
                out.decisions.append(Decision(ADD, new_item, None, "a new value, said as unchanged"))
                current.append(new_item)
            continue
        # 1. the old value named in the sentence ("ends 0199, not 0190": its last digits)
        # "Carla's abroad. My neighbour Rosa Patel will be the contact": the name replaces Carla, not the role word.
        stronger = v.weak and any(n is not v and n.kind == v.kind and not n.weak for n in news)
        # "Joanna decided the Rutter's too similar": a person already stored, said again, replaces no one.
        repeat = v.kind == KIND_NAME and any(same_value(s, v.text) for s in stored)
        for o in ([] if stronger or repeat else olds):
            if _shape(o.text) != _shape(v.text) and any(n is not v and n.kind == o.kind and _shape(n.text) == _shape(o.text) for n in news):
                continue  # "the S24s are full, so make the twenty S23": the code replaces the code
            if v.kind == KIND_DATE and _VAGUE_PERIOD.fullmatch(v.text) and not _VAGUE_PERIOD.fullmatch(o.text):
                continue  # "Monday's off this month": the month says when, it is not the new day
            numbers = [s for s in current if id(s) in stored_ids and s.kind == KIND_NUMBER]  # a code's last digits are a short number
            partial = [s for s in numbers if v.kind == KIND_NUMBER and _ends_with(s.value, o.text) and len(o.text) == len(v.text)]
            if partial:
                target = partial[-1]
                tail = re.sub(r"\D", "", _norm(v.text)) if re.search(r"\d$", target.value) else v.text  # 二八 at the end of H31075582 is 28
                new_item.value = _replace_tail_digits(target.value, tail) if tail.isdigit() else target.value[: len(target.value) - len(o.text)] + v.text
                new_item.key = target.key
                decision = Decision(UPDATE, new_item, target, f"the sentence corrects the end of {target.value!r}")
                out.consumed.add(id(o))
                break
            hit = [
                s for s in current if id(s) in stored_ids and s.kind in VALUE_KINDS and (same_value(s, o.text) or _contains_value(s, o.text) or _same_amount(s, o.text, least=0 if _is_bare_number(o.text) else 10))
                and (o.kind == v.kind or _kind_compatible(s, v, lang) or same_sort(s, v.kind, v.text)  # "Half eight is too early. Let's say nine."
                     or ({s.kind, v.kind} == {KIND_NAME, KIND_PLACE} and _proper_noun(v.text)))  # "Hazel was last year. Noor's in Rowan now.": a proper noun's kind is only guessed from its preposition
            ]
            if hit:
                decision = Decision(UPDATE, new_item, hit[-1], f"the sentence names {o.text!r} as replaced")
                out.consumed.add(id(o))
                break
        # 1b. "her mobile ends eight eight five", 护照号最后两位是七六: the end of a stored longer number
        if decision is None and v.kind == KIND_NUMBER and (_TAIL_CUE.search(statement.text[max(0, v.start - 40): v.start]) or _TAIL_SAID.search(statement.text[: v.start])):
            # Digits only: "reg ends 7KD" is the end of a registration, not digits of "A38".
            tail = re.sub(r"\D", "", _norm(v.text)) if not re.search(r"[A-Za-z]", _norm(v.text)) else ""
            longer = [
                s for s in current
                if id(s) in stored_ids and s.kind == KIND_NUMBER and len(re.sub(r"\D", "", _norm(s.value))) > len(tail) > 0 and not s.value.endswith(v.text)
            ]
            if tail and longer:
                said = statement.frame_keys | content_stems(v.context)
                target = max(longer, key=lambda s: (len(_key_stems(s) & said), s.turn))  # "her mobile ends ...": the mobile's
                new_item.value = _replace_tail_digits(target.value, tail)
                new_item.key = target.key
                decision = Decision(UPDATE, new_item, target, f"the sentence corrects the end of {target.value!r}")
        # 1c. "finish at 5 pm", 下班时间改成六点半: one end of a stored range ("1 pm to 4 pm", 九点到五点)
        if decision is None and v.kind == KIND_TIME and not _RANGE_SPLIT.search(v.text):
            end = _RANGE_END_SAID.search(statement.text[max(0, v.start - 30): v.start] + " " + v.context)
            ranges = [s for s in candidates if s.kind == KIND_TIME and _RANGE_SPLIT.search(s.value)]
            if end and ranges:
                target = max(ranges, key=lambda s: (s.turn, candidates.index(s)))
                first, sep, last = _RANGE_SPLIT.split(target.value, maxsplit=1)[0], _RANGE_SPLIT.search(target.value).group(0), _RANGE_SPLIT.split(target.value, maxsplit=1)[-1]  # type: ignore[union-attr]
                start_said = end.group("start") is not None
                if not any(same_value(Item(key="", value=end_value, kind=KIND_TIME), v.text) for end_value in (first, last)):  # an end said again changes nothing
                    new_item.value = f"{v.text}{sep}{last}" if start_said else f"{first}{sep}{v.text}"
                    new_item.key = target.key
                    decision = Decision(UPDATE, new_item, target, "one end of a stored range")
        # 2. a repeat (also of a value this sentence already gave: "the 15th ... on the 15th")
        if decision is None and any(same_value(s, v.text) for s in current if id(s) not in stored_ids):
            out.consumed.add(id(v))
            continue
        # "Thursdays suit me better than Tuesdays, so I've switched to Thursday afternoons": the day
        # that replaced one, said more closely (a day that was added is left to the usual steps).
        said_first = [d.item for d in out.decisions if d.op == UPDATE and d.item is not None and d.item.kind == KIND_DATE == v.kind and d.item.turn == turn
                      and weekday_of(v.text, bare=False) and weekday_of(d.item.value, bare=True) == weekday_of(v.text, bare=False)]
        if decision is None and said_first:
            said_first[-1].value = v.text
            out.consumed.add(id(v))
            continue
        if decision is None and _is_bare_number(v.text) and any(_number_said_in(s.value, v.text, lang) for s in current if s.turn == turn and turn):
            out.consumed.add(id(v))  # "Flat 41, my bad. Forty-one.": the number said again in words
            continue
        # A value said as unchanged is no target, but saying it again is still a repeat ("鲢鱼苗不动，还是一千五百尾").
        again = [s for s in candidates + [t for t in steady if t in current and t not in candidates and _kind_compatible(t, v, lang)] if same_value(s, v.text) or same_value(s, new_item.value) or _part_of_name(s, v) or _part_of_value(s, v, lang) or (_amount_without_unit(s, v) and s.turn != turn)]
        # "4916 is his old bank PIN" after "the code 4916": a labelled number said without its label.
        digits = re.sub(r"\D", "", v.text) if v.kind == KIND_NUMBER and re.fullmatch(r"[\d\s-]+", v.text.strip()) else ""
        again += [s for s in current if id(s) in stored_ids and s not in again and len(digits) >= 3 and s.kind == KIND_NUMBER and _label(s.value).strip("- ") and re.sub(r"\D", "", s.value) == digits]
        if decision is None and again and v.kind == KIND_NAME and lang != "zh" and not statement.additive:
            # "Joel's opening Tuesday" after "Priya opens": a person already stored, said with the
            # whole key of another person's value, takes that place.
            said_of = content_stems(v.context) - content_stems(v.text)
            holders = [s for s in candidates if s.kind == KIND_NAME and s not in again and _key_stems(s) and _key_stems(s) <= said_of
                       and not _key_stems(s) & _key_stems(again[0])]
            if len(holders) == 1 and len([o for o in statement.values if o.kind == KIND_NAME]) == 1:
                new_item.key = holders[0].key
                decision = Decision(UPDATE, new_item, holders[0], "a person already named, said with another's key")
        if decision is None and again:
            out.consumed.add(id(v))
            out.decisions.append(Decision(NOOP, None, again[0], "said again"))
            if again[0] not in steady:
                # "Leila's gone down with flu. Tom Baptiste is running the move now.": a stored value
                # said again in a sentence that gives nothing new is what the next sentence of change changes.
                said_again.append(again[0])
                lo, hi = clause_at(statement.text, v.start, lang)
                if v.kind == KIND_NAME and not any(o is not v and lo <= o.start < hi for o in statement.values) and not has_change_cue(statement.text[lo:hi], lang):
                    alone.append(again[0])  # 陈老师休产假去了，数学现在是孙老师带: so is a person said alone in an earlier clause
            continue
        if decision is None and id(v) in led_from:
            sources = [s for s in candidates if s.kind in (KIND_QUANTITY, KIND_NUMBER) and s not in again and number_of(s.value) == led_from[id(v)]]
            if sources:
                decision = Decision(UPDATE, new_item, max(sources, key=lambda s: (s.turn, candidates.index(s))), "the stored count the said change leads from")
        if decision is None and v.moved_by:
            # "shuffled her on by an hour, so she's in at half eleven": the stored time the shift leads to.
            led = [s for s in candidates if s.kind == KIND_TIME and (m := clock_minutes(s.value, lang)) is not None
                   and (n := clock_minutes(v.text, lang)) is not None and (m[0] + v.moved_by - n[0]) % 720 == 0]
            if len(led) == 1:
                decision = Decision(UPDATE, new_item, led[0], "the stored time the said shift leads to")
        if decision is None and v.kind == KIND_NAME and not v.weak and not statement.additive:
            # "Morag's not coming after all, her little one's poorly. My husband Euan will drive.":
            # a person an earlier sentence of the turn ruled out is the one a new person replaces.
            out_before = [s for s in (earlier_out or []) if s in current and _titled(s.value) == _titled(v.text) and not is_role_word(s.value)]
            if out_before:
                decision = Decision(UPDATE, new_item, out_before[-1], RULED_OUT_BEFORE)
        if decision is None and candidates:
            # "是五零一，五零二是对门老刘家", "The house is 29 - 27's the neighbour": the stored value,
            # said after the new one as something else's, is the one the new one replaces.
            given_away = [s for s in candidates if s.kind == v.kind and _said_as_another(s, v, statement)]
            if len(given_away) == 1:
                decision = Decision(UPDATE, new_item, given_away[0], "the stored value, said after it as another thing's")
        if decision is None and candidates:
            replaced_so_far = list(earlier_replaced or []) + [d.target for d in out.decisions if d.op == UPDATE and d.target is not None]

            def likelihood(pool: list[Item], v: Value = v) -> list[float]:
                changed = any(d.op == UPDATE for d in out.decisions)
                said = mentioned + alone + said_again
                return [replace_model.score(replace_features(v, s, statement, turn, pool, stored, said, changed, replaced_so_far, said_with)) for s in pool]

            listed = {id(i) for i in earlier_added or []} | {id(d.item) for d in out.decisions if d.op == ADD and d.item is not None}
            decision = _by_key(v, new_item, candidates, statement, lang, known_names, [s for s in mentioned + alone if s in current], fresh=_fresh_subject(statement, stored), relabelled=relabelled,
                               earlier_text=earlier_text, steady=steady, likelihood=likelihood, said_with=said_with, listed=listed)
        if decision is None and v.kind == KIND_NAME and not v.weak and not statement.additive:
            # "Hannah's got builders in. Priti's offered.": a person named again, then a new person
            # in the same turn: the new one takes the place of the one named. Within one sentence
            # the place must be said: "Tom's on nights that week, so put Kerry Doyle in his place."
            here = [d.target for d in out.decisions if d.op == NOOP and d.target is not None and d.target.kind == KIND_NAME] if _IN_PLACE_OF.search(statement.text) else []
            # "Saoirse's taking Freddie's place": the one whose place it is, said after the new one.
            here += [s for s in candidates if s.kind == KIND_NAME and s.value.split() and re.search(rf"\b{re.escape(s.value.split()[0])}'s (?:place|spot|slot)\b", statement.text)]
            before = [s for s in (earlier_names or []) + here if s in candidates and _titled(s.value) == _titled(v.text) and not is_role_word(s.value)]
            if before:
                decision = Decision(UPDATE, new_item, before[-1], "a new person after one named before")
        # A change said after it ("Eleven bags, my sister's bringing two more") is how the total came about, no other value.
        # A later value said as unchanged ("接的时间是十一点五十，送回去还是一点半") is no value still to come.
        last_of_kind = v.kind not in later_kinds and not any(o.kind == v.kind and o.start > v.start and not o.negated and not o.delta and not said_steady(statement, o) for o in statement.values)
        if decision is None and last_of_kind:
            # No rule placed it: the stored value the fitted model finds likeliest to be changed, if likely
            # enough. Not while the turn still gives a value of its kind ("the 14th is a Sunday, isn't
            # it. I meant Monday the 15th."): the rules read that one first. Never a thing the rules
            # know is another of its sort: 无铅 beside 有铅, "Hive two" after "Hive one".
            # Counts of another noun are weighed too ("85 headsets" after "60 headphones", "Eleven bags"
            # after "nine suitcases"): the words for one thing vary; the fitted weights say how far to trust it.
            other_nouns = [s for s in current if id(s) in stored_ids and s not in candidates and s not in steady and _other_count(s, v, lang)]
            pool = [] if _fresh_subject(statement, stored) else [s for s in candidates + other_nouns if (s.turn != turn or not turn) and not _sibling_of(s, v, statement)]
            changed_beside = any(d.op == UPDATE for d in out.decisions)  # another value of the sentence already changed
            replaced_now = list(earlier_replaced or []) + [d.target for d in out.decisions if d.op == UPDATE and d.target is not None]
            rows = [replace_features(v, s, statement, turn, pool, stored, mentioned + alone + said_again, changed_beside, replaced_now, said_with) for s in pool]
            chosen = replace_model.choose(rows)
            if chosen is not None:
                decision = Decision(UPDATE, new_item, pool[chosen], "the value it most likely replaces (fitted weights)")
        if decision is None:
            decision = Decision(ADD, new_item, None, "a new value")
        out.decisions.append(decision)
        out.consumed.add(id(v))
        if decision.op == UPDATE and decision.target is not None:
            if not new_item.key or (not v.key and v.kind != KIND_QUANTITY):
                # What the old value was about, without the old value's own words ("twenty-third").
                old_words = content_stems(decision.target.value)
                kept_key = [k for k in decision.target.key.split() if not content_stems(k) & old_words] if lang != "zh" else [decision.target.key.replace(decision.target.value, "")]
                new_item.key = " ".join(kept_key).strip()
            elif decision.target.value in new_item.key:
                # "Colin's left the company, it's Bernadette I need": the old value is no part of the new one's key.
                new_item.key = " ".join(re.sub(rf"{re.escape(decision.target.value)}(?:'s|’s)?", " ", new_item.key).split()) or decision.target.key
            elif decision.target.key and decision.target.key not in new_item.key:
                # The new value is about what the old one was about, and what was said now.
                joined = f"{new_item.key} {decision.target.key}" if lang != "zh" else new_item.key + decision.target.key
                new_item.key = _dedupe_words(joined)[:60]
            parts = decision.target.value.split()
            if v.kind == KIND_NAME and len(parts) > 1 and len(v.text.split()) == 1 and any(_spelled_again(v.text, p) for p in parts):
                # "Kearny" after "Siobhan Kearney": the surname is respelled, the first name stays.
                new_item.value = " ".join(v.text if _spelled_again(v.text, p) else p for p in parts)
            old_digits, new_digits = re.sub(r"\D", "", decision.target.value), re.sub(r"\D", "", v.text)
            fixed = _fixed_group(decision.target.value, v.text) if v.kind == KIND_NUMBER and decision.target.kind == KIND_NUMBER else None
            misread = _misread_code(decision.target.value, v.text) if v.kind == KIND_NUMBER and decision.target.kind == KIND_NUMBER else None
            if fixed is not None:
                new_item.value = fixed  # "the middle bit is 4477": the rest of the code stays
            elif misread is not None:
                new_item.value = misread  # "7H239" after 苏A7K239: 苏A7H239
            elif v.kind == KIND_NUMBER and decision.target.kind == KIND_NUMBER and new_digits == v.text.replace(" ", "") and 2 <= len(new_digits) < len(old_digits) - 1:
                # "the last four digits are 8837": the rest of the number stays.
                new_item.value = _replace_tail_digits(decision.target.value, new_digits)
            room = _room_of(decision.target.value) if v.kind == KIND_NUMBER == decision.target.kind else None
            if room is not None and _ZH_ROOM_ALONE.fullmatch(v.text.strip()):
                new_item.value = decision.target.value[: room.start("room")] + v.text.strip() + (room.group("end") or "")  # 是五零一 after 十二栋五零二: 十二栋五零一
            elif room is not None and _ZH_BUILDING.fullmatch(v.text.strip()):
                new_item.value = room.group("before") + v.text.strip() + decision.target.value[room.end("building"):]  # 十三栋 after 十二栋三单元1502
            weekday = weekday_kept(decision.target.value, new_item.value) if v.kind == KIND_DATE and lang != "zh" else None
            if weekday is not None:
                new_item.value = weekday  # "the week after, the 29th" after "Thursday the 22nd": Thursday the 29th
            month = re.search(rf"\s+of\s+(?:{EN_MONTHS})$|^(?:{EN_MONTHS})(?=\s+\d)", decision.target.value, re.I)  # not "The" of "The 15th"
            if v.kind == KIND_DATE and month and not re.search(r"\b(?:of )?[A-Z][a-z]+\b", v.text) and re.search(r"\d|(?:st|nd|rd|th)$", v.text):
                # "it's the 13th" after "the 3rd of March": the 13th of March.
                new_item.value = v.text + month.group(0) if month.group(0).startswith(" ") else f"{month.group(0)} {v.text}"
            half = re.search(r"\s*(?:[ap]\.?m\.?|in the (?:morning|afternoon|evening)|at night)$", decision.target.value, re.I)
            if v.kind == KIND_TIME and half and re.fullmatch(r"\d{1,2}(?::\d{2})?|[a-z]+(?:[- ][a-z]+)?", v.text, re.I) and lang != "zh" and not re.match(r"(?:half|quarter)\b", v.text, re.I):
                new_item.value = v.text + half.group(0)  # "push it to 6" after "5 pm": 6 pm ("half one" is said whole)
            if v.kind == KIND_NUMBER and decision.target.kind == KIND_TIME and _is_bare_number(v.text):
                new_item.kind = KIND_TIME  # "Let's say nine" for a bedtime: a time
            if v.kind == KIND_QUANTITY and decision.target.kind == KIND_QUANTITY and lang != "zh":
                new_item.value = _with_modifiers(decision.target.value, new_item.value)  # "six hinges" after "two brass hinges"
            if v.kind == KIND_QUANTITY and decision.target.kind == KIND_QUANTITY and lang == "zh":
                new_item.value = _zh_with_thing(decision.target.value, new_item.value)  # 三十五个 after 二十个手机: 三十五个手机
            keep_unit(new_item, decision.target, lang)
            if relabelled and decision.target in relabelled:
                new_item.value = _relabelled(decision.target.value, v.text)  # "room 12" -> "room Twenty-one"
                new_item.key = decision.target.key
            out.replaced.append((decision.target.value, new_item.value))
            current = [s for s in current if s is not decision.target] + [new_item]
        else:
            current.append(new_item)
    out.mentioned = out.mentioned + said_again  # for the next sentences of the turn only
    return out


_ORDINAL_TOTAL = re.compile(rf"a ({'|'.join(EN_COUNT_ORDINALS)})\b", re.I)
_REASON = re.compile(r"\b(?:so|because|since|'cause|cos)\b|因为|所以|不然|怕", re.I)
_NOW = re.compile(r"\bnow\b|现在|这回|这次", re.I)
_MODEL_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_NAME, KIND_PLACE, KIND_ITEM)


def _changed_amount(v: Value, stored: list[Item], statement: Statement, lang: str) -> tuple[Item, Item] | None:
    """"they've put it up by £5", 每晚多收一百二: the stored amount of money the sentence's words are
    about (else the latest) and that amount changed by `v`, written as it was (its currency, its unit)."""
    # A sum said with its currency changes a sum; a bare number ("knock five off", "up by sixty")
    # whichever amount its words are about, a count or a sum.
    money = MONEY_VALUE.search(v.text) is not None or lang == "zh"
    amounts = [
        s for s in stored
        if (s.kind == KIND_NUMBER and _is_bare_number(s.value) and not re.search(r"\d\s\d", s.value))
        or (s.kind == KIND_QUANTITY and item_unit_words(s) and (not money or not MONEY_VALUE.sub("", item_unit_words(s)).strip()))  # 块钱, not 一块儿
    ]
    by = number_of(v.text)
    if by is None:
        return None
    amounts = [s for s in amounts if (number_of(s.value) or 0) + v.delta_sign * by >= 0]  # "knock five hundred off" leaves 115 alone
    if not amounts:
        return None
    own = content_stems(v.context)
    target = max(amounts, key=lambda s: (len(_key_stems(s) & own), len(_key_stems(s) & statement.frame_keys), s.turn, stored.index(s)))
    old = number_of(target.value)
    if old is None or old + v.delta_sign * by < 0:
        return None
    return target, _with_amount(target, old + v.delta_sign * by, lang)


_IRREGULAR_PLURALS = {"child": "children", "person": "people", "man": "men", "woman": "women", "foot": "feet", "tooth": "teeth", "mouse": "mice", "grown-up": "grown-ups"}


def agree(unit: str, total: float) -> str:
    """An English unit's last word in the number of `total`: "child" for 2 is "children", "boxes" for 1 is "box"."""
    words = unit.split(" ")
    last = words[-1] if words else ""
    if not last.isalpha() or len(words) > 3 or last.lower() in ("each", "off", "more", "extra") or MONEY_VALUE.fullmatch(last) or not re.search(r"[aeiouy]", last.lower()):
        return unit
    low = last.lower()
    singular = {v: k for k, v in _IRREGULAR_PLURALS.items()}
    if total == 1:
        if low in singular:
            one = singular[low]
        elif re.search(r"[^aeiou]ies$", low):
            one = low[:-3] + "y"
        elif re.search(r"(?:ss|x|ch|sh)es$", low):
            one = low[:-2]
        elif low.endswith("s") and not low.endswith("ss"):
            one = low[:-1]
        else:
            return unit
    else:
        if low in _IRREGULAR_PLURALS:
            one = _IRREGULAR_PLURALS[low]
        elif low in singular or low.endswith("s") or low in ("people", "staff", "sheep", "fish"):
            return unit  # already many, or said the same for one and many
        elif re.search(r"[^aeiou]y$", low):
            one = low[:-1] + "ies"
        elif re.search(r"(?:x|ch|sh)$", low):
            one = low + "es"
        else:
            one = low + "s"
    return " ".join(words[:-1] + [one])


def _with_amount(target: Item, total: float, lang: str) -> Item:
    """`target` holding another amount, written as it was: its currency sign and its unit kept."""
    currency = re.match(r"[£$€¥]\s?", target.value)
    amount = str(int(total)) if total == int(total) else f"{total:.2f}" if currency else f"{total:g}"  # £8.50, 2.5 kg
    unit = item_unit_words(target) if target.kind == KIND_QUANTITY else ""
    hyphened = lang != "zh" and bool(unit) and re.search(r"[\w]-" + re.escape(unit) + r"$", target.value) is not None
    if lang != "zh" and not hyphened:
        unit = agree(unit, total)  # "one child" -> "2 children"; "seventeen-tooth" is a word of its own
    written = (currency.group(0) if currency else "") + amount + (("-" if hyphened else " " if lang != "zh" else "") + unit if unit else "")
    return Item(key=target.key, value=written, kind=target.kind)


def _multiplied(v: Value, stored: list[Item], statement: Statement, lang: str) -> tuple[Item, Item] | None:
    """"Double the chilli": the stored amount the words name (the only or latest one when none is
    named), its number multiplied and its unit kept ("500 g" -> "1000 g", 二十四伏 -> 36伏)."""
    amounts = [s for s in stored if (s.kind == KIND_QUANTITY or _is_bare_number(s.value)) and number_of(s.value) is not None]
    as_many = False  # "half as much again": the amount is the one said about, else the latest
    if lang == "zh":
        said = content_stems(statement.text[: v.start])  # 辣椒翻一倍, 电压往上加，加到原来的一倍半: the thing is said before it
    else:
        said = content_stems(v.text) - content_stems("double triple treble quadruple halve half twice three two times as that many much again")
        as_many = re.search(r"\b(?:as|that) (?:many|much)\b", v.text, re.I) is not None
        if as_many:
            said = set(statement.frame_keys)  # "half that many will do": the thing is said around it, not in it
            if "many" in v.text.lower():
                amounts = [s for s in amounts if not MONEY_VALUE.search(s.value)]  # "as many" counts things, not money

    def named(s: Item) -> int:
        if lang == "zh":
            return sum(1 for w in said if w in s.key or w in s.value)  # 电流 in the key 充电电流
        return len(said & (_key_stems(s) | content_stems(s.value)))

    if said and not any(named(s) for s in amounts) and len(amounts) > 1 and not as_many:
        return None  # "double the order" with only other things counted: not a stored amount
    if not amounts:
        return None
    target = max(amounts, key=lambda s: (named(s), s.turn, stored.index(s)))
    old = number_of(target.value)
    return None if old is None else (target, _with_amount(target, old * v.factor, lang))


def _said_before_shift(s: Item, shift: Value, statement: Statement, olds: list[Value]) -> bool:
    """"The 3rd is no good, push it back two days": the stored value said before a shift (or
    rejected by an earlier sentence of the turn) is what it moves."""
    # 周四那天车排满了，提前一天: "周四" names the stored 下周四.
    return any(same_value(s, o.text) for o in olds) or any(o is not shift and o.start < shift.start and (same_value(s, o.text) or _contains_value(s, o.text)) for o in statement.values)


def replace_features(
    v: Value, s: Item, statement: Statement, turn: int, pool: list[Item], stored: list[Item], mentioned: list[Item], changed_beside: bool = False,
    replaced_now: list[Item] | None = None, said_with: dict[int, set[str]] | None = None,
) -> dict[str, float]:
    """What `replace_model` weighs for "does new value `v` replace stored `s`": shape, key, signals
    of the sentence and where `s` stands among the stored values of its sort (`pool`)."""
    lang = statement.lang
    own = content_stems(v.context) | content_stems(v.key)
    keys = _key_stems(s)
    of_kind = [c for c in pool if c.kind == s.kind]
    latest = max(of_kind, key=lambda c: (c.turn, pool.index(c))) if of_kind else None
    # Only a value this one could replace competes for its words: "Callum's train is due in at
    # 4:25" names Callum, whose own item is no time.
    better_elsewhere = any(c is not s and c.kind in VALUE_KINDS and _kind_compatible(c, v, lang) and len(_key_stems(c) & own) > len(keys & own) for c in stored)
    old_words = content_stems(s.value) - content_stems(v.text)
    gap = turn - s.turn if turn and s.turn else 0
    # A new fact brings its own words the talk has not had ("my other dog Pepper ... nails"); a
    # correction talks about what is stored.
    known = set().union(*(content_stems(c.key + " " + c.value) for c in stored)) if stored else set()
    f: dict[str, float] = {
        "same_kind": float(s.kind == v.kind),
        "same_shape": float(_amount_shape(s.value, s.kind, lang) == _amount_shape(v.text, v.kind, lang)),
        "same_unit": float(v.kind == KIND_QUANTITY and s.kind == KIND_QUANTITY and bool(v.unit) and item_unit(s, lang) == unit_key(v.unit, lang)),
        "other_noun": float(not _kind_compatible(s, v, lang) and _other_count(s, v, lang)),
        "said_with_own": float(min(2, len((said_with or {}).get(id(s), set()) & own - keys))),
        "same_date_shape": float(v.kind == KIND_DATE and s.kind == KIND_DATE and _date_shape(s.value) == _date_shape(v.text)),
        "key_own": float(min(2, len(keys & own))),
        "key_frame": float(min(2, len(keys & statement.frame_keys))),
        "v_keyed": float(bool(v.key)),
        "key_elsewhere": float(better_elsewhere),
        "only_one": float(len(of_kind) == 1),
        "latest": float(latest is s),
        "pool_size": math.log1p(len(pool)),
        "one_new_of_kind": float(sum(1 for o in statement.values if o.kind == v.kind and not o.negated) == 1),
        "values_in_sentence": math.log1p(len(statement.values)),
        "change_cue": float(statement.change_cue),
        "strong_cue": float(statement.strong_cue),
        "admission": float(statement.admission),
        "proposal": float(statement.proposal),
        "value_cue": float(v.cue),
        "additive": float(statement.additive),
        "question": float(statement.question),
        "reason": float(_REASON.search(statement.raw) is not None),
        "negator": float(says_not(statement.raw)),
        "now": float(_NOW.search(statement.raw) is not None),
        "said_last_turn": float(gap == 1),
        "said_two_turns_ago": float(gap == 2),
        "rank_of_kind": float(min(3, sum(1 for c in of_kind if (c.turn, pool.index(c)) > (s.turn, pool.index(s))))),
        "key_empty": float(not keys),
        "changed_beside": float(changed_beside),
        "words": math.log1p(len(statement.text.split())) if lang != "zh" else math.log1p(len(statement.text) / 2),
        "closeness": _closeness(s.value, v.text),
        "near": float(_near(s.value, v.text)),
        "mentioned": float(s in mentioned),
        "old_words_said": float(bool(old_words & content_stems(statement.text))),
        **_old_clause_features(s, v, statement),
        "qualified": float(bool(v.qualifiers)),
        "weak": float(v.weak),
        "opens_with_addition": float(_opens_with_addition(statement.raw, lang)),
        "new_name_said": float(any(o.kind == KIND_NAME and o is not v and not any(same_value(c, o.text) for c in stored) for o in statement.values)),
        "zh": float(lang == "zh"),
        "own_novel": float(min(2, len(own - known - content_stems(v.text)))),
        # "Put my brother Alasdair instead, Fiona's away. His number is ...": a value told with
        # (or about) one the turn replaced goes with it.
        "with_replaced": float(any(r is not s and (r.turn == s.turn or _contains_value(Item(key="", value=s.key, kind=r.kind), r.value)) for r in replaced_now or [])),
    }
    signal = statement.change_cue or statement.strong_cue or statement.admission or v.cue or f["reason"] or f["now"]
    for kind in _MODEL_KINDS:
        f["kind_" + kind] = float(v.kind == kind)
        f["signal_" + kind] = float(v.kind == kind and bool(signal))
    return f


_EN_IS_ANOTHERS = re.compile(r"\s*(?:'s|’s|\s+is|\s+was)\s+(?:the|my|our|his|her|their|a|an)\s+(?P<what>[^,.;:!?()—–-]+)", re.I)
_ZH_IS_ANOTHERS = re.compile(r"是(?P<what>[^，,。；;！!？?、]{2,})")


def _said_as_another(s: Item, v: Value, statement: Statement) -> bool:
    """The sentence says stored `s` again after the new value `v`, as the subject of "is ..." about
    something its key is not: the old value is someone else's, so `v` is this one's."""
    for o in statement.values:
        if o is v or o.start <= v.start or o.negated or not (same_value(s, o.text) or _says_room(s, o.text)):
            continue
        said = (_ZH_IS_ANOTHERS if statement.lang == "zh" else _EN_IS_ANOTHERS).match(statement.text[o.start + len(o.text):])
        if said is None:
            continue
        what = said.group("what")
        if statement.lang == "zh":
            return not any(part in s.key for part in _zh_pairs(what))
        words = content_stems(what)
        return bool(words) and not words & _key_stems(s)
    return False


def _zh_pairs(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1) if re.fullmatch(r"[\u4e00-\u9fff]{2}", text[i:i + 2])}


def _sibling_of(s: Item, v: Value, statement: Statement) -> bool:
    own = content_stems(v.context) | content_stems(v.key)
    return _siblings(own or statement.frame_keys, _key_stems(s)) or (statement.lang == "zh" and _zh_sibling_text(statement.text, s.key))


def _old_clause_features(s: Item, v: Value, statement: Statement) -> dict[str, float]:
    """Where the sentence says the stored value: in the new value's own clause, in a clause with a
    negator ("sold out of navy", 不要了), in a clause that keeps it ("keep mustard for the stripes")."""
    text, lang = statement.text, statement.lang
    low = text.lower()
    words = [w for w in re.findall(r"[A-Za-z0-9]{3,}", s.value)] if lang != "zh" else [s.value.strip()[:2]]
    at = next((i for w in words if w and (i := low.find(w.lower())) >= 0 and not (v.start <= i < v.end)), -1)
    if at < 0:
        return {"old_in_own_clause": 0.0, "old_negated": 0.0, "old_kept": 0.0, "old_owns": 0.0}
    lo, hi = clause_at(text, at, lang)
    clause = text[lo:hi]
    return {
        "old_in_own_clause": float(lo <= v.start < hi),
        "old_negated": float(says_not(clause)),
        "old_kept": float(STEADY_CLAUSE.search(clause) is not None),
        # "Harry's class is Willow", 王奶奶的轮椅: the stored value is whose the new one is.
        "old_owns": float(re.match(r"\w*(?:'s|’s|的)", text[at:at + len(s.value) + 4]) is not None),
    }


def _amount_shape(text: str, kind: str, lang: str) -> str:
    """The shape of a value's number: "12 bags" is a count like "9", not a code like "M41"."""
    if kind == KIND_QUANTITY:
        lead = (_ZH_COUNT_LEAD if lang == "zh" else _EN_COUNT_LEAD).match(text.strip())
        if lead:
            return _shape(lead.group(0).strip())
    return _shape(text)


def _opens_with_addition(said: str, lang: str) -> bool:
    """"And 6 metres of hose.", "Also ...", 还有…: the sentence starts by adding (the additive words of `language`)."""
    opening = said.strip()[:4] if lang == "zh" else " ".join(said.split()[:2])
    return (lang != "zh" and re.match(r"and\b", opening, re.I) is not None) or has_additive(opening, lang)


def _closeness(a: str, b: str) -> float:
    """The smaller amount over the larger: 1 for equal amounts; 0 when either is no amount."""
    x, y = number_of(a), number_of(b)
    if x is None or y is None or x <= 0 or y <= 0:
        return 0.0
    return min(x / y, y / x)


def _totals_of_change(change: Value, news: list[Value], statement: Statement) -> list[Value]:
    """The totals a sentence gives with a relative change of a count: of the same count ("two more
    friends, so eight people"), not a measure of each ("再加两袋营养土，五十升一袋的": fifty litres
    is the bag's size); or a bare number said as the total after it ("Three more signed up, so
    make that twenty-one")."""
    if change.kind != KIND_QUANTITY or not change.delta:
        return []
    lang = statement.lang
    out = [o for o in news if o.kind == KIND_QUANTITY and not o.delta and (not o.unit or not change.unit or unit_key(o.unit, lang) in (unit_key(change.unit, lang), "people"))
           and not re.search(r"\bby\s+$", statement.text[:o.start])]  # "up by 3 cm and the sleeves by 2 cm": a second change, no total
    return out + [o for o in news if o.kind == KIND_NUMBER and o.start > change.start and _is_bare_number(o.text) and not MONEY_VALUE.search(o.text)
                  and _TOTAL_BEFORE.search(statement.text[max(0, o.start - 24): o.start]) is not None]


def _may_be_named_old(stored: Item, v: Value, statement: Statement, after_article: bool) -> bool:
    """A stored value the sentence names may be the one `v` replaces: not one listed with it ("Navy
    and white from now on": navy stays), and no person when `v` is a thing said after an article
    ("Hattie's found somewhere cheaper, the Canal Lodge")."""
    person_for_thing = after_article and v.kind == KIND_NAME and stored.kind == KIND_NAME and any(_is_name_word(w) for w in stored.value.split()[:1])
    return not person_for_thing and not _listed_with(stored, v, statement)


def _listed_with(stored: Item, v: Value, statement: Statement) -> bool:
    """The sentence says the stored value in one list with `v` ("Navy and white", 张三和李四)."""
    for o in statement.values:
        if o is not v and same_value(stored, o.text):
            lo, hi = (o.end, v.start) if o.start < v.start else (v.end, o.start)
            if re.fullmatch(r"\s*(?:and|&|和|跟|与|、)\s*", statement.text[lo:hi], re.I):  # not a comma: "推到五点，三点孩子还在午睡"
                return True
    return False


_ZH_ROOM_OF = re.compile(r"(?P<before>.*?)" + ZH_FLAT)
_ZH_BUILDING = re.compile(ZH_BUILDING)  # the building said alone: 十三栋
_ZH_ROOM_ALONE = re.compile(r"[零〇一二三四五六七八九\d]{3,4}")  # the flat said alone: 五零一


def _room_of(value: str) -> re.Match[str] | None:
    """十二栋五零二: the building (十二栋) and the flat (五零二), which is said alone too."""
    return _ZH_ROOM_OF.fullmatch(value.strip())


def _says_room(item: Item, said: str) -> bool:
    room = _room_of(item.value) if item.kind == KIND_NUMBER else None
    return room is not None and room.group("room") == said.strip()


def _says_replaced(replaced: Item, v: Value) -> bool:
    if same_value(replaced, v.text) or _says_room(replaced, v.text):
        return True
    n = number_of(v.text)
    return v.kind in (KIND_NUMBER, KIND_QUANTITY) and _is_bare_number(v.text) and n is not None and n == number_of(replaced.value)


def _says_same(a: Value, b: Value) -> bool:
    """Two values of one sentence or turn that say the same thing ("half seven ... 7:30")."""
    if a.kind != b.kind:
        return False
    return _norm(a.text) == _norm(b.text) or (a.kind == KIND_TIME and _same_clock(a.text, b.text))  # not "Saturday" and "Saturdays"


def said_steady(statement: Statement, v: Value) -> bool:
    """The value is said as unchanged ("十点到坟上不变", "送回去还是一点半", "still Dr Lindqvist")."""
    # 开幕还是十五号。: 还是 with the value ending the clause keeps it (还是十五号吧 chooses it).
    still = statement.lang == "zh" and statement.text[max(0, v.start - 2): v.start] == "还是" and re.match(r"[，。,.；;！!]|$", statement.text[v.end: v.end + 1]) is not None
    if statement.lang == "zh" and not still:
        # 还是从前一天晚上八点开始算: 还是 earlier in the value's clause, and nothing after it that chooses (吧, 好, 更).
        lo, hi = clause_at(statement.text, v.start, "zh")
        still = "还是" in statement.text[lo: v.start] and re.search(r"吧|好|更|比较|得了|算了", statement.text[v.end: hi]) is None
    return not v.negated and (_STEADY.search(v.context) is not None or still)


def later_kinds_of(statement: Statement, later: list[Statement]) -> frozenset[str]:
    """The kinds of the new values later sentences of the turn give: not one said as unchanged
    ("五点就动身。十点到坟上不变。"), not one this sentence already gave ("Friday. I've said Friday.")."""
    return frozenset(o.kind for st in later for o in st.values
                     if not o.negated and not said_steady(st, o) and not any(_says_same(v, o) for v in statement.values))


def said_unchanged(statement: Statement, stored: list[Item]) -> list[Item]:
    """The stored values the sentence says are unchanged ("送回去还是一点半", "still Dr Lindqvist",
    "the width's staying at 3" for "3 metres")."""
    out: list[Item] = []
    for v in statement.values:
        if not said_steady(statement, v):
            continue
        out += [s for s in stored if s not in out and _said_as(s, v.text)]
    # "Lettuce spacing's fine", "Pepper's trim is where it was": a clause that gives no value and
    # says a thing is unchanged keeps the value whose key says the most of that thing.
    for clause in re.split(r"[;，；：。!！?？]|[,:.](?!\d)", statement.text):  # not inside "6:30", "1.8", "2,000"
        if not STEADY_CLAUSE.search(clause) or any(v.text in clause for v in statement.values if v.kind != KIND_NAME):
            continue
        said = content_stems(STEADY_CLAUSE.sub(" ", clause)) - _KIND_NOUNS
        scored = [(len((_key_stems(s) | content_stems(s.value)) & said), s) for s in stored if s.kind in VALUE_KINDS and s.kind != KIND_NAME]
        best = max((n for n, _ in scored), default=0)
        if best:
            out += [s for n, s in scored if n == best and s not in out]
    return out


def _said_as(item: Item, text: str) -> bool:
    """The stored value, said again: also an amount with or without its unit ("the width's staying at
    3" for "3 metres", "the 60 width is right" for "60")."""
    if same_value(item, text):
        return True
    if item.kind not in (KIND_QUANTITY, KIND_NUMBER) or not (_is_bare_number(text) or _is_bare_number(item.value)):
        return False
    a, b = number_of(item.value), number_of(text)
    return a is not None and a == b


def _proper_noun(text: str) -> bool:
    """"Rowan", "Oak Street": capitalised words only (not "the garage")."""
    return re.fullmatch(r"[A-Z][\w'’-]*(?: [A-Z][\w'’-]*)*", text.strip()) is not None


def _dedupe_words(text: str) -> str:
    seen: list[str] = []
    for word in text.split():
        if word.lower() not in (w.lower() for w in seen):
            seen.append(word)
    return " ".join(seen)


def _contains_value(item: Item, text: str) -> bool:
    """"Friday" names "Friday morning"; "六点半" names "早上六点半"."""
    t = _norm(text)
    if len(t) < 2:
        return False
    v = _norm(item.value)
    if re.search(r"[\u3400-\u9fff]", t):
        return t in v
    return re.search(rf"(?<!\w){re.escape(t)}(?!\w)", v) is not None


# Said anywhere before the value: "the last two digits, I looked again, are 76", 最后两位我又看了一眼，是七六.
_TAIL_SAID = re.compile(r"\blast (?:two|three|four|few|\d) (?:digits|numbers)\b|(?:最后|末|尾)(?:[一二两三四五六七八九几]位|数)", re.I)
SAID_AS_UNCHANGED = "said as unchanged"  # a NOOP that names no value again: the turn-level pass skips it
# "staying" only with the value right after it (a context has its value cut out: "the width's
# staying at ."): "staying two nights" and "staying at the Hilton" are a stay.
_STEADY = re.compile(r"\b(?:(?:has|have|had)(?:n't| not) changed|still|as before|as planned|as usual|unchanged|stays?|remains?|staying (?:the same|put|as (?:it )?is))\b|(?:\bis|'s) (?:fine|right|correct)\b|\bstaying (?:at|on)(?= ?[.,;!]| ?$)|(?:\bis|'s|\bhas) confirmed(?= ?[.,;!]| ?$)|照旧|照常|不变|没变|不动|依旧|仍然|仍是|是对的|没[\u4e00-\u9fff]?错", re.I)
# A clause that says a thing is unchanged ("still", "as before", 照旧); also read by `memory.rejected`.
STEADY_CLAUSE = re.compile(_STEADY.pattern + r"|\b(?:where|as) (?:it|they) (?:was|were|is|are)\b|\b(?:is|'s|are) the same\b", re.I)
_TAIL_CUE = re.compile(
    r"\b(?:ends?|ending)(?: (?:in|with))?\s+$|\blast (?:\w+ )?(?:digits?|numbers?|bit|part|few)(?: (?:is|are|was|were|'s))?\s+$"
    r"|(?:最后|后|末|尾)(?:[一二两三四五六七八九几]位|几位|两个数|数|号)?(?:是|为|应该是)?$"
)


_ZH_DIGITS = "零一二三四五六七八九"


def _replace_tail_digits(value: str, tail: str) -> str:
    """The last digits of `value` set to `tail`, each written as the stored one was (2 or 二)."""
    out = list(value)
    i = len(out) - 1
    for digit in reversed(tail):
        while i >= 0 and not (out[i].isdigit() or out[i] in _ZH_DIGITS + "〇幺"):
            i -= 1
        if i < 0:
            break
        out[i] = digit if out[i].isdigit() or not digit.isdigit() else _ZH_DIGITS[int(digit)]
        i -= 1
    return "".join(out)


def _ends_with(value: str, tail: str) -> bool:
    digits = re.sub(r"\D", "", _norm(value))
    t = re.sub(r"\D", "", _norm(tail))
    return len(t) >= 2 and len(digits) > len(t) and digits.endswith(t) and re.sub(r"\D", "", _norm(value.rstrip()[-2 * len(tail):])).endswith(t)


def same_value(item: Item, text: str) -> bool:
    a, b = _norm(item.value), _norm(text)
    if not a or not b:
        return False
    if a == b:
        return True
    # "on Oak Street" vs "Oak Street", "at two" vs "two", "the 14th" vs "14th"
    strip = re.compile(r"^(?:at|on|in|from|to|by|for|the|around|until|在|到|早上|上午|中午|下午|晚上|傍晚|凌晨|每)\s*")
    a2, b2 = strip.sub("", strip.sub("", a)), strip.sub("", strip.sub("", b))
    if a2 == b2 or a2.removesuffix("s") == b2.removesuffix("s"):
        return True
    if item.kind == KIND_DATE and weekday_of(b2, bare=True) is not None and weekday_of(b2, bare=True) == weekday_of(a2, bare=False):
        return True  # "better than Tuesdays" names the stored "Tuesday afternoons" (not the reverse: that says more)
    if item.kind == KIND_TIME and _same_clock(item.value, text):
        return True  # "half one" names the stored "1:30"
    if item.kind == KIND_TIME and _RANGE_SPLIT.search(item.value) and not _RANGE_SPLIT.search(text):
        # "takes over from me at 2" names the end of the stored "10 pm till 2 am"
        return any(same_value(Item(key="", value=end.strip(), kind=KIND_TIME), text) for end in _RANGE_SPLIT.split(item.value) if end.strip())
    if item.kind == KIND_TIME:
        # "Two's when they clear lunch" names the stored "2 pm": a bare hour is that time.
        hour = _hour_of(a2)
        said = int(b2) if re.fullmatch(r"\d{1,2}", b2) else number_value(b2, "en") if re.fullmatch(r"[a-z]+", b2) else None
        return hour is not None and said is not None and hour % 12 == said % 12
    return False


_WEEKDAY_SAID = re.compile(rf"^(?:every |on )?({EN_WEEKDAYS})s?(?P<part> (?:morning|afternoon|evening|night)s?)?$")


def weekday_of(text: str, *, bare: bool) -> str | None:
    """The weekday a date is, said alone (plural or not) or, unless `bare`, with a part of the day."""
    m = _WEEKDAY_SAID.match(_norm(text))
    return m.group(1) if m and not (bare and m.group("part")) else None


_BY_MEAL = re.compile(r"\b(?:before|after|with) (?:breakfast|lunch|dinner|supper|tea|meals|food|bed|bedtime)\b|(?:饭|餐|睡觉|睡)[前后]", re.I)


def _by_meal(text: str) -> bool:
    """A time said by a meal or by bed ("after breakfast", 午饭后), not by the clock."""
    return _BY_MEAL.search(text) is not None


def _same_clock(a: str, b: str) -> bool:
    """Two ways of saying one clock time ("half one" and "1:30"; "13:30" and "1:30 pm"): the same minutes
    on a 12-hour clock, and no different halves of the day said."""
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", a + b) else "en"
    x, y = clock_minutes(a, lang), clock_minutes(b, lang)
    if x is None or y is None or re.fullmatch(r"\d{1,2}|[a-z]+", b.strip().lower()):
        return False  # a bare hour is decided by _hour_of
    if x[1] and y[1] and x[1] != y[1]:
        return False
    return x[0] % 720 == y[0] % 720


def _hour_of(time: str) -> int | None:
    """The hour of a time with no minutes ("2 pm", "14:00", "two o'clock"), else None."""
    m = re.fullmatch(r"(\d{1,2})(?::00)?\s*(?:[ap]\.?m\.?|o'?clock)?", time)
    if m:
        return int(m.group(1))
    m = re.fullmatch(r"([a-z]+)\s*(?:[ap]\.?m\.?|o'?clock)", time)
    return number_value(m.group(1), "en") if m else None


def _likeliest(pool: list[Item], likelihood: Callable[[list[Item]], list[float]]) -> Item | None:
    """The stored value the fitted model scores highest, when it leads the next by the model's
    margin; a near tie is no evidence and the caller keeps its own order."""
    scores = likelihood(pool)
    order = sorted(range(len(pool)), key=lambda i: scores[i], reverse=True)
    if len(order) > 1 and scores[order[0]] - scores[order[1]] < replace_model.load().margin:
        return None
    return pool[order[0]]


_WEAK_KEY_FLOOR = 0.03


def _by_key(
    v: Value, new_item: Item, candidates: list[Item], statement: Statement, lang: str, known_names: set[str],
    mentioned: list[Item] | None = None, *, fresh: bool = False, relabelled: list[Item] | None = None, earlier_text: str = "",
    steady: list[Item] | None = None, likelihood: Callable[[list[Item]], list[float]] | None = None,
    said_with: dict[int, set[str]] | None = None, listed: set[int] | None = None,
) -> Decision | None:
    """`likelihood`: the fitted model's score of each stored value of a pool, for a tie no word decides.
    `fresh`: the sentence is about something not stored yet ("还有一个报价单，打三份", "Hive two,
    five frames"): a count of the same unit is then that new thing's, not a correction."""
    # 一千一百六十 after 酒店住了三晚: an amount twenty times another is not its correction.
    candidates = [s for s in candidates if not _far_apart(s, v)]
    if not candidates:
        return None
    # Names are who a value concerns, not what it is about: "Mia needs her book this
    # week" says nothing about Mia's Tuesday piano.
    names: set[str] = set(known_names)
    for o in statement.values:
        if o.kind == KIND_NAME:
            names |= content_stems(o.text)
    names_in_sentence = set(names) - known_names | {n for o in statement.values if o.kind == KIND_NAME for n in content_stems(o.text)}
    said_names: set[str] = set()
    if v.cue or statement.strong_cue or statement.admission or statement.proposal:
        said_names = set(names) - known_names | {n for o in statement.values if o.kind == KIND_NAME for n in content_stems(o.text)}
        names = set()  # "push hers to 5:45" after naming Amara: now the person says whose value
    cued = v.cue or statement.admission or statement.anaphoric_cue or statement.strong_cue or statement.proposal
    named = [s for s in (mentioned or []) if s in candidates and s.kind == v.kind and (v.kind != KIND_NAME or _titled(s.value) == _titled(v.text))]
    # "nothing left at Anne Frank House, so put us down for the Rijksmuseum": a proper noun's kind is
    # only guessed from its preposition ("It wants to go to Daniel Oyelaran now"), so a named place
    # and a new name (or a named person and a new place) are one sort.
    named += [s for s in (mentioned or []) if {s.kind, v.kind} == {KIND_NAME, KIND_PLACE} and _proper_noun(v.text) and _proper_noun(s.value)
              and (s.kind == KIND_PLACE or _is_name_word(v.text.split()[0]))  # a person by a person ("to Daniel Oyelaran"), not by "from Cork"
              and not _titled(v.text) and not _titled(s.value) and not is_role_word(s.value) and s.turn != new_item.turn]
    article = lang != "zh" and re.search(r"\b(?:the|a|an)\s+$", statement.text[max(0, v.start - 5): v.start], re.I) is not None
    named = [s for s in named if _may_be_named_old(s, v, statement, article)]
    respelled = [s for s in candidates if v.kind == s.kind == KIND_NAME and _respelled(v.text, s.value, lang, statement.admission)]
    if (cued or statement.change_cue) and named and not respelled and not (statement.additive and not statement.change_cue):
        # "黄老师那边换人了，现在是赵老师": the stored value named beside the new one is the one that
        # changes; unless a stored name is this one spelled again (奶奶名字我打错了，是张桂芳: 张桂芬).
        return Decision(UPDATE, new_item, named[-1], "a sentence of change names the old value beside the new")
    if (cued or statement.change_cue) and len(respelled) == 1 and not statement.additive:
        # 我把名字记错了，叫罗晓斌 after 罗小兵: the one name this one spells again, whatever the clause's words.
        return Decision(UPDATE, new_item, respelled[0], "a stored name spelled again")
    own = (content_stems(v.context) | content_stems(v.key)) - names - _KIND_NOUNS  # "her number is ...": "number" says no more than the kind
    # Words said of another value of the sentence are that value's ("the runners need ten mil of
    # clearance, so the sides come out at 440": "sides" is the 440's, not the ten mil's).
    others = set().union(*(content_stems(o.context) for o in statement.values if o is not v and o.context)) - own if lang != "zh" else set()
    frame_keys = statement.frame_keys - names - others
    cand_keys = [(c, _key_stems(c)) for c in candidates]

    def others_keys(s: Item) -> set[str]:
        return set().union(*(k for c, k in cand_keys if c is not s))

    scored: list[tuple[int, int, Item]] = []
    for order, s in enumerate(candidates):
        keys = _key_stems(s)
        # The value's own clause counts most; the rest of the sentence helps ("the train's
        # delayed, arriving 3:25 now": the arrival is the train's).
        overlap = 2 * len(keys & own) + len(keys & said_names)
        if overlap:
            # Its turn said what this one says, in words that are no other candidate's own key (both pins
            # said in one turn: 数据 is GPIO16's, not evidence for the clock pin stored beside it).
            overlap += min(1, len(((said_with or {}).get(id(s), set()) & own) - keys - others_keys(s)))
        elif v.kind != KIND_NAME and content_stems(v.key) & said_names:
            # "小宇的改成十一点一刻了": the person whose value it is was named in the turn the stored value was said in.
            overlap += min(1, len((said_with or {}).get(id(s), set()) & content_stems(v.key) & said_names))
        if keys and not keys - known_names - names_in_sentence:
            # A value stored only under a person's name ("Ella's at 8:15"): the person named again is its key.
            overlap += 2 * len(keys & (names_in_sentence | statement.frame_keys))
        if statement.change_cue or not own:
            overlap += len(keys & (frame_keys - own))
        if v.kind == KIND_NAME and not (cued or statement.change_cue) and not (v.key and content_stems(v.key) & keys):
            overlap = 0  # "He rides a pony called Bramble": words shared with Kit's sentence do not make Bramble replace Kit
        if v.qualifiers and all(q.lower() in (s.key + " " + s.value).lower() for q in v.qualifiers):
            overlap += 3  # said for the same day ("Friday: 7:40" after "Friday ... 7:50")
        if v.kind == KIND_NAME and s.kind == KIND_NAME and _titled(v.text) and not _titled(s.value) and any(_titled(c.value) for c in candidates if c.kind == KIND_NAME):
            continue  # "Mr. Osei is covering Kofi": a teacher replaces a teacher, never the child or "her brother"
        if v.kind == KIND_NAME and s.kind == KIND_NAME and _titled(v.text) and _titled(s.value) and (v.cue or statement.strong_cue or statement.change_cue):
            overlap += 2  # "Mr. Osei is covering" replaces a teacher, not a child
        if v.kind == KIND_NUMBER and s.kind == KIND_NUMBER and _is_code(s.value) and _same_shape(_norm(s.value), _norm(v.text)):
            overlap += 2  # "WM-7240" after "WM-7420", 二五零八 after 2580: the same code read again
        if v.kind == KIND_NUMBER and s.kind == KIND_NUMBER and _code_family(s.value, v.text):
            overlap += 2  # "COM12" after "COM7", "E-41" after "E-36": a code of the same family
        if v.kind == KIND_NUMBER and s.kind == KIND_NUMBER and _misread_code(s.value, v.text) is not None:
            overlap += 4  # the code read again with one character otherwise
        if v.kind == KIND_NUMBER and s.kind == KIND_NUMBER and _fixed_group(s.value, v.text) is not None:
            overlap += 4  # "the middle bit is 4477", "ending's 3321": one part of a stored code read again
        if v.kind == KIND_NUMBER == s.kind and _ZH_BUILDING.fullmatch(v.text.strip()) and _room_of(s.value) is not None:
            overlap += 4  # 是6栋 after 4栋2单元801: the building of the stored address
        if v.kind == KIND_NUMBER and s.kind == KIND_NUMBER and _label(v.text).strip("- ") not in ("", *_SIZE_WORDS, *_KIND_NOUNS) and _label(v.text) == _label(s.value) and (cued or statement.change_cue or len(statement.values) == 1):
            # "the bottom says gen three" after "gen two": the label is the key ("Hive two, five frames" opens
            # another hive); "number" or "by" says no more than that it is a number or a size.
            overlap += 4
        if relabelled and s in relabelled:
            overlap += 4  # "bumped to eleven" after "table nine", the table said: the table's number
        if v.kind == KIND_TIME and s.kind == KIND_TIME and _digits_swapped(s.value, v.text) and not any(c is not s and _key_stems(c) & own for c in candidates):
            # "17:24" after "17:42": the same time, its digits read in another order (unless the
            # value's own words name another time: "Pip's slot is 12:10" after "Ada's 12:01").
            overlap += 4
        if v.kind in (KIND_NUMBER, KIND_QUANTITY) and s.kind in (KIND_NUMBER, KIND_QUANTITY) and not re.search(r"\d\.\d|点", s.value + v.text) and _digits_swapped(s.value, v.text, shortest=2):
            overlap += 4  # "I'm on twenty-four" after "table forty-two": the same number, its digits read in another order
        if v.kind == KIND_DATE and s.kind == KIND_DATE and _month(v.text) and _month(v.text) == _month(s.value):
            overlap += 1  # 那就八月十五号吧 beside 七月十号 and 八月二十号: a day of the same month moved
        if v.kind == KIND_NAME and s.kind == KIND_NAME and _respelled(v.text, s.value, lang, statement.admission):
            overlap += 5  # "Kearny ... no second e" after "Siobhan Kearney"; 陈墨 after 陈默
        if v.kind == KIND_QUANTITY and s.kind == KIND_QUANTITY and not _siblings(own or frame_keys, keys) and not fresh and _same_unit(s, v, lang) and not (
                MONEY_VALUE.search(v.text + " " + v.unit) and own and not keys & own and not (cued or statement.change_cue)):
            # Sums of money are paid for many things: "ninety pounds for the cake" after a £300 deposit
            # says its own thing; the currency alone is no key.
            # A count of the same thing is one slot ("so eight people now"); a measure in the same unit
            # may be of another thing (a 3.3 volt rail, a trigger at 1.6 volts): its key must say so.
            overlap += 2  # same unit: the same count ("so eight people now"), unless said of a sibling (二等奖 beside 一等奖)
        if v.key and s.key and content_stems(v.key) & _key_stems(s):
            overlap += 2  # the same key restated ("the ID is ...")
        if v.kind == KIND_QUANTITY and s.kind == KIND_NUMBER and v.unit:
            overlap += 2 * len(keys & content_stems(v.unit))  # "ten thousand words is the cap" after "the word limit is 12,000"
        if lang == "zh" and not (statement.change_cue or v.cue) and _zh_sibling_text(statement.text, s.key) and _misread_code(s.value, v.text) is None:
            overlap = 0  # "无铅的用三百六十度" after "有铅焊锡用三百二十度": another thing of the same sort
        scored.append((overlap, order, s))
    # 水还剩不少，七箱就够了 after 矿泉水十箱，方便面六箱: a Chinese noun is shortened to its last
    # character, so between equals the count whose thing ends in a character the sentence says.
    best = max(scored, key=lambda x: (x[0], lang == "zh" and _zh_head_said(x[2], statement.frame), x[1]))
    tied = [x for x in scored if x[0] == best[0]]
    if lang == "zh":
        tied = [x for x in tied if _zh_head_said(x[2], statement.frame) == _zh_head_said(best[2], statement.frame)]
    if best[0] > 0 and len(tied) > 1 and likelihood is not None:
        # As many shared words each: which one the fitted model finds likeliest, not merely the latest.
        chosen = _likeliest([x[2] for x in tied], likelihood)
        best = next((x for x in tied if x[2] is chosen), best)
    overlap, _, target = best
    # A total said after an addition is the new count, not another one: "the shower tray wants
    # doing as well, so two tubes", 小姑一家也过来，这样就十五个人了, 菜也加到十个.
    total = _TOTAL_BEFORE.search(statement.text[max(0, v.start - 24): v.start]) is not None or (
        lang == "zh" and v.kind == KIND_QUANTITY and statement.text[v.end: v.end + 1] in ("了", "啦")) or (  # 又过来俩，二十四个人了: the count now
        v.kind == KIND_QUANTITY and _alone_in_clause(v, statement))  # 我表弟也要去，四个人: the count said alone is the total
    adds = statement.additive and not statement.change_cue and not total
    if overlap > 0:
        if adds:
            return None
        if v.kind == KIND_PLACE and not statement.change_cue and not (v.key and content_stems(v.key) & _key_stems(target)):
            return None  # places said one after another are a route, not a correction
        if _qualified_apart(v, target, statement) and not statement.change_cue:
            return None
        if overlap <= 2 and not (cued or statement.change_cue) and likelihood is not None and likelihood([target])[0] < _WEAK_KEY_FLOOR:
            # One shared word, no word of change, and the fitted model finds it unlikely: "Channel two is
            # a square wave at 10 kHz" after "channel one ... 1 kHz" tells another channel's value.
            return None
        if id(target) in (listed or set()) and not (cued or statement.change_cue or statement.admission or statement.strong_cue):
            # "我住次卧，押金两千二；她住主卧，押金两千八": a value this message added is listed beside the
            # new one, unless the sentence puts it right (a value it changed is no list: "多订了一间，三间房").
            return None
        return Decision(UPDATE, new_item, target, "same key")
    # "Seven, then.": the sentence is only the value (a count with its own noun is not bare;
    # "me, Carlos and our daughter Rosa" is a list, not a restatement).
    news = [o for o in statement.values if not o.negated]
    # "回程的票改签了，晚一天，二十号去接": the only new date of a sentence of change is the changed one;
    # the cue said before the value, not after it ("周末不让太早进，那就推到九点吧": 周末 is not the change).
    # Owning up to a mistake anywhere in the sentence also marks its lone day or time ("It's the
    # Wednesday, I was looking at the wrong week").
    cued = cued or (
        sum(1 for o in news if o.kind == v.kind) == 1 and v.kind in (KIND_TIME, KIND_DATE) and has_change_cue(statement.text[: v.start], lang)
    ) or (len(news) == 1 and v.kind in (KIND_TIME, KIND_DATE) and statement.admission) or (
        # "I got his weight wrong ... he's 24 kilos": owning up marks the sentence's one amount too.
        statement.admission and v.kind in (KIND_QUANTITY, KIND_NUMBER) and sum(1 for o in news if o.kind in (KIND_QUANTITY, KIND_NUMBER)) == 1)
    bare = not statement.frame_keys and not (v.kind == KIND_QUANTITY and v.unit) and len(news) == 1
    # The cue must be said with the value ("we're at 40 Tanner Street now"), or the
    # sentence must own up to a mistake ("scratch that, use my work line, 020 ...").
    named = [s for s in (mentioned or []) if s in candidates and _may_be_named_old(s, v, statement, article)]
    if cued and not adds and named and not respelled:
        return Decision(UPDATE, new_item, named[-1], "a sentence of change names the old value beside the new")
    # "Hattie's found somewhere cheaper, the Canal Lodge", "the Olympic distance": a name said after an
    # article is a thing, and a cue does not make it replace the latest name (often a person, or
    # another thing the turn does not name).
    if (cued or bare) and not adds and not v.weak and _no_key_of_its_own(v, lang) and not (v.kind == KIND_NAME and article):
        people = [s for s in candidates if not is_role_word(s.value)] if v.kind == KIND_NAME and not v.weak else []
        # Said in this very turn, a value is not yet what the user corrects ("I'm 27.5, she's 23.5").
        earlier = [s for s in candidates if s.turn != new_item.turn] if new_item.turn else candidates
        earlier = [s for s in earlier if not _listed_with(s, v, statement)]  # "red and white from now on": red stays
        same_kind = [s for s in earlier if s.kind == v.kind]  # "nudge that one up to 24": a number, not "a dozen tetras"
        if v.kind == KIND_NUMBER:
            same_kind = [s for s in same_kind if _shape(s.value) == _shape(v.text)]  # "call it 80.9": the decimal, 81.6; a code is not a price
        if v.kind == KIND_DATE:
            # "back on the 20th now": a day of the month replaces a day of the month, not "Wednesday night".
            same_kind = [s for s in same_kind if _date_shape(s.value) == _date_shape(v.text)] or same_kind
        bare_number_of = [s for s in earlier if v.kind == KIND_NUMBER and s.kind in (KIND_TIME, KIND_QUANTITY) and _shape(v.text) != "code"]  # "Seven, then."
        pool = [s for s in people if s.turn != new_item.turn] or same_kind or bare_number_of
        if not pool:
            return None  # a value of another kind is not what a cue without a key changes ("Coach reckons ..." after "Bristol")
        said = statement.frame_keys | content_stems(v.context)
        if bare:
            said |= content_stems(earlier_text)  # "another two panels fit. So twelve.": the panels
        # The latest one, unless the sentence names what another is about ("push the outbound to the 5th").
        # Then the words of the turn each was said in ("a blood test ... at 8:10", then "the blood test's at 8:40 now").
        # Last, the words of the turn's earlier sentences ("The beginners won't want to be up that early. Push
        # their court to 12:15.": the beginners' time).
        before = content_stems(earlier_text) - said
        by_words = {id(s): (_code_family(s.value, v.text), len(_key_stems(s) & said), len((said_with or {}).get(id(s), set()) & said), len(_key_stems(s) & before))
                    for s in pool}
        level = [s for s in pool if by_words[id(s)] == max(by_words.values())]
        # No word of the sentence tells them apart: the fitted model's likeliest, if it clearly leads,
        # not merely the latest ("they've moved her to half two": her appointment, not the pickup said after it).
        likeliest = _likeliest(level, likelihood) if len(level) > 1 and likelihood is not None else None
        latest = likeliest or max(pool, key=lambda s: (*by_words[id(s)], s.turn, candidates.index(s)))  # "Kezia then": a person, not "my nan"
        if not cued and _qualified_apart(v, latest, statement):
            return None  # "On Thursdays it's 1:45": another day's time, not a correction
        if not cued and likelihood is not None and likelihood([latest])[0] < _WEAK_KEY_FLOOR:
            return None  # a cue in another clause, and the fitted model finds this one very unlikely to change
        return Decision(UPDATE, new_item, latest, "a cue of change and no key of its own")
    same = [s for s in candidates if s.kind == v.kind and v.kind in (KIND_TIME, KIND_NUMBER, KIND_QUANTITY, KIND_ITEM)]  # a day said with a reason is often the reason
    if not same and v.kind == KIND_NUMBER and _is_bare_number(v.text):
        # "so they want five hundred" after "three hundred copies": a bare amount is a count's; a measure needs its key.
        same = [s for s in candidates if s.kind == KIND_QUANTITY and number_of(s.value) is not None and not _dimension(item_unit(s, lang))]
    if v.kind == KIND_DATE:
        same = [s for s in same if _date_shape(s.value) == _date_shape(v.text)] or same  # "so I've taken the seventeenth": a day of the month
    reason = _REASON.search(statement.raw) is not None
    # Not when the sentence names what it replaces elsewhere ("ten mil of clearance, so the sides come out at 440, not 450").
    # A bare number beside a measure may be that measure ("20 mm of space, so ... 280 deep"): two of a sort.
    of_sort = sum(1 for o in news if o.kind == v.kind or (v.kind == KIND_QUANTITY and o.kind == KIND_NUMBER and _is_bare_number(o.text)))
    if reason and not adds and len(same) == 1 and of_sort == 1 and not v.qualifiers and not any(o.negated for o in statement.values):
        return Decision(UPDATE, new_item, same[0], "the only value of its kind, changed with a reason")
    # "We'll meet at quarter to nine. Kick-off stays the same.": one value of a kind said to stay,
    # a new one of that kind given, and one other stored: that other one is what changes.
    if not adds and len(same) == 1 and of_sort == 1 and not v.qualifiers and any(t.kind == v.kind for t in (steady or [])):
        return Decision(UPDATE, new_item, same[0], "the other value of its kind, beside one said to stay")
    if statement.admission and not adds and v.kind in (KIND_NUMBER, KIND_QUANTITY) and sum(1 for o in news if o.kind == v.kind) == 1:
        # "宣传单上我看错了，一学期是两千八" after 两千四: owning up to a misreading, the amount of the
        # same shape and size is the one misread, whatever words it was said with.
        near = [s for s in candidates if (s.kind == v.kind or (v.kind == KIND_NUMBER and s.kind == KIND_QUANTITY and _is_bare_number(v.text))) and s.turn != new_item.turn and _shape(s.value) == _shape(v.text) and _near(s.value, v.text)]
        if near:
            return Decision(UPDATE, new_item, max(near, key=lambda s: s.turn), "a misreading owned up to, the amount of the same size")
    return None


def same_sort(old: Item, kind: str, text: str) -> bool:
    """Of the old value's kind, or a bare amount for a count or a time ("so they want five hundred"
    after "three hundred copies"; "Twelve minutes floods the trays. Eight's plenty.")."""
    return old.kind == kind or (kind == KIND_NUMBER and old.kind in (KIND_QUANTITY, KIND_TIME) and _is_bare_number(text))


def _date_shape(text: str) -> str:
    """A day of the month ("the 20th", 三月十一号), a weekday ("Wednesday night", 周三) or another date."""
    t = text.lower()
    if re.search(r"\d|(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|teenth|tieth|twenty|thirty)\b|[号日]", t):
        return "day"
    if re.search(r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|周|星期|礼拜", t):
        return "weekday"
    return "other"


_TOTAL_BEFORE = re.compile(
    r"(?:\b(?:so|that's|that is|that makes|which makes|making|makes|(?:so )?make|(?:so )?call)\s+(?:it\s+|us\s+|that\s+)?(?:a total of\s+)?$)"
    r"|(?:这样就|那就|一共|总共|加起来|就是|加到|增加到|减到|减少到|变成)(?:是|有)?$",
    re.I,
)


_RANGE_SPLIT = re.compile(r"\s*(?:\bto\b|\btill\b|\buntil\b|–|-(?=\s*\d)|到|至)\s*")
_RANGE_END_SAID = re.compile(
    r"(?P<end>\b(?:finish|finishing|finishes|end|ends|ending|until|till|done by|wrap up|close|closing|out by)\b|下班|结束|收工|散场|截止)"
    r"|(?P<start>\b(?:start|starting|starts|begin|beginning|begins|from(?! (?:me|him|her|them|us|you)\b)|kick off|open|opening)\b|上班|开始|开工|开场)",  # "takes over from me at 2": no start
    re.I,
)


_IN_PLACE_OF = re.compile(r"\b(?:in (?:his|her|their) place|(?:take|takes|taking|took|taken) (?:over )?(?:his|her|their|\w+'s) (?:place|spot|slot)|instead of (?:him|her|them)|(?:cover|covers|covering|stand in|stands in|standing in|fill in|fills in|filling in) for (?:him|her|them))\b|替(?:他|她)|代替(?:他|她)|顶(?:他|她)的", re.I)


def _near(a: str, b: str) -> bool:
    """Two amounts within half of each other (2400 and 2800; not 72 and 138)."""
    return _closeness(a, b) >= 2 / 3


def _same_shape(a: str, b: str) -> bool:
    """Two codes of one pattern that differ in a few characters: a misread, not another code."""
    sa, sb = re.sub(r"\s", "", a), re.sub(r"\s", "", b)
    if len(sa) != len(sb) or sa == sb or len(sa) < 2:
        return False
    if len(sa) < 4 and not re.search(r"[A-Za-z]", sa):
        return sorted(sa) == sorted(sb)  # "241" after "214": the same digits read in another order
    pattern = lambda x: re.sub(r"\d", "9", re.sub(r"[A-Za-z]", "A", x))  # noqa: E731
    if pattern(sa) != pattern(sb):
        return False
    return sum(x != y for x, y in zip(sa, sb)) <= max(2, len(sa) // 3) and sorted(sa) == sorted(sb) or sum(x != y for x, y in zip(sa, sb)) <= 1


def _part_of_name(item: Item, v: Value) -> bool:
    """"Quennell." spelled out after "Arlo Quennell", "Dr Okafor" after "Dr Martin Okafor": a part of a stored name said again."""
    if item.kind != v.kind or v.kind != KIND_NAME or " " not in item.value:
        return False
    # Fewer of its parts, in their order; a title alone names no one.
    parts, said = item.value.lower().split(), v.text.lower().split()
    at = [parts.index(w) for w in said if w in parts]
    return len(at) == len(said) < len(parts) and at == sorted(at) and not all(_titled(w.capitalize()) for w in said)


_SI_PREFIX = re.compile(r"^(?:nano|micro|milli|centi|kilo|mega|giga)")
_SI_SHORT = {
    "ns": "second", "us": "second", "µs": "second", "ms": "second", "s": "second", "sec": "second",
    "mg": "gram", "g": "gram", "kg": "gram", "kilo": "gram", "mm": "metr", "cm": "metr", "m": "metr", "km": "metr",
    "ml": "litr", "l": "litr", "mv": "volt", "v": "volt", "kv": "volt", "ma": "amp", "a": "amp", "w": "watt", "kw": "watt",
    "hz": "hertz", "khz": "hertz", "mhz": "hertz", "ghz": "hertz", "mil": "metr",
    "inch": "metr", "inches": "metr", "foot": "metr", "feet": "metr", "yard": "metr", "yards": "metr", "mile": "metr", "miles": "metr",
    "degree": "kelvin", "degrees": "kelvin", "percent": "ratio", "per cent": "ratio", "%": "ratio",
    "ounce": "gram", "ounces": "gram", "oz": "gram", "stone": "gram", "lb": "gram", "lbs": "gram",
}


def _dimension(unit: str) -> str:
    """What a unit measures, its SI prefix set aside: "nanosecond" and "microsecond" both "second"."""
    u = unit.lower().split(" ")[0].rstrip(".")
    if u in _SI_SHORT:
        return _SI_SHORT[u]
    base = _SI_PREFIX.sub("", u).removesuffix("s")
    base = re.sub(r"(?:re|er)$", "r", base)  # metre/meter, litre/liter
    return base if base in ("second", "gram", "metr", "litr", "volt", "amp", "watt", "hertz", "ohm", "byte", "kelvin", "ratio") else ""


def _part_of_value(item: Item, v: Value, lang: str) -> bool:
    """"Saturday" after "Saturday morning", 周六 after 这周六: the stored day or place named shorter."""
    if _says_room(item, v.text):
        return True  # 五零二 after 十二栋五零二: the flat said without its building
    if item.kind != v.kind or item.kind not in (KIND_DATE, KIND_PLACE, KIND_ITEM):
        return False
    if lang == "zh":
        return 2 <= len(v.text) < len(item.value) and v.text in item.value
    said = re.sub(r"(?<=day)s\b", "", v.text.lower())  # "Wednesdays" names "Wednesday evenings"
    stored = re.sub(r"(?<=day)s\b", "", item.value.lower())
    return said != stored and re.search(rf"\b{re.escape(said)}\b", stored) is not None


def _amount_without_unit(item: Item, v: Value) -> bool:
    """"eighty-five goes off every morning" after "eighty-five percent": the stored amount named without its unit."""
    return item.kind == KIND_QUANTITY and v.kind == KIND_NUMBER and not v.unit and _same_amount(item, v.text)


# A label said right before a number ("table 9", "ending 4471"): the labels the reader knows, and
# the words that name a code or a channel by its number.
_LABEL_BEFORE = re.compile(rf"\b(?:{EN_LABEL_WORDS}|channel|ending|ends|code|hive|car|coach|id|ext)\s*$", re.I)
_AFTER_ELLIPSIS = re.compile(r"\s*(?:$|[,.;!?)]|(?:for|each|apiece|a|per|now|too|then|max|tops|please|instead|this|that|next|on|at|in|by)\b)", re.I)


def _unit_said_before(v: Value, statement: Statement) -> Item | None:
    """"Trouser leg is 31 inches for Dad and 33 for me", "twelve hours in the fridge, the rye only
    eight": a bare number in a clause parallel to an amount with a unit, saying nothing of its own
    after it, is an amount in that unit. A label's number ("table 9") is not."""
    text = statement.text
    if v.kind != KIND_NUMBER or v.delta or v.negated or not _is_bare_number(v.text) or MONEY_VALUE.search(v.text) or _label(v.text):
        return None
    if v.key or re.search(r"\b(?:is|are|was|were|'s|’s|turns?|turned|aged?)\s+(?:about |around |only |just |nearly |almost )?$", text[: v.start], re.I):
        return None  # "he's 12", "the code is 4471": a value of its own subject
    before = [q for q in statement.values if q.kind == KIND_QUANTITY and q.end <= v.start and not q.delta and q.unit and q.unit != "people"]
    if not before or _LABEL_BEFORE.search(text[: v.start]) or not _AFTER_ELLIPSIS.match(text[v.end:]):
        return None
    q = before[-1]
    if any(o.kind in (KIND_NUMBER, KIND_QUANTITY, KIND_TIME, KIND_DATE) and q.end <= o.start < v.start for o in statement.values):
        return None
    if not re.search(r"[,;]|\band\b|\bbut\b|\bwhile\b", text[q.end: v.start]):
        return None  # no second clause: "a 40 chest ... 44" needs the list's comma or "and"
    unit = Item(key="", value=q.text, kind=KIND_QUANTITY)
    return unit if item_unit_words(unit) else None  # the words a number is carried in ("pence", "square metres")


def keep_unit(new_item: Item, target: Item, lang: str) -> None:
    """A bare number replacing a count keeps the count's unit ("the guest count is thirty now");
    one replacing an amount of money keeps its currency, said as it was said ("gone to twenty"
    after £15: "twenty pounds"; "20": "£20")."""
    currency = re.match(r"[£$€¥]", target.value.strip())
    if currency and new_item.kind == KIND_NUMBER and target.kind == KIND_NUMBER and _is_bare_number(new_item.value) and not MONEY_VALUE.search(new_item.value):
        # Said as it was said: "20" -> "£20", "six hundred" -> "six hundred pounds".
        words = {"£": "pounds", "$": "dollars", "€": "euros", "¥": "yuan"}[currency.group(0)]
        new_item.value = currency.group(0) + new_item.value if new_item.value[:1].isdigit() else f"{new_item.value} {words}"
        return
    if new_item.kind == KIND_NUMBER and target.kind == KIND_QUANTITY and _is_bare_number(re.sub(r"\s+and a half$", "", new_item.value)):  # "two and a half"
        unit = item_unit_words(target)
        if unit:
            new_item.value = f"{new_item.value}{unit}" if lang == "zh" else f"{new_item.value} {unit}"
        new_item.kind = KIND_QUANTITY


def names_value(item: Item, text: str) -> bool:
    """`text` names the stored value: the same value, a part of it, or the same amount."""
    return same_value(item, text) or _contains_value(item, text) or _same_amount(item, text)


def _same_amount(item: Item, text: str, least: float = 10) -> bool:
    """"五十八一个月有点贵" names the stored "五十八块": the same amount, said with other words.
    Small counts recur too often to name one, unless the sentence rules it out ("not three")."""
    if item.kind not in (KIND_NUMBER, KIND_QUANTITY):
        return False
    a, b = number_of(item.value), number_of(text)
    return a is not None and a == b and a >= least


def _shape(text: str) -> str:
    """A decimal, a code or a plain count: "81.6" is read against "80.9", not against "66"."""
    t = text.strip()
    if re.search(r"\d\.\d|\bpoint\b|[零〇一二两三四五六七八九十百]点[零〇一二三四五六七八九]", t, re.I):
        return "decimal"
    digits = re.sub(r"\D", "", t)
    if re.fullmatch(r"[A-Z][a-z]+\s+[A-Za-z]?\d+[A-Za-z]?", t):
        return "labelled"  # "Peugeot 308", "Year 4": a name and its number, not a code like "KX4496"
    t = re.sub(r"^[a-z]+\s+(?=[A-Za-z]?\d)", "", t)  # "seat 41A" is read as its number
    if (
        re.search(r"[A-Za-z]", t) and digits  # "M41", "B2-015"
        or len(digits) >= 5 or digits.startswith("0")  # "88421", "0412 556 781"
        or re.fullmatch(r"[零〇一二三四五六七八九幺]{3,}", t)  # 二二八四: read digit by digit
    ):
        return "code"
    return "count"  # "four", "Forty-one", "九百二", "240": an amount


def _fresh_subject(statement: Statement, stored: list[Item]) -> bool:
    """The sentence opens on a thing never mentioned before: a new labelled number ("Hive two"
    after "Hive one") or, in Chinese, a first noun no stored item says (报价单 beside 投标书)."""
    said = " ".join(i.value + " " + i.key for i in stored).lower()
    for o in statement.values:
        if o.kind == KIND_NUMBER and re.match(r"[A-Za-z]+ (?:\d+|[a-z]+)$", o.text) and o.text.lower() not in said and not o.negated:
            if any(o.text.split()[0].lower() in (i.value + " " + i.key).lower() for i in stored):
                return True  # "Hive two" beside a stored "hive one"
    return False


_ORDER_CHARS = "一二三四五六七八九十大小"
_ZH_NOT_A_HEAD = "的了是在有和与跟就都也还要我你他她它这那个"


def _zh_sibling_text(said: str, key: str) -> bool:
    """The sentence names a sibling of what the stored key names: 无铅 beside 有铅, 老二 beside
    老大, 二等奖 beside 一等奖 (one character apart in the same place of a short word)."""
    def windows(text: str) -> set[str]:
        runs = re.findall(r"[\u3400-\u9fff]+", text)
        return {r[i:i + 2] for r in runs for i in range(len(r) - 1)}

    new, old = windows(said), windows(key)
    for a in new - old:
        for b in old - new:
            if a[1] == b[1] and a[0] != b[0] and a[1] not in _ZH_NOT_A_HEAD and a[0] in _ORDER_CHARS + "有无单双全半" and b[0] in _ORDER_CHARS + "有无单双全半":
                return True  # 无铅/有铅, 二等/一等, 大宝/二宝
            if a[0] == b[0] and a[0] not in _ZH_NOT_A_HEAD and a[1] in _ORDER_CHARS and b[1] in _ORDER_CHARS:
                return True  # 老大/老二
    return False


def _siblings(a: set[str], b: set[str]) -> bool:
    """Two keys naming different things of one kind: 一等奖 and 二等奖 (a shared head, another first part)."""
    for x in a - b:
        for y in b - a:
            if len(x) == len(y) >= 2 and re.match(r"[\u3400-\u9fff]", x) and x[1:] == y[1:] and x[0] != y[0]:
                return True
            if len(x) == len(y) == 2 and x[0] == y[0] and x[1] != y[1] and x[1] in _ORDER_CHARS and y[1] in _ORDER_CHARS:
                return True  # 老大 and 老二
    return False


def _fixed_group(old: str, new: str) -> str | None:
    """`old` with one of its digit groups replaced by `new`, when `new` is that group read
    again with a digit or two changed or swapped ("BX-4471-T" + "4477" -> "BX-4477-T")."""
    digits = re.sub(r"\D", "", _norm(new))
    if len(digits) < 3 or digits != re.sub(r"[\s-]", "", _norm(new)) or digits in re.sub(r"\D", "", old):
        return None
    for m in re.finditer(r"\d+", old):
        group = m.group(0)
        if m.start() == 0 and m.end() == len(old):
            return None  # the whole value: an ordinary replacement, not a part
        if len(group) == len(digits) and (sorted(group) == sorted(digits) or sum(a != b for a, b in zip(group, digits)) <= max(1, len(group) // 3)):
            return old[: m.start()] + digits + old[m.end():]
    return None


def _digits_swapped(a: str, b: str, shortest: int = 3) -> bool:
    da, db = _digits(a), _digits(b)
    return len(da) >= shortest and da != db and sorted(da) == sorted(db)


def _digits(text: str) -> str:
    """The digits of a value, of its number words too ("forty-two" -> "42")."""
    said = re.sub(r"\D", "", _norm(text))
    if said:
        return said
    n = number_of(text)
    return str(int(n)) if n is not None and n == int(n) else ""


def _respelled(new: str, old: str, lang: str, admitted: bool = False) -> bool:
    """The same name spelled again: one or two letters apart (also one part of a full name), or
    in Chinese the same sound written with another character (陈墨 for 陈默); with a slip owned
    up to, a full name with one given-name character otherwise (名字弄岔了，叫林晓云 after 林晓雯)."""
    if lang == "zh" or re.search(r"[\u4e00-\u9fff]", new):
        if len(new) != len(old) or new == old or new[0] != old[0]:
            return False
        if admitted and len(new) >= 3 and sum(a != b for a, b in zip(new, old)) == 1:
            return True
        from pypinyin import lazy_pinyin  # type: ignore[import-not-found,import-untyped]

        if lazy_pinyin(new) == lazy_pinyin(old):
            return True
        # Owned up to, a sound heard close enough: 罗晓斌 for 罗小兵 (bin/bing, zh/z: the pairs speakers merge).
        return admitted and [_fuzzy_pinyin(p) for p in lazy_pinyin(new)] == [_fuzzy_pinyin(p) for p in lazy_pinyin(old)]
    return any(_spelled_again(new, part) for part in [old, *old.split()]) or any(_spelled_again(part, old) for part in new.split())


def _fuzzy_pinyin(syllable: str) -> str:
    return re.sub(r"^([zcs])h", r"\1", re.sub(r"(?<=[ie])ng$", "n", syllable))


_EN_COUNT_LEAD = re.compile(rf"^(?:\d+(?:\.\d+)?|(?:(?:{EN_NUMBER_WORDS})\b(?:\s+and\s+|[- ])?)+)\s+", re.I)


_ZH_COUNT_LEAD = re.compile(r"^[零〇一二两三四五六七八九十百千万\d.]+(?:多|来)?")


def _zh_with_thing(old: str, new: str) -> str:
    """A new count said with its measure word only keeps the thing the old count counted."""
    old_lead, new_lead = _ZH_COUNT_LEAD.match(old), _ZH_COUNT_LEAD.match(new)
    if old_lead is None or new_lead is None:
        return new
    old_rest, new_rest = old[old_lead.end():], new[new_lead.end():]
    if len(new_rest) == 1 and old_rest.startswith(new_rest) and len(old_rest) > 1:
        return new + old_rest[1:]
    return new


def _with_modifiers(old: str, new: str) -> str:
    """A new count of the same thing keeps what was said of the thing: "six hinges" after
    "two brass hinges" is six brass hinges; a new count with words of its own stays as said."""
    old_lead, new_lead = _EN_COUNT_LEAD.match(old), _EN_COUNT_LEAD.match(new)
    if old_lead is None or new_lead is None:
        return new
    old_words, new_words = old[old_lead.end():].split(), new[new_lead.end():].split()
    if len(new_words) != 1 or len(old_words) < 2 or stem(old_words[-1].lower()) != stem(new_words[0].lower()):
        return new
    return new[: new_lead.end()] + " ".join(old_words[:-1] + new_words)


def _zh_new_thing(text: str, v: Value, base: list[Item]) -> bool:
    """The thing named after an added count ("再加两袋营养土") is in no stored count."""
    at = v.text.find(v.unit[:1]) if v.unit else -1
    if at < 0:
        return False
    if counts_people(v.unit, "zh") and any(item_unit(s, "zh") == "people" for s in base):
        return False  # 又有两个阿姨加进来了 after 八个人: people counted are the people stored
    thing = re.match(r"[^\s，。,.！!？?；;、的吧呀啊了]{2,8}", text[v.start + at + 1:])
    return thing is not None and not any(thing.group(0)[:2] in s.key + s.value for s in base)


def _number_said_in(value: str, number: str, lang: str) -> bool:
    """`number` ("Forty-one", "41") is one of the numbers written in `value` ("Flat 41")."""
    said = number_value(number, lang) if not number.strip().isdigit() else int(number)
    return said is not None and said in {int(d) for d in re.findall(r"\d+", value)}


def _zh_head_said(item: Item, said: str) -> bool:
    """The last character of a noun in the item's key is said in the sentence (not as a value)."""
    nouns = [w for w in re.findall(r"[\u4e00-\u9fff]{2,}", item.key) if not w.startswith(item.value)]
    return any(w[-1] in said for w in nouns)


def _far_apart(item: Item, v: Value) -> bool:
    """Two counts or amounts twenty times apart or more: not one corrected by the other."""
    if item.kind not in (KIND_NUMBER, KIND_QUANTITY) or v.kind not in (KIND_NUMBER, KIND_QUANTITY):
        return False
    if _shape(item.value) != "count" or _shape(v.text) != "count":
        return False
    a, b = number_of(item.value), number_of(v.text)
    return a is not None and b is not None and min(a, b) > 0 and max(a, b) / min(a, b) >= 20


def _month(text: str) -> str:
    """The month a date names ("the 3rd of March", 八月十五号), "" if none."""
    zh = re.search(r"([一二三四五六七八九十]{1,2}|\d{1,2})月", text)
    if zh:
        return zh.group(1)
    months = EN_MONTHS.split("|")
    en = re.search(r"\b(" + "|".join(m[:3].title() for m in months) + r")[a-z]*\b", text)  # "May", not "may"
    return en.group(1).lower() if en and en.group(0).lower() in months + [m[:3] for m in months] else ""


def _misread_code(old: str, new: str) -> str | None:
    """`old` with its end read again as `new`, when `new` is a code of letters and digits (four
    or more) that differs from that end in one character: "7H239" for 苏A7K239 -> 苏A7H239.
    None when they do not match so (or are the same)."""
    said = re.sub(r"[\s-]", "", new).upper()
    if len(said) < 4 or not re.fullmatch(r"[A-Z0-9]+", said) or not re.search(r"\d", said) or not re.search(r"[A-Z]", said + re.sub(r"[\s-]", "", old).upper()):
        return None  # plain numbers are read by the digit rules; a code has letters
    if re.fullmatch(r"\d+[A-Z]{1,3}", said) or re.search(r"\d\s*[a-z]{1,3}$", old.strip()):
        return None  # "20 mg", "500 mg": an amount and its unit, not a code
    chars = [(i, c) for i, c in enumerate(old) if c.isalnum() and c.isascii()]
    if len(chars) < len(said):
        return None
    tail = chars[len(chars) - len(said):]
    differ = [i for (i, c), d in zip(tail, said) if c.upper() != d]
    if len(differ) != 1 or (len(chars) == len(said) and len(said) < 5):
        return None
    at = differ[0]
    return old[:at] + said[tail.index(next(t for t in tail if t[0] == at))] + old[at + 1:]


def _code_family(a: str, b: str) -> bool:
    """Two codes that begin with the same letters: "COM7" and "COM12", "HF-300" and "HF-350"."""
    pa, pb = re.match(r"[A-Za-z]+(?=[-._ ]?\d)", a.strip()), re.match(r"[A-Za-z]+(?=[-._ ]?\d)", b.strip())
    return pa is not None and pb is not None and pa.group(0).lower() == pb.group(0).lower()


def _label(text: str) -> str:
    """What a number is said with: "£" of "£18", "year" of "Year 5", "%" of "20%" ("" for a bare number or a code)."""
    if re.search(r"[A-Za-z]\d|\d[A-Za-z]", text):
        return ""
    if re.search(r"[\u3400-\u9fff]", text):
        return re.sub(r"[\dA-Za-z.,\s零〇一二两三四五六七八九十百千万]+", "", text)  # "B座" and "C座": 座
    spoken = re.sub(rf"\b((?:{EN_NUMBER_WORDS}))-(?=(?:{EN_NUMBER_WORDS})\b)", r"\1 ", text.lower())  # "twenty-two" is one number
    label = re.sub(rf"[\d.,\s]+|\b(?:{EN_NUMBER_WORDS}|thousand|million|and|a|point)\b", " ", spoken).strip()
    label = " ".join(w for w in label.split() if not (len(w) == 1 and w.isalpha()))  # "pack A", "rev D": the letter is the number
    return label


_PRESENT_PERIOD = re.compile(r"this (?:week|month|year|term|season)|这周|本周|这个?星期|这个月|本月|今年", re.I)


def _label_said(stored: Item, v: Value, statement: Statement, earlier_text: str) -> bool:
    """A stored number said with a word label ("room 12", "table nine") and a bare number said in a
    turn that names the label ("moved rooms", "the big table"), but not before a number ("hive two,
    I missed a frame. Six of brood": the label says which one, the other number is another thing)."""
    if stored.kind != KIND_NUMBER or v.kind != KIND_NUMBER or not _is_bare_number(v.text) or v.negated:
        return False
    label = _label(stored.value)
    if not label or not label.isalpha() or stem(label) not in statement.frame_keys | content_stems(earlier_text):
        return False
    before_a_number = rf"\b{re.escape(label)}s?\s+(?:\d|(?:{EN_NUMBER_WORDS})\b)"
    return re.search(before_a_number, f"{earlier_text} {statement.text}", re.I) is None


def _relabelled(old: str, number: str) -> str:
    label = _label(old)
    m = re.search(rf"\b{re.escape(label)}\b", old, re.I)
    if m is None:
        return number
    return f"{old[: m.end()]} {number}" if m.start() == 0 else f"{number} {old[m.start():]}"


def _titled(name: str) -> bool:
    return re.match(r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Doctor|Professor|Coach)\b", name) is not None or re.search(r"(?:老师|医生|大夫|教练|师傅|经理)$", name) is not None


def _is_code(text: str) -> bool:
    """An ID rather than an amount: letters in it, or three digits and more."""
    if re.search(r"乘|×|\*|\bby\b|\bover\b|\d\s*x\s*\d", text):
        return False  # "300乘600", "50 by 70": a size, not an ID
    return re.search(r"[A-Za-z]", text) is not None or len(re.sub(r"\D", "", _norm(text))) >= 3 or re.fullmatch(r"[零〇一二三四五六七八九幺]{3,}", text.strip()) is not None


def _qualified_apart(v: Value, target: Item, statement: Statement) -> bool:
    """The new value is said for another day or person than the stored one."""
    if not v.qualifiers:
        return False
    key = target.key.lower() + " " + target.value.lower()
    # "this week she finishes at 5:15": the period the talk is in is when the change holds, no other day.
    return any(q.lower() not in key and not _PRESENT_PERIOD.fullmatch(q.strip()) for q in v.qualifiers)


# Keys that only name the kind of value ("the time is ...", 时间改到...): no key of their own.
_KIND_NOUNS = frozenset(
    "time times date day days hour number amount count total quantity place address location name person "
    "时间 日期 时候 号码 数量 人数 地点 地址 名字 日子 几点".split()
)


def _no_key_of_its_own(v: Value, lang: str) -> bool:
    """The sentence names nothing the value could be about other than the candidates."""
    if not v.key:
        return True
    words = v.key.lower().split() if lang != "zh" else [v.key]
    return all(w in _KIND_NOUNS for w in words)


def replace_in_items(items: list[Item], old: str, new: str, skip: Item | None = None) -> list[Item]:
    """The items with `old` replaced by `new` in their values and keys (not `skip`)."""
    from sotto.memory.patch import replace_everywhere

    out: list[Item] = []
    amount = _is_bare_number(old)
    for item in items:
        if item is skip or (amount and skip is not None and item.kind not in (KIND_NOTE, skip.kind)):
            out.append(item)  # "two" wetsuits made one: the "two" of "two o'clock" is another value
            continue
        value = replace_everywhere(item.value, old, new)
        key = replace_everywhere(item.key, old, new)
        bare_old = " ".join(re.sub(r"[^\w\s:]", " ", old).split())
        if bare_old and bare_old != old:
            # Keys keep words without their punctuation: "Mr Adeyemi" for "Mr. Adeyemi".
            key = replace_everywhere(key, bare_old, " ".join(re.sub(r"[^\w\s:]", " ", new).split()))
        if value != item.value or key != item.key:
            item = Item(key=key, value=value, kind=item.kind, turn=item.turn)
        out.append(item)
    return out
