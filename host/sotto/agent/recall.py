"""Which current items answer a recall question.

A question is read as one or more asks ("What time, and how many payslips?",
"几点到？哪个医生？"): each ask has the kinds it wants (a time, a count, a name ...),
the words naming what it is about (its subject: "Gerald", 老伴, "flat"), and whether it
wants a day and a time together. Items are ranked for each ask by those words (in the
key, in the value, in what else was said in the same turn) and by kind. Only current
items are ranked: a replaced value is no longer an item, so it can never be chosen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NOTE, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME, Item
from sotto.memory.state import SessionState
from sotto.memory.statements import asked_kinds, content_stems, is_role_word
from sotto.memory.text import MONEY_VALUE, stem

_QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how many much time day date again remind tell say said ask asked did do does "
    "is are was were number other another".split()
)
_DAY_WORDS = re.compile(
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekday)s?\b|周[一二三四五六日天末]|星期[一二三四五六日天]|周末|平时",
    re.I,
)
# The kinds a follow-up asks again: "And the slabs?" after "What time ...?" wants a time or its day.
RELATED_KINDS: dict[str, tuple[str, ...]] = {
    KIND_TIME: (KIND_TIME, KIND_DATE),
    KIND_DATE: (KIND_DATE, KIND_TIME),
    KIND_QUANTITY: (KIND_QUANTITY, KIND_NUMBER),
    KIND_NUMBER: (KIND_NUMBER, KIND_QUANTITY),
    KIND_NAME: (KIND_NAME,),
    KIND_PLACE: (KIND_PLACE,),
    KIND_ITEM: (KIND_ITEM, KIND_NUMBER, KIND_QUANTITY),
}
FOLLOW_UP_KINDS = tuple(RELATED_KINDS)
_FOLLOW_UP = re.compile(r"^(?:and|what about|how about|and what about)\b|^那|呢[？?]?$", re.I)
# Where a question holds several asks: after a question mark, before "and" + a question
# word, at "；", or at a "，" before a Chinese question word.
_PART_BREAK = re.compile(
    r"(?<=[?？])\s*|,\s*and\s+|\s+and\s+(?=(?:what|which|who|whose|when|where|how)\b)|；|，(?=[^，]*(?:几|哪|谁|多少|什么))", re.I
)
# A question word: a part without one ("Mine?", "The motor driver one?") asks again.
_WH = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b|什么|啥|哪|谁|几|多少|怎么", re.I)
# "And the other one?", "And mine?", 那另一个呢？, 那我呢？: the same ask again, for another thing.
_OTHER = re.compile(r"\b(?:other|another|mine|me)\b|另一|另外|其他|别的|^那?我的?呢", re.I)
_ASKS_DAY = re.compile(r"\b(?:day|date|night)\b|哪天|几号|星期几|周几|礼拜几|哪一天", re.I)
_ASKS_PLURAL = re.compile(r"\b(?:days|dates|nights|times)\b", re.I)
_ASKS_CLOCK = re.compile(r"\btime\b|几点", re.I)
# "几楼", "哪排", "多少号": the word after the question word is the label the value carries (21楼).
_ZH_LABEL = re.compile(r"(?:几|哪|多少)(?:个|一)?(?P<label>[\u4e00-\u9fff])")
_EN_LABEL = re.compile(r"\b(?:which|what)\s+(?P<label>[a-z]{3,})\b|\b(?P<label2>[a-z]{3,}) (?:number|no)\b", re.I)
_ZH_COUNT_ASK = re.compile(r"几|多少")
_ASKS_MONEY = re.compile(r"多少钱|价钱|价格|\bhow much (?:is|was|does|did|will|do|are)\b|\b(?:cost|price|fee|charge)s?\b", re.I)
_ASKS_COUNT = re.compile(r"\bhow many\b|几[个位张只件台辆瓶杯份本盒包袋箱条把双套人副]", re.I)


@dataclass(frozen=True)
class Ask:
    """One thing a question asks for."""

    text: str
    kinds: tuple[str, ...]
    subject: frozenset[str]  # content words naming what it is about
    day_and_time: bool = False  # "What day and time?", 哪天几点
    soft_kinds: bool = False  # kinds carried over from the last question: the subject decides first
    given: frozenset[str] = frozenset()  # values already answered: "And the other one?" wants another


@dataclass
class RecallThread:
    """The last recall ask of a session and the values that answered it: "And the other
    one?", "And mine?" ask the same again for another thing. Kept by the agent per session."""

    ask: Ask | None = None
    answered: list[Item] = field(default_factory=list)


_QUESTION_STEMS = frozenset(stem(w) for w in _QUESTION_WORDS)


_ZH_QUESTION_WORDS = frozenset(("时候", "时间"))  # 什么时候 asks when; it is about nothing


def question_keys(question: str) -> set[str]:
    return {k for k in content_stems(question) if k not in _QUESTION_WORDS and k not in _QUESTION_STEMS and k not in _ZH_QUESTION_WORDS}


# What else a question word asks for: "what are the cats called" a name, "which days" a
# day, "what's the deadline" a day, "the application number" a number.
_MORE_ASKS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"\b(?:called|named)\b|\bnames?\b(?!\s+(?:of|on|for)\b)|叫什么|什么名字|名字", re.I), (KIND_NAME, KIND_PLACE)),
    (re.compile(r"\b(?:what|which) times\b", re.I), (KIND_TIME, KIND_DATE)),
    (re.compile(r"\b(?:what|which) (?:days|dates|nights?|evenings?|mornings?|weekends?)\b|\bwhat(?:'s| is| was) the (?:date|day)\b|\bdeadline\b|\bdue\b|截止", re.I), (KIND_DATE, KIND_TIME)),
    (re.compile(r"\b(?:temperature|weight|length|width|height|depth|size|volume|capacity|dose|amount)\b|多大|多长|多重|多高|多宽|多深|尺寸|尺码", re.I),
     (KIND_QUANTITY, KIND_NUMBER, KIND_ITEM)),
    (re.compile(r"\b(?:number|code|reference|ref|registration|reg|serial|postcode|pin|id)\b(?!\s+of\b)|号码|编号|型号|货号|单号|车牌", re.I), (KIND_NUMBER, KIND_QUANTITY)),
)
_ZH_NUMBERED_PLACE = re.compile(r"几号(?:楼|房|室|床|门|栋|线|站台|车厢|柜|桌|位)")


def question_kinds(text: str) -> tuple[str, ...]:
    """The kinds of value a question (or one ask of it) wants, first the likeliest."""
    kinds = asked_kinds(text)
    if not kinds and _ZH_COUNT_ASK.search(text):
        kinds = (KIND_QUANTITY, KIND_NUMBER)  # 几楼, 几排: a number with its label
    if kinds == (KIND_DATE, KIND_TIME) and _ZH_NUMBERED_PLACE.search(text):
        kinds = (KIND_NUMBER, KIND_QUANTITY)  # 几号楼, 几号床: a numbered place, not a day of the month
    if kinds:
        return kinds
    for pattern, asked in _MORE_ASKS:
        if pattern.search(text):
            return asked
    if _asks_which_person(text):
        return (KIND_NAME,)
    return ()


def _asks_which_person(text: str) -> bool:
    """"Which nanny", 哪个阿姨: which one of a kind of person asks for a name."""
    for m in _EN_DETERMINER.finditer(text):
        if is_role_word("my " + m.group(0).split()[-1]):
            return True
    return any(is_role_word(m.group("noun")) for m in _ZH_WHICH_NOUN.finditer(text))


def _ask(text: str) -> Ask:
    return Ask(
        text=text,
        kinds=question_kinds(text),
        subject=frozenset(question_keys(text)),
        day_and_time=bool(_ASKS_DAY.search(text) and _ASKS_CLOCK.search(text)),
    )


# "what colour and width": one question word over two things asked.
_WH_PAIR = re.compile(r"\b(?P<wh>what|which|how)\s+(?P<a>[a-z]+)\s+and\s+(?P<b>[a-z]+)\b", re.I)


def _distributed(part: str) -> list[Ask]:
    """"And the strap, what colour and width?" asks two things of the strap: a colour and
    a width; "what day and time" stays one ask (a day with its time)."""
    m = _WH_PAIR.search(part)
    if m is not None:
        wh = m.group("wh")
        first = part[: m.start()] + f"{wh} {m.group('a')}" + part[m.end() :]
        second = part[: m.start()] + f"{wh} {m.group('b')}" + part[m.end() :]
        a, b = _ask(first), _ask(second)
        if a.kinds and b.kinds and a.kinds[0] != b.kinds[0] and {a.kinds[0], b.kinds[0]} != {KIND_TIME, KIND_DATE}:
            return [a, b]
    return [_ask(part)]


# "And what's Ruth making?" asks a question of its own; "And what about Gerald?" asks the last one again.
_ABOUT = re.compile(r"\b(?:what|how) about\b", re.I)


def _own_question(text: str) -> bool:
    return bool(_WH.search(_ABOUT.sub(" ", text)))


def is_follow_up_text(question: str) -> bool:
    return bool(_FOLLOW_UP.search(question.strip()))


def question_asks(question: str, previous_kind: str = "", thread: RecallThread | None = None) -> list[Ask]:
    """The asks of a question, in order. A part naming only a subject ("And Gerald?",
    "那老伴的呢？") takes the kinds of the part after it, or, alone, those of the last question;
    "And the other one?" asks the last question again, for a value not yet given."""
    parts = [p.strip() for p in _PART_BREAK.split(question) if p and p.strip(" ?？,，.。")]
    asks = [a for p in parts for a in _distributed(p)] or [_ask(question)]
    merged: list[Ask] = []
    for ask in asks:
        prev = merged[-1] if merged else None
        if prev is not None and not prev.kinds and not _WH.search(prev.text) and ask.kinds and not is_follow_up_text(ask.text):
            # "And Gerald? What day and time?": one ask, the subject from the first part.
            merged[-1] = Ask(f"{prev.text} {ask.text}", ask.kinds, prev.subject | ask.subject, ask.day_and_time)
        else:
            merged.append(ask)
    for at in range(1, len(merged)):
        ask, before = merged[at], merged[at - 1]
        if ask.kinds and not ask.subject and before.subject:
            # "Who am I meeting and where?": the second part asks about what the first named.
            merged[at] = Ask(ask.text, ask.kinds, before.subject, ask.day_and_time)
    out: list[Ask] = []
    last = thread.ask if thread is not None else None
    for ask in merged:
        if last is not None and not ask.kinds and _OTHER.search(ask.text) and (is_follow_up_text(ask.text) or len(merged) == 1):
            given = frozenset(i.value for i in thread.answered) if thread is not None else frozenset()
            out.append(Ask(ask.text, last.kinds, last.subject | ask.subject, last.day_and_time, given=given))
            continue
        if not ask.kinds and last is not None and last.kinds and is_follow_up_text(ask.text) and not _own_question(ask.text):
            out.append(Ask(ask.text, last.kinds, ask.subject, ask.day_and_time, soft_kinds=bool(ask.subject)))
            continue
        if not ask.kinds and previous_kind in RELATED_KINDS and not _own_question(ask.text) and (
            is_follow_up_text(ask.text) or (len(merged) == 1 and not _WH.search(ask.text))
        ):
            ask = Ask(ask.text, RELATED_KINDS[previous_kind], ask.subject, ask.day_and_time, soft_kinds=bool(ask.subject))
        out.append(ask)
    return out


def all_items(state: SessionState) -> list[Item]:
    p = state.user_profile
    task = [Item(key=state.current_task, value=state.current_task, kind=KIND_NOTE)] if state.current_task else []
    names = [Item(key="name", value=n, kind=KIND_NAME) for n in p.names[:1]]
    return task + list(state.facts) + list(state.pending_steps) + list(p.constraints) + list(p.preferences) + names


def mentioned(wanted: set[str] | frozenset[str], words: set[str]) -> set[str]:
    """The wanted words said in `words`, whole or inside a longer compound ("booth" in
    "photobooth"; in English only for words of four letters or more, so "car" is not in "carer")."""
    found = set(wanted & words)
    for w in wanted - found:
        if len(w) >= 4 and w.isascii() and any(len(x) > len(w) and w in x for x in words):
            found.add(w)
        elif not w.isascii() and any(len(x) > len(w) and w in x for x in words if not x.isascii()):
            found.add(w)  # 鞋 in 鞋子, 机场 in 浦东机场: a Chinese word inside a longer one
    return found


_CLAUSE_BREAK = re.compile(r"[，,；;]\s*")


def clause_about(note: str, subject: frozenset[str] | set[str]) -> str:
    """The clause of a note that speaks of the subject, with the clause after it (which
    often carries its value: "engraving inside, A and R"): "妹妹梁子涵报跳绳" of
    "哥哥梁子轩报八百米，妹妹梁子涵报跳绳". The whole note when no clause does better than
    another. The clauses before may hold values that are no longer current."""
    clauses = [c for c in _CLAUSE_BREAK.split(note) if c.strip()]
    if len(clauses) < 2 or not subject:
        return note
    hits = [len(mentioned(subject, content_stems(c))) for c in clauses]
    best = max(hits)
    if best == 0 or hits.count(best) > 1:
        return note
    at = hits.index(best)
    sep = "，" if re.search(r"[\u4e00-\u9fff]", note) else ", "
    return sep.join(c.strip() for c in clauses[at : at + 2])


# What a measure is measured in: "how heavy" wants grams, not degrees.
_DIMENSIONS: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"\b(?:heavy|weigh\w*)\b|多重|重量|体重", re.I),
     re.compile(r"\b(?:grams?|g|kilos?|kilograms?|kg|pounds?|lbs?|ounces?|oz|stone|tonnes?)\b|斤|克|公斤|千克", re.I)),
    (re.compile(r"\b(?:hot|warm|cold|temperature)\b|温度|多少度", re.I), re.compile(r"\bdegrees?\b|°|度", re.I)),
    (re.compile(r"\b(?:tall|wide|width|height|deep|depth|length)\b|多长|多宽|多高|多深|长度|宽度|高度", re.I),
     re.compile(r"\b(?:metres?|meters?|centimetres?|cm|millimetres?|mm|foot|feet|inch(?:es)?|yards?|miles?|km)\b|米|寸|尺", re.I)),
    (re.compile(r"\b(?:volume|capacity)\b|容量|多大桶", re.I), re.compile(r"\b(?:litres?|liters?|ml|millilitres?|gallons?|pints?)\b|升", re.I)),
)


def _dimension_fit(question: str, item: Item) -> float:
    """A quantity in the unit of the measure asked ("how heavy" -> 850 grams) before one in
    another unit ("five degrees")."""
    if item.kind not in (KIND_QUANTITY, KIND_NUMBER):
        return 0.0
    asked = [unit for question_words, unit in _DIMENSIONS if question_words.search(question)]
    if not asked:
        return 0.0
    if any(unit.search(item.value) for unit in asked):
        return 2.0
    if any(unit.search(item.value) for _, unit in _DIMENSIONS):
        return -1.0  # measured in another unit; a bare number may still be the one
    return 0.0


def _label_bonus(ask: Ask, item: Item) -> float:
    """A value carrying the label the question asks by: 几楼 -> 21楼, "how much" -> 十块."""
    bonus = _dimension_fit(ask.text, item)
    if item.kind in (KIND_QUANTITY, KIND_NUMBER):
        # A price answers "how much is it", and only that: "how many cupcakes" is not 75p.
        money = MONEY_VALUE.search(item.value) is not None
        if _ASKS_MONEY.search(ask.text):
            bonus += 2.0 if money else -1.0
        elif money and _ASKS_COUNT.search(ask.text):
            bonus -= 1.0
    if item.kind == KIND_NOTE:
        return bonus  # a label is carried by a value ("flat 5"); in a note it is only the subject named
    for m in _EN_LABEL.finditer(ask.text):
        label = (m.group("label") or m.group("label2")).lower()
        if label in _QUESTION_WORDS or stem(label) not in content_stems(item.value):
            continue
        bonus += 2.0  # "Which night?" -> "Tuesday nights", "And her flat number?" -> "flat 5"
    if ask.kinds[:1] in ((KIND_TIME,), (KIND_DATE,)):
        return bonus  # 几点, 几号 ask for a kind, not for a label
    for m in _ZH_LABEL.finditer(ask.text):
        if item.kind != KIND_NOTE and m.group("label") in item.value:
            bonus += 4.0  # the label said outweighs the order of the kinds asked (几座 -> 七座, not 六个人)
    return bonus


# "What leather", "which walk", 什么项目, 哪个牌子: a question word before a noun asks which
# one of a kind of thing, not for a measure of it.
_EN_DETERMINER = re.compile(
    r"\b(?:what|which)\s+(?!(?:is|are|was|were|did|do|does|will|would|can|could|should|has|have|had|i|you|he|she|it|we|they"
    r"|the|a|an|my|your|his|her|our|their|this|that|there|about)\b)[a-z]{3,}",
    re.I,
)
_ZH_WHICH_NOUN = re.compile(r"(?:哪个|哪位|什么)(?P<noun>[\u4e00-\u9fff]{2})")
_ZH_DETERMINER = re.compile(r"(?:什么|啥|哪个|哪种|哪家|哪款)(?=[\u4e00-\u9fff])(?!时候|时间)")
_NAMING_KINDS = (KIND_NUMBER, KIND_NAME, KIND_PLACE)


def _untyped_ask_fit(ask: Ask, item: Item, key_hits: int) -> float:
    """How well a value about the subject answers a question that asks for no kind.
    A number, name or place keyed by the subject names it ("What desk?" -> 3C22, "Which
    pool?" -> Queensway) and beats a note that only repeats the subject; keyed by a long
    frame it is more likely another part of the sentence ("Which shoulder?" is not the
    physio's name). A time or date answers "when"; an amount answers "what's it set to",
    not "what milk" or "which walk" (which one: told better by the note's own words)."""
    determiner = bool(_EN_DETERMINER.search(ask.text) or _ZH_DETERMINER.search(ask.text))
    if item.kind in _NAMING_KINDS:
        focused = 3 * key_hits >= len(content_stems(item.key))
        return 1.0 if focused else (-1.0 if determiner else 0.0)
    if item.kind in (KIND_TIME, KIND_DATE):
        return -1.0
    if item.kind == KIND_QUANTITY:
        return -1.0 if determiner else 1.0
    return 0.0


def _head_hits(wanted: frozenset[str], words: set[str]) -> set[str]:
    """The wanted words said whole or as the head of a compound: a workbook is a book,
    a locksmith is not a lock."""
    return {w for w in wanted if w in words or (len(w) >= 4 and any(len(x) > len(w) and x.endswith(w) for x in words))}


def _names_the_subject(item: Item, wanted: frozenset[str]) -> bool:
    """A name and a role word for one person, one of them asked about, or a name holding
    the name asked about: the person the question is about ("What's Ruth making?" with
    "my sister" stored for Ruth)."""
    key_words = content_stems(item.key)
    if is_role_word(item.value):
        return bool(mentioned(wanted, key_words))
    if wanted & content_stems(item.value):
        return True  # "Uncle Ray" for "What's Ray bringing?"
    return any(is_role_word(w) for w in key_words & wanted)


# The end of a range ("1 pm until 4 pm": the 4 pm is keyed "until"), and questions asking
# for its start or its end.
_RANGE_END_KEY = re.compile(r"\b(?:until|till|to|finish\w*|end\w*|clos\w*|over)\b|结束|截止|到$|下班", re.I)
_ASKS_START = re.compile(r"\b(?:start\w*|begin\w*|from|open\w*)\b|开始|上班|几点起", re.I)
_ASKS_END = re.compile(r"\b(?:finish\w*|end\w*|until|till|clos\w*|over|done)\b|结束|到几点|几点完|下班", re.I)


def _range_end_fit(question: str, key: str) -> float:
    """"When does my slot start?" wants the start of a range, not the value keyed as its
    end; "When do I finish?" wants the end."""
    at_end = _RANGE_END_KEY.search(key) is not None
    if _ASKS_START.search(question) and not _ASKS_END.search(question):
        return -2.0 if at_end else 0.0
    if _ASKS_END.search(question) and not _ASKS_START.search(question):
        return 1.0 if at_end else 0.0  # a preference only: the end is not always keyed as one
    return 0.0


def rank(state: SessionState, ask: Ask) -> list[tuple[float, int, Item]]:
    """Items that could answer the ask, best first (ties: the most recently said first)."""
    wanted = ask.subject
    kinds = ask.kinds
    items = all_items(state)
    # What else was said in the same turn tells what a value is about ("She loves chocolate
    # cake, so order one from Rosa's bakery": the bakery is the cake's).
    by_turn: dict[int, set[str]] = {}
    for item in items:
        if item.turn:
            by_turn.setdefault(item.turn, set()).update(content_stems(item.value) | content_stems(item.key))
    general_time = any(i.kind == KIND_TIME and not _DAY_WORDS.search(i.key) for i in items)
    newest_note = max(
        (i.turn for i in items if i.kind == KIND_NOTE and i.value != i.key and mentioned(wanted, content_stems(i.value))), default=0
    )
    scored: list[tuple[float, int, Item]] = []
    for order, item in enumerate(items):
        key_hits = mentioned(wanted, content_stems(item.key))
        value_hits = mentioned(wanted, content_stems(item.value)) if item.value != item.key else set()  # the task: once
        if item.value in ask.given:
            continue
        if ask.soft_kinds and not (key_hits or value_hits):
            continue  # "And the serial?": about the serial first, of the kind last asked only then
        if item.kind == KIND_NOTE:
            # A note's key is taken from its own words: a word in both is one mention.
            about = 2.0 * len(key_hits | value_hits)
        else:
            about = 2.0 * len(key_hits) + 1.5 * len(value_hits)
            if (key_hits or value_hits) and not kinds and item.turn >= newest_note:
                # A note about the subject said after the value may be what changed it
                # ("He moved rooms last week"): the value then does not win by being typed.
                about += _untyped_ask_fit(ask, item, len(_head_hits(wanted, content_stems(item.key))))
            if item.turn:
                about += 0.5 * len(mentioned(wanted, by_turn.get(item.turn, set())) - key_hits - value_hits)
        score = about + _label_bonus(ask, item)
        said = content_stems(item.value)
        if item.kind in (KIND_NAME, KIND_PLACE, KIND_ITEM) and said and said <= wanted:
            score -= 3.0  # the value only names what the question is about ("老周点的是什么？" is not 老周)
        elif item.kind == KIND_NAME and KIND_NAME not in kinds and _names_the_subject(item, wanted):
            score -= 3.0  # "my sister" stored for Ruth, 梁子涵 for 妹妹: who the question is about, not what it asks
        if kinds:
            if item.kind in kinds:
                score += 3.0 if item.kind == kinds[0] else 1.5
            elif item.kind == KIND_NOTE:
                score -= 1.0  # a note answers "when" only when nothing typed does
            elif not (ask.soft_kinds and (key_hits or value_hits)):
                score -= 3.0  # a follow-up naming a new subject may ask for another kind ("And the slabs?")
        if item.kind in (KIND_TIME, KIND_DATE) and kinds:
            score += _range_end_fit(ask.text, item.key)
        if item.kind == KIND_TIME and kinds:
            # A time said for a given day answers a question about that day; a question about
            # no day wants the time said for no day (3:15, not 1:30 on Wednesdays), if there is one.
            days = [d for d in _DAY_WORDS.findall(item.key) if d]
            if days and any(d.lower().rstrip("s") in ask.text.lower() for d in days):
                score += 2.0
            elif days and general_time:
                score -= 1.5
        if score > 0:
            scored.append((score, order, item))
    scored.sort(key=lambda x: (-x[0], -x[2].turn, -x[1]))
    return scored


def ranked(state: SessionState, question: str, kinds: tuple[str, ...] | None = None) -> list[tuple[float, int, Item]]:
    """Items that could answer the whole question, best first."""
    ask = _ask(question)
    if kinds is not None:
        ask = Ask(ask.text, kinds, ask.subject, ask.day_and_time)
    return rank(state, ask)


def _linked(a: Item, b: Item) -> bool:
    """Two values said of one thing: in one turn, under one key, or one names the other
    ("half past five" under the key "Monday")."""
    if a.turn and a.turn == b.turn or a.key == b.key:
        return True
    return a.value.lower() in b.key.lower() or b.value.lower() in a.key.lower()


def choose(state: SessionState, ask: Ask) -> list[Item]:
    """The items that answer one ask: one value, a day with its time, or two equal values."""
    scored = rank(state, ask)
    if not scored and ask.soft_kinds:
        # "And in the morning?" with nothing said of mornings: the most fitting value of the kind last asked.
        ask = Ask(ask.text, ask.kinds, ask.subject, ask.day_and_time, given=ask.given)
        scored = rank(state, ask)
    if not scored:
        return []
    kinds = ask.kinds
    top_score, _, top = scored[0]
    if kinds and top.kind not in kinds and not ask.soft_kinds:
        # The kind asked for first: "几点" wants a time even when a day matches better.
        first = next(((s, o, it) for s, o, it in scored if it.kind == kinds[0]), None)
        if first is not None:
            top_score, _, top = first
    if top.kind in (KIND_TIME, KIND_DATE) and (ask.day_and_time or (kinds and kinds[0] in (KIND_TIME, KIND_DATE))):
        # "When is it?" wants the day and the time of the same thing; "What day and time?" both.
        other = KIND_DATE if top.kind == KIND_TIME else KIND_TIME
        of_other = [it for _, _, it in scored if it.kind == other]
        partner = next((it for it in of_other if _linked(it, top)), None)
        if partner is None and ask.day_and_time and of_other:
            partner = of_other[0]
        if partner is not None:
            return [partner, top] if partner.kind == KIND_DATE else [top, partner]
        if _ASKS_PLURAL.search(ask.text):
            # "Which dates ...?": the days said together ("the 10th through the 14th").
            together = [(o, it) for s, o, it in scored if s == top_score and it.kind == top.kind and it.turn == top.turn][:3]
            return [it for _, it in sorted(together, key=lambda x: x[0])]  # in the order said
        return [top]
    # Two values said together ("活着 and 球状闪电") answer together; an equal value from
    # another turn is more likely one the newer replaced.
    ties = [it for s, _, it in scored[1:] if s == top_score and it.kind == top.kind and it.kind != KIND_NOTE and it.turn == top.turn]
    return [top] + ties[:1]


def answers_from_memory(state: SessionState, question: str) -> bool:
    """The user's own items speak to the question (it is about what they told us)."""
    wanted = question_keys(question)
    if not wanted:
        return False
    for _, _, item in ranked(state, question)[:3]:
        if mentioned(wanted, content_stems(item.key) | content_stems(item.value)):
            return True
    return False


def is_follow_up(question: str, state: SessionState) -> bool:
    """"And on the other days?", "平时呢？": asks again for what the last question asked."""
    return state.last_topic in FOLLOW_UP_KINDS and is_follow_up_text(question)
