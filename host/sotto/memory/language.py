"""Closed word classes the memory needs, in English and Chinese.

These are not phrasings of corrections: they are small grammatical classes (discourse
markers, talk about the talk, cue words of change, additive words, units that count
people), each a few dozen words, that any sentence is read against. What a sentence
changes is decided by code from the values it carries and the items already stored
(see `update.py`), never by matching a whole phrasing.
"""

from __future__ import annotations

import re

from sotto.memory.text import stem

# A word that says what is not ("can't make it", 五公斤的不够称).
_NEGATOR = re.compile(r"\b(?:no|not|never|can't|won't|isn't|wasn't)\b|n't\b|不|没", re.I)


def says_not(text: str) -> bool:
    return _NEGATOR.search(text) is not None


# Talk about the talk: an admission or a self-repair. Removed from what is stored; its
# presence says the sentence repairs something said earlier.
EN_ADMISSIONS = re.compile(
    r"\b(?:i (?:mixed up|swapped|switched|flipped|transposed|reversed|got) the (?:last|first|middle|final|end) (?:two|three|four|2|3|4)(?: (?:digits|numbers|letters))?(?: (?:round|around|wrong|the wrong way round))?"  # "the last two" are digits, not a value
    r"|i (?:(?:always|often|keep|tend to) )?(?:said|read|got|get|getting|heard|wrote|typed|had|put|gave you|told you|remembered|misread|misspoke|mixed)"
    r"(?: (?:it|that|this|them|those|(?:the|my|his|her|their|our|your|its) (?:\w+['’]s )?\w+|you the \w+|\w+ and \w+|those (?:two|three) \w+|the (?:two|three) \w+))?(?: (?:wrong|incorrectly|mixed up|muddled(?: up)?|confused|wrong before|backwards))"  # not a bare "up": "I get up at 6"
    r"|i misread(?: it| that)?|i misspoke|i misheard(?: it| that| the \w+)?|i (?:transposed|swapped|flipped) (?:the|two|some)? ?(?:digits|numbers|letters)|(?:the )?digits (?:were|are) (?:swapped|the wrong way round)|i mixed (?:it|that|this|them|those|\w+ and \w+|the \w+ and the \w+) up|i mixed up (?:the \w+|\w+ and \w+|them)"
    r"|i got (?:it|that|them) (?:mixed up|backwards|wrong)|(?:that was|that's|it was|my) (?:a )?(?:mistake|typo|bad|error|slip)"
    r"|(?:silly|stupid) me|my (?:mistake|bad|error)|scratch that|strike that|let me (?:correct|fix|rephrase) (?:that|it|myself)"
    r"|correction|i was wrong|i meant to say|i meant|what i meant was|i mean|i made a mistake|i take (?:it|that) back"
    r"|i was thinking of (?:the |our |my |his |her |their )?(?:wrong|other|old|previous|last|first) \w+|wrong (?:one|number|day|time|date|name)"
    r"|i(?: was|'d|'ve| had)? \w+(?: (?:at|of|on|in|up))? the wrong \w+)\b"  # "I was looking at the wrong week", "I booked the wrong day"
    r"|^(?P<said>[\w'-]+(?: [\w'-]+)?), sorry\b",  # "A74, sorry": the words before "sorry" are the repair
    re.I,
)
ZH_ADMISSIONS = re.compile(
    r"(?:我)?(?:刚才|刚刚|之前|前面)?(?:说|看|记|写|听|读|弄|搞|报|填|算|量|念|打|输|拼|抄|数|认|录|标)(?:错|反|混|岔)了?|(?:看|听|记|写|念)成(?:别的|了)|把[^，。！？,.!?\s]{1,8}?(?:看|听|记|写|念|读|认)成[^，。！？,.!?\s]{1,8}?了|口误|嘴瓢|我的错|更正一下|纠正一下|修正一下|更正|纠正"
)
# Discourse markers: fillers and interjections, at any place in a sentence.
EN_DISCOURSE = re.compile(
    r"\b(?:hmm+|h?m+|um+|uh+|erm+|er|ah+|oh+|ooh|oops|whoops|uh-oh|ugh|well|actually|sorry|so sorry|wait|hold on|hang on"
    r"|no wait|oh wait|you know|like i said|okay so|ok so|so|anyway|anyways|right|alright|all right|ok(?:ay)?|hey|hi|hiya|hello"
    r"|please|thanks|thank you|yeah|yes|yep|nope|no no|no|oh no|apologies|pardon|excuse me|to be honest|honestly"
    r"|basically|by the way|one more thing|also|and|but|then|now)\b",
    re.I,
)
# Only these are removed wherever they stand; the rest only at the start of a clause.
EN_DISCOURSE_ANYWHERE = re.compile(
    r"(?:^|(?<=[\s,;.!?]))(?:hmm+|um+|uh+|erm+|er|ah+|oops|whoops|uh-oh|ugh|actually|sorry|you know|i mean|basically|honestly)(?=[\s,;.!?]|$)",
    re.I,
)
# 那, 好, 行 and 对 open words too (那天, 好几个, 行李, 对手): a filler only before a pause.
ZH_DISCOURSE = re.compile(
    r"^(?:嗯+|呃+|哦+|啊+|唉|哎呀?|诶|欸|那个|这个嘛|就是|就是说|对了|还有|另外|然后|所以|那(?=[，,、\s就我你他她咱])|好的|好吧|(?:好|行|对)(?=[，,、\s。！!]|$)|不对|不是不是|等一下|等等|稍等|不好意思|抱歉|对不起|其实|话说|我想想|让我想想|算了算了)[，,、\s]*"
)
ZH_DISCOURSE_ANYWHERE = re.compile(r"嗯+|呃+|不好意思|抱歉|对不起|哦+(?=[，,。！？!?])")  # "周五下午哦，三点": a particle before a pause

# Cue words of change: with one of them, a value of a kind already stored replaces it
# even when the sentence names no key ("make it 7", "Friday works better").
EN_CHANGE_CUES = re.compile(
    r"\b(?:not|n't|instead|rather|than|better|prefer|preferably|change|changed|changing|switch|switched|move|moved|"
    r"push|pushed|reschedule|rescheduled|cancel|cancels|cancelled|canceled|bump|bumped|shift|shifted|update|updated|replace|swap|swapped|(?:make|call) (?:it|that|this|them|those|the \w+)|"
    r"turn (?:it|that) into|more like|closer to|thinking about it|(?:will|'ll) have to be|has to be|have to do|come to think of it|on reflection|having thought about it|no longer|anymore|any more|after all|correct(?:ed|ion)?|wrong|mistake|actually|now|new|different|"
    r"go with|goes? better|raise|raised|lower|lowered|drop (?:it|that|them|this) to|increase|increased|reduce|reduced|put (?:me|him|her|us|them) (?:in|on|down) for|put (?:me|him|her|us|them) (?:in|on)|i meant|meant to say|works? better|suits? (?:\w+ )?better|(?:up|down) to|so (?=(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a dozen)\b)|earlier|later|earliest|latest|soonest|in fact|in total|altogether|all told|in all|total of|again|let's|let us|covers?|covering|cover for|fill(?:s|ing)? in|stand(?:s|ing)? in|step(?:s|ping|ped)? (?:in|up)|sub(?:s|bing|bed)? (?:in|for)|in (?:his|her|their) place|tak(?:es|ing) over|take over|substitut\w*|changed hands|would (?:be|suit|work|rather)|'d (?:be|suit|work|rather)|(?:suit|suits|work|works) (?:me|us|them|him|her) (?:better|best|more)|then)\b",
    re.I,
)
ZH_CHANGE_CUES = re.compile(r"一共|总共|加起来|(?:这样|那)就是|就行|就好|就可以|(?<![是对])吧[。！!]?$|(?<![是对])吧[，,]|不是|改|换|变|调|挪|推|延|提前|提到|错|不对|应该|其实|实际上|还是|更好|比较好|最好|而是|现在|重新|新的|取而代之|(?<![零〇一二两三四五六七八九十百千万几半\d这那每哪])只|那就|(?:得了|要得)[。！!]?$")  # 只 "only"; 两百只, 这只 count; 就五粮液得了, 也要得: that will do
# A value said with one of these adds to what is stored ("another", "also a 3 pm call").
EN_ADDITIVE = re.compile(r"(?<!no )\b(?:also|another|too(?=\s*(?:[,.;:!?)]|$|(?:please|then|now|and|but|as|if|so|though|for|because|i|we|he|she|they)\b))|as well|plus|second(?! thoughts?)|extra|additional|besides|each|separate|add(?:s|ed|ing)? (?:a|an)(?= \w))\b", re.I)  # "no second e" adds nothing; "too" is "also" at a clause's end ("me too", "Sam's coming too, so"), a degree before a word ("too sweet")
# 又 adds ("又来了两个"), except a deed done again ("又量了一遍", "又问了一下"): a re-check, not more of anything.
ZH_ADDITIVE = re.compile(r"也|还要|还有|另外|再加|再来|多加|又(?![\u4e00-\u9fff]{1,3}?(?:一遍|一次|一下|遍))|第二|另一")
# A thing or a person ruled out: "the cat's gone off the clay", "Morag's not coming", "he's off
# sick", 她不去了, 老刘嗓子哑了来不了.
EN_RULED_OUT = re.compile(r"\b(?:not|never|no|nobody|nothing|none|too|off|out|skip|without|poorly|unwell|ill)\b|n't\b", re.I)
ZH_RULED_OUT = re.compile(r"不|没|太|别|来不了|去不了|病了|生病|请假|出差|有事")


def rules_out(text: str, lang: str) -> bool:
    return (ZH_RULED_OUT if lang == "zh" else EN_RULED_OUT).search(text) is not None


# A relative change of a quantity: "two more", 多两个.
EN_DELTA = re.compile(r"\b(?:more|extra|additional|fewer|less|minus|plus)\b", re.I)
ZH_DELTA = re.compile(r"多|少|加|减")
# Units that count people: "eight people", "nine of us", "a party of six".
EN_PEOPLE_UNITS = frozenset(
    "people persons person guests guest of us of them adults adult grown-ups grown-up pax diners attendees folks heads seats covers participants".split()
)
# Nouns that count people of one sort (stems): a bare head count ("twenty-two coming") counts any of them.
EN_PEOPLE_NOUNS = frozenset(
    stem(w) for w in (
        "kids children child students pupils players members passengers visitors delegates friends colleagues campers riders "
        "swimmers boys girls teens teenagers runners walkers singers dancers workers volunteers families relatives cousins"
    ).split()
)
ZH_PEOPLE_UNITS = frozenset(["人", "位", "个人", "口人", "位客人", "个客人"])
# A Chinese noun for people ends in a morpheme that says so (队员, 学生, 朋友, 客人) or is a word of
# kin or address (阿姨, 小朋友): 两个阿姨 count what 八个人 count.
_ZH_PERSON_NOUN = re.compile(
    r"^[个位名口]?(?:[\u4e00-\u9fff]*(?:人|员|生|友|客|家长|孩子?|小孩|朋友|同学|老人|娃|爸爸|妈妈|爷爷|奶奶|外公|外婆|姥姥|姥爷"
    r"|哥哥|姐姐|弟弟|妹妹|叔叔|阿姨|舅舅|姑姑|大爷|大妈|大姐|大哥|师傅))$")


def counts_people(unit: str, lang: str) -> bool:
    """The counted noun is people: "kids", "guests", 个阿姨, 名队员 (not 个花盆)."""
    u = unit.strip().lower()
    if lang == "zh":
        return u in ("位", "名") or _ZH_PERSON_NOUN.match(u) is not None
    words = u.split()
    return bool(words) and (words[-1] in ("people", "guests", "adults", "friends", "kids", "children", "colleagues") or stem(words[-1]) in EN_PEOPLE_NOUNS)

# Words that carry no key of their own: generic verbs, evaluations, pronouns.
EN_EMPTY_WORDS = frozenset(
    """make made do did done go going goes went be being been is are was were will would shall should can could may might must
    have has had get got let lets say said says tell told think thought want wanted need needed like liked take took put set
    work works worked working suit suits suited fine good great better best okay ok perfect nice instead rather than
    now then there here it that this these those thing things one ones just really actually only also still maybe probably
    sure right wrong mistake correct change changed switch move moved push update new different same again time day
    what which who where when how there's it's that's let's we'll i'll you'll they'll we're they're i'm you're don't doesn't
    won't can't isn't aren't wasn't weren't didn't shouldn't couldn't wouldn't lot bit kind sort way mean meant sorry wait
    hmm um uh oh well please thanks thank yes no yeah okay alright after all before earlier later soon today""".split()
)
ZH_EMPTY_WORDS = frozenset(
    "是 的 了 吧 吗 呢 啊 要 会 能 可以 就 都 也 还 把 给 被 让 这 那 个 一 我 你 他 她 我们 你们 他们 改 换 变 成 为 到 现在 其实 应该 "
    "不是 而是 还是 好 更 比较 最 对 不对 错 说 刚才 一下 吧 啦 哦 嗯 呃 那个 这个 人 来 去 有 没 不".split()
)
EN_PRONOUN_RE = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours)\b", re.I)


# Fillers only when a pause follows them ("Right, ..." but "right shoulder").
_EN_ONLY_BEFORE_A_PAUSE = frozenset("right alright all right well okay ok yes yeah no nope now wait hold on hang on hi hello hey".split())


# Recognised words have no commas: "wait change the latte ..." - a marker followed by the start
# of a clause is still a marker.
_CLAUSE_START = re.compile(
    r"\s+(?:change|make|move|swap|switch|cancel|actually|sorry|it's|its|it is|that's|the|i|i'm|we|we're|let's|can|could|no|not|scratch|sorry)\b", re.I
)


def _keep_repaired_words(m: re.Match[str]) -> str:
    # "A74, sorry" keeps A74; "Oh, sorry" and "My bad, sorry" keep nothing.
    said = m.group("said")
    if said is None or EN_DISCOURSE.sub("", said).strip(" ,") == "" or EN_ADMISSIONS.fullmatch(said):
        return " "
    return f" {said}"


def strip_en_discourse(text: str) -> str:
    """The clause without discourse markers, admissions and leading conjunctions."""
    out = EN_ADMISSIONS.sub(_keep_repaired_words, text)
    out = EN_DISCOURSE_ANYWHERE.sub(" ", out)
    out = _EN_FILLER_BETWEEN_COMMAS.sub(",", out)  # "Dr. Okafor if possible, wait, on the 12th"
    out = re.sub(r"\s+", " ", out).strip(" ,;:-—–")
    for _ in range(6):
        before = out
        m = EN_DISCOURSE.match(out)
        if m and m.end() > 0 and m.group(0).lower() in _EN_ONLY_BEFORE_A_PAUSE and not re.match(r"\s*[,.!?;:-]", out[m.end():]) and not _CLAUSE_START.match(out[m.end():]):
            m = None  # "right shoulder", "well done", "no sugar": a word of the sentence, not a filler
        if m and m.end() > 0:
            rest = out[m.end():]
            # "so eight people now": "so" goes; "now" at the start goes too; but keep a word
            # that is the whole clause.
            if rest.strip(" ,;:-—–!."):
                out = rest.strip(" ,;:-—–")
        if out == before:
            break
    out = _EN_TRAILING_DISCOURSE.sub("", out)  # "..., wait.": a filler said after the clause
    return out.strip(" ,;:-—–")


_EN_FILLER_BETWEEN_COMMAS = re.compile(r"[,;]\s*(?:wait|sorry|hmm+|um+|uh+|erm+|oops|whoops|actually|i mean)\s*[,;]", re.I)
_ZH_FILLER_BETWEEN_COMMAS = re.compile(r"[，,]\s*(?:哦|嗯|呃|抱歉|不好意思)\s*[，,]")
_EN_TRAILING_DISCOURSE = re.compile(r"[,;]\s*(?:wait|sorry|hmm+|um+|uh+|erm+|oops|whoops|actually|i mean)\s*[.!?]*\s*$", re.I)
_ZH_TRAILING_DISCOURSE = re.compile(r"[，,]\s*(?:哦|嗯|呃|抱歉|不好意思)\s*[。！？!?.]*\s*$")


def strip_zh_discourse(text: str) -> str:
    out = ZH_ADMISSIONS.sub("", text)
    out = ZH_DISCOURSE_ANYWHERE.sub("", out)
    out = _ZH_FILLER_BETWEEN_COMMAS.sub("，", out)  # "四点放学，哦，周五早"
    out = out.strip(" ，,、；;：:")
    for _ in range(6):
        before = out
        out = ZH_DISCOURSE.sub("", out).strip(" ，,、；;：:")
        if out == before:
            break
    return _ZH_TRAILING_DISCOURSE.sub("", out)  # "……，哦。": a filler said after the clause


def has_admission(text: str, lang: str) -> bool:
    return (ZH_ADMISSIONS if lang == "zh" else EN_ADMISSIONS).search(text) is not None


# Words that make a clause talk about what was said: the speaker getting something wrong ("I got the
# lunch time wrong", 名字错了, 记岔了), not a fault of a thing ("something's wrong with the pump", 这家不错).
_EN_TALK = re.compile(r"\b(?:i|we)\b[^,.;:!?]*\b(?:wrong|a mistake|mixed (?:it |that |them )?up|muddled?|misread|misheard|misspoke)\b|\btypo\b", re.I)
_ZH_TALK = re.compile(r"(?<![不没])错了|[弄记搞看听说]岔|口误|嘴瓢")


def talks_about_talk(text: str, lang: str) -> bool:
    return has_admission(text, lang) or (_ZH_TALK if lang == "zh" else _EN_TALK).search(text) is not None


# A statement with a tag that asks to confirm it ("…, right?", 菜刀十块，是吧？): the values
# are the user's, said to be checked; new ones are kept, a stored one is only checked.
_EN_TAG_CHECK = re.compile(r"[,;]?\s*(?:right|yeah|yes|correct|ok|okay|isn't it|wasn't it|aren't they|didn't you|is that right|that right|you said)\s*[?？]\s*$", re.I)
_ZH_TAG_CHECK = re.compile(r"(?:对吧|是吧|对不对|是不是|没错吧|对吗|是吗)[？?。]?\s*$")


def is_tag_check(text: str, lang: str) -> bool:
    return (_ZH_TAG_CHECK if lang == "zh" else _EN_TAG_CHECK).search(text) is not None


def has_change_cue(text: str, lang: str) -> bool:
    if lang == "zh":
        return ZH_CHANGE_CUES.search(text) is not None
    return any(not _in_a_name(text, m) for m in EN_CHANGE_CUES.finditer(text))


def _in_a_name(text: str, m: re.Match[str]) -> bool:
    # "Lower Mill Woods", "New Street": a capitalised cue word inside a sentence is part of a name.
    return m.group(0)[:1].isupper() and m.start() > 0 and re.search(r"[.!?:;]\s*$|^\s*$", text[: m.start()]) is None


# Cues that decide for the whole sentence, wherever they stand: a preference between values.
EN_STRONG_CUES = re.compile(
    r"\b(?:instead|rather|better|prefer|preferably|would suit|suits? \w+ better|works? better"
    r"|easier|handier|simpler|quicker|cheaper|closer|nearer|safer|nicer|sooner|more convenient)\b",  # comparatives choose between values
    re.I,
)
ZH_STRONG_CUES = re.compile(r"还是|改成|改到|换成|更好|比较好|而是|不是|更[\u4e00-\u9fff]")  # 更方便: a preference between values


def has_strong_cue(text: str, lang: str) -> bool:
    return (ZH_STRONG_CUES if lang == "zh" else EN_STRONG_CUES).search(text) is not None


def has_additive(text: str, lang: str) -> bool:
    return (ZH_ADDITIVE if lang == "zh" else EN_ADDITIVE).search(text) is not None
