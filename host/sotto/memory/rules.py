"""What the user's words change in the working memory, decided by code.

Each final transcript is read sentence by sentence (`statements.py`): its typed values
(times, dates, counts, IDs, names, places) go through the update step (`update.py`),
which compares each with the stored items that could be about the same thing and
decides ADD / UPDATE / DELETE / NOOP; what the sentence says besides its values is
kept as a note item, without discourse words or talk about the talk. Reminders become
pending steps, "my name is" a name, a cancellation removes the items it names. The
explicit forms of correcting a note ("change the latte to a flat white", 把X改成Y)
replace the old words in place. Values are never paraphrased.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from sotto.engines.normalize import spelled_words, spoken_codes, spoken_digit_groups
from sotto.memory import language as L
from sotto.memory import rejected as _rejected
from sotto.memory.items import KIND_NAME, KIND_NOTE, KIND_QUANTITY, VALUE_KINDS, Item
from sotto.memory.patch import Replacement, StatePatch, replace_everywhere
from sotto.memory.state import SessionState, bounded
from sotto.memory.read_en import EN_NEGATED_AFTER, _is_name_word, is_colour_word
from sotto.memory.read_zh import _ZH_CLASSIFIERS, _ZH_NUM, ZH_GRADABLE, ZH_NEGATED_AFTER
from sotto.memory.values import clause_at, clause_starts
from sotto.memory.statements import Statement, Value, asked_kinds, choice_class, content_stems, is_role_word, read_sentence, zh_words
from sotto.memory.text import EN_NUMBER_WORDS, EN_STOPWORDS, ZH_FUNCTION_CHARS, contains_ci, detect_lang, entities, entity_kind, norm_key
from sotto.memory.update import ADD, DELETE, NOOP, SAID_AS_UNCHANGED, STEADY_CLAUSE, UPDATE, Decision, decide_values, item_unit_words, keep_unit, later_kinds_of, names_value, replace_in_items, said_unchanged, same_sort, same_value, weekday_of
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
_EN_DETERMINER_WORDS = r"the|a|an|some|my|our|your|his|her|their"
_EN_DETERMINERS = re.compile(rf"^(?:{_EN_DETERMINER_WORDS}|that|this|it's|it is|its|make it|to be|is|it)\s+", re.IGNORECASE)
_ZH_DETERMINERS = re.compile(r"^(?:是|那个|这个|把|要|改成|换成|改为|改到)")


# Corrections. Each yields (old, new) spans of the sentence; `new` is refined later.
_NO_PUNCT = r"[^,.;!?，。；！？]"
_EN_CORRECTIONS = [
    re.compile(
        rf"\b(?:change|switch|update|move|push|reschedule|bump|shift)\b{_NO_PUNCT}*?\bfrom\s+(?P<old>{_NO_PUNCT}+?)\s+(?:to|until)\s+(?P<new>{_NO_PUNCT}+)",
        re.I,
    ),
    re.compile(rf"\b(?:change|switch|update|move)\s+(?:it\s+from\s+|the\s+|my\s+)?(?P<old>{_NO_PUNCT}+?)\s+(?:to|into)\s+(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"\breplace\s+(?:the\s+|my\s+)?(?P<old>{_NO_PUNCT}+?)\s+with\s+(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"\b(?:swap|exchange|trade)\s+(?:out\s+)?(?:the\s+|my\s+|our\s+)?(?P<old>{_NO_PUNCT}+?)\s+(?:for|with)\s+(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"\binstead of\s+(?P<old>{_NO_PUNCT}+?)\s*,\s*(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?P<new>{_NO_PUNCT}+?)\s+(?:instead of|rather than|in place of)\s+(?P<old>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?P<new>\b\w[\w-]*(?: \w[\w-]*)?)\s+(?:would|will|might|is|looks?|sounds?|seems?|works?)?\s*(?:be |look |sound |work )?(?:better|nicer|preferable) than\s+(?P<old>{_NO_PUNCT}+?)(?:\s+for\b{_NO_PUNCT}*)?$", re.I),
    re.compile(r"\bmore\s+(?P<new>[a-z][\w-]*)\s+than\s+(?P<old>[a-z][\w-]*)\b", re.I),  # "it's more navy than black"
    re.compile(r"\b(?P<new>[a-z][\w-]*)\s+over\s+(?P<old>[a-z][\w-]*)\b(?!\s+(?:the|a|an|to|there|here)\b)", re.I),  # "I'd go dove over charcoal"
    re.compile(rf"(?:^|,\s*)not\s+(?P<old>[^,.;!?—–]+?)\s*(?:[,—–]\s*(?:but\s+)?|\s+-\s+|\s+but\s+)(?:it'?s\s+)?(?P<new>{_NO_PUNCT}+)", re.I),
    re.compile(rf"(?P<new>[^,.;!?—–]+?)\s*(?:[,—–]|\s-)\s*(?:and\s+)?not\s+(?P<old>{_NO_PUNCT}+?)\s*[.!]?$", re.I),
]
_ZH_CORRECTIONS = [
    re.compile(rf"不是(?P<old>{_NO_PUNCT}+?)[，,]?\s*(?:而)?是(?P<new>{_NO_PUNCT}+)"),
    re.compile(rf"(?P<new>{_NO_PUNCT}+?)[，,]\s*(?:而)?不是(?P<old>{_NO_PUNCT}+?)[。！]?$"),
    re.compile(rf"把(?P<old>{_NO_PUNCT}+?)(?:改成|换成|改为|改到|换为)(?P<new>{_NO_PUNCT}+)"),
]

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
    r"^(?:never mind|forget about|forget|cancel|drop|skip|scratch|scrap|ditch|remove|no more|(?:i|we) (?:don't|do not) (?:need|want) (?:the|my|a|an|any)?)\s*(?:the\s+|my\s+|about\s+)?(?P<what>[^,.;!?]+?)(?:\s+(?:anymore|any more|after all|for now|for today|this time))?(?=[,.;!?]|$)",
    re.I,
)
# A retraction said inside a sentence: "Leave the mattress off", 滑板车就不拿了, 不用软饭了.
_EN_RETRACT = re.compile(
    r"\bleave (?:the |my |our )?(?P<what>[a-z][\w -]{1,30}?) (?:off|out|behind|at home)\b"  # "we'll leave the tent at home"
    r"|\bleave (?:off|out) (?:the |my |our )?(?P<what4>[a-z][\w -]{1,30}?)(?=[,.;!?]|$)"  # the particle before the object: "Leave off the chairs"
    r"|\b(?:i|we|she|he|they) (?:don't|do not|won't|no longer) (?:need|want) (?:the |my |a |an |any )?(?P<what2>[a-z][\w -]{1,30}?)(?: (?:any ?more|after all))?(?=[,.;!?]|$)"
    r"|\b(?:take|cross|strike|scratch) (?:the |my |our )?(?P<what3>[a-z][\w -]{0,30}?) (?:off|out)\b(?: (?:of )?(?:the|my|our) (?:list|booking|order|rota|form))?",
    re.I,
)
_ZH_RETRACT = re.compile(r"(?P<what>[\u4e00-\u9fff]{2,6}?)(?:就|也)?(?:先)?不(?:[\u4e00-\u9fff]{1,2}?)了(?=[，。！,.!]|$)|不用(?P<what2>[\u4e00-\u9fff]{2,6}?)了|(?P<what3>[\u4e00-\u9fff]{2,6}?)(?:就|也)?算了")  # 剪刀不磨了, 洗衣机就不回收了, 羽毛球鞋算了
_ZH_CANCEL = re.compile(rf"^(?:算了[，,]?\s*)?(?:取消|不要|算了|别)(?P<what>{_NO_PUNCT}+?)(?:了)?[。！]?$")
_EN_PREFERENCE = re.compile(r"\bI (?:really )?(?:like|love|prefer|enjoy|hate|dislike)\b", re.I)
_ZH_PREFERENCE = re.compile(r"我(?:很|最|比较)?(?:喜欢|爱|偏好|讨厌|不喜欢)")
_EN_CONSTRAINT = re.compile(
    r"\b(?:keep it|must|has to|have to be|no more than|at most|at least|without|never|only|allergic|vegetarian|vegan|gluten|halal|kosher|budget)\b",
    re.I,
)
_ZH_CONSTRAINT = re.compile(r"(?:保持|必须|一定要|不能|不要|过敏|素食|吃素|最多|至少|只要|预算)")


@dataclass
class RuleResult:
    patch: StatePatch  # names and steps added (read by the agent and the reply)
    lang: str
    question: bool = False
    # Old values this turn corrected: the model may not write them back.
    retired: list[str] = field(default_factory=list)
    corrections: list[Replacement] = field(default_factory=list)
    closing: bool = False  # the words only thank the agent or close the conversation
    decisions: list[Decision] = field(default_factory=list)
    added: list[Item] = field(default_factory=list)  # items this turn added (values and notes)
    removed: list[Item] = field(default_factory=list)  # items the user cancelled
    questions: list[Statement] = field(default_factory=list)  # the sentences that asked something
    said: list[str] = field(default_factory=list)  # what was noted, without discourse words (for the confirmation)
    state: SessionState | None = None  # the state after the update


def _names_word(word: str, text: str) -> bool:
    """`word` said in `text` as a word of its own (a plural too); Chinese has no spaces between words."""
    if re.search(r"[\u3400-\u9fff]", word):
        return word in text
    return re.search(rf"(?<!\w){re.escape(word)}s?(?!\w)", text) is not None


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


_EN_CHOOSING = re.compile(
    r"^(?:(?:i|we|you|they|he|she)(?:'ll|'d| will| would| should)? (?:really )?(?:like|need|want|take|have|get|use|go with|go for|do|prefer|book|pick|choose|bring|try)"
    r"(?: to (?:take|have|get|use|bring|try|book))?|let's (?:take|have|get|use|do|go with|go for|book|try))\s+",
    re.I,
)


def _refine(old: str, new: str) -> tuple[str, str]:
    """Trim both sides to what actually changed, aligned by entity kind."""
    # "会议室换成五楼" -> "五楼": the value follows the verb of change.
    new = re.split(r"改成|换成|改为|改到|换为|变成|换到", new)[-1]
    new = _EN_CHOOSING.sub("", new.strip())  # "We'll take the camper van rather than ...": the thing chosen
    old_core, new_core = _core(old), _core(new)
    kind = entity_kind(old_core)
    if kind:
        found = entities(new, kind)
        if found:
            return old_core, _core(found[0]) if kind != "date" else found[0].strip()
    # "change the latte to a flat white, same size" -> keep the first phrase only.
    return old_core, new_core


_ZH_REQUEST = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|帮我|麻烦你?|给我)")
_SENTENCE_START_WORDS = {"tomorrow", "today", "tonight", "at", "on", "in", "next", "this", "every", "before", "after", "by"}


_EN_PHRASE_TAIL = re.compile(rf"\s+(?:on|for|in|at|with|to|from)\s+(?:{_EN_DETERMINER_WORDS})\s+[^,;]*$", re.I)
_EN_UP_TO_LAST_DETERMINER = re.compile(rf"^.*\b(?:{_EN_DETERMINER_WORDS})\s+", re.I)


def _en_chosen_phrase(span: str) -> str:
    """The thing chosen in a longer span ("Fiona reckons he can have the calmer paste" -> "calmer
    paste", "we'll both have terracotta" -> "terracotta"): its own noun phrase, without a phrase
    that places it ("the salt-and-pepper mix on the viola bow")."""
    if len(span.split()) <= 3:
        return span
    span = _EN_PHRASE_TAIL.sub("", span)
    after = _EN_UP_TO_LAST_DETERMINER.sub("", span)
    if after != span:
        return after
    words = span.split()
    tail = len(words)
    while tail > 0 and words[tail - 1].lower() not in EN_STOPWORDS and "'" not in words[tail - 1]:
        tail -= 1
    return " ".join(words[tail:]) or span


def _stored_by_head(state: SessionState, old: str) -> str | None:
    """The stored phrase an old thing said with other modifiers names ("a new tube" for the stored
    "inner tube"): its head word, with the one word before it wherever it is stored."""
    words = old.split()
    if len(words) < 2 or len(words) > 3:
        return None
    head = words[-1]
    if head.lower() in EN_STOPWORDS or not _found_in(state, head):
        return None
    text = "\n".join(state.all_strings())
    found = {m.group(0).lower() for m in re.finditer(rf"(?<![\w-])(?:[A-Za-z][\w-]* )?{re.escape(head)}(?![\w-])", text, re.I)}
    phrases = {f if f.split()[0] not in EN_STOPWORDS and len(f.split()) == 2 else head.lower() for f in found}
    return phrases.pop() if len(phrases) == 1 else None


def _find_corrections(sentence: str, state: SessionState, lang: str) -> list[tuple[str, str, bool]]:
    """(old, new, old_is_in_state) for each correction in the sentence."""
    out: list[tuple[str, str, bool]] = []
    patterns = _ZH_CORRECTIONS if lang == "zh" else _EN_CORRECTIONS
    body = strip_fillers(sentence)
    body = L.strip_zh_discourse(body) if lang == "zh" else L.strip_en_discourse(body)  # "Hmm, matte would ..."
    body = body.rstrip(" .!。！")
    for pat in patterns:
        m = pat.search(body)
        if not m:
            continue
        new_span = m.group("new")
        if lang == "en":
            # "Sorry, I said it wrong, it's the day after tomorrow" -> the last comma piece.
            new_span = re.split(r",\s*", new_span)[-1]
            new_span = _en_chosen_phrase(new_span)
        old, new = _refine(m.group("old"), new_span)
        owner = re.match(r"(?:\w+['’]s|his|her|their|my|our)\s+(?P<thing>.+)$", old, re.I)
        if owner and not _found_in(state, old) and _found_in(state, owner.group("thing")):
            old = owner.group("thing")  # "swap Isla's apple for grapes": the apple stored without its owner
        if lang == "en" and not _found_in(state, old):
            old = _stored_by_head(state, old) or old
        if old and new and old.lower() != new.lower():
            out.append((old, new, _found_in(state, old)))
        break
    return out


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


def _typed(items: list[Item]) -> list[Item]:
    return [i for i in items if i.kind in VALUE_KINDS]


def _self_name(text: str, lang: str) -> str | None:
    m = (_ZH_NAME if lang == "zh" else _EN_NAME).search(text) or (_EN_IM_NAME.search(text) if lang == "en" else None)
    return m.group("name").strip() if m else None


def _key_of(text: str, lang: str) -> str:
    if lang == "zh":
        return re.sub(r"^(?:我|我们|你|请|帮我|要|想|得|需要)+", "", text)[:12]
    words = [w for w in re.findall(r"[A-Za-z][\w'’-]*", text) if content_stems(w)]
    return " ".join(words[:4])


class _Working:
    """The state being updated during one turn, with the record of what changed."""

    def __init__(self, state: SessionState, result: RuleResult, turn: int) -> None:
        self.state = state
        self.result = result
        self.turn = turn

    def stored(self) -> list[Item]:
        return self.state.all_items()

    def replace_item(self, target: Item, new: Item) -> None:
        s = self.state
        p = s.user_profile
        for name in ("facts", "pending_steps", "completed_steps"):
            items = getattr(s, name)
            if any(i is target for i in items):
                setattr(s, name, [new if i is target else i for i in items])
        for name in ("preferences", "constraints"):
            items = getattr(p, name)
            if any(i is target for i in items):
                setattr(p, name, [new if i is target else i for i in items])

    def propagate(self, old: str, new: str, keep: Item | None) -> None:
        """A replaced value is replaced everywhere it was said."""
        s = self.state
        p = s.user_profile
        s.facts = replace_in_items(s.facts, old, new, keep)
        s.pending_steps = replace_in_items(s.pending_steps, old, new, keep)
        s.completed_steps = replace_in_items(s.completed_steps, old, new, keep)
        p.preferences = replace_in_items(p.preferences, old, new, keep)
        p.constraints = replace_in_items(p.constraints, old, new, keep)
        s.current_task = replace_everywhere(s.current_task, old, new)
        p.names = [replace_everywhere(n, old, new) for n in p.names]

    def replace_words(self, old: str, new: str, keep: Item | None = None) -> None:
        """`old` replaced by `new` wherever it was said (but in `keep`, the new item itself),
        recorded as a correction: the old words are retired for the rest of the turn."""
        self.propagate(old, new, keep)
        self.result.corrections.append(Replacement(old=old, new=new))
        self.result.retired.append(old)

    def remove(self, doomed: list[Item]) -> None:
        ids = {id(i) for i in doomed}
        s = self.state
        p = s.user_profile
        s.facts = [i for i in s.facts if id(i) not in ids]
        s.pending_steps = [i for i in s.pending_steps if id(i) not in ids]
        p.preferences = [i for i in p.preferences if id(i) not in ids]
        p.constraints = [i for i in p.constraints if id(i) not in ids]

    def apply(self, decisions: list[Decision]) -> bool:
        """Apply value decisions; True when one of them replaced a stored value."""
        replaced = False
        for d in decisions:
            if d.op in (ADD, UPDATE) and d.item is not None and d.item.kind in VALUE_KINDS and any(
                norm_key(d.item.value) and norm_key(d.item.value) in norm_key(old) for old in self.result.retired
            ):
                # "Could I do Saturday morning instead? Sunday's my mum's birthday lunch.": the old
                # value given as the reason is not said again as a new one.
                self.result.decisions.append(Decision(NOOP, None, d.item, "the value just replaced, given as the reason"))
                continue
            self.result.decisions.append(d)
            if d.op == ADD and d.item is not None:
                self.state.facts.append(d.item)
                self.result.added.append(d.item)
            elif d.op == UPDATE and d.item is not None and d.target is not None:
                self.replace_item(d.target, d.item)
                if d.target.kind == "name" and d.item.turn:
                    # "Morag's not coming after all, her little one's poorly.": said this turn, the
                    # sentence that ruled the person out is the reason for the change, not a fact
                    # to rewrite with the new person.
                    named = re.compile(rf"(?<!\w){re.escape(d.target.value)}(?!\w)") if d.target.value.isascii() else re.compile(re.escape(d.target.value))
                    self.remove([i for i in self.state.facts if i.kind == KIND_NOTE and i.turn == d.item.turn and named.search(i.value)
                                 and L.rules_out(i.value, "zh" if re.search(r"[\u4e00-\u9fff]", i.value) else "en")])
                self.replace_words(d.target.value, d.item.value, d.item)
                core = re.compile(r"^(?:(?:at|on|in|to|from|near|by) )?(?:\d+[A-Za-z]?,? )?")
                bare = core.sub("", d.target.value)
                if d.target.kind == "place" and bare != d.target.value and len(bare) > 2:
                    # "on Church Street", "from 22 Orchard Rise" were said as "Church Street", "Orchard
                    # Rise" where they describe another thing.
                    self.propagate(bare, core.sub("", d.item.value), d.item)
                old_day, new_day = weekday_of(d.target.value, bare=False), weekday_of(d.item.value, bare=False)
                if d.target.kind == "date" and old_day and new_day and old_day != new_day and weekday_of(d.target.value, bare=True) is None:
                    # "Thursday morning" was said as "Thursday" where it keys another value ("pencil him
                    # in for Thursday at eight"): the day moves there too.
                    self.propagate(old_day.capitalize(), new_day.capitalize(), d.item)
                self.result.added.append(d.item)
                replaced = True
        return replaced

    def add_note(self, item: Item, where: str) -> None:
        s = self.state
        p = s.user_profile
        target = {"facts": s.facts, "steps": s.pending_steps, "preferences": p.preferences, "constraints": p.constraints}[where]
        key = norm_key(item.value)
        if not key:
            return
        for existing in target:
            if key in norm_key(existing.value):
                return  # already known
        # A fuller note supersedes a shorter one; typed values stay items of their own.
        kept = [i for i in target if i.kind in VALUE_KINDS or norm_key(i.value) not in key]
        kept.append(item)
        if where == "facts":
            s.facts = kept
        elif where == "steps":
            s.pending_steps = kept
        elif where == "preferences":
            p.preferences = kept
        else:
            p.constraints = kept
        self.result.added.append(item)


_ZH_GRADED = re.compile(rf"[{ZH_GRADABLE}]一?(?:点|些)(?![半钟])|更")
_EN_HEAD_FOR = re.compile(r"\b(?P<mod>[A-Za-z][\w-]*) for the (?P<noun>[A-Za-z][\w-]*)\b", re.I)


def _head_swap(st: Statement, state: SessionState, lang: str) -> tuple[str, str] | None:
    """The same noun said again with another word before it replaces that word: "right
    shoulder" after "left shoulder", "the eight-seater" after "a six-seater", "semi-skimmed
    for the milk" after "whole milk", 城西分馆 after 城东分馆, 草莓慕斯 after 芒果慕斯."""
    stored = [state.current_task] + [i.value for i in state.all_items()]
    if lang == "zh":
        words = zh_words(st.text)
        for (mod, mflag), (head, hflag) in zip(words, words[1:]):
            if not hflag.startswith("n") or len(head) < 1 or mflag[:1] not in ("n", "m", "a", "b", "f") or mflag == "nr":
                continue
            if any(c in ZH_FUNCTION_CHARS for c in mod) and mflag[:1] != "m":
                continue
            swaps: set[tuple[str, str]] = set()
            for text in stored:
                for m in re.finditer(rf"(?P<x>[\u4e00-\u9fff]{{{len(mod)}}}){re.escape(head)}", text):
                    x = m.group("x")
                    if x != mod and any(w == x and f[:1] == mflag[:1] for w, f in zh_words(text)):
                        swaps.add((x, mod) if len(x) >= 2 else (x + head, mod + head))  # 东区 -> 西区, also where said alone
            if len(swaps) == 1:
                return swaps.pop()
            if swaps:
                return None  # 槐花蜜 and 枣花蜜 both stored: which one goes is said elsewhere (枣花蜜卖完了)
        return None
    said = re.findall(r"[A-Za-z][\w'-]*", st.text)
    pairs: list[tuple[str, str]] = list(zip(said, said[1:]))
    pairs += [(m.group("mod"), m.group("noun")) for m in _EN_HEAD_FOR.finditer(st.text)]
    pairs += [(w.split("-", 1)[0], w.split("-", 1)[1]) for w in re.findall(r"\b[A-Za-z]+-[A-Za-z]+\b", st.text)]
    for modifier, noun in pairs:
        if modifier.lower() in EN_STOPWORDS or noun.lower() in EN_STOPWORDS or not content_stems(noun):
            continue
        for text in stored:
            found = re.search(rf"\b([A-Za-z][\w]*)([- ]){re.escape(noun)}\b", text, re.I)
            if found and found.group(1).lower() != modifier.lower() and found.group(1).lower() not in EN_STOPWORDS:
                new_mod = modifier.lower() if not modifier[0].isupper() or found.group(1)[0].islower() else modifier
                return found.group(0), f"{new_mod}{found.group(2)}{found.group(0)[len(found.group(1)) + 1:]}"
    return None


_EN_OBJECT = re.compile(r"\b(?:the|a|an|some)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)", re.I)
_EN_NO_OBJECT = re.compile(r"\b(?:no|not the|not a|not an|gone off the|gone off|went off the|off the)\s+(?P<np>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\b", re.I)


def _np(text: str) -> str:
    """A noun phrase without the words that follow its noun ("sea bass for dinner" -> "sea bass")."""
    words = []
    for word in text.split():
        if word.lower() in EN_STOPWORDS or word.lower() in L.EN_EMPTY_WORDS:
            break
        words.append(word)
    return " ".join(words)


def _object_swap(text: str, anchors: list[str], state: SessionState) -> tuple[str, str] | None:
    """"Carlos changed his mind, he's going for the lamb" after "Carlos wants the sea bass":
    the thing said with a person in a sentence of change replaces the thing stored with them."""
    new_np = ""
    old_np = ""
    no = _EN_NO_OBJECT.search(text)
    if no:
        old_np = _np(no.group("np"))
    for m in _EN_OBJECT.finditer(text):
        if no is None or m.start() < no.start() or m.start() > no.end():
            candidate = _np(m.group("np"))
            if candidate and content_stems(candidate):
                new_np = candidate
                if no is not None:
                    break  # "A fringe, she says, and no bob": the first thing said is the new one
    if not new_np:
        return None
    notes = [i.value for i in state.all_items() if i.kind == KIND_NOTE] + [state.current_task]
    for note in notes:
        for clause in re.split(r"[,;:]|\band\b|\bbut\b", note):
            if not any(re.search(rf"(?<![A-Za-z]){re.escape(a)}(?![A-Za-z])", clause) for a in anchors):
                continue
            if old_np:
                if re.search(rf"\b{re.escape(old_np)}\b", clause, re.I):
                    return old_np, new_np
                continue
            found = list(_EN_OBJECT.finditer(clause))
            if found:
                old = _np(found[-1].group("np"))
                if old and old.lower() != new_np.lower() and content_stems(old):
                    return old, new_np
    return None


_ZH_CHOOSE = re.compile(r"要|用|选|换|改|定|买|订|拿|做|吃|喝|打|带|穿")


def _zh_topic_swap(text: str, state: SessionState) -> tuple[str, str] | None:
    """"三等奖那个，大家投票要电动牙刷" after "三等奖保温杯": a stored topic said first, then a new
    thing chosen for it, replaces the thing stored with that topic."""
    words = zh_words(text)
    notes = [i.value for i in state.all_items() if i.kind == KIND_NOTE] + [state.current_task]
    nouns = [(i, w) for i, (w, f) in enumerate(words) if (f.startswith("n") and f != "nr" or f in ("l", "vn", "eng")) and len(w) >= 2]
    if not nouns:
        return None
    first_i, anchor = nouns[0]
    if sum(len(w) for w, _ in words[:first_i]) > 3 or not any(anchor in n for n in notes):
        return None  # the topic comes first: "三等奖那个，…"
    chosen = [i for i, w in nouns[1:] if i > first_i and any(_ZH_CHOOSE.search(v) for v, f in words[first_i:i] if f.startswith("v"))]
    if not chosen:
        return None
    start = chosen[-1]
    noun_at = {i for i, _ in nouns}
    while start - 1 in noun_at and start - 1 > first_i:
        start -= 1  # "蓝牙音箱": the whole run of nouns is the thing chosen
    new = "".join(w for w, _ in words[start: chosen[-1] + 1])
    if any(new in n for n in notes):
        return None
    for note in notes:
        for clause in re.split(r"[，。；,;！!]", note):
            if anchor not in clause:
                continue
            after = zh_words(clause[clause.index(anchor) + len(anchor):])
            run: list[str] = []
            for w, f in after:
                if (f.startswith("n") or f in ("l", "vn", "eng")) and w != anchor:
                    run.append(w)
                elif run:
                    break
            if run and len("".join(run)) >= 2:
                return "".join(run), new  # "扫地机器人" as a whole
    return None


_ZH_SWAP_VERB = re.compile(r"(?:换成|换到|换用|改成|改为|改到|改用|换)(?:了|个|一下)?")
# 那把, 两条, 这: what points at or counts the thing, never a classifier alone (台灯, 套餐 are things).
_ZH_LEAD = re.compile(rf"^(?:[这那]|[这那]?[{_ZH_NUM}]+)[{_ZH_CLASSIFIERS}款种家]?")


def _zh_same_head_chosen(text: str, state: SessionState) -> tuple[str, str] | None:
    """"鲜奶换低脂的" after 全脂鲜牛奶, "换手腕式的" after 上臂式的血压计: the thing a verb of swapping
    chooses ends in the character a stored word of its length ends in (脂, 式: a Chinese word's head
    is its last character): that word, one of the same sort, is the one swapped out."""
    stored = [state.current_task] + [i.value for i in state.all_items()]
    found: set[tuple[str, str]] = set()
    for m in _ZH_SWAP_VERB.finditer(text):
        run = re.match(r"[\u4e00-\u9fff]+", text[m.end():])
        new = _ZH_LEAD.sub("", re.split(r"的|吧|了|啊|呀", run.group(0))[0]) if run else ""
        if not 2 <= len(new) <= 5 or any(c in ZH_FUNCTION_CHARS for c in new):
            continue
        for said in stored:
            # As `_head_swap` finds a stored modifier of a said head: here the head is the new thing's last
            # character, and the stored word starts a word of its text, or follows a little word or a
            # classifier (买台上臂式的: the segmenter's 台上 cuts it); 落地灯 holds no 地灯.
            starts, at = set(), 0
            for word, _ in zh_words(said) if new[-1] in said else []:
                starts.add(at)
                at += len(word)
            for hit in re.finditer(rf"[\u4e00-\u9fff]{{{len(new) - 1}}}{re.escape(new[-1])}", said):
                old = hit.group(0)
                before = said[hit.start() - 1: hit.start()]
                if (hit.start() in starts or not re.fullmatch(r"[\u4e00-\u9fff]", before) or before in ZH_FUNCTION_CHARS or before in _ZH_CLASSIFIERS) and old != new and old not in text and not any(c in ZH_FUNCTION_CHARS for c in old):
                    found.add((old, new))
    return found.pop() if len(found) == 1 else None


def _without_clause(text: str, what: str, lang: str) -> str | None:
    """`text` without the clauses that name `what`; None when no clause, or every clause, does."""
    clauses = [c for c in re.split(r"(?<=[，,;；])\s*|\s+(?=and\b)", text) if c.strip(" ，,;；")]
    kept = [c for c in clauses if not (content_stems(what) & content_stems(c))]
    if len(clauses) == 1 and lang == "zh" and what in text:
        # "义工要带手套和口罩" without 手套: one of a list of things goes with its 和 or 、
        rest = re.sub(rf"{re.escape(what)}(?:和|、|及|跟)|(?:和|、|及|跟){re.escape(what)}", "", text, count=1)
        return rest if rest != text else None
    if not kept or len(kept) == len(clauses):
        return None
    return ("".join(kept) if lang == "zh" else " ".join(kept)).strip(" ，,;；")


def _without(key: str, what: str, lang: str) -> str:
    """The key without the words of a retracted thing."""
    if lang == "zh":
        return key.replace(what, "").strip(" ，,")
    drop = content_stems(what)
    return " ".join(w for w in key.split() if not (content_stems(w) & drop))


@dataclass(frozen=True)
class _Place:
    """Where a value was said in the turn: its sentence, its clause, and whether that clause says it alone."""

    sentence: int
    clause: int
    other_kinds: frozenset[str] = frozenset()  # the kinds of the clause's other values
    said_of: frozenset[str] = frozenset()  # the clause's content words beside the value
    ruled_out: bool = False  # the clause has a word that says what is not ("doesn't work"), and none that keeps it

    @property
    def alone(self) -> bool:
        """The clause says this value and nothing else."""
        return self.clause >= 0 and not self.other_kinds


def _clause_finder(st: Statement, lang: str, index: int) -> Callable[[str], _Place]:
    text = st.text
    starts = clause_starts(text, lang)

    def clause_of(pos: int) -> int:
        return sum(1 for b in starts if b <= pos) - 1

    def where(value: str) -> _Place:
        at = text.lower().find(value.lower())
        proper = [w_ for w_ in value.split() if w_[:1].isupper()]
        if at < 0 and len(value.split()) > 1 and proper:
            at = text.lower().find(proper[0].lower())  # "Isla's lesson" names Isla Brennan (not "on" of "on Elm Street")
        if at < 0:
            return _Place(index, -1)
        clause = clause_of(at)
        others = [v for v in st.values if clause_of(v.start) == clause and v.text.lower() != value.lower() and not v.start <= at < v.end]
        ends = [b for b in starts if b > at]
        words = text[starts[clause] if clause >= 0 else 0: ends[0] if ends else len(text)]
        beside = words[: at - (starts[clause] if clause >= 0 else 0)] + " " + words[at - (starts[clause] if clause >= 0 else 0) + len(value):]
        return _Place(index, clause, frozenset(v.kind for v in others), frozenset(content_stems(beside)), L.rules_out(beside, lang) and not STEADY_CLAUSE.search(words))

    return where


_EN_HE_SHE = re.compile(r"\b(?:he|she)(?=(?:'s|’s|\s))", re.I)
_ZH_HE_SHE = re.compile(r"[他她](?![们])")


def _person_ruled_out(text: str, stored: list[Item], lang: str) -> list[Value]:
    """"He's away that week", 他临时去不了: the person last named is ruled out, as if named."""
    m = (_ZH_HE_SHE if lang == "zh" else _EN_HE_SHE).search(text)
    if m is None:
        return []
    after = text[m.end():]
    after = re.sub(r"^(?:临时|突然|这次|那天|也)+", "", after) if lang == "zh" else after
    if not (ZH_NEGATED_AFTER if lang == "zh" else EN_NEGATED_AFTER).match(after):
        return []
    people = [i for i in stored if i.kind == "name" and not is_role_word(i.value)]
    if not people:
        return []
    last = max(people, key=lambda i: (i.turn, stored.index(i)))
    return [Value(last.value, "name", 0, 0, negated=True)]


def _belongings_follow(w: _Working, added: list[Item], turn: int) -> None:
    """"Carla's abroad. My neighbour Rosa Patel will be the contact, her number is 07700 900 736.":
    when a person is replaced, a value this turn gives of a kind the old person's key held (their
    number) replaces that value."""
    stored = w.stored()
    for d in list(w.result.decisions):
        if d.op != UPDATE or d.target is None or d.target.kind != "name" or not content_stems(d.target.key):
            continue
        for new in added:
            if new.kind not in ("number", "time", "place") or not any(i is new for i in stored):
                continue
            olds = [
                i for i in stored
                if i is not new and i.kind == new.kind and i.turn != turn and content_stems(i.key) & content_stems(d.target.key)
                and (new.kind != "number" or len(re.sub(r"\D", "", i.value)) == len(re.sub(r"\D", "", new.value)))
            ]
            if len(olds) == 1:
                w.remove(olds)
                w.replace_words(olds[0].value, new.value, new)
                w.result.decisions.append(Decision(UPDATE, new, olds[0], "the replaced person's value, given for the new one"))


def _same_clause(text: str, at: int, value: str, lang: str) -> bool:
    """Whether `value` is said in the clause of `text` that holds position `at` ("那住一间就够了，标间不用了":
    一间 is not in the clause that retracts 标间)."""
    lo, hi = clause_at(text, at, lang)
    return value in text[lo:hi]


def _literal_mentions(text: str, stored: list[Item], lang: str) -> list[tuple[str, Item]]:
    """Stored names, places and things the sentence names word for word, though it reads no value
    there ("东门那个点撤了" names the stored 小区东门 by its last word)."""
    found: list[tuple[str, Item]] = []
    low = text.lower()
    for item in stored:
        if item.kind not in ("name", "place", "item") or len(item.value) < 2:
            continue
        value = item.value.lower()
        if lang == "zh":
            tails = [value[i:] for i in range(len(value) - 1) if len(value) - i >= 2]
            said = next((t for t in tails if t in low), "")
        else:
            said = value if re.search(rf"(?<![\w]){re.escape(value)}(?![\w])", low) else ""
        if said:
            found.append((said, item))
    return found


def _one_sentence_names_the_old(w: _Working, added: list[tuple[_Place, Item]], repeated: list[tuple[_Place, Item]], steady: list[Item]) -> None:
    """"Half past two then? Two's when they're clearing lunch.", "Ivory for the mount. White makes the
    paper look yellow.", "Jess has dropped out, her cousin Marnie is having her ticket.": a turn that
    gives one new value of a kind in one sentence or clause and names a stored value of that kind in
    another (a clause that says nothing else), with no word of adding, replaces the stored one."""
    stored = w.stored()
    fresh = {id(item) for _, item in added}

    def apart(new_at: _Place, old_at: _Place, old: Item) -> bool:
        if new_at.sentence != old_at.sentence:
            return old.kind not in old_at.other_kinds  # "Isla's lesson with coach Marchetti ...": a person of its own
        return old_at.clause >= 0 and new_at.clause != old_at.clause and old_at.alone

    used: set[int] = set()
    for old_at, old in repeated:
        if old.kind not in VALUE_KINDS or id(old) in fresh or not any(i is old for i in stored) or any(i is old for i in steady):
            continue  # only a value stored before this turn, not said as unchanged, can be the old one
        if old_at.said_of & content_stems(old.key) and not old_at.ruled_out:
            continue  # "2580 is the gate code, as I said": named with what it is about, the old one still holds
        news = [
            item for at, item in added
            if apart(at, old_at, old) and same_sort(old, item.kind, item.value) and any(i is item for i in stored) and not is_role_word(item.value) and id(item) not in used
            # A person named after the new one, in words that rule nobody out, is told of, not replaced:
            # "Her key worker's called Bethany, and Rosie's allergic to kiwi" ("Colin's left, it's Bernadette I need" is).
            and (old.kind != KIND_NAME or old_at.ruled_out or (old_at.sentence, old_at.clause) < (at.sentence, at.clause))
        ]
        if old.kind == "item":
            news = [n for n in news if choice_class(n.value) == choice_class(old.value)]
        if len(news) != 1:
            continue
        new = news[0]
        used.add(id(new))  # one new value replaces one old one
        keep_unit(new, old, w.result.lang)  # "It's 140. 120 was last year's price." after "120 pounds": 140 pounds
        w.remove([old])
        w.replace_words(old.value, new.value, new)
        w.result.decisions.append(Decision(UPDATE, new, old, "a new value in one sentence, the stored one named in another"))


_EN_LINK = {"the", "a", "an", "on", "for", "with", "as", "in", "of", "to", "my", "her", "his", "their", "our", "some"}


def _anchored_swap(text: str, state: SessionState, lang: str) -> tuple[str, str] | None:
    """A word said again with another thing beside it replaces that thing: "Rubber on the heels."
    after "Leather heels", 鲜奶换低脂的 after 鲜奶要全脂的, 让他报跳远 after 报八百米."""
    notes = [i.value for i in state.all_items() if i.kind == KIND_NOTE] + [state.current_task]
    if lang == "zh":
        said = [(w, f) for w, f in zh_words(text) if f != "x"]
        for i, (anchor, af) in enumerate(said):
            if len(anchor) < 2 or not (af.startswith("n") or af.startswith("v")) or anchor in L.ZH_EMPTY_WORDS:
                continue
            j = i + 1
            while j < len(said) and (said[j][1].startswith(("v", "u", "d", "p")) and len(said[j][0]) == 1 or said[j][0] in ("换成", "改成", "换", "要", "用")):
                j += 1  # 鲜奶换低脂的: the thing comes after the verb of choice
            chose = any(_ZH_CHOOSE.fullmatch(w) or w in ("换成", "改成", "改为") for w, _ in said[i + 1: j])
            new = said[j][0] if chose and j < len(said) and (said[j][1].startswith(("n", "a", "b", "l")) or said[j][1] == "vn") and len(said[j][0]) >= 2 else ""
            if not new or any(new in n for n in notes) or af in ("nr", "nrfg"):
                continue
            for note in notes:
                k = note.find(anchor)
                if k < 0:
                    continue
                after = [(w, f) for w, f in zh_words(note[k + len(anchor):]) if f != "x"]
                m = 0
                while m < len(after) and (after[m][1].startswith(("v", "u", "d", "p")) and len(after[m][0]) == 1 or after[m][0] in ("换成", "改成", "要", "用")):
                    m += 1
                chose_before = any(_ZH_CHOOSE.fullmatch(w) or w in ("换成", "改成", "改为") for w, _ in after[:m])
                if chose_before and m < len(after) and len(after[m][0]) >= 2 and after[m][0] != new and after[m][0] not in text and (after[m][1].startswith(("n", "a", "b", "l")) or after[m][1] == "vn"):
                    return after[m][0], new
        return None
    words = re.findall(r"[A-Za-z][\w'-]*", text)
    low = [w.lower() for w in words]
    for i, word in enumerate(low):
        if word in EN_STOPWORDS or word in L.EN_EMPTY_WORDS or word in _EN_LINK or not content_stems(word):
            continue
        j = i - 1
        while j >= 0 and low[j] in _EN_LINK:
            j -= 1  # "Rubber on the heels": the thing before the word, past the little words
        if j != 0 or low[j] in EN_STOPWORDS or low[j] in L.EN_EMPTY_WORDS or not content_stems(low[j]):
            continue  # only a thing said first ("Rubber on the heels."), never a verb ("ask for a table")
        new = words[j]
        for note in notes:
            found = re.search(rf"\b([A-Za-z][\w-]*) {re.escape(word)}\b", note, re.I)  # "Leather heels": the thing stored right before the word
            if not found:
                continue
            old = found.group(1)
            if old.lower() in (new.lower(), word) or old.lower() in EN_STOPWORDS or old.lower() in L.EN_EMPTY_WORDS or re.search(rf"\b{re.escape(old)}\b", text, re.I):
                continue
            if re.search(rf"\b{re.escape(new)}\b", note, re.I):
                continue
            return old, new.lower() if old[:1].islower() else new
    return None


def _words_replaced(st: Statement, sentence: str, before: str, state: SessionState, lang: str, *, plain: bool) -> tuple[str, str] | None:
    """(old, new) words of a note this sentence changes, by the first mechanism that finds one:
    the explicit forms, the same noun with another modifier, a word said again with another
    thing beside it, a Chinese topic with a new choice, a person's thing, a thing moved to."""
    # The explicit forms first: "swap the quiche for a veg tart" says both sides.
    for old, new, found in _find_corrections(sentence, state, lang):
        if found and norm_key(old) != norm_key(new):
            return old, new
    cued = st.change_cue or st.admission or st.strong_cue
    graded = lang == "zh" and _ZH_GRADED.search(st.text) is not None  # 城西分馆离我近一点
    if cued or graded or plain:
        swap = _head_swap(st, state, lang)
        if swap is not None:
            return swap
    if (plain or st.change_cue or st.strong_cue) and not st.additive:
        swap = _anchored_swap(st.text, state, lang)
        if swap is not None:
            return swap
    if lang == "zh" and plain:
        swap = _zh_topic_swap(st.text, state)
        if swap is not None:
            return swap
    if lang == "en" and cued:
        said = f"{before} {st.text}"
        anchors = [i.value for i in _typed(state.all_items()) if i.kind == "name" and re.search(rf"(?<![A-Za-z]){re.escape(i.value)}(?![A-Za-z])", said)]
        swap = _object_swap(st.text, anchors, state) if anchors else None
        if swap is not None:
            return swap
    return None


# A choice said after the thing it replaces was found wanting: "Gateron Yellows are sold out, so
# Kailh Box White.", "Black edging shows every fingerprint. Brushed steel it is."
_EN_CHOSEN = re.compile(
    r"(?:^|[,;]\s*)(?:so|then|ok(?:ay)?)?,?\s*(?P<a>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?<! as) it is\s*[.!]?$"
    r"|(?:^|[,;]\s*|\b)(?:so|then) (?!(?:it'll|it will|that'll|that will|it's going to|it has to) be\b)(?!(?:i|we|i'm|we're|i've|we've)\b)(?:the |a |an |just )?(?P<b>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)\s*[.!]?$"
    r"|\b(?:go|going|we'll go|i'll go) (?:with|for) (?:the |a |an )?(?P<c>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?: instead)?\s*[.!]?$"
    r"|\b(?:let's|let us|we'll|i'll|we will|i will|we can|we could|i'd like|we'd like|i want|we want) (?:do|have|take|get|use|call|try|book|pick|choose|switch to|move to) (?:the |a |an |some )?(?P<d>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?: instead)?\s*(?:[,;][^,;]*)?[.!]?$"
    r"|^(?:ok(?:ay)?,?\s*|fine,?\s*|right,?\s*)?(?:the |a |an |some )?(?P<g>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?) (?:will do|'ll do|is fine|then)\s*[.!]?$"
    r"|(?:^|[,;]\s*|\b(?:use|do|have|take|get|try|book|pick|choose) (?:the |a |an |some )?)(?P<e>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?) instead\b"
    r"|^(?P<f>[A-Z][\w'-]*(?: [\w'-]+){0,3}?),? please\s*[.!]?$"  # "Goatskin, please."
    r"|\b(?:it'll|it will|that'll|that will|it's going to|it has to|it'll have to|it will have to) be (?:the |a |an |some )?(?P<i>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?: instead)?\s*[.!]?$"
    r"|^(?:no wait,?\s*|so\s+|then\s+)?(?:put (?:us|him|her|me|them) (?:in|on|down for)|give (?:me|us|him|her|them)|take|use|bring|book|make it) (?:the |a |an |some )?(?P<j>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?: instead)?\s*[.!]?$",
    re.I,
)
_NOT_A_CHOICE = re.compile(r"^(?:it|that|this|them|those|one|me|us|him|her|you|there|here|now|then|ok|okay|yes|no|fine|good|great|please|thanks)$", re.I)


# A choice, then what it replaces, ruled out: "Lemon tart from me, I've gone off the quiche idea."
_EN_CHOSEN_OVER = re.compile(
    r"^(?P<new>[A-Za-z][\w'-]*(?: [\w'-]+){0,3}?)(?: (?:from|for) (?:me|us|him|her|them))?,\s*(?:i|we|he|she|they)(?:'ve|'s| have| has)"
    r" (?:gone off|gone cold on|decided against|changed (?:my|our|his|her|their) minds? about|gone off the idea of) (?:the |a |an |that )?(?P<old>[a-z][\w'-]*(?: [\w'-]+){0,2}?)(?: idea| one| plan)?\s*[.!]?$",
    re.I,
)


def _chosen_over(sentence: str, state: SessionState) -> tuple[str, str] | None:
    """(old, new) for a choice said with what it replaces ruled out after it, when the state says
    the old thing."""
    m = _EN_CHOSEN_OVER.search(sentence.strip())
    if m is None:
        return None
    old, new = m.group("old"), m.group("new")
    return (old, new) if _found_in(state, old) else None


# A thing said on its own, after the turn ruled a stored one out: "Bergamot's a bit too citrusy
# for me. Pink pepper.", "Fish pie's out. ... Chicken casserole.", "Living room, and I'll ...".
_EN_BARE_CHOICE = re.compile(r"^(?:just |only )?(?:the |a |an |some )?(?P<k>[A-Za-z][\w-]*(?: [A-Za-z][\w-]*){0,2}?)\s*(?:[.!]|,.*)?$", re.I)


def _bare_choice(text: str, earlier: str) -> str | None:
    """The thing of a sentence that is only a thing (1-3 words, no little words), said after an
    earlier sentence of the turn ruled something out."""
    m = _EN_BARE_CHOICE.match(text.strip())
    if m is None or not earlier or not L.EN_RULED_OUT.search(earlier):
        return None
    words = m.group("k").lower().split()
    if any(w in EN_STOPWORDS or w in L.EN_EMPTY_WORDS or not content_stems(w) for w in words):
        return None
    return m.group("k")


def _chosen_instead(text: str, earlier: str, state: SessionState, turn: int, *, bare: bool = False) -> tuple[str, str] | None:
    """(old, new): a choice at the end of a sentence, and a stored thing named earlier in the turn
    (or earlier in the sentence) that is not part of the choice. `bare`: the sentence gives no
    typed value, so a thing said on its own may be the choice (`_bare_choice`)."""
    m = _EN_CHOSEN.search(text)
    alone = _bare_choice(text, earlier) if m is None and bare else None
    if m is None and alone is None:
        return None
    if m is None:
        new = alone or ""
    else:
        new = next(g for g in m.groups() if g).strip()
    if _NOT_A_CHOICE.match(new) or re.search(r"\d", new) or len(new) < 3 or re.match(r"(?:the )?same\b", new, re.I):
        return None  # "Same day is fine": nothing chosen, something kept
    if m is not None and re.search(r"\b(?:not|never|no)\b|n't\b", text[max(0, m.start() - 12): m.start() + 12], re.I):
        return None  # "Brown doesn't go with a thing he owns": a refusal, not a choice
    said = f"{earlier} {text[: m.start()]}".lower() if m is not None else earlier.lower()
    new_words = set(re.findall(r"[a-z]{3,}", new.lower()))
    items = _typed(state.all_items())
    if any(new.lower() in i.value.lower() for i in state.all_items()):
        return None  # said before: not a new choice
    # "Ham it is.": a capital that only opens the sentence makes no proper name.
    proper = new[:1].isupper() and (not text.lstrip(" ,.!?'\"").startswith(new) or len(new.split()) > 1 or _is_name_word(new))
    for item in items:
        if item.kind != "item" and not (item.kind in ("name", "place") and proper):
            continue  # a person or a place is replaced by a proper name, never by a dish ("I'll have the risotto")
        words = [w for w in re.findall(r"[a-z]{3,}", item.value.lower()) if w not in EN_STOPWORDS and w not in new_words]
        if words and any(re.search(rf"\b{re.escape(w[:-1] if len(w) > 4 else w)}", said) for w in words):
            return item.value, new  # "matt black" named as "black edging", "Gateron Yellow" as "Gateron Yellows"
    # A thing kept only in a note ("the long route round the reservoir"), for an explicit choice
    # ("We'll do the short paddock walk", "… instead", "Goatskin, please"): the first words of the
    # turn that a note of an earlier turn says ("The reservoir loop is two hours, that's too long").
    if m is not None and not (m.group("c") or m.group("d") or m.group("e") or m.group("f") or m.group("g") or m.group("i") or m.group("j")
                              or (m.group("a") and L.EN_RULED_OUT.search(said))):  # "He's gone off tuna. Ham it is."
        return None
    notes = " ".join([i.value for i in state.all_items() if i.kind == KIND_NOTE and i.turn != turn] + [state.current_task]).lower()
    people = {w.lower() for i in state.all_items() if i.kind == "name" for w in i.value.split()}  # "Leo can't do the cat": a person is not the thing
    words = [w for w in re.findall(r"[a-z][a-z'-]*", said) if w.removesuffix("'s") not in people]
    for start, word in enumerate(words):
        word = word.removesuffix("'s")
        if len(word) < 3 or word in EN_STOPWORDS or word in L.EN_EMPTY_WORDS or word in new_words or not re.search(rf"\b{re.escape(word)}\b", notes):
            continue
        phrase = word
        for following in words[start + 1:]:
            # "protein bars" said, "protein bar" stored: the note's own words are what is replaced.
            stem = following.removesuffix("'s").removesuffix("s")
            longer = re.search(rf"\b{re.escape(phrase)} {re.escape(stem)}s?\b", notes)
            if not longer:
                break
            phrase = longer.group(0)
        return phrase, new
    return None


_ZH_MOVED_TO = re.compile(r"(?:(?:改订|改约|改去|改在|换去|换在)了?|换成|换到|改成|改到|改为|挪到|搬到|转到|调到|移到|改用|换用|那就|(?:那)?就(?:拿|要|用|选|订|买|换)|就(?=[^，。！？；、,.!?;\s]{2,8}?吧)|换(?![个一两几](?:个|次|下|遍)))(?P<new>[^，。！？；、,.!?;\s]{2,12}?)(?:吧|了|上|去|那边|那里)*(?:[，。！？；、,.!?;\s]|$)")


def _zh_moved_to(text: str, earlier: str, state: SessionState) -> tuple[str, str] | None:
    """"少年宫那边满了，换成文化宫校区", "枣花蜜卖完了啊？那换成荆条蜜": a stored thing named before a verb
    of moving or changing to something new, in this sentence or earlier in the turn, is what the
    new thing replaces (the only stored value named)."""
    m = _ZH_MOVED_TO.search(text)
    if m is None:
        return None
    new = m.group("new")
    head = text[: m.start()]
    if not any(i.value in head for i in _typed(state.all_items()) if i.kind in ("place", "name", "item") and len(i.value) >= 2):
        head = earlier + head  # the thing was named in an earlier sentence of the turn (often a question)
    # A stored place named by its first word ("天河" for 天河出入境大厅) is named too.
    # So is one named by its own name without its street ("福满楼" for 中山路的福满楼).
    shortened = [i for i in _typed(state.all_items()) if i.kind == "place" and len(i.value) > 3 and i.value not in head
                 and ((i.value[:2] in head and i.value[:2] not in new) or ("的" in i.value and len(i.value.split("的")[-1]) >= 2 and i.value.split("的")[-1] in head))]
    items = state.all_items()
    if any(new in i.value for i in items):
        return None
    stored = [i.value for i in _typed(items) if i.kind in ("place", "name", "item") and len(i.value) >= 2 and i.value in head and i.value not in new]
    if not stored and len(shortened) == 1:
        return shortened[0].value, new
    if len(stored) == 1:
        return stored[0], new
    if stored:
        return None
    # A thing kept only in a note ("聚丰园"): the first noun of the sentence that a note says.
    notes = [i.value for i in items if i.kind == KIND_NOTE] + [state.current_task]
    for word, flag in zh_words(head):
        if len(word) >= 2 and flag[:1] in ("n", "s") and any(word in n for n in notes) and word not in new:
            # The whole name the note has: 花蜜 is said inside 枣花蜜.
            start = head.index(word)
            end = start + len(word)
            while start > 0 and any(head[start - 1: end] in n for n in notes) and head[start - 1] not in ZH_FUNCTION_CHARS:
                start -= 1
            while end < len(head) and any(head[start: end + 1] in n for n in notes) and head[end] not in ZH_FUNCTION_CHARS:
                end += 1
            if new.endswith("的") and not re.search(r"[，。！？；、,.!?;\s]", head[end:]):
                return None  # "校服换成短袖的": the thing said with the verb stays, only its kind changes
            return head[start:end], new
    return None


# A thing said on its own, and a stored one ruled out elsewhere in the turn: 胡桃木太暗了，跟我家墙不搭，
# 原木色吧; 豆干换麻辣的，五香的上回剩了好多没卖掉 (an attribute with its noun left out replaces the stored one).
_ZH_RULED_OUT = re.compile(r"太|不|没|别|嫌|算了")
_ZH_CHOICE_LEAD = re.compile(r"^(?:那就|那|就|还是|改成|换成|要|换|用|改)")
_ZH_CHOICE_VERB = re.compile(r"改成|换成|要|换|用|改")  # after the thing's name: 豆干换麻辣的
_ZH_NOT_THING_FLAGS = ("v", "p", "r", "d", "u", "c", "y", "x")
_ZH_CHOOSING_CHARS = "用要换选配是做拿买订吃喝穿带"


def _zh_attributes(note: str) -> list[str]:
    """What a note says a thing is like, before each 的, after the verb that chose it (浅蓝碎花 in
    那床用浅蓝碎花的, 五香 in 要五香的). By characters: word cuts run across 被套用大红."""
    out: list[str] = []
    for m in re.finditer(r"([\u4e00-\u9fff]{2,5})的", note):
        run = m.group(1)
        cut = max((k for k, ch in enumerate(run) if ch in _ZH_CHOOSING_CHARS or ch in ZH_FUNCTION_CHARS), default=-1)
        if len(run) - cut - 1 >= 2:
            out.append(run[cut + 1:])
    return out


def _without_repeat(new: str, old: str, notes: list[str]) -> str:
    """原木色 for 胡桃木 stored as 胡桃木色: the new words without the noun the note says after the old."""
    if len(new) > 2 and any(old + new[-1] in n for n in notes):
        return new[:-1]
    return new


def _zh_chosen_alone(text: str, earlier: str, state: SessionState) -> tuple[str, str] | None:
    """(old, new): a clause that is only a thing (吧, or after a verb of choosing), when another
    clause of the turn rules out a stored thing (太, 不, 没, 嫌 ...)."""
    clauses = [c for c in re.split(r"[，。！？；、,.!?;\s]+", text) if c]
    ruled = [c for c in clauses + [c for c in re.split(r"[，。！？；、,.!?;\s]+", earlier) if c] if _ZH_RULED_OUT.search(c)]
    if not ruled:
        return None
    items = state.all_items()
    notes = [i.value for i in items if i.kind == KIND_NOTE] + [state.current_task]
    for clause in clauses:
        if _ZH_RULED_OUT.search(clause):
            continue
        lead = _ZH_CHOICE_LEAD.match(clause) or _ZH_CHOICE_VERB.match(clause[2:]) or _ZH_CHOICE_VERB.match(clause[3:])
        body = clause[clause.index(lead.group(0)) + len(lead.group(0)) if lead else 0:]  # 豆干换麻辣的: after the thing's name
        attribute = body.rstrip("吧").endswith("的")
        body = body.rstrip("吧").removesuffix("的")
        if not (2 <= len(body) <= 8) or not (lead or clause.endswith("吧") or attribute):
            continue
        words = zh_words(body)
        if not words or any(f.startswith(_ZH_NOT_THING_FLAGS) for _, f in words) or any(body in i.value or body in i.key for i in items):
            continue
        if attribute:
            # The stored attribute the turn rules out: "五香的" in a note, named again in a ruling-out clause.
            olds = {o for n in notes for o in _zh_attributes(n) if any(o[k: k + 2] in r for r in ruled for k in range(len(o) - 1))}
            if len(olds) == 1:
                return olds.pop(), body
            continue
        # The stored thing the ruling-out clause names first (a value, else a noun a note has):
        # not a topic said before 那个/的 ("主卧那个灰太冷了": the bedroom is not the thing).
        for r in ruled:
            typed = [i.value for i in _typed(items) if i.kind in ("item", "name", "place") and len(i.value) >= 2 and i.value in r and not i.value.startswith("我")]
            if len(typed) == 1:
                return typed[0], _without_repeat(body, typed[0], notes)
            for w, f in zh_words(r):
                at = r.find(w)
                if len(w) >= 2 and f.startswith("n") and f != "nr" and any(w in n for n in notes) and not re.match(r"那个|这个|的", r[at + len(w):]):
                    return w, body
    return None


def _cancel_clauses(w: _Working, doomed: list[Item], what: str, lang: str, turn: int) -> list[Item]:
    """"Forget the spark plug" after "The blades want sharpening too, and it needs a new spark
    plug": a note loses only the clauses that name what was cancelled; the items to remove whole."""
    wanted = content_stems(what)
    whole: list[Item] = []
    for item in doomed:
        kept = _without_clauses(item.value, wanted, lang) if item.kind == KIND_NOTE else None
        if kept:
            key = " ".join(k for k in item.key.split() if not wanted & content_stems(k)) if lang != "zh" else item.key
            w.replace_item(item, Item(key=key, value=kept, kind=item.kind, turn=turn))
            w.result.decisions.append(Decision(UPDATE, None, item, "a cancelled clause left out"))
        else:
            whole.append(item)
    return whole


def _without_clauses(text: str, wanted: set[str], lang: str) -> str | None:
    """`text` without the clauses that name `wanted`; None when all or none of them do."""
    starts = clause_starts(text, lang)
    cuts = zip(starts, starts[1:] + [len(text)])
    clauses = [c for c in (re.sub(r"[\s,，;；]*(?:\b(?:and|but|so|except|while|whereas|when)\b|但是|不过|而且)?[\s,，;；。]*$", "", text[a:b], flags=re.I).strip() for a, b in cuts) if c]
    for i in range(len(clauses) - 1, 0, -1):
        if re.match(r"(?:it|it's|that|that's|which|this|this is|they|they're|它|这|那)\b", clauses[i], re.I):
            clauses[i - 1: i + 1] = [clauses[i - 1] + ", " + clauses[i]]  # "..., it's twelve pounds": said of the clause before
    kept = [c for c in clauses if not wanted & content_stems(c)]
    if not kept or len(kept) == len(clauses):
        return None
    return ", ".join(kept) if lang != "zh" else "，".join(kept)


def _clauses_naming_none(text: str, olds: list[str], lang: str) -> str:
    """The clauses of `text` that say none of `olds` (as written, or by their words) and do not talk about the talk."""
    starts = clause_starts(text, lang)
    clauses = [text[a:b].strip(" ,，;；。") for a, b in zip(starts, starts[1:] + [len(text)])]
    old_words = set().union(*(content_stems(o) for o in olds)) if olds else set()
    kept = [c for c in clauses if c and not old_words & content_stems(c) and not any(contains_ci(c, o) for o in olds if o) and not L.talks_about_talk(c, lang)]
    return (", " if lang != "zh" else "，").join(kept)


def _cancelled(w: _Working, what: str) -> list[Item]:
    wanted = content_stems(what)
    if not wanted:
        return []
    return [i for i in w.stored() if wanted & (content_stems(i.value) | content_stems(i.key))]


_EN_TAIL_QUESTION = re.compile(r",\s+(?=(?:can|could|would|will|is|are|do|does|should|shall|may)\s+(?:i|you|he|she|we|they|it|that|there)\b[^,]*\?\s*$)", re.I)


def extract(words: str, state: SessionState, *, lang: str | None = None, turn: int = 0) -> RuleResult:
    """Read one final transcript and update the state by code; `result.state` is the new state."""
    words = " ".join(words.split())[:MAX_WORDS_CHARS]
    lang = lang or detect_lang(words)
    task_before = state.current_task
    # A code or phone number read digit by digit is written as digits ("six three three oh,
    # one nine four eight" -> "6330 1948"); other number words stay as said.
    words = spelled_words(spoken_codes(spoken_digit_groups(words))) if lang != "zh" else words
    patch = StatePatch()
    result = RuleResult(patch=patch, lang=lang)
    w = _Working(state.copy(), result, turn)
    sentences = split_sentences(words) or ([words] if words else [])
    if lang == "en":
        # "My daughter Ellie needs a check-up too, can she go straight after me?": the statement
        # before a closing yes/no question is said too.
        sentences = [part for sentence in sentences for part in _EN_TAIL_QUESTION.split(sentence, maxsplit=1) if part.strip()]
    rejected: list = []  # values a sentence rejected without giving the new one
    carried: Statement | None = None  # a sentence of change with no value: "Lily changed her mind again."
    mentioned: list[Item] = []  # stored values such a sentence named: "Saturday's changed hands."
    previous = ""  # the text of that sentence: who it was about ("Lily changed her mind again.")
    named_people: list[Item] = []  # stored people named again in this turn ("Hannah's got builders in.")
    out_people: list[Item] = []  # of them, the ones a sentence of their own rules out ("Morag's not coming after all.")
    replaced_this_turn: list[Item] = []  # stored values earlier sentences of the turn replaced
    # For the turn-level pass: values this turn added and stored values it named again, by sentence.
    added_at: list[tuple[_Place, Item]] = []
    repeated_at: list[tuple[_Place, Item]] = []
    additive_turn = False
    # Said as unchanged anywhere in the turn, a value is no target in it ("take it out to 5 metres.
    # The width's staying at 3.": the other measure changes).
    known_now = frozenset(part for i in w.stored() if i.kind == "name" for part in i.value.split())
    turn_steady = [item for sentence in sentences for item in said_unchanged(read_sentence(sentence, lang, known_now), _typed(w.stored()))]
    for index, sentence in enumerate(sentences):
        if _is_closing(sentence, lang):
            result.closing = True
            continue
        known = frozenset(part for i in w.stored() if i.kind == "name" for part in i.value.split())
        st = read_sentence(sentence, lang, known)
        if not st.admission and index + 1 < len(sentences) and L.has_admission(sentences[index + 1], lang) and not read_sentence(sentences[index + 1], lang, known).values:
            # "Sorry, she's sixty-two foot. I was thinking of our old boat.": owning up said after the value.
            st.admission = True
        before = previous if carried is not None else ""
        if carried is not None and not st.question:
            # "Oh, I got the day wrong. The 13th ...": the cue and what it was about carry
            # over to the sentence that gives the value.
            st.admission = st.admission or carried.admission
            st.change_cue = st.change_cue or carried.change_cue
            st.strong_cue = st.strong_cue or carried.strong_cue
            st.frame_keys = st.frame_keys | carried.frame_keys
        carried = None
        if st.question:
            result.question = True
            result.questions.append(st)
            if L.is_tag_check(sentence, lang) and any(not v.negated for v in st.values):
                # "菜刀十块，砍骨刀十五块，剪刀八块，是吧？": what is new is kept; a stored value is checked, not changed.
                told = decide_values(st, _typed(w.stored()), turn)
                w.apply([d for d in told.decisions if d.op == ADD and d.item is not None and d.item.kind in ("time", "date", "quantity", "number")])
            kinds = asked_kinds(st.text)
            if kinds:
                # "And on the other days?" asks again for what the last question asked.
                w.state.last_topic = kinds[0]
            # "Oh, Marco's off that week? Fine, Kezia then.": the value the question rules out is the old one.
            rejected = [v for v in st.values if v.negated]
            continue
        body = st.text.strip(" ,，.。!！?？")
        body = re.sub(r"^(?:(?:can|could|would|will) you\s+(?:please\s+)?(?:also\s+)?|please\s+)", "", body, flags=re.I)
        if lang == "zh" and _ZH_REQUEST.match(body):
            body = re.sub(r"吗?[？?]?$", "", _ZH_REQUEST.sub("", _ZH_REQUEST.sub("", body)))
        if len(body) < 2:
            continue
        cancel = (_ZH_CANCEL if lang == "zh" else _EN_CANCEL).match(body)
        if cancel and not any(v for v in st.values if not v.negated and v.kind in ("time", "date", "quantity", "number")):
            doomed = _cancelled(w, cancel.group("what"))
            task_gone = bool(content_stems(cancel.group("what")) & content_stems(w.state.current_task))
            task_left = _without_clauses(w.state.current_task, content_stems(cancel.group("what")), lang) if task_gone else None
            if task_left:
                w.state.current_task = task_left  # "Forget the shed roof" after "The hedge wants trimming, and the shed roof needs new felt"
                result.decisions.append(Decision(UPDATE, None, None, "a cancelled clause left out of the task"))
            elif task_gone:
                doomed.append(Item(key="task", value=w.state.current_task, kind=KIND_NOTE, turn=turn))
                w.state.current_task = ""
            if doomed or task_left:
                doomed = _cancel_clauses(w, doomed, cancel.group("what"), lang, turn)
                w.remove(doomed)
                result.removed += doomed
                result.decisions += [Decision(DELETE, None, d, "cancelled") for d in doomed]
                patch.drop_items.append(_core(cancel.group("what")))
                said_after = body[cancel.end():].strip(" ,;")
                if len(re.findall(r"\w+", said_after)) >= 3:
                    sentences.insert(index + 1, said_after)  # "Forget the torch, his leader's lending him a lantern": the rest is said too
                continue
        retract = (_ZH_RETRACT if lang == "zh" else _EN_RETRACT).search(body)
        retracted_part = False
        if retract and not any(
            v for v in st.values if not v.negated and v.kind in ("time", "date", "quantity", "number") and _same_clause(body, retract.start(), v.text, lang)
        ):
            what = next((g for g in retract.groups() if g), "")
            if lang == "zh":
                # 老周去不了了: the stored person the words start with, not 老周去.
                what = next((i.value for i in w.stored() if i.kind == "name" and len(i.value) >= 2 and what.startswith(i.value)), what)
            if what.lower() in ("him", "her", "them"):
                # "Jonah's licence has lapsed, so take him off the booking": the person named before.
                people = [i.value for i in w.stored() if i.kind == "name" and re.search(rf"(?<!\w){re.escape(i.value)}(?!\w)", " ".join(sentences[: index + 1]))]
                people += [i.value for i in named_people]
                what = people[0] if people else what
            # The thing and the values said of it go ("剪刀不磨了" takes 剪刀's price with it).
            # A person taken off takes only themselves: the day they were booked with stays.
            person = any(i.kind == "name" and what.lower() in i.value.lower() for i in w.stored())
            # A value keyed by the thing goes with it, unless its key names more than the thing: "大概八个人吃"
            # keyed by the whole order of 红烧肉、糖醋排骨、油焖笋 stays when one dish goes.
            doomed = [
                i for i in _cancelled(w, what)
                if i.kind == KIND_NOTE or content_stems(what) & content_stems(i.value)
                or (not person and content_stems(what) & content_stems(i.key) and len(content_stems(i.key) - content_stems(what)) <= 2)
            ]
            stored_names = {i.value for i in w.stored() if i.kind == "name"}
            if person and any(v.kind == "name" and not v.negated and v.text not in stored_names for v in st.values):
                # 老周去不了了，换成周航: the person taken off is the one the new person replaces.
                out_people += [d for d in doomed if d.kind == "name"]
                doomed = [d for d in doomed if d.kind != "name"]
            for item in [i for i in doomed if i.kind == KIND_NOTE]:
                # Only the clause that said it goes: "我爸要低盐的，我妈要软饭" keeps 低盐.
                rest = _without_clause(item.value, what, lang)
                if rest is not None:
                    w.replace_item(item, Item(key=_key_of(rest, lang), value=rest, kind=KIND_NOTE, turn=item.turn))
                    doomed = [d for d in doomed if d is not item]
                    result.decisions.append(Decision(UPDATE, None, item, "retracted in part"))
                    retracted_part = True
            rest = _without_clause(w.state.current_task, what, lang)
            if rest is not None:
                w.state.current_task = rest
                retracted_part = True
            if retracted_part or doomed:
                # What was retracted no longer describes the other items either.
                gone = {id(d) for d in doomed}
                for item in w.stored():
                    # A Chinese key is one run of characters: the words the segmenter finds in it may cut the thing (油爆虾).
                    if id(item) not in gone and (content_stems(what) & content_stems(item.key) or (lang == "zh" and len(what) >= 2 and what in item.key)):
                        w.replace_item(item, Item(key=_without(item.key, what, lang), value=item.value, kind=item.kind, turn=item.turn))
            if doomed:
                w.remove(doomed)
                result.removed += doomed
                result.decisions += [Decision(DELETE, None, d, "retracted") for d in doomed]
                patch.drop_items.append(_core(what))
            if doomed or retracted_part:
                # "啤酒不要了，换六罐可乐": the other clauses still say what they say.
                others = _without_clause(body, what, lang)
                # "Bunks in the barn for both of us, we'll leave the tent at home": the rest is still said.
                if others is None or not (any(v.text in others for v in st.values if not v.negated) or len(content_stems(others)) >= 2):
                    continue
                body = others
                st = read_sentence(others, lang, known)
        name = _self_name(body, lang)
        if name:
            if name not in w.state.user_profile.names:
                w.state.user_profile.names.append(name)
                patch.add_names.append(name)
            st.values = [v for v in st.values if v.text != name and name not in v.text]
        reminder = (_ZH_REMINDER if lang == "zh" else _EN_REMINDER).search(body)
        stored_now = w.stored()
        stored_before = _typed(stored_now)
        later_kinds = later_kinds_of(st, [read_sentence(later, lang, known) for later in sentences[index + 1:]])
        values = decide_values(st, stored_before, turn, notes=[i for i in stored_now if i.kind == KIND_NOTE], earlier_olds=rejected, earlier_mentioned=mentioned, earlier_names=named_people,
                               earlier_text=" ".join(sentences[:index]), turn_steady=turn_steady, later_kinds=later_kinds,
                               earlier_replaced=replaced_this_turn, earlier_out=out_people, earlier_added=[item for _, item in added_at])
        replaced_this_turn += [d.target for d in values.decisions if d.op == UPDATE and d.target is not None]
        again = [d.target for d in values.decisions if d.op == NOOP and d.target is not None and d.target.kind == "name"]
        named_people += again
        if not any(d.op in (UPDATE, ADD) and d.item is not None and d.item.kind == "name" for d in values.decisions) and L.rules_out(st.text, lang):
            out_people += again  # "Morag's not coming after all." — the next person named takes her place
        news = [v for v in st.values if not v.negated]
        # A value already stored, said again ("Joanna decided the Rutter's too similar"), is no replacement.
        given = [v for v in news if not any(same_value(s, v.text) for s in stored_before)]
        if st.values:  # a sentence with no value keeps what was ruled out before: "Hannah's off? Oh. Jess then."
            # "Gemma's on leave all next week.": what is ruled out carries unless the sentence gave its replacement.
            rejected = [v for v in st.values if v.negated and not any(n.kind == v.kind for n in given)]
        if not any(v.kind == "name" for v in st.values):
            rejected += _person_ruled_out(body, w.stored(), lang)  # "No wait, he's away that week."
        gave_nothing = not any(d.op in (ADD, UPDATE) for d in values.decisions)
        mentioned = values.mentioned if gave_nothing else []
        carried = st if (st.admission or st.change_cue or st.strong_cue) and gave_nothing else None
        if carried is None and not st.values:
            carried = st  # "The driver outline, I took it off the old revision. Fifty by eighty-five.": what it is about carries
        previous = st.text if carried is not None else ""
        replaced = w.apply(values.decisions)
        additive_turn = additive_turn or st.additive
        where = _clause_finder(st, lang, index)
        added_at += [(where(d.item.value), d.item) for d in values.decisions if d.op == ADD and d.item is not None]
        repeated_at += [(where(d.item.value if d.item is not None else d.target.value), d.target) for d in values.decisions if d.op == NOOP and d.target is not None and d.reason != SAID_AS_UNCHANGED]
        decided = {id(d.target) for d in values.decisions if d.target is not None}
        repeated_at += [(where(said), item) for said, item in _literal_mentions(st.text, w.stored(), lang) if id(item) not in decided and item.turn != turn]
        # "120 was last year's price": a stored value ruled out in a sentence of its own is named as the old one.
        repeated_at += [
            (where(v.text), item) for v in st.values if v.negated and not news
            for item in w.stored() if item.turn != turn and item.kind in ("time", "date", "quantity", "number") and id(item) not in decided and names_value(item, v.text)
        ]
        # The explicit forms for words that are not typed values: "change the latte to a
        # flat white", "Y instead of X", 把X改成Y; the old words are replaced in place.
        plain = not st.additive and not st.values  # "Hmm, semi-skimmed for the milk." ("Eighty-five was last year" only rules out)
        if not replaced:
            swap = _words_replaced(st, sentence, before, w.state, lang, plain=plain)
            if swap is None and lang == "en" and not additive_turn and not st.additive:
                swap = _chosen_instead(st.text, " ".join(sentences[:index]), w.state, turn, bare=not any(v.kind in ("time", "date", "number", "quantity") for v in st.values))
            if swap is None and lang == "en":
                swap = _chosen_over(sentence, w.state)
            if swap is None and lang == "zh" and not any(v.kind in ("time", "date", "number", "quantity") for v in st.values):
                swap = _zh_chosen_alone(st.text, "".join(sentences[:index]), w.state)
            if swap is None and lang == "zh":
                swap = _zh_moved_to(st.text, "".join(sentences[:index]), w.state)
            if swap is None and lang == "zh":
                swap = _zh_same_head_chosen(st.text, w.state)
            if swap is not None:
                # An earlier sentence of the turn that ruled the old thing out is its reason, not a
                # fact to rewrite with the new one ("Bergamot's too citrusy. Pink pepper.").
                w.remove([i for i in result.added if i.kind == KIND_NOTE and i.turn == turn and norm_key(swap[0]) and norm_key(swap[0]) in norm_key(i.value)])
                w.replace_words(*swap)
                replaced = True
        if reminder:
            step = _reminder_step(L.strip_zh_discourse(body) if lang == "zh" else body, reminder, lang)
            item = Item(key=_key_of(step, lang), value=step, kind=KIND_NOTE, turn=turn)
            w.add_note(item, "steps")
            patch.add_steps.append(step)
            continue
        note = st.note.strip(" ,，.。!！?？")
        correction = bool(replaced or (st.admission and values.decisions))
        if correction or L.talks_about_talk(st.raw, lang):
            # Of a correction, only the clauses that name no old value are kept ("they've shifted me to
            # pitch twenty-two, over by the fountain"); talk about the talk ("I've got her rate wrong")
            # is never kept, whatever else the sentence says.
            olds = [d.target.value for d in values.decisions if d.op in (UPDATE, DELETE) and d.target is not None] + [v.text for v in st.values if v.negated] + result.retired if correction else []
            kept = _clauses_naming_none(st.raw, olds, lang)
            note = read_sentence(kept, lang, known).note.strip(" ,，.。!！?？") if kept else ""
        if not correction and any(d.op == "add" for d in values.decisions):
            result.said.append(body)
        if name:
            note = re.sub(r"^(?:hi|hello|hey)\b[\s,]*", "", note, flags=re.I)
            name_clause = (_ZH_NAME if lang == "zh" else _EN_NAME).search(note) or (_EN_IM_NAME.search(note) if lang == "en" else None)
            if name_clause:
                note = (note[: name_clause.start()] + note[name_clause.end():]).strip(" ,，.。!！、")
                note = re.sub(r"^(?:and|but|so)\b\s*", "", note, flags=re.I)
        note = re.sub(r"^(?:and|so|but|then)\s+", "", note, flags=re.I).strip(" ,，.。!！")
        note_keys = content_stems(note)
        if len(note) < 2 or (not note_keys and len(note.split()) < 3 and lang != "zh") or _NEUTRAL.match(note) or (_ZH_CLOSING if lang == "zh" else _EN_CLOSING).match(note):
            continue
        said = set().union(*(content_stems(v.text) | content_stems(v.key) | content_stems(v.unit) for v in st.values)) if st.values else set()
        if st.values and note_keys <= said:
            continue  # the values said it all
        contexts = set().union(*(content_stems(v.context) for v in st.values)) if st.values else set()
        if st.values and len(note_keys) < 2 and note_keys <= said | contexts:
            continue  # "The call is": what is left is the values' own clause
        if correction and not note_keys:
            continue  # "so, it'll be": nothing of the talk is left to keep
        item = Item(key=_key_of(note if correction else st.frame, lang), value=note, kind=KIND_NOTE, turn=turn)
        if not correction and (not result.said or result.said[-1] != body):
            result.said.append(body)  # what a confirmation says back; a correction says its new value instead
        if (_ZH_PREFERENCE if lang == "zh" else _EN_PREFERENCE).search(note):
            w.add_note(item, "preferences")
        elif (_ZH_CONSTRAINT if lang == "zh" else _EN_CONSTRAINT).search(note):
            w.add_note(item, "constraints")
        elif not w.state.current_task and not correction:
            w.state.current_task = note  # the first plan is the task (a correction's leftover talk is none)
            result.added.append(item)
        else:
            w.add_note(item, "facts")
    if not additive_turn:
        _one_sentence_names_the_old(w, added_at, repeated_at, turn_steady)
        _belongings_follow(w, [item for _, item in added_at], turn)
    # "He'd rather black. Brown doesn't go with a thing he owns.": a note of this turn that only
    # gives the reason for a change keeps the old value alive; it goes.
    # 周阿姨 for 阿姨 names the same person more fully: 阿姨 is no replaced word.
    refined = {c.old for c in result.corrections if norm_key(c.old) and norm_key(c.old) in norm_key(c.new)}
    retired = [norm_key(old) for old in result.retired if norm_key(old) and old not in refined]
    # "that green's too close to ...": the reason names the replaced "dark green" by its last word.
    retired += [norm_key(old.split()[-1]) for old in result.retired if old not in refined and len(old.split()) > 1 and len(old.split()[-1]) >= 3 and lang != "zh" and old[:1].islower()]
    # "Charcoal shows every cat hair" for "charcoal grey": a compound colour by either colour.
    retired += [norm_key(part) for old in result.retired if lang != "zh" and len(old.split()) > 1 for part in re.split(r"[- ]", old) if is_colour_word(part)]
    # A person's first name alone names them too ("Carla's abroad that week" for Carla Mendes).
    retired += [norm_key(part) for old in result.retired if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+)+", old) for part in old.split()]
    # 小区东门 is named 东门 in "东门那个点撤了": a Chinese place, time or name by its last two characters.
    retired += [norm_key(old)[-2:] for old in result.retired if old not in refined and lang == "zh" and len(norm_key(old)) >= 3 and re.fullmatch(r"[\u3400-\u9fff]+", norm_key(old))]
    reasons = [i for i in result.added if i.kind == KIND_NOTE and any(r and _names_word(r, norm_key(i.value)) for r in retired)]
    if reasons:
        w.remove(reasons)
    _turn_down_things(w, words, turn, lang, task_before)
    _keys_without_replaced(w, result, lang)
    result.state = bounded(w.state)[0]
    return result


def _keys_without_replaced(w: _Working, result: RuleResult, lang: str) -> None:
    """No stored value keeps a replaced or turned-down thing in its key ("four bags" keyed by
    "clumping clay" once the clay is out, 五楼 by 星河厅 once that room is taken, "next month" by
    "Rohan's off Leeds" once Rohan is replaced): a key says what a value is about now, not who it was. Words the new value says again stay ("litre bags" of "fifteen litre bags")."""
    new_words = set().union(*(content_stems(c.new) for c in result.corrections)) if result.corrections else set()
    if lang == "zh":
        gone = [old for old in result.retired if len(old) >= 2 and not any(old in c.new for c in result.corrections)]
    else:
        gone_stems = set().union(*(content_stems(old) for old in result.retired)) - new_words if result.retired else set()
    for item in w.stored():
        # A note's key goes too when its text no longer says the thing ("...and white gloss on the
        # two outer ones" keyed "oak" after the swap); one that still says it keeps it.
        if not item.key:
            continue
        if lang == "zh":
            for old in gone:
                if old in item.key and old not in item.value:
                    item.key = item.key.replace(old, "").strip(" ，,")
        elif gone_stems and content_stems(item.key) & gone_stems:
            kept = [word for word in item.key.split() if not (content_stems(word) & gone_stems) or content_stems(word) & content_stems(item.value)]
            item.key = " ".join(kept)


def _without_said(text: str, m: _rejected.Mention, lang: str) -> str:
    """`text` without the clause that says a mention ("Grill the salmon for Dad and a veggie burger for
    me" -> "a veggie burger for me"), else without its words and their article."""
    rest = _without_clause(text, m.said, lang)
    # A clause that says more than the thing and a word or two keeps the rest of what it says.
    said_with_it = content_stems(text) - content_stems(rest or "") - content_stems(m.said)
    if rest is not None and content_stems(rest) and len(said_with_it) <= 2:
        return re.sub(r"^(?:and|but|so|or)\s+", "", rest, flags=re.I)
    if lang == "zh":
        return text.replace(m.said, "").strip(" ，,、")
    words = text.split()
    said = [bool(content_stems(word) & m.keys) for word in words]
    # Its article goes with it ("the salmon"), so no "Grill the for Dad" is left.
    dropped = [s or (words[i].lower() in ("a", "an", "the", "some", "any") and i + 1 < len(words) and said[i + 1]) for i, s in enumerate(said)]
    return " ".join(word for word, d in zip(words, dropped) if not d).strip(" ,;")


def _counts_only(item: Item, m: _rejected.Mention, lang: str) -> bool:
    """`item` is a count of the thing `m` says, and of nothing else: its unit words past the measure
    word (束 of 一束向日葵, "bags of" of "two bags of charcoal") are the mention's."""
    unit = item_unit_words(item)
    if lang == "zh":
        return unit.endswith(m.said) and len(unit) - len(m.said) <= 1
    words = content_stems(unit)
    return bool(words & m.keys) and len(words - m.keys) <= 1 and re.search(r"\bof\b", unit) is not None


def _turn_down_things(w: _Working, words: str, turn: int, lang: str, task_before: str) -> None:
    """Stored things the turn says again as the ones that no longer hold (scored by
    `memory.rejected`): the clauses that said them go, before and in this turn (there, the reason
    they go)."""
    result = w.result
    earlier = [i for i in w.stored() if i.turn < turn]
    task = w.state.current_task
    task_item = Item(key="task", value=task, kind=KIND_NOTE, turn=max(0, turn - 1)) if task and task == task_before else None
    pool = earlier + ([task_item] if task_item is not None else [])
    found = _rejected.mentions(words, pool, lang)
    if not found:
        return
    known = _rejected.stored_words(pool)
    changed = bool(result.corrections) or any(d.op == UPDATE for d in result.decisions)
    rows = [_rejected.features(m, words, known, lang, rules_changed=changed) for m in found]
    now_is: dict[int, Item] = {}  # an earlier item, as an earlier mention of the turn left it
    for m, down in zip(found, _rejected.turned_down(found, rows)):
        if not down:
            continue
        result.retired.append(m.said)
        now = {id(i) for i in w.stored()}
        for said_in in m.stored_in:
            if said_in is task_item:
                w.state.current_task = _without_said(w.state.current_task, m, lang)
                continue
            item = now_is.get(id(said_in), said_in)
            if id(item) not in now:
                continue
            rest = _without_said(item.value, m, lang)
            if not content_stems(rest) or (item.kind != KIND_NOTE and len(content_stems(rest)) < len(content_stems(item.value)) / 2):
                w.remove([item])  # not in `result.removed`: that is what the user cancelled, said back to them
                result.decisions.append(Decision(DELETE, None, item, "a thing the turn turns down"))
            else:
                now_is[id(said_in)] = Item(key=_without(item.key, m.said, lang), value=rest, kind=item.kind, turn=item.turn)
                w.replace_item(item, now_is[id(said_in)])
                result.decisions.append(Decision(UPDATE, None, item, "a thing the turn turns down, its clause left out"))
        # A count of only the thing turned down goes with it (一束向日葵, "two bags of charcoal"; not
        # "two 24-inch looms" when only "loom" is said).
        counted = [i for i in w.stored() if i.turn < turn and i.kind == KIND_QUANTITY and _counts_only(i, m, lang)]
        if counted:
            w.remove(counted)
            result.decisions += [Decision(DELETE, None, i, "the count of a thing the turn turns down") for i in counted]
        for item in [i for i in w.stored() if i.turn == turn and i.kind == KIND_NOTE and (content_stems(i.value) & m.keys if lang != "zh" else m.said in i.value)]:
            # This turn's clause that names it gives the reason it goes ("my aunt can't eat lemon").
            reason_left = _without_clause(item.value, m.said, lang)
            if reason_left is not None and content_stems(reason_left):
                w.replace_item(item, Item(key=_without(item.key, m.said, lang), value=reason_left, kind=item.kind, turn=item.turn))
            else:
                w.remove([item])
        for item in w.stored():
            if content_stems(m.said) & content_stems(item.key):
                item.key = _without(item.key, m.said, lang)
