"""Routing a turn before anything is generated: who answers, and why.

    route = route_turn(words, rules, state, actions=..., reference=..., model_does=...)

Order (the first that applies answers):
1. board actions alone            -> ACTION     (the action's confirmation)
2. statements, corrections, reminders, greetings, closings -> CONFIRM (composed)
3. the host's own facts (the time, the date, the day) -> HOST_FACT (from the injected clock)
4. live data the host has no feed for (weather, news, ...) -> LIVE_DATA (said honestly)
5. questions about what the user told us -> MEMORY (composed from the current items)
6. a knowledge-file passage that answers it -> KNOWLEDGE (its best sentence)
7. the rest (open questions, small talk) -> MODEL when the model passed the open-answer
   probe for the language, else NO_ANSWER ("I don't know that one.")

Every route but MODEL is composed by code and spoken at once: it never waits on the
model, and no filler comes before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from sotto.agent.compose import asks_to_recall_all
from sotto.agent.recall import all_items, answers_from_memory, is_follow_up, is_follow_up_text, mentioned, question_keys, question_kinds, ranked
from sotto.agent.reference import Reference
from sotto.memory.rules import RuleResult
from sotto.memory.state import SessionState
from sotto.memory.statements import asked_kinds, content_stems
from sotto.memory.text import stem

ACTION = "action"
CONFIRM = "confirm"
HOST_FACT = "host_fact"
LIVE_DATA = "live_data"
MEMORY = "memory"
KNOWLEDGE = "knowledge"
MODEL = "model"
NO_ANSWER = "no_answer"
ROUTES = (ACTION, CONFIRM, HOST_FACT, LIVE_DATA, MEMORY, KNOWLEDGE, MODEL, NO_ANSWER)


@dataclass(frozen=True)
class Route:
    name: str
    reason: str
    # MODEL: the question touches the user's own items, so the memory-faithfulness checks
    # (no invented numbers or names) apply to the model's sentence.
    about_user_data: bool = False
    topic: str = ""  # LIVE_DATA: what the host has no feed for; HOST_FACT: "time" | "date"

    @property
    def composed(self) -> bool:
        """Answered by code, at once (no model, no filler)."""
        return self.name != MODEL

    def to_dict(self) -> dict[str, object]:
        return {"route": self.name, "reason": self.reason}


# The host's own facts: questions about the present moment, nothing else.
_EN_TIME_NOW = re.compile(r"\b(?:what time is it|what(?:'s| is) the time|do you (?:know|have) the time|tell me the time)\b", re.I)
_EN_DATE_NOW = re.compile(
    r"\b(?:what(?:'s| is) (?:the date|today's date|the date today)|what date is (?:it|today)|what day is (?:it|today)"
    r"|what day of the week is (?:it|today))\b",
    re.I,
)
_ZH_TIME_NOW = re.compile(r"(?:现在|目前)?几点(?:了|钟)|现在(?:是)?什么时间|现在几点")
_ZH_DATE_NOW = re.compile(r"今天(?:是)?(?:几号|几月几号|星期几|周几|礼拜几|什么日子|哪天|几月几日)|今天的日期")

# Data a host without a network cannot have: one topic name per feed.
_EN_LIVE = (
    ("weather", re.compile(r"\b(?:weather|forecast|rain(?:ing|y)?|snow(?:ing)?|sunny|temperature outside|umbrella|how (?:hot|cold|warm) is it)\b", re.I)),
    ("news", re.compile(r"\b(?:news|headlines?)\b", re.I)),
    ("traffic", re.compile(r"\b(?:traffic|road works?|congestion)\b", re.I)),
    ("scores", re.compile(r"\b(?:score|scores|who won|match result|game result)\b", re.I)),
    ("stock prices", re.compile(r"\b(?:stocks?|shares?|stock market|share price|exchange rate|bitcoin)\b", re.I)),
    ("flight status", re.compile(r"\b(?:flight status|is (?:my|the) flight (?:late|delayed|on time))\b", re.I)),
)
_ZH_LIVE = (
    ("天气", re.compile(r"天气|下雨|下雪|气温|预报|带伞")),
    ("新闻", re.compile(r"新闻|头条")),
    ("路况", re.compile(r"路况|堵车|交通")),
    ("比分", re.compile(r"比分|谁赢了|比赛结果")),
    ("股价", re.compile(r"股价|股票|股市|汇率")),
)
# The user asks about their own data: first person, or asking us to recall.
_EN_ABOUT_ME = re.compile(r"\b(?:my|mine|our|ours|again|did i|did we|you told|i told|i said|i asked)\b", re.I)
_ZH_ABOUT_ME = re.compile(r"我|咱们|来着|刚才")
# A capitalised word after the first: a name ("What's Carlos eating?").
_EN_PROPER_NAME = re.compile(r"(?<=[a-z,] )([A-Z][a-z]{2,})\b")
_EN_FIRST_PERSON = re.compile(r"\b(?:i|my|mine|we|our|ours)\b", re.I)
_ZH_FIRST_PERSON = re.compile(r"我|咱")
_EN_ANAPHORA = re.compile(r"\b(?:he|she|him|her|his|they|them|their|it|that|this|there|then)\b", re.I)
_ZH_ANAPHORA = re.compile(r"他|她|它|那|这|其")
_ZH_QUESTION_WORDS = re.compile(r"什么时候|几点|几号|什么|哪里|哪儿|哪|谁|多少|几|来着|怎么")
_KIND_NOUN = re.compile(r"address|addres|place|location|time|date|day|number|name|地址|地点|位置|时间|日期|号码|名字", re.I)
_RECALL = re.compile(r"\b(?:again|did i|i told|i said|you told|what was|what's my|what is my|what are my)\b|来着|我说的|我刚才", re.I)


def host_fact_topic(question: str, lang: str) -> str:
    """ "time" or "date" when the question asks for the present time or date, else ""."""
    time_now, date_now = (_ZH_TIME_NOW, _ZH_DATE_NOW) if lang == "zh" else (_EN_TIME_NOW, _EN_DATE_NOW)
    if time_now.search(question):
        return "time"
    if date_now.search(question):
        return "date"
    return ""


def live_topic(question: str, lang: str) -> str:
    for topic, pattern in _ZH_LIVE if lang == "zh" else _EN_LIVE:
        if pattern.search(question):
            return topic
    return ""


def host_fact_sentence(topic: str, now: datetime, lang: str) -> str:
    """The answer from the host clock, spoken."""
    if lang == "zh":
        if topic == "time":
            return f"现在是{now.hour}点{now.minute:02d}分。"
        weekday = "一二三四五六日"[now.weekday()]
        return f"今天是{now.month}月{now.day}日，星期{weekday}。"
    if topic == "time":
        hour = now.hour % 12 or 12
        return f"It's {hour}:{now.minute:02d} {'am' if now.hour < 12 else 'pm'}."
    return f"Today is {now.strftime('%A')}, {now.strftime('%B')} {now.day}."


def live_data_sentence(topic: str, lang: str) -> str:
    if lang == "zh":
        return f"我是离线的，没有{topic}数据。"
    return f"I have no {topic} data offline."


def no_answer_sentence(lang: str) -> str:
    return "这个我不知道。" if lang == "zh" else "I don't know that one."


def _about_user(question: str, state: SessionState, lang: str) -> bool:
    """The question refers to the user (my, I, 我) or to something they told us."""
    if (_ZH_ABOUT_ME if lang == "zh" else _EN_ABOUT_ME).search(question):
        return True
    wanted = content_stems(question)
    return any(wanted & (content_stems(i.key) | content_stems(i.value)) for _, _, i in ranked(state, question))


def _memory_answers(question: str, state: SessionState, lang: str) -> bool:
    """A memory question: about what the user told us, so only the items can answer it."""
    if asks_to_recall_all(question, lang) or is_follow_up(question, state):
        return True  # "Can you read back my order?", "And on the other days?"
    stored = set().union(*(content_stems(i.key) | content_stems(i.value) for i in all_items(state)))
    asked = question_keys(question)
    if is_follow_up_text(question) and not question_kinds(question) and stored and (not asked or mentioned(asked, stored)):
        return True  # "And mine?", "And the cut?": the conversation goes on about what was asked last
    if any(stem(n.lower()) in stored for n in _EN_PROPER_NAME.findall(question)):
        return True  # "What's Carlos eating?": a person or place the user told us about
    kinds = question_kinds(question)
    zh = lang == "zh"
    first_person = (_ZH_FIRST_PERSON if zh else _EN_FIRST_PERSON).search(question) is not None
    if kinds and first_person:
        return True  # "What time is my appointment?": only the user could have told us (else: not noted)
    scored = ranked(state, question)
    if not scored:
        return False
    # "登记的地址是哪里？": the word naming the kind asked (地址, address, time) names no subject.
    wanted = {w for w in question_keys(_ZH_QUESTION_WORDS.sub("，", question) if zh else question) if not _KIND_NOUN.fullmatch(w)}
    items = [item for _, _, item in scored]
    anaphoric = (_ZH_ANAPHORA if zh else _EN_ANAPHORA).search(question) is not None
    talked_about = set().union(*(content_stems(i.key) | content_stems(i.value) for i in items))
    if kinds and any(i.kind in kinds for i in items):
        # A value of the kind asked for, about something the user talked about, or about
        # someone or something already under discussion ("What time does he eat?", "几点开始？").
        if anaphoric or len(wanted) <= 1 or mentioned(wanted, talked_about):
            return True
    if (first_person or anaphoric or (_ZH_ABOUT_ME if zh else _EN_ABOUT_ME).search(question)) and answers_from_memory(state, question):
        return True  # "What do I need to bring again?", "What milk am I getting?", "她对什么过敏？"
    # "What's the gate code?" names what the user told us: every word it asks about is in an
    # item, or of three words or more, two in three ("Which tablet is Max using?").
    for item in items[:1]:
        said = mentioned(wanted, content_stems(item.key) | content_stems(item.value))
        if wanted and (said == wanted or (len(said) >= 2 and 3 * len(said) >= 2 * len(wanted))):
            return True
    return False


def route_turn(
    words: str,
    rules: RuleResult,
    state: SessionState,
    *,
    has_actions: bool = False,
    reference: Reference | None = None,
    model_does: Callable[[str], bool] = lambda lang: False,
) -> Route:
    """The one route of the turn. `model_does(lang)`: the model passed the open-answer
    probe for that language (and is allowed to answer)."""
    lang = rules.lang
    if has_actions and not words.strip():
        return Route(ACTION, "board action only")
    if not rules.question:
        if rules.corrections:
            return Route(CONFIRM, "a correction: confirm the new value")
        if rules.patch.add_steps:
            return Route(CONFIRM, "a reminder: confirm it")
        if rules.closing:
            return Route(CONFIRM, "a closing")
        if has_actions:
            return Route(ACTION, "board action")
        if rules.added or rules.said or rules.patch.add_names or rules.removed or rules.patch.drop_items:
            return Route(CONFIRM, "a statement: confirm what was noted")
        if not words.strip():
            return Route(CONFIRM, "nothing said")
        # Nothing to note and no question ("cool", "haha, nice"): small talk.
        return _to_model(lang, model_does, "small talk", about_user=False)
    question = " ".join(q.raw or q.text for q in rules.questions) or words
    fact = host_fact_topic(question, lang)
    if fact and _RECALL.search(question) and any(i.kind in question_kinds(question) for i in all_items(state)):
        fact = ""  # "What's the date again?": the date the user told us, not today's
    if fact:
        return Route(HOST_FACT, f"the {fact} now: the host clock knows it", topic=fact)
    topic = live_topic(question, lang)
    if topic and not any(topic.lower() in s.lower() for s in state.all_strings()):
        return Route(LIVE_DATA, f"needs live {topic} data: no network feed offline", topic=topic)
    if _memory_answers(question, state, lang):
        return Route(MEMORY, "a question the user's own items answer")
    if reference is not None and reference.passages and reference.answer(question):
        return Route(KNOWLEDGE, f"the knowledge file answers it ({reference.passages[0].title or 'a passage'})")
    about = _about_user(question, state, lang)
    if about and _RECALL.search(question):
        # "What time was my dentist again?" with nothing noted: only the user could have told us.
        return Route(MEMORY, "asks to recall the user's own data, nothing noted")
    return _to_model(lang, model_does, "an open question", about_user=about)


def _to_model(lang: str, model_does: Callable[[str], bool], what: str, *, about_user: bool) -> Route:
    if model_does(lang):
        return Route(MODEL, f"{what}: the model passed the open-answer probe ({lang})", about_user_data=about_user)
    return Route(NO_ANSWER, f"{what}: no model passed the open-answer probe ({lang})")
