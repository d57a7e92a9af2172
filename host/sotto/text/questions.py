"""Is a sentence a question? From its structure, so that a recogniser's unpunctuated,
lowercase words ("wait what time is the reminder again", 我订的是哪天) are told apart
from statements as well as typed ones are.

    asks("did i say tuesday or wednesday", "en")   # True
    asks("what i need is a taxi at six", "en")     # False: a free relative, not a question

English: after any leading discourse words (wait, so, okay, and, sorry ...), a clause is a
question when it opens with
- a wh-word that is not followed straight away by a subject ("what i need ...", "when i get
  home ...", "where we're going ..." are free relatives or adverbial clauses) and not an
  exclamation ("what a day", "how i wish ...");
- an auxiliary or modal followed by a subject ("did i say ...", "isn't the party ..."), not
  by a bare verb (a dropped subject: "can't make it on monday", "should be there by noon",
  "do remind me", "don't forget the milk");
or ends in a tag ("..., right", "..., wasn't it", "..., didn't we") or in "again" after a bare
noun phrase ("and the address again").
Chinese: a final 吗 or 来着; a final 呢 after a question word or a noun phrase; a final 吧
after a guess with 是 or a tag (对吧); A-not-A (是不是, 到了没有) and A还是B; a question word
(几, 什么, 哪, 多少, 谁, 怎么, 为什么) unless it is an indefinite (什么都, 哪天都行, 没什么,
好几个, 这几天, 撑不了几天, 有几个 ...) or sits inside "I don't know ..." (不知道他几点到). A
sentence written with a full stop asks only by a final particle or a question word.

Requests and proposals (could we move it to eight, 改成七点吧) are statements here too;
the memory reader (memory/statements.py) decides about requests to tell, and about
punctuated yes/no questions that carry a value.
"""

from __future__ import annotations

import re

# ------------------------------------------------------------------ English

_DISCOURSE = frozenset(
    "wait so okay ok oh and but sorry um uh umm uhm er hmm well hey right alright yeah yes no now then also "
    "actually anyway thanks".split()
)
_WH = frozenset("what when where who whom whose which why how".split())
_WH_CONTRACTED = re.compile(r"^(?:what|when|where|who|why|how)(?:'s|'re|'d|'ll)$")
_AUX = frozenset(
    "is are was were am do does did can could will would should shall may might must have has had "
    "isn't aren't wasn't weren't don't doesn't didn't can't couldn't won't wouldn't shouldn't haven't hasn't hadn't".split()
)
_SUBJECT = frozenset(
    "i you we he she it they there this that these those the a an my your our his her their its "
    "someone somebody anyone anybody everyone everybody anything everything something".split()
)
# A subject pronoun with its verb contracted: "where we're going", "when i'm back".
_SUBJECT_CONTRACTED = re.compile(r"^(?:i|you|we|he|she|it|they|that|there)'(?:m|re|s|ll|d|ve)$")
# Words after how/what/which that still belong to the wh-phrase ("how many people", "what time").
_HOW_DEGREE = frozenset("many much long far often old big late early soon".split())
_TAG_PRONOUNS = frozenset("i you we he she it they".split())
# "right" ends a tag question only after a clause: not in "that's right", "turn right", "all right".
_NOT_TAG_BEFORE_RIGHT = frozenset("that's thats is it's all turn the on to your my left exactly just quite".split())
_DETERMINERS = frozenset("the my your our his her their that this those these and".split())


def _tokens(sentence: str) -> list[str]:
    text = sentence.lower().replace("’", "'")
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text)


def _clause_start(words: list[str]) -> list[str]:
    i = 0
    while i < len(words) - 1 and words[i] in _DISCOURSE:
        i += 1
    return words[i:]


def _is_subject(word: str) -> bool:
    return word in _SUBJECT or _SUBJECT_CONTRACTED.match(word) is not None


def _en_wh_question(words: list[str]) -> bool:
    first = words[0]
    if _WH_CONTRACTED.match(first):
        return True  # "what's the plan", "where's the key"
    rest = words[1:]
    if not rest:
        return True  # "what", "why"
    nxt = rest[0]
    if first in ("what", "how") and nxt in ("a", "an", "about"):
        return False  # "what a lovely day": an exclamation; "how about thursday": a proposal
    if first == "how" and nxt in _HOW_DEGREE:
        rest = rest[1:]  # "how many people is it for"
        if rest and rest[0] not in _AUX and not _is_subject(rest[0]):
            rest = rest[1:]  # the noun counted: "how many people ..."
    elif first in ("what", "which", "whose") and nxt not in _AUX and not _is_subject(nxt):
        rest = rest[1:]  # "what time does ...", "which day did ...", "whose car are ..."
    if not rest:
        return True
    # A subject straight after the wh-phrase: a free relative or an adverbial clause
    # ("what i need is ...", "when i get home ...", "who i call first ..."), not a question.
    return not _is_subject(rest[0])


def _en_aux_question(words: list[str]) -> bool:
    """An auxiliary or modal first: a question when a subject follows it (not a bare verb)."""
    if len(words) < 2:
        return False
    return _is_subject(words[1])


def _en_tag(words: list[str]) -> bool:
    if len(words) >= 3 and words[-1] == "right" and words[-2] not in _NOT_TAG_BEFORE_RIGHT:
        return True  # "the meeting is at three right"
    if len(words) >= 4 and words[-1] in _TAG_PRONOUNS and words[-2] in _AUX:
        return True  # "that was for four people wasn't it", "we said noon didn't we"
    return False


def _en_again(words: list[str]) -> bool:
    """ "and the address again", "the pickup time again": a bare noun phrase to recall."""
    return len(words) >= 2 and words[-1] == "again" and words[0] in _DETERMINERS


def _en_asks(sentence: str) -> bool:
    words = _tokens(sentence)
    if not words:
        return False
    clause = _clause_start(words)
    if clause[0] in _WH or _WH_CONTRACTED.match(clause[0]):
        if _en_wh_question(clause):
            return True
    elif clause[0] in _AUX and _en_aux_question(clause):
        return True
    return _en_tag(clause) or _en_again(clause)


# ------------------------------------------------------------------ Chinese

_ZH_WH = re.compile(r"为什么|什么时候|什么|怎么|哪里|哪儿|哪|多少|谁|几(?!乎)")  # 几乎 is "almost"
# A question word used as an indefinite ("whatever", "any", "a few"), not asking.
_ZH_INDEFINITE = re.compile(
    r"(?:什么|哪\w{0,2}|谁|多少|怎么样?|几\w{0,2})(?:都|也)"  # 什么都不想吃, 随便哪天都行, 谁都可以
    r"|(?:没|没有|不)什么"  # 没什么事了
    r"|(?:好|这|那|前|后|过|不了|没有?|多|十)几"  # 好几个, 这几天, 多几个, 十几个; negated: 撑不了几天, 没几个人
    r"|有几个\w+[^吗呢？?]{2,}$"  # 有几个问题我明天再说
    r"|[请买要带吃喝写问订发加拿送寄印]几[个位只本张份件箱袋]"  # 请几个朋友, 多发几个
)
# 不知道几点, 我得排一下谁接送: the question word is the object of a verb of finding out, not asked.
_ZH_EMBEDDING = re.compile(r"不知道|不记得|不清楚|忘了|不确定|(?:一下|看看|问问|想想|商量|打听)(?=[^，。,.]{0,3}(?:谁|什么|哪|几|多少|怎么))")
_ZH_A_NOT_A = re.compile(r"(\w)不\1|(\w)没\2|没有$|了没$|对不对|好不好|行不行")
_ZH_DISCOURSE = re.compile(r"^(?:嗯|呃|哦|啊|那个|这个|就是|好|好的|对了|然后|还有)+")


def zh_asks_with_question_word(text: str) -> bool:
    """The text has a question word used to ask (几点, 哪天, 多少钱), not as an indefinite
    (好几个, 多发几个, 哪天都行, 没什么)."""
    return _ZH_WH.search(text) is not None and _ZH_INDEFINITE.search(text) is None


def _zh_asks(sentence: str) -> bool:
    # A full stop marks a statement: then only a final particle or a question word can ask
    # ("学费一千八，对吧。" and "还是周六去吧，人少。" were written as statements).
    full_stop = sentence.rstrip().endswith(("。", "！", ".", "!"))
    s = re.sub(r"[\s，,。.！!]+", "", sentence)
    if not s:
        return False
    if s.endswith(("?", "？")):
        return True
    s = s.rstrip("？?")
    if s.endswith(("吗", "来着")) or (s.endswith("么") and not s.endswith(("什么", "怎么", "这么", "那么", "多么"))):
        return True  # 么 as the particle, not the end of 什么 / 怎么
    indefinite = _ZH_INDEFINITE.search(s) is not None or _ZH_EMBEDDING.search(s) is not None
    asks_with_wh = zh_asks_with_question_word(s) and not indefinite
    if s.endswith("呢"):
        # "我的航班呢" (where is it?), "他几点到呢"; not "还早呢" (it is still early).
        return asks_with_wh or _ZH_DISCOURSE.sub("", s[:-1]).startswith(("我的", "你的", "他的", "她的", "那", "这"))
    if full_stop:
        return asks_with_wh
    if s.endswith("吧"):
        # A guess to confirm ("提醒是明天吧", "三点对吧"); not a suggestion ("改成七点吧", "我们走吧").
        body = _ZH_DISCOURSE.sub("", s[:-1])
        return body.endswith(("对", "是", "没错")) or (
            "是" in body and not re.search(r"就|改|换|咱们|我们|还是", body))
    if "还是" in s and not s.startswith("还是"):
        return True  # "周二还是周三"
    if _ZH_A_NOT_A.search(s) and not indefinite:
        return True  # "是不是四个人", "他们到了没有"
    return asks_with_wh


def asks(sentence: str, lang: str) -> bool:
    """The sentence asks something (a question), judged from its words and their order;
    a final question mark also counts."""
    if lang == "zh":
        return _zh_asks(sentence)
    if sentence.rstrip().endswith("?"):
        return True
    return _en_asks(sentence)
