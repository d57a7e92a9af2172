"""Replies composed by code from the current items, in English or Chinese.

A recall answer speaks from the item that answers it ("On Oak Street.", "Eight
people."), chosen by what the question asks for (a time, a count, a person, a place,
a number) and by its key; a replaced value is no longer an item, so it can never be
named. A confirmation says the new value once ("Okay, 7 pm then."), never the old one.
"""

from __future__ import annotations

import re

from sotto.agent.recall import Ask, RecallThread, choose, clause_about, question_asks
from sotto.memory.items import KIND_DATE, KIND_NAME, KIND_NOTE, KIND_NUMBER, KIND_TIME, Item
from sotto.memory.rules import RuleResult, strip_fillers
from sotto.memory.state import SessionState
from sotto.memory.statements import asked_kinds
from sotto.memory.text import second_person

_EN_RECALL_ALL = re.compile(
    r"\b(?:read (?:it |that |everything )?back|read me|my order|everything|all of it|so far|summar|recap|what did i (?:say|tell|ask|order)|what have i|list)\b",
    re.I,
)
_ZH_RECALL_ALL = re.compile(r"一遍|所有|总结|都有|哪些|都说了|全部|说了什么|点了什么")
SUMMARY_MAX_CHARS = 220


def _sentence(text: str, lang: str) -> str:
    text = text.strip().rstrip(".。!！,，")
    if not text:
        return ""
    if lang == "zh":
        return text + "。"
    return text[:1].upper() + text[1:] + "."


def memory_items(state: SessionState) -> list[str]:
    """Everything the user told us, oldest first, as spoken text."""
    p = state.user_profile
    items = [state.current_task] if state.current_task else []
    items += [i.value for i in state.facts + state.pending_steps + p.constraints + p.preferences]
    for name in p.names[:1]:
        items.append(f"my name is {name}" if name.isascii() else f"我叫{name}")
    return [i for i in items if i]


def _spoken_value(item: Item, lang: str) -> str:
    v = item.value.strip()
    if lang == "zh":
        return v
    low = v.lower()
    if item.kind == KIND_TIME and not re.match(r"(?:at|by|around|from|until) ", low):
        return "at " + v
    if item.kind == KIND_DATE and re.match(r"(?:the )?\d|(?:the )?(?:first|second|third|\w+th)\b|monday|tuesday|wednesday|thursday|friday|saturday|sunday", low):
        return "on " + v
    if item.kind == KIND_NOTE:
        return second_person(strip_fillers(v))
    return v


def asks_to_recall_all(question: str, lang: str) -> bool:
    """"Read it back", "一遍": the question asks for everything the user said."""
    return bool((_ZH_RECALL_ALL if lang == "zh" else _EN_RECALL_ALL).search(question)) and not asked_kinds(question)


def _answer(chosen: list[Item], ask: Ask, lang: str) -> list[str]:
    if not chosen:
        return []
    if all(i.kind == KIND_NOTE for i in chosen):
        said = second_person(strip_fillers(clause_about(chosen[0].value, ask.subject)))
        return ["你说过：" + said.rstrip("。") + "。"] if lang == "zh" else [f"You told me: {said.rstrip('.')}."]
    parts = [_spoken_value(i, lang) for i in chosen]
    if lang == "zh":
        return ["，".join(parts) + "。"]
    text = " ".join(parts) if len(chosen) == 2 and {chosen[0].kind, chosen[1].kind} == {KIND_TIME, KIND_DATE} else " and ".join(parts)
    return [_sentence(text, lang)]


def _summary(state: SessionState, lang: str) -> list[str]:
    """Everything stored, in two sentences: a short first one (its audio is ready
    sooner) and the rest, each bounded."""
    parts = [second_person(strip_fillers(i)).rstrip(".。") for i in memory_items(state)]
    sep = "；" if lang == "zh" else "; "
    first, rest = parts[:2], parts[2:]
    out: list[str] = []
    for chunk in (first, rest):
        text = ""
        for part in chunk:
            candidate = part if not text else text + sep + part
            if len(candidate) > SUMMARY_MAX_CHARS:
                break
            text = candidate
        if text:
            out.append(text)
    if not out:
        return []
    if lang == "zh":
        return [f"你说过：{out[0]}。"] + [f"还有：{t}。" for t in out[1:]]
    return [f"So far: {out[0]}."] + [f"Also: {t}." for t in out[1:]]


def compose_reply(
    state: SessionState, words: str, rules: RuleResult, *, max_sentences: int = 2, thread: RecallThread | None = None
) -> list[str]:
    """The reply sentences. `thread`: the session's last recall, read for "And the other
    one?" and updated with this turn's."""
    lang = rules.lang
    zh = lang == "zh"
    if rules.question:
        question = " ".join(q.raw or q.text for q in rules.questions) or words
        if asks_to_recall_all(question, lang):
            summary = _summary(state, lang)
            if summary:
                return summary[:max_sentences]
        # "Which shoulder is it, and who's my physio?" / "几点到？哪个医生？": each ask answered.
        answers: list[str] = []
        for ask in question_asks(question, state.last_topic, thread):
            chosen = choose(state, ask)
            for sentence in _answer(chosen, ask, lang):
                if sentence not in answers:
                    answers.append(sentence)
            if thread is not None and chosen:
                thread.ask, thread.answered = ask, chosen
        if answers:
            if len(answers) > max_sentences:
                joiner = "" if zh else " "
                answers = answers[: max_sentences - 1] + [joiner.join(answers[max_sentences - 1 :])]
            return answers
        return ["这个我还不知道，我是离线的。" if zh else "I don't have that noted, and I'm offline, so I can't look it up."]
    if rules.corrections:
        return [correction_sentence(rules.corrections[-1].new, lang)]
    patch = rules.patch
    if rules.closing and not rules.added and not rules.removed:
        return ["好的，有需要再叫我。" if zh else "Anytime. I'm here when you need me."]
    if patch.add_steps:
        todo = second_person(patch.add_steps[0])
        return [f"好的，我会提醒你{todo}。" if zh else f"Okay, I'll remind you to {todo.rstrip('.')}."]
    greeting: list[str] = []
    if patch.add_names:
        greeting = [f"你好，{patch.add_names[0]}。" if zh else f"Nice to meet you, {patch.add_names[0]}."]
    if rules.said:
        if greeting and max_sentences < 2:
            return greeting
        noted = second_person(rules.said[0])
        if zh:
            return greeting + [f"好的，记下了：{noted}。"]
        if noted.split(" ", 1)[0] in ("You", "Your", "Yours", "Yourself"):
            noted = noted[0].lower() + noted[1:]  # mid-sentence after "Got it:"
        return greeting + [f"Got it: {noted.rstrip('.')}."]
    if greeting:
        return greeting
    if rules.removed or patch.drop_items:
        what = patch.drop_items[0] if patch.drop_items else rules.removed[0].value
        return [f"好的，{what}不要了。" if zh else f"Okay, I've dropped {second_person(what)}."]
    return ["好的。" if zh else "Okay."]




def correction_sentence(new: str, lang: str) -> str:
    """The confirmation of a corrected value: the new value once, never the old one."""
    return f"好的，改成{new}了。" if lang == "zh" else f"Okay, {second_person(new)} then."


def confirm_question(asked: str, kind: str, lang: str) -> str:
    """A value asked back when recognition was unsure of it: a name spelled ("Was that
    Wang, W-A-N-G?"), a number or ID of three digits or more read digit by digit ("Was
    that 8 8 4 2 1?"), a time, date or count as said; in Chinese "是王芳吗？"."""
    if lang == "zh":
        return f"是{asked}吗？"
    if kind == KIND_NAME:
        letters = " ".join("-".join(c.upper() for c in word if c.isalnum()) for word in asked.split() if word[:1].isalpha())
        return f"Was that {asked}, {letters}?" if letters else f"Was that {asked}?"
    if kind == KIND_NUMBER and sum(c.isdigit() for c in asked) >= 3:
        return "Was that " + " ".join(c.upper() for c in asked if c.isalnum()) + "?"
    return f"Was that {asked}?"


def ask_again_sentence(lang: str) -> str:
    """After a bare "no" to a confirmation: the unsure value is gone; the user is asked for it."""
    return "抱歉，我听错了。那是什么？" if lang == "zh" else "Sorry, I misheard. What was it?"


def kept_sentence(value: str, lang: str) -> str:
    """After a "yes" to a confirmation."""
    return f"好的，{value}。" if lang == "zh" else f"Okay, {second_person(value)} it is."
