"""Deterministic help for a tiny model: what the user's words say, kept verbatim.

The rule extractor turns one final transcript into a StatePatch without any model:
statements become facts (the user's own words, fillers trimmed), reminders become
pending steps, "my name is" becomes a name, and corrections ("not X, Y", "change X to
Y", "Y instead of X", "sorry/actually, make it Y", 不是X是Y, 改成, 换成) become
replacements of the old value everywhere. Values are never paraphrased, so names,
times, places and numbers stay exactly as the user said them. The model's patch is
merged on top, after validation (see validate.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sotto.memory.patch import Replacement, StatePatch
from sotto.memory.state import SessionState
from sotto.memory.text import EN_STOPWORDS, ENTITY_KINDS, ZH_FUNCTION_CHARS, detect_lang, entities, entity_kind
from sotto.text.sentences import split_sentences

MAX_WORDS_CHARS = 600

_EN_FILLERS = re.compile(
    r"^(?:hi|hello|hey|ok|okay|so|also|and|oh|well|um|uh|er|by the way|please|sorry|actually|wait|right|"
    r"alright|all right|great|thanks|thank you|yes|yeah|no|sure|then|plus|i said it wrong|i meant|my mistake|"
    r"scratch that|let me correct that|one more thing|oh and|and also)\b[\s,;:!-]*",
    re.IGNORECASE,
)
_ZH_FILLERS = re.compile(
    r"^(?:嗯|呃|那个|对了|还有|顺便|另外|好的|好吧|好|哦|啊|然后|不对|对|算了|等一下|等等|我刚才说错了|刚才说错了|我说错了|说错了|抱歉|不好意思|其实|再|也)[，,、\s]*"
)
_EN_DETERMINERS = re.compile(r"^(?:the|a|an|my|our|your|that|this|it's|it is|its|make it|to be|is|it)\s+", re.IGNORECASE)
_ZH_DETERMINERS = re.compile(r"^(?:是|那个|这个|把|要|改成|换成|改为|改到)")

_EN_QUESTION_START = re.compile(
    r"^(?:what|when|where|who|whom|whose|which|why|how|is|are|was|were|do|does|did|can|could|will|would|should|shall|may|am)\b",
    re.IGNORECASE,
)
_EN_REQUEST_QUESTION = re.compile(r"^(?:can|could|would|will) you (?!read|repeat|tell|remind me what|say)", re.IGNORECASE)
_EN_RECALL = re.compile(r"\b(?:again|back|repeat|did i|was it|what was|remind me what)\b", re.IGNORECASE)
_ZH_QUESTION = re.compile(r"(?:吗|什么|几|哪|多少|谁|怎么|来着|是不是|呢)[？?。]?$|[？?]$|什么|几点|多少|哪里|哪儿")

# Corrections. Each yields (old, new) spans of the sentence; `new` is refined later.
_NO_PUNCT = r"[^,.;!?，。；！？]"
_EN_CORRECTIONS = [
    re.compile(
        rf"\b(?:change|switch|update|move|push|reschedule|bump|shift)\b{_NO_PUNCT}*?\bfrom\s+(?P<old>{_NO_PUNCT}+?)\s+(?:to|until)\s+(?P<new>{_NO_PUNCT}+)",
        re.I,
    ),
    re.compile(rf"\b(?:change|switch|update|move)\s+(?:it\s+from\s+|the\s+|my\s+)?(?P<old>{_NO_PUNCT}+?)\s+(?:to|into)\s+(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"\breplace\s+(?:the\s+|my\s+)?(?P<old>{_NO_PUNCT}+?)\s+with\s+(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"\binstead of\s+(?P<old>{_NO_PUNCT}+?)\s*,\s*(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?P<new>{_NO_PUNCT}+?)\s+instead of\s+(?P<old>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?:^|,\s*)not\s+(?P<old>[^,.;!?—–]+?)\s*(?:[,—–]\s*(?:but\s+)?|\s+-\s+|\s+but\s+)(?:it'?s\s+)?(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?P<new>[^,.;!?—–]+?)\s*(?:[,—–]|\s-)\s*(?:and\s+)?not\s+(?P<old>{_NO_PUNCT}+?)\s*[.!]?$", re.I),
]
_ZH_CORRECTIONS = [
    re.compile(rf"不是(?P<old>{_NO_PUNCT}+?)[，,]?\s*(?:而)?是(?P<new>{_NO_PUNCT}+)"),
    re.compile(rf"(?P<new>{_NO_PUNCT}+?)[，,]\s*(?:而)?不是(?P<old>{_NO_PUNCT}+?)[。！]?$"),
    re.compile(rf"把(?P<old>{_NO_PUNCT}+?)(?:改成|换成|改为|改到|换为)(?P<new>{_NO_PUNCT}+)"),
]
# A correction cue without the old value: the old one is the latest of the same kind.
_EN_RETARGET = re.compile(
    r"\b(?:(?:make|change|move|switch|push|reschedule|set|bump)\s+(?:it|that|this)(?:\s+(?:back|up|forward))?(?:\s+(?:to|for|until))?|i meant|let's say|let's do)\s+(?P<new>[^,.;!?]+)",
    re.I,
)
_EN_RETARGET_SUFFIX = re.compile(r"(?P<new>[^,.;!?]+?)\s+instead\s*[.!]?$", re.I)
_ZH_RETARGET = re.compile(rf"(?:改成|换成|改为|改到|推迟到|提前到)(?P<new>{_NO_PUNCT}+)")

_EN_NAME = re.compile(r"\b(?i:my name is|call me|this is)\s+(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})")
_EN_IM_NAME = re.compile(r"\bI'?m\s+(?P<name>[A-Z][a-z'-]+(?:\s+[A-Z][a-z'-]+)?)\b(?!\s+(?:going|planning|looking))")
_ZH_NAME = re.compile(r"我(?:叫|的名字是|名字叫)(?P<name>[\u4e00-\u9fff]{1,4})")
_EN_REMINDER = re.compile(r"\b(?:remind me to|don't forget to|do not forget to|remember to|i need to remember to)\s+(?P<step>.+)$", re.I)
_ZH_REMINDER = re.compile(r"(?:提醒我|别忘了|不要忘了|记得)(?P<step>.+)$")
# A sentence that only closes the conversation or thanks the agent carries nothing to remember.
_EN_CLOSING = re.compile(
    r"^(?:(?:that(?:'s| is| will be)|this is|it's) (?:all|it|everything)(?: for (?:now|today))?|"
    r"(?:no,? )?nothing else|(?:good)?bye|see you(?: later| soon)?|talk (?:to you )?later|good ?night|"
    r"(?:thanks|thank you)(?: (?:so much|a lot|very much))?|you're welcome|cheers)$",
    re.I,
)
_NEUTRAL = re.compile(r"^(?:ok(?:ay)?|alright|all right|great|perfect|good|got it|fine|no|nope|yes|yeah|好的?|行|嗯)$", re.I)
_ZH_CLOSING = re.compile(r"^(?:就这样|就这些|没(?:事|别的)了?|没有了|谢谢(?:你|您)?|多谢|再见|拜拜|好的?|晚安)(?:了|吧|啦)?$")

_EN_CANCEL = re.compile(
    r"^(?:never mind|forget about|forget|cancel|drop|skip|scratch|remove|no more|(?:i|we) (?:don't|do not) (?:need|want) (?:the|my|a|an|any)?)\s*(?:the\s+|my\s+|about\s+)?(?P<what>[^,.;!?]+?)(?:\s+(?:anymore|any more|after all))?$",
    re.I,
)
_ZH_CANCEL = re.compile(rf"^(?:取消|不要|算了)(?P<what>{_NO_PUNCT}+?)(?:了)?[。！]?$")
_EN_PREFERENCE = re.compile(r"\bI (?:really )?(?:like|love|prefer|enjoy|hate|dislike)\b", re.I)
_ZH_PREFERENCE = re.compile(r"我(?:很|最|比较)?(?:喜欢|爱|偏好|讨厌|不喜欢)")
_EN_CONSTRAINT = re.compile(
    r"\b(?:keep it|must|has to|have to be|no more than|at most|at least|without|never|only|allergic|vegetarian|vegan|gluten|halal|kosher|budget)\b",
    re.I,
)
_ZH_CONSTRAINT = re.compile(r"(?:保持|必须|一定要|不能|不要|过敏|素食|吃素|最多|至少|只要|预算)")


@dataclass
class RuleResult:
    patch: StatePatch
    lang: str
    question: bool = False
    # Old values this turn corrected: the model may not write them back.
    retired: list[str] = field(default_factory=list)
    corrections: list[Replacement] = field(default_factory=list)
    closing: bool = False  # the words only thank the agent or close the conversation


def strip_fillers(text: str) -> str:
    text = text.strip().strip(",，、")
    for _ in range(6):
        before = text
        text = _EN_FILLERS.sub("", text).strip()
        text = _ZH_FILLERS.sub("", text).strip()
        if text == before:
            break
    return text.strip(" ,，、")


def _core(value: str) -> str:
    value = strip_fillers(value.strip(" ,，。.!！"))
    for _ in range(3):
        value = _EN_DETERMINERS.sub("", value)
        value = _ZH_DETERMINERS.sub("", value)
    return value.strip(" ,，。.!！")


def _found_in(state: SessionState, value: str) -> bool:
    if not value or value.lower() in EN_STOPWORDS or value in ZH_FUNCTION_CHARS:
        return False  # "move it to ...": "it" is not a value to replace
    text = "\n".join(state.all_strings())
    if re.fullmatch(r"[\w' .:-]+", value, flags=re.ASCII):
        return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None
    return value.lower() in text.lower()


def _refine(old: str, new: str) -> tuple[str, str]:
    """Trim both sides to what actually changed, aligned by entity kind."""
    # "会议室换成五楼" -> "五楼": the value follows the verb of change.
    new = re.split(r"改成|换成|改为|改到|换为|变成|换到", new)[-1]
    old_core, new_core = _core(old), _core(new)
    kind = entity_kind(old_core)
    if kind:
        found = entities(new, kind)
        if found:
            return old_core, _core(found[0]) if kind != "date" else found[0].strip()
    # "change the latte to a flat white, same size" -> keep the first phrase only.
    return old_core, new_core


def _latest_entity(state: SessionState, kind: str, exclude: str) -> str | None:
    times = {t.lower() for s in state.all_strings() for t in entities(s, "time")}
    p = state.user_profile
    for text in reversed([*p.constraints, *p.preferences, state.current_task, *state.facts, *state.pending_steps]):
        for ent in reversed(entities(text, kind)):
            if ent.lower() == exclude.lower():
                continue
            if kind == "number" and ent.lower() in times:
                continue
            return ent
    return None


_ZH_REQUEST = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|帮我|麻烦你?|给我)")
_ZH_WH = re.compile(r"什么|几|哪|多少|谁|怎么|来着")


def is_question(sentence: str, lang: str) -> bool:
    s = sentence.strip()
    if lang == "zh":
        if _ZH_REQUEST.match(strip_fillers(s)) and not _ZH_WH.search(s):
            return False  # "能帮我订两张票吗？" asks for something: its words are kept
        return _ZH_QUESTION.search(s) is not None
    if s.endswith("?"):
        return not _EN_REQUEST_QUESTION.match(strip_fillers(s)) or _EN_RECALL.search(s) is not None
    return _EN_QUESTION_START.match(strip_fillers(s)) is not None and _EN_REQUEST_QUESTION.match(strip_fillers(s)) is None


def _has_cue(clause: str) -> bool:
    return any(
        p.search(clause)
        for p in (_ZH_REMINDER, _ZH_PREFERENCE, _ZH_CONSTRAINT, _EN_REMINDER, _EN_PREFERENCE, _EN_CONSTRAINT)
    )


def _clauses(sentence: str, lang: str) -> list[str]:
    """Clauses that go to different places; plain clauses of a sentence stay together."""
    if lang == "zh":
        parts = [p for p in re.split(r"[，；,;]", sentence) if p.strip()]
        joiner = "，"
    else:
        parts = [p for p in re.split(r"\s*(?:;|,\s+and\s+(?:also\s+)?|\band also\b|,)\s*", sentence) if p and p.strip()]
        joiner = ", "
    out: list[str] = []
    plain: list[str] = []
    for part in parts:
        if _has_cue(part):
            out.append(part)
        else:
            plain.append(part)
    return ([joiner.join(plain)] if plain else []) + out


def _find_corrections(sentence: str, state: SessionState, lang: str) -> list[tuple[str, str, bool]]:
    """(old, new, old_is_in_state) for each correction in the sentence."""
    out: list[tuple[str, str, bool]] = []
    patterns = _ZH_CORRECTIONS if lang == "zh" else _EN_CORRECTIONS
    body = strip_fillers(sentence)
    for pat in patterns:
        m = pat.search(body)
        if not m:
            continue
        new_span = m.group("new")
        if lang == "en":
            # "Sorry, I said it wrong, it's the day after tomorrow" -> the last comma piece.
            new_span = re.split(r",\s*", new_span)[-1]
        old, new = _refine(m.group("old"), new_span)
        if old and new and old.lower() != new.lower():
            out.append((old, new, _found_in(state, old)))
        break
    if not any(found for _, _, found in out):
        retarget = (_ZH_RETARGET if lang == "zh" else _EN_RETARGET).search(body)
        if retarget is None and lang == "en":
            retarget = _EN_RETARGET_SUFFIX.search(body)
        if retarget:
            target = retarget.group("new")
            for kind in ENTITY_KINDS:
                values = entities(target, kind)
                if not values:
                    continue
                old_value = _latest_entity(state, kind, values[0])
                if old_value:
                    out = [(old_value, values[0], True)]
                break
    return out


def _remove_spans(sentence: str, spans: list[str]) -> str:
    out = sentence
    for span in spans:
        out = re.sub(rf"(?:,\s*|，\s*)?(?:and\s+)?(?:not|不是)\s*{re.escape(span)}", "", out, flags=re.IGNORECASE)
    return out


_SENTENCE_START_WORDS = {"tomorrow", "today", "tonight", "at", "on", "in", "next", "this", "every", "before", "after", "by"}


def _reminder_step(clause: str, reminder: "re.Match[str]", lang: str) -> str:
    """What to be reminded of, with the time or place said before the cue kept verbatim:
    "Tomorrow at 6 pm remind me to water the basil" -> "water the basil tomorrow at 6 pm"."""
    step = reminder.group("step").strip(" ,，.。!！")
    before = strip_fillers(clause[: reminder.start()]).strip(" ,，.。!！")
    before = re.sub(r"(?:请|麻烦你?|你)$", "", before) if lang == "zh" else re.sub(r"\s*(?:please|and)$", "", before, flags=re.I)
    if len(before) < 2:
        return step
    if lang == "zh":
        return before + step
    first, _, rest = before.partition(" ")
    if first.lower() in _SENTENCE_START_WORDS:  # only sentence-start capitals; "Friday" stays "Friday"
        before = " ".join(filter(None, (first.lower(), rest)))
    return f"{step} {before}"


def _is_closing(sentence: str, lang: str) -> bool:
    """Every clause only thanks the agent or ends the conversation ("Thanks, that's all for now.")."""
    pattern = _ZH_CLOSING if lang == "zh" else _EN_CLOSING
    clauses = [c.strip(" .。!！") for c in re.split(r"[,，;；]", sentence)]
    clauses = [re.sub(r"^(?:ok(?:ay)?|alright|well|so|and)\s+", "", c, flags=re.I) for c in clauses if c]
    closing = [c for c in clauses if not _NEUTRAL.match(c)]  # "OK, thanks." closes as "Thanks." does
    return bool(closing) and all(pattern.match(c) for c in closing)


def extract(words: str, state: SessionState, *, lang: str | None = None) -> RuleResult:
    """The rule-based patch for one final transcript."""
    words = " ".join(words.split())[:MAX_WORDS_CHARS]
    lang = lang or detect_lang(words)
    patch = StatePatch()
    result = RuleResult(patch=patch, lang=lang)
    sentences = split_sentences(words) or ([words] if words else [])
    task_set = bool(state.current_task)
    for sentence in sentences:
        if _is_closing(sentence, lang):
            result.closing = True
            continue
        if is_question(sentence, lang):
            result.question = True
            continue
        corrections = _find_corrections(sentence, state, lang)
        applied = [(o, n) for o, n, found in corrections if found]
        for old, new in applied:
            patch.replace.append(Replacement(old=old, new=new))
            result.corrections.append(Replacement(old=old, new=new))
            result.retired.append(old)
        if applied:
            continue  # the replacement carries the new value; the sentence itself is not stored
        unapplied_old = [o for o, _, _ in corrections]
        result.retired += unapplied_old
        body = strip_fillers(_remove_spans(sentence, unapplied_old))
        # "Could you also book a taxi?" keeps "book a taxi"; "能帮我订票吗？" keeps "订票".
        body = re.sub(r"^(?:(?:can|could|would|will) you\s+(?:please\s+)?(?:also\s+)?|please\s+)", "", body, flags=re.I)
        if lang == "zh" and _ZH_REQUEST.match(body):
            body = re.sub(r"吗?[？?]?$", "", _ZH_REQUEST.sub("", _ZH_REQUEST.sub("", body)))
        body = body.strip(" ,，.。!！?？")
        if len(body) < 2:
            continue
        cancel = (_ZH_CANCEL if lang == "zh" else _EN_CANCEL).match(body)
        if cancel:
            patch.drop_items.append(_core(cancel.group("what")))
            continue
        name = (_ZH_NAME if lang == "zh" else _EN_NAME).search(body) or (
            _EN_IM_NAME.search(body) if lang == "en" else None
        )
        if name:
            patch.add_names.append(name.group("name").strip())
        for clause in _clauses(body, lang):
            clause = strip_fillers(clause).strip(" ,，.。!！")
            if len(clause) < 2:
                continue
            if _NEUTRAL.match(clause) or (_ZH_CLOSING if lang == "zh" else _EN_CLOSING).match(clause):
                continue  # "Thanks, ..." / "谢谢，..." : the rest of the sentence carries the content
            reminder = (_ZH_REMINDER if lang == "zh" else _EN_REMINDER).search(clause)
            if reminder:
                patch.add_steps.append(_reminder_step(clause, reminder, lang))
                continue
            if (_ZH_PREFERENCE if lang == "zh" else _EN_PREFERENCE).search(clause):
                patch.add_preferences.append(clause)
            elif (_ZH_CONSTRAINT if lang == "zh" else _EN_CONSTRAINT).search(clause):
                patch.add_constraints.append(clause)
            elif name and len(clause) <= len(name.group(0)) + 3:
                continue  # the clause was only the name
            elif not task_set:
                patch.current_task = clause  # the first plan is the task (not repeated in facts)
                task_set = True
            else:
                patch.add_facts.append(clause)
    return result
