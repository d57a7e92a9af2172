"""Replies composed by code from the state: the fallback when the model's reply is not
fit to speak, and the answer to "what did I say?" questions, in English or Chinese.

Everything said comes from the user's stored words, turned to address them ("my" ->
"your"), so names, times and numbers are repeated exactly.
"""

from __future__ import annotations

import re

from sotto.memory.rules import RuleResult, strip_fillers
from sotto.memory.state import SessionState
from sotto.memory.text import content_keys, entities, second_person

_EN_TIME_Q = re.compile(r"\b(?:what time|when|which day|what day|how late|how early)\b", re.I)
_ZH_TIME_Q = re.compile(r"几点|什么时候|哪天|几号|星期几|周几")
_EN_COUNT_Q = re.compile(r"\bhow (?:many|much)\b", re.I)
_ZH_COUNT_Q = re.compile(r"多少|几个|几位|几张|几人")
_EN_RECALL = re.compile(
    r"\b(?:again|back|repeat|order|list|everything|all|so far|summary|summarize|what did i|remind me|i|my|me|we|our)\b", re.I
)
_ZH_RECALL = re.compile(r"来着|一遍|所有|总结|都有|哪些|什么|我")
SUMMARY_MAX_CHARS = 220


def _sentence(text: str, lang: str) -> str:
    text = text.strip().rstrip(".。!！,，")
    if lang == "zh":
        return text + "。"
    return (text[:1].upper() + text[1:] + ".") if text else ""


def memory_items(state: SessionState) -> list[str]:
    """Everything the user told us, oldest first."""
    p = state.user_profile
    items = [state.current_task] if state.current_task else []
    items += state.facts + state.pending_steps + p.constraints + p.preferences
    for name in p.names[:1]:
        items.append(f"my name is {name}" if name.isascii() else f"我叫{name}")
    return [i for i in items if i]


def best_matches(state: SessionState, question: str) -> list[str]:
    """Stored items sharing the most content words with the question (ties kept, oldest first)."""
    wanted = content_keys(question)
    time_q = bool(_EN_TIME_Q.search(question) or _ZH_TIME_Q.search(question))
    count_q = bool(_EN_COUNT_Q.search(question) or _ZH_COUNT_Q.search(question))
    scored: list[tuple[float, int, str]] = []
    for order, item in enumerate(memory_items(state)):
        score = float(len(wanted & content_keys(item)))
        if time_q and (entities(item, "time") or entities(item, "date")):
            score += 0.5
        if count_q and entities(item, "number"):
            score += 0.5
        if score > 0:
            scored.append((score, order, item))
    if not scored:
        return []
    top = max(s for s, _, _ in scored)
    return [item for s, _, item in sorted(scored, key=lambda x: x[1]) if s == top][:2]


def answer_keys(state: SessionState, question: str) -> set[str]:
    """Words an answer to the question should contain (from the best-matching items)."""
    keys: set[str] = set()
    asked = content_keys(question)
    for item in best_matches(state, question):
        keys |= content_keys(item) - asked
    return keys


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
    if lang == "zh":
        return [f"你说过：{out[0]}。"] + [f"还有：{t}。" for t in out[1:]]
    return [f"So far: {out[0]}."] + [f"Also: {t}." for t in out[1:]]


def compose_reply(state: SessionState, words: str, rules: RuleResult, *, max_sentences: int = 2) -> list[str]:
    lang = rules.lang
    zh = lang == "zh"
    if rules.question:
        matches = best_matches(state, words)
        recall = bool(_EN_RECALL.search(words) or _ZH_RECALL.search(words))
        if matches:
            said = [second_person(strip_fillers(m)) for m in matches[:max_sentences]]
            if zh:
                return [f"你说过：{said[0]}。"] + [_sentence(s, lang) for s in said[1:]]
            return [f"You told me: {said[0].rstrip('.')}."] + [_sentence(s, lang) for s in said[1:]]
        if recall and memory_items(state):
            return _summary(state, lang)[:max_sentences]
        return ["这个我还不知道，我是离线的。" if zh else "I'm offline, so I can't check that, sorry."]
    if rules.corrections:
        c = rules.corrections[0]
        return [f"好的，改成{c.new}了。" if zh else f"Okay, {c.new} instead of {c.old}."]
    patch = rules.patch
    if rules.closing and patch.is_empty():
        return ["好的，有需要再叫我。" if zh else "Anytime. I'm here when you need me."]
    if patch.add_steps:
        todo = second_person(patch.add_steps[0])
        return [f"好的，我会提醒你{todo}。" if zh else f"Okay, I'll remind you to {todo.rstrip('.')}."]
    if patch.add_names and not (patch.add_facts or patch.current_task or patch.add_constraints):
        return [f"你好，{patch.add_names[0]}。" if zh else f"Nice to meet you, {patch.add_names[0]}."]
    new_items = [patch.current_task] if patch.current_task else []
    new_items += patch.add_facts + patch.add_constraints + patch.add_preferences
    if new_items:
        noted = second_person(new_items[0])
        greeting = []
        if patch.add_names and max_sentences > 1:
            greeting = [f"你好，{patch.add_names[0]}。" if zh else f"Nice to meet you, {patch.add_names[0]}."]
        if zh:
            return greeting + [f"好的，记下了：{noted}。"]
        if noted.split(" ", 1)[0] in ("You", "Your", "Yours", "Yourself"):
            noted = noted[0].lower() + noted[1:]  # mid-sentence after "Got it:"
        return greeting + [f"Got it: {noted.rstrip('.')}."]
    if patch.drop_items:
        return [f"好的，{patch.drop_items[0]}不要了。" if zh else f"Okay, I've dropped {second_person(patch.drop_items[0])}."]
    return ["好的。" if zh else "Okay."]
