"""One sentence of the user's, read into values with kinds and keys.

A statement is what the update step (`update.py`) compares with the stored items:
- its values, each a verbatim span with a kind (time, date, quantity with its unit,
  number/ID, name, place), what it is about (its key) and its qualifiers (the other
  values said with it, "on Wednesdays" for "1:30");
- its frame: the words that are not values, discourse or talk about the talk ("book a
  table", "bring a bunch of flowers to the pickup"), stored as a note when it says
  something of its own;
- its signals: a question, a cue of change ("instead", "better than", 改成), an
  admission ("I read it wrong", 我看错了), an additive word ("also", "another").

Nothing here decides what changes; it only reads the sentence.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from sotto.memory import language as L
from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME
from sotto.memory.text import EN_DATE as _EN_DATE
from sotto.memory.text import EN_MONTHS as _MONTHS
from sotto.memory.text import EN_NUMBER_WORDS, EN_STOPWORDS, ZH_FUNCTION_CHARS, stem
from sotto.memory.text import EN_WEEKDAYS as _WEEKDAYS
from sotto.text.questions import asks

# ------------------------------------------------------------------ English value patterns

_NUM_WORD = rf"(?:{EN_NUMBER_WORDS}|a dozen|a couple of|a couple|a few|a pair of)"
_NUM = rf"(?:\d+(?:[.,]\d+)?|(?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))*)(?: dozen)?"
_AMPM = r"(?:a\.?m\.?|p\.?m\.?)(?![a-z])"
_EN_TIME = re.compile(
    rf"\b(?:(?:half past|quarter past|quarter to|half|(?:five|ten|twenty|twenty-five|twenty five) (?:past|to)) (?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{{1,2}})\b(?: {_AMPM})?(?! (?:a|an|the|of|[a-z]+s)\b)"
    rf"|\d{{1,2}}(?::\d{{2}})?\s*{_AMPM}|\d{{1,2}}:\d{{2}}(?:\s*{_AMPM})?|(?:{_NUM})(?:[- ](?:o'clock|oh \w+))"
    rf"|(?:{EN_NUMBER_WORDS})(?:[- ](?:thirty|fifteen|forty-five|forty five|twenty|ten|oh five|forty|fifty))?\s*{_AMPM}"
    rf"|noon|midday|midnight)",
    re.I,
)
# A bare number after "at"/"by"/"until"/"around" is a time: "at seven", "back by six".
_DAYPART = r"(?: in the (?:morning|afternoon|evening)| at night| tonight| sharp)?"
_HOUR = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[01]?\d|2[0-4])"
_EN_BARE_TIME = re.compile(rf"\b(?:at|by|until|till|around|before|after|from) ({_HOUR}(?:[- ](?:thirty|fifteen|forty-five|o'clock))?{_DAYPART})\b(?![.,]\d)(?!\s?(?:k?hz|mhz|ghz|v|volts?|amps?|a|mm|cm|m|km|kg|g|mg|ml|l|percent|per cent|%|degrees?|watts?|w)\b)(?! (?:people|persons|guests|of|[a-z]+s\b))", re.I)
_UNIT_WORD = r"[a-z][a-z'-]*"
_EN_QUANTITY = re.compile(
    rf"(?:\$\s?\d+(?:[.,]\d+)?|\b(?:{_NUM}|{_NUM_WORD}))(?:(?:\s|-)(?P<delta>more|extra|additional|fewer|less))?"
    rf"(?:\s|-)(?P<unit>of us|of them|(?:{_UNIT_WORD})(?:(?:\s|-)(?!(?:{EN_NUMBER_WORDS})\b)(?:{_UNIT_WORD}))?)",
    re.I,
)
# Numbers said as one value: "132 over 85", "age 9-10", "14.06.2019", "18 k", "300×600", "3 by 4 m".
_EN_NUMERIC = re.compile(
    r"\b(?:[A-Z] ?)?\d+(?:[.,]\d+)*(?:\s?(?:-|/|×|\*|x|over|by)\s?\d+(?:[.,]\d+)*)+(?:\s?(?:k|km|kg|g|mg|ml|mm|cm|m|l|M|GB|MB|TB|mAh|W|V|%))?\b(?!\s?(?:am|pm|a\.m|p\.m)\b)"
    r"|\b\d+(?:\.\d+){2,}\b"
    r"|\b\d+(?:\.\d+)?\s?(?:k|km|kg|mg|ml|mm|cm|GB|MB|TB|mAh|%)(?![\w'])"
)
_EN_NUMBER_PHRASE = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|"
    r"eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand)"
)
# Numbers said in words as one value: "fifty by seventy", "one point six", "a hundred and eighty",
# "three thousand two hundred", "eighty-four fifty".
_EN_SPOKEN_TIME = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) (?:oh five|o five|ten|fifteen|twenty|twenty-five|thirty|"
    r"thirty-five|forty|forty-five|fifty|fifty-five)\b(?! (?:of|percent|pounds|quid|dollars|euros|pence|minutes|seconds|kilos|grams|people|pounds)\b)",
    re.I,
)
_EN_AND = r"(?:[- ]|(?<=hundred) and |(?<=thousand) and )"  # "a hundred and eighty"; "one and two" is a list
_EN_WORD_NUMBER = rf"{_EN_NUMBER_PHRASE}(?:{_EN_AND}{_EN_NUMBER_PHRASE})*"
_EN_WORD_NUMERIC = re.compile(
    rf"\b(?:a )?{_EN_WORD_NUMBER} (?:by|x|point|over) {_EN_WORD_NUMBER}\b|\b(?:a )?{_EN_NUMBER_PHRASE}(?:{_EN_AND}{_EN_NUMBER_PHRASE})+(?: and a (?:half|quarter))?\b"
    rf"|\b(?:{_EN_NUMBER_PHRASE}|\d+) and a (?:half|quarter)\b",
    re.I,
)
_ZH_DIGIT = "零〇一二三四五六七八九幺"
_ZH_CLASSIFIERS_FOR_NUMBERS = "个位张只件台辆瓶杯份次天晚间本盒包袋箱斤公克米里块元毛分钟小时岁层号楼人口片粒支条把双套碗盘桌束朵对副顿周节趟兆平度月日年届期栋单室寸码棵株盆颗罐桶卷升伏安瓦"
_ZH_NUMERIC = re.compile(
    rf"(?<![A-Za-z0-9])[A-Za-z]\s?(?:\d+|[{_ZH_DIGIT}十百两]+)(?![A-Za-z0-9-])"
    rf"|(?:\d+|[{_ZH_DIGIT}十百两]+)个?(?:G|GB|M|MB|T|TB|K)(?![A-Za-z])"  # 三十个G, 500M
    rf"|(?<![A-Za-z0-9])\d+[A-Za-z]{{1,2}}(?![A-Za-z0-9])"  # 型号后面是13B
    rf"|(?:\d+|[{_ZH_DIGIT}十百千两]+)\s?(?:乘|×|x|\*)\s?(?:\d+|[{_ZH_DIGIT}十百千两]+)"  # 三百乘六百
    rf"|(?=(?:[{_ZH_DIGIT}][，,\s]*){{7}})[{_ZH_DIGIT}]{{3,}}(?:[，,\s]+[{_ZH_DIGIT}]{{3,}})+"  # a phone number read in groups (seven digits and more)
    rf"|(?<![零〇一二两三四五六七八九十百千万点第])[一二两三四五六七八九十][零〇一二两三四五六七八九十百千万]*[百千万十][零〇一二两三四五六七八九十百千万]*(?:点[零一二三四五六七八九]+)?"
    rf"(?![零〇一二两三四五六七八九十百千万点{_ZH_CLASSIFIERS_FOR_NUMBERS}])"  # 一百一十五, 三百五, 七十七点九: a number said alone
)
# Choices from closed sets: colours and sizes ("the silver one", "medium", 米色的, 大号).
_EN_COLOURS = (
    "red|orange|yellow|green|blue|purple|violet|pink|brown|black|white|grey|gray|silver|gold|golden|navy|beige|cream|ivory|"
    "charcoal|teal|turquoise|maroon|burgundy|olive|lilac|lavender|mint|coral|peach|tan|khaki|dove|magenta|mustard|bronze|copper"
)
_EN_CHOICE = re.compile(
    rf"\b(?<!flat )(?:(?:light|dark|pale|bright|sky|royal|forest|dusty|deep|matt|matte)[- ])?(?:{_EN_COLOURS})\b(?![- ](?:friday|card|medal|standard)\b)"
    r"|\b(?:extra[- ]small|small|medium|large|extra[- ]large|XS|XL|XXL|king[- ]size|queen[- ]size|single|double)\b(?=\s+(?:for|one|size|please|then|$)|[,.;!?]|$)"
    r"|(?<=\bthe )(?:extra[- ]small|small|medium|large|extra[- ]large)\b(?=\s+(?:is|was|comes|came|fits|fitted|runs|ran|'s)\b)"  # "the medium comes up big"
    r"|\b(?:daily|weekly|fortnightly|monthly|quarterly|annual|annually|yearly)\b(?=\s+(?:pass|plan|ticket|one|payment|subscription|please|then)|[,.;!?]|$)",
    re.I,
)
_EN_FREQUENCY_CHOICE = r"daily|weekly|fortnightly|monthly|quarterly|annual|annually|yearly"
_ZH_CHOICE = re.compile(
    r"(?<![零〇一二两三四五六七八九十百千\d])(?:[深浅淡亮暗藏天酒玫]?(?:红|橙|黄|绿|蓝|紫|粉|棕|咖啡|黑|白|灰|银|金|米|青|卡其))(?:色|的)"
    r"|(?<![零〇一二两三四五六七八九十百千\d])[大中小](?:号|杯|码|包|份|碗|盒|瓶|桶|袋)|加大码|(?<![A-Za-z])(?:X{0,3}[SML]|XXL|XL)(?:号|码)"
    r"|[深浅淡亮暗藏天酒玫](?:红|橙|黄|绿|蓝|紫|粉|棕|灰)(?![色的])"
)
_QUOTED = re.compile(r"“(?P<q>[^”]{1,40})”|\"(?P<q2>[^\"]{1,40})\"|《[^》]{1,30}》|「[^」]{1,30}」")
_EN_FRACTION = re.compile(
    r"\b(?:half|a half|a quarter|quarter|three quarters|a third|one and a half|(?:\d+|one|two|three) and a half)(?: of)? (?:a |an )(?P<unit>[a-z][a-z-]+)\b", re.I
)  # "half a cup", "one and a half teaspoons" is a count with its unit
_EN_ID = re.compile(
    r"(?:\+?\b\d[\d -]{4,}\d\b|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{2,}[A-Z0-9]\b|\b[A-Z]{1,4}[- ]?\d{2,}(?:[A-Z]|\s[B-HJ-Z](?![\w'’]))?\b|\b\d{3,}\b|\b\d+[A-Z]{1,3}\b)"
)
# "grade three", "gate B12", "room 5": a label and its number are one value (a number/ID).
_EN_LABELLED = re.compile(
    rf"\b(?:grade|level|room|gate|platform|size|row|table|seat|gen|generation|stage|version|series|mark|chapter|page|line|flight|bus|route|floor|year|class|apartment|flat|unit|suite|bay|aisle|locker|pin|extension|option|number|no\.?|ward|bed|desk|counter|door|box|lot|stall|court|lane|track|terminal|zone|pier|dock)"
    rf"\s+(?:#\s*)?(?:\d+[A-Za-z]?|[A-Z]\d+|(?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?)\b",
    re.I,
)
# "22 Quarry Road", "9 Bell Yard", "Flat 3, 14 Mill Lane": a number before a capitalised name.
_EN_ADDRESS = re.compile(
    r"\b(?:\d{1,5}[A-Za-z]?|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty)(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?),? "
    r"(?:[A-Z][a-z]+ ){1,3}(?:Street|St|Road|Rd|Lane|Close|Avenue|Ave|Drive|Way|Place|Crescent|Court|Terrace|Gardens|Grove|Row|Square|Hill|Walk|Mews|Park)\b"
    r"|\b\d{1,5}[A-Za-z]?,? (?:[A-Z][a-z]+ ){1,3}(?:[A-Z][a-z]+)\b"
)  # "14 Larch Close", "fourteen Larch Close"
# "a table for four", "lasagne for six": a bare count after "for" counts people.
_EN_FREQUENCY = re.compile(rf"\b(?:once|twice|(?:{EN_NUMBER_WORDS}|\d+) times)\s+(?:a|an|per|each|every)\s+(?:day|night|week|month|hour|morning|evening)\b", re.I)
_EN_FOR_COUNT = re.compile(
    rf"\b(?:for|we're|we are|we'll be|we will be|there'll be|there will be|there are|party of|table for|group of) (?:just |only )?((?:{EN_NUMBER_WORDS}|\d{{1,3}}))\b"
    r"(?=\s*(?:[,.;!?:]|$|people|persons|guests|tonight|on|at|this|next|tomorrow|now|then|in total|altogether|of us))",
    re.I,
)  # "a table for six", "We're three, me, Carlos and Rosa": a count of people
# "we've got twenty-two coming", "we're at 52 now", "forty confirmed": a bare count of people.
_EN_PEOPLE_COUNT = re.compile(
    rf"\b(?:(?:we're|we are) (?:at|up to|down to)|(?:we've|we have|we've now|we now have)(?: got)?|there'?s|that's|that makes) (?:now )?((?:{EN_NUMBER_WORDS}|\d{{1,3}})(?:[- ](?:{EN_NUMBER_WORDS}))?)\b"
    r"(?=\s+(?:coming|confirmed|attending|joining|going|signed up|booked in)\b)"
    rf"|\b(?:we're|we are) (?:at|up to|down to) ((?:{EN_NUMBER_WORDS}|\d{{1,3}})(?:[- ](?:{EN_NUMBER_WORDS}))?)(?=\s*(?:now\b|[,.;!?]|$))",
    re.I,
)
# "push it to 6", "move the call back to half past": a bare number a meeting is moved to is a time.
_EN_MOVED_TO = re.compile(
    rf"\b(?:push|pushed|move|moved|bump|bumped|shift|shifted|change|changed|bring|brought|put|reschedule|rescheduled)\b[^,.;!?]{{0,30}}?(?<!up )\bto (?P<t>{_HOUR}(?:[- ](?:thirty|fifteen|forty-five|o'clock))?)\b(?! (?:people|persons|guests|of|[a-z]+s\b))",
    re.I,
)
# "two more", "one fewer" with no noun: a change to the count last spoken of.
_EN_BARE_DELTA = re.compile(rf"\b(?:{EN_NUMBER_WORDS}|\d{{1,3}}) (?P<dir>more|extra|fewer|less)\b(?! [a-z]+s\b)", re.I)
# Codes read out with spaces ("WTU 2270 C", "DR-448193") and sizes ("700x25"): one value.
_EN_CODE = re.compile(r"\b(?=[A-Z0-9 ]*\d)(?=[A-Z0-9 ]*[A-Z])[A-Z0-9]{2,}(?: [A-Z0-9]{2,4})+(?: [B-HJ-Z](?![\w'’]))?\b(?![a-z])|\b[A-Z]{2,4}[- ]?\d{2,}(?:[- ]?[A-Z]{1,2}\b)?|(?<![-/])\b[A-Z]{1,3}\d{1,3}\b(?![-/.]\w)|\b\d+(?:\.\d+)?[x×]\d+(?:\.\d+)?\b")
# "ten till twelve", "2-4 pm", "Zones one to three", "between two and four": one value, a range.
_EN_RANGE_END = rf"(?:noon|midday|midnight|(?:half past|quarter past|quarter to|half) {_HOUR}|\d{{1,2}}(?::\d{{2}})?(?:\s?{_AMPM})?|{_HOUR}(?:[- ](?:thirty|fifteen|forty-five))?(?:\s?{_AMPM})?)"
_EN_RANGE = re.compile(
    rf"\b(?P<a>{_EN_RANGE_END})\s?(?P<sep>to|till|til|until|through|-|–)\s?(?P<b>{_EN_RANGE_END})\b(?!:\d)"
    rf"|\bbetween (?P<c>{_EN_RANGE_END}) and (?P<d>{_EN_RANGE_END})\b",
    re.I,
)
# Words before a range that make "X to Y" a change from X to Y, not a range.
_EN_CHANGE_BEFORE_RANGE = re.compile(r"\b(?:from|change[ds]?|move[ds]?|moved|make|made|switch(?:ed)?|bump(?:ed)?|push(?:ed)?|up|down|increase[ds]?|decrease[ds]?|go(?:es)?|went|drop(?:ped)?|raise[ds]?|cut)\b[^,.;!?]{0,25}$", re.I)
_EN_BARE_NUMBER = re.compile(rf"\b(?:\d+(?:[.,]\d+)?|(?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?)\b", re.I)
_TITLE = r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Doctor|Professor|Coach|Uncle|Aunt|Auntie)\.?"
_CAP = r"[A-Z][\w'’-]*"
_EN_PROPER = re.compile(rf"\b(?:{_TITLE} )?{_CAP}(?:(?: |-)(?:of |de |van |von |la |le |the )?{_CAP})*")
_PLACE_PREP = re.compile(r"\b(?:at|on|in|to|from|near|into|via|outside|behind|opposite|across from|next to)\s+$", re.I)
_PLACE_NOUN_WORDS = (
    r"street|st|road|rd|avenue|ave|lane|drive|boulevard|square|place|way|park|station|airport|terminal|gate|hotel|"
    r"hospital|clinic|pharmacy|school|hall|bakery|cafe|restaurant|bar|mall|market|center|centre|office|building|"
    r"church|library|museum|garage|warehouse|store|shop|house|apartment|flat|floor|room|bridge|harbour|harbor|port|pier|"
    r"court|plaza|campus|gym|studio|theatre|theater|stadium|beach|lake|river|mountain|city|town|village"
)
_PLACE_NOUNS = re.compile(rf"\b(?:{_PLACE_NOUN_WORDS})\b", re.I)
_EN_NOT_NAMES = frozenset(
    "he she they it him her them his hers its their theirs he's she's they're it's there there's".split() +
    (_WEEKDAYS + "|" + _MONTHS).split("|")
    + "i i'm i'll i'd i've ok okay hi hello hey thanks please sorry yes no yeah oh um uh hmm wait actually so and but also "
    "the a an my our your his her their this that it it's we we're we'll can could would will what when where who how which "
    "why is are was were do does did let's let make book remind tell please just then now there here".split()
)
_COPULA = re.compile(r"\b(?:is|are|was|will be|would be|should be|'s|’s|becomes|has become|equals|=|:)\s+$", re.I)
_EN_CLAUSE_SPLIT = re.compile(r"\s*(?:;|,\s*(?:and|but|so)\s+|\s+(?:and|but)\s+(?=(?:the|my|our|his|her|their|it|we|i|they|she|he)\b)|,)\s*", re.I)
_EN_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bnever|\bno longer|\binstead of|\brather than|\bthan|\bisn't|\bwasn't|\bno|\bdid (?:i|we) (?:say|tell you)"
    r"|\b(?:can't|cannot|can not|couldn't|won't|doesn't|don't) (?:do|make|manage|come|go|be|have|take|get to)"
    r"|\b(?:nobody|no one|no-one)(?:'s| is| will be)? (?:in|home|around|free|available|there)(?: on| at)?)\s+(?:the |at |on |for |in )?$",
    re.I,
)  # "he can't do the ninth": the value ruled out
# "from 6 to 7": the first names the old value only when it is stored (else a route: "from Denver to Austin").
_EN_FROM_TO = re.compile(r"\bfrom\s+(?:the\s+)?$", re.I)
_EN_NEGATED_AFTER = re.compile(
    r"^(?:\s+(?:car park|shop|office|branch|room|hall|site|venue|place|one))?\s*(?:(?:is|was|'s|’s|are|were)?\s*(?:won't|will not|doesn't|does not|don't|do not|can't|cannot|isn't|is not|wasn't|is no longer)"
    r"|(?:is|was|'s|’s|are|were)\s+(?:\w+ )?(?:wrong|out|off|cancelled|canceled|no good|not right|tricky|difficult|hard|bad|impossible|on leave|off sick|sick|ill|lame|injured|hurt|poorly|unwell|closed|shut|being (?:resurfaced|repaired|renovated|refurbished|rebuilt|painted|redone)|away|abroad|on holiday|on vacation|travelling|traveling|unavailable|not available|not around|not coming|double[- ]booked|snug|tight|too small|too big|too short|too long|not enough|"
    r"a problem|problematic|full|booked|taken|busy|(?:way |far |much |a bit |a little |just )?too \w+|no longer|awkward|out of the question)"
    r"|(?:was|is) a mistake)\b",
    re.I,
)
_EN_REQUEST = re.compile(
    r"^(?:can|could|would|will) you\b|^(?:can|could|may) (?:i|we) (?:also |just |please )?(?:have|get|book|add|order|change|move|make|switch|do|go|try|push|swap)\b"
    r"|^(?:is|would|could|will|can) .{1,60}\b(?:possible|ok|okay|available|free|fine|doable|alright|all right|work)\b"
    r"|^(?:how about|what about)\b|^(?:is there )?any chance (?:of|we|you|they)\b",
    re.I,
)
# A request to tell or explain something asks for information (a question), not for a note.
_EN_ASK_TO_TELL = re.compile(
    r"^(?:(?:can|could|would|will) you\s+(?:please\s+)?|please\s+)?"
    r"(?:tell (?:me|us)\b(?! (?:to|when)\b)|explain\b|describe\b|teach me\b|suggest\b|recommend\b|read (?:me |us )?(?:back|out)\b|read (?:it|that|them|those) (?:back|out)\b|remind me (?=what|when|where|who|which|how)"
    r"|give me (?:some |a few |any |your |a )?(?:tips|ideas|advice|suggestions?|fun facts?|facts?|jokes?)\b)",
    re.I,
)
_EN_WH = re.compile(r"\b(?:what|when|where|who|whom|whose|which|why|how)\b", re.I)
_EN_RECALL = re.compile(r"\b(?:again|back to me|repeat|did i|was it|what was|remind me what|what's my|what is my|what are my|read back|read me)\b", re.I)

# ------------------------------------------------------------------ Chinese value patterns

_ZH_NUM = "零〇一二两三四五六七八九十百千万\\d"
_ZH_TIME = re.compile(
    rf"(?:(?:早上|上午|中午|下午|晚上|傍晚|凌晨|夜里|今晚|明早)?(?:[{_ZH_NUM}]+)(?:点|點|:\d{{2}})(?:半|一刻|三刻|[{_ZH_NUM}]+分?)?(?:钟)?|\d{{1,2}}:\d{{2}}|中午|半夜|午夜)"
)
_ZH_DATE = re.compile(
    rf"(?:大后天|后天|明天|今天|昨天|前天|今晚|明晚|明早|下下周[一二三四五六日天]?|(?:下个?|这个?|上个?|每个?)?(?:周|星期|礼拜)[一二三四五六日天末]|"
    rf"(?:[{_ZH_NUM}]+月)?[{_ZH_NUM}]+[日号]|[{_ZH_NUM}]+月份?|下个?月|这个?月|下周|这周|本周|月底|月初)"
)
_ZH_DECIMAL_MEASURE = re.compile(r"[零〇一二两三四五六七八九十\d]+点[零〇一二三四五六七八九\d]+(?P<unit>伏|安|瓦|千瓦|米|厘米|毫米|公里|公斤|千克|斤|克|升|毫升|度|寸)")
_ZH_RANGE = re.compile(rf"(?:{_ZH_TIME.pattern})(?:到|至|-|~|－|—)(?:{_ZH_TIME.pattern})")
_ZH_CLASSIFIERS = "寸个位张只件台辆瓶杯份次天晚间本盒包袋箱斤公斤克毫克千克米公里块元毛分钟小时岁层号楼人口片粒支条把双套碗盘桌束朵对副顿周节趟兆平度棵株盆颗罐桶卷升伏安瓦"
_ZH_STOP = "才就了的吧呢吗啊也都还再要够把被给和跟在到去来是有没不很太一二两三四五六七八九十零百千万"
_ZH_QUANTITY = re.compile(rf"(?P<num>[{_ZH_NUM}]+|几|半)(?P<delta>多|来)?(?P<unit>[{_ZH_CLASSIFIERS}][^{_ZH_STOP}\s，。,.！!？?；;：:、\dA-Za-z]{{0,2}})")
_ZH_ID = re.compile(r"[京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼]?(?=[A-Za-z0-9·-]*\d)(?=[A-Za-z0-9·-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9·-]{2,}[A-Za-z0-9]|\d[\d -]{3,}\d|[A-Za-z]{1,4}-?\d{2,}|[零〇一二三四五六七八九幺]{5,}")
_ZH_NAME_AFTER = re.compile(r"(?:叫|是|换成|改成|找|跟|和|请|给|让)(?P<name>[\u4e00-\u9fff]{2,3}?)(?=(?:老师|医生|教练|先生|女士|小姐|师傅|经理|总)?(?:[，。,.！!？?带来去吧了的]|$))")
_ZH_KIN = re.compile(r"(?:他|她|我|孩子)?(?:爸爸|妈妈|爷爷|奶奶|外公|外婆|姥姥|姥爷|哥哥|姐姐|弟弟|妹妹|老公|老婆|丈夫|妻子|儿子|女儿|舅舅|姑姑|叔叔|阿姨|婆婆|公公)")
_EN_KIN = re.compile(r"\b(?:my|his|her|their|our|the kids'|the kid's)\s+(?:mum|mom|mother|dad|father|grandma|grandmother|granny|nan|grandpa|grandfather|husband|wife|partner|brother|sister|son|daughter|uncle|aunt|auntie|neighbou?r|boss|babysitter|nanny)\b", re.I)
_ZH_TITLED = re.compile(r"[王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤](?:老师|医生|大夫|教练|先生|女士|小姐|师傅|经理|主任|院长|主管|科长|律师|护士|教授|老板|店长|队长|班长|组长|总|阿姨|叔叔|工)")
_ZH_FREQUENCY = re.compile(rf"(?:每|一)[{_ZH_NUM}]*(?:天|周|星期|个月|月|晚|日|小时)[^\s，。,.]{{0,3}}?[{_ZH_NUM}]+次")
# Buildings, floors and rooms read as codes: "B座", "12楼", "3号楼", "501室".
_ZH_UNIT_CODE = re.compile(r"[A-Za-z\d一二三四五六七八九十]+(?:座|号楼|栋|单元|室|楼|层)")
_ZH_ADDRESS = re.compile(
    r"(?:[\u4e00-\u9fff]{1,4}(?:省|市|区|县))+[\u4e00-\u9fff]{1,6}?(?:路|街|大街|大道|道|巷|胡同|弄)(?:[\d一二三四五六七八九十百零]+号(?:院|楼)?)?"
    r"|(?:[\u4e00-\u9fff]{1,4}(?:省|市|区|县))?[\u4e00-\u9fff]{1,6}(?:路|街|大街|大道|道|巷|胡同|弄)[\d一二三四五六七八九十百零]+号(?:院|楼)?(?:[\d一二三四五六七八九十]+(?:号楼|栋|单元|室|层))*"
)  # "成都高新区天府大道": a district and a road are an address even without a house number
_ZH_PLACE = re.compile(r"(?:在|到|去|从|于|住)(?P<place>[^\s，。,.！!？?我你他她的了和后前时再]{0,8}(?:路|街|道|号|楼|层|室|站|机场|酒店|宾馆|医院|学校|公园|大厦|广场|中心|小区|餐厅|饭店|店|馆|门|口|厅|村|镇|市|区|县|省))")
_ZH_COPULA = re.compile(r"(?P<key>[\u4e00-\u9fff]{1,6}?)(?:是|叫|为|改成|换成|改为|改到|变成|换到|定在|约在|定成|要)$")
_ZH_NEGATED_BEFORE = re.compile(r"(?:不是|不要|别|而不是|比|不用|取消|把)$")
_ZH_NEGATED_AFTER = re.compile(r"^(?:那[顿个次天场趟班家])?(?:(?:我|他|她|我们|他们|她们|孩子)?(?:那天|那几天|当天|今天|明天|这周|下周|周[一二三四五六日天]|最近)?(?:休息|请假|出差|生病|病了|没空|不在|走不开|值班|忙不过来|排满|没时间|(?:家里|家)?没人|(?:我|他|她)?还?在(?:单位|公司|上班|开会|外地|路上)|要上班|得上班)|怕?不(?:太)?够|(?:的\w{0,2})?(?:太|有点|有些)[\u4e00-\u9fff]{1,2}|撑不|(?:已经)?(?:约|订|排|报|坐|住|挂)?满了|没货了?|不行|不合适|驾照过期|太晚|太早|太赶|有点赶|有点晚|有点早|来不了|去不了|不在家|不行了|不行|不对|不好|错了|不要了|取消|不方便|有事|改成|换成|改为|改到|调到|挪到|推迟到|提前到)")
_ZH_REQUEST = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|帮我|麻烦你?|给我)")
_ZH_WH = re.compile(r"什么|(?<!好)几(?!乎)|哪|多少|谁|怎么|来着")  # "好几个人" asks nothing
_ZH_ASK_TO_TELL = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|麻烦你?)?(?:给我|帮我|跟我)?(?:告诉我|讲讲|讲一下|讲个|说说|介绍一下|解释一下|推荐一下|推荐|给点建议|出个主意)")


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


# ------------------------------------------------------------------ what a question asks for

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



# ------------------------------------------------------------------ helpers


def content_stems(text: str) -> set[str]:
    """Content words (stemmed, English) or character bigrams (Chinese) that can carry a key."""
    keys: set[str] = set()
    lowered = text.lower()
    for word in re.findall(r"[a-z][a-z'-]*", lowered):
        word = word.strip("'-")
        if word.endswith("'s"):
            word = word[:-2]
        if len(word) < 2 or word in EN_STOPWORDS or word in L.EN_EMPTY_WORDS:
            continue
        keys.add(stem(word))
    for run in re.findall(r"[\u3400-\u9fff]+", lowered):
        keys |= _zh_content_words(run)
    return keys


@functools.lru_cache(maxsize=8192)
def _zh_content_words(run: str) -> frozenset[str]:
    """The words of a Chinese run that can carry a key: 一等奖 and 二等奖 are different words
    (character pairs would share 等奖)."""
    out: set[str] = set()
    for word, flag in zh_words(run):
        if word in L.ZH_EMPTY_WORDS or all(c in ZH_FUNCTION_CHARS for c in word):
            continue
        if len(word) < 2 and flag[:1] != "n":
            continue  # a single character carries a key only as a noun (弟); 吃, 寄 are said of everything
        if flag[:1] in ("u", "p", "c", "d", "r", "y", "e", "m", "x", "q"):
            continue  # particles, prepositions, adverbs, pronouns, numerals: no key
        out.add(word)
    return frozenset(out)


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
    if u in L.EN_PEOPLE_UNITS or u.split(" ")[-1] in L.EN_PEOPLE_UNITS:
        return "people"
    return " ".join(stem(w.replace("’", "'").removesuffix("'s")) for w in u.split())


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


# ------------------------------------------------------------------ English


def _en_is_question(sentence: str) -> bool:
    s = L.strip_en_discourse(sentence)
    if _EN_ASK_TO_TELL.match(s):
        return True
    clauses = [L.strip_en_discourse(c) for c in re.split(r"[,;]\s*|\.{2,}\s*|…\s*", s)]
    recall = _EN_RECALL.search(s) is not None and (_EN_WH.search(s) is not None or _EN_RECALL.search(s.replace("again", "")) is not None)
    if any(_EN_REQUEST.match(c) for c in clauses) and not recall:  # "can I have Dale again?" asks for Dale, not what was said
        return False  # "Mum wants a lie-in, could we do 9:00 instead?" asks for a change: a statement
    # A yes/no question that carries a value proposes it ("Could pilates be the 7:45 one?",
    # "Any chance Bramble could go in at 11:30 instead?"); a question asking for a value has a wh-word.
    if sentence.rstrip().endswith("?") and not _EN_WH.search(s) and not _EN_RECALL.search(s) and _carries_value(_en_values(s)):
        return False
    if sentence.rstrip().endswith("?"):
        return True
    if sentence.rstrip().endswith((".", "!")):
        return False  # "Did the bedroom again, it's 146.": said with a full stop, a statement
    return asks(s, "en")  # unpunctuated (a recogniser's words): the structure decides


# The kinds a proposal carries: "Could the driver come at quarter to six?" offers a value; a
# yes/no question with none of them ("Is Dale coming?") asks.
_PROPOSED_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_ITEM)


_VAGUE_PERIOD = re.compile(r"(?:(?:this|next|last|the) )?(?:weekend|week|month|year|summer|winter|spring|autumn)|(?:这|下|上)(?:个)?(?:周末|周|星期|月)|今年|明年|去年", re.I)


def _carries_value(values: list["Value"]) -> bool:
    # "Is it going to rain this weekend?" asks: a period is not a proposed day.
    return any(v.kind in _PROPOSED_KINDS and not v.negated and not (v.kind == KIND_DATE and _VAGUE_PERIOD.fullmatch(v.text)) for v in values)


# Words before a number that are not a thing it numbers ("Plus one roll", "Maybe two").
_NOT_THINGS = frozenset("plus minus just only about around roughly maybe perhaps another nearly almost over under exactly".split())
_UNIT_STOP = frozenset(
    "am pm a.m. p.m. o'clock oclock of at on in for to and or the a an more extra is are was were will would so now then "
    "instead please thanks too as well people's once twice thrice times daily altogether total all overall "
    "while when whenever because since if unless though although as before after until till "
    "between among amongst per by with from into over under about across through off up down out".split()
)
_NOT_A_UNIT = frozenset(
    "is are was were will would can could should shall may might must do does did has have had won't can't isn't "
    "works work worked sounds sound suits suit seems seem it that this then now instead please is better o'clock "
    "went came got said made took gave left ran sold paid put set cost felt kept told thought brought bought was goes comes".split()  # irregular verbs: "Leo's one went up"
)
_NOT_UNITS = frozenset("times time days day weeks week months month years year minutes minute hours hour percent".split())


def _en_values(text: str, known: frozenset[str] = frozenset()) -> list[Value]:
    """`known`: the names already stored; one at a sentence start is a name ("Dale's off")."""
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, kind: str, **kw: object) -> None:
        span = text[start:end].strip()
        if not span or _overlaps(taken, start, end):
            return
        lead = len(text[start:end]) - len(text[start:end].lstrip())
        start += lead
        end = start + len(span)
        taken.append((start, end))
        found.append(Value(span, kind, start, end, **kw))  # type: ignore[arg-type]

    for m in re.finditer(r"\b\d{1,2}[./]\d{1,2}[./](?:\d{4}|\d{2})\b", text):
        add(m.start(), m.end(), KIND_DATE)  # "14.06.2019": a date written with dots
    for m in re.finditer(r"\b\d{3,}(?: \d{3,})+\b", text):
        add(m.start(), m.end(), KIND_NUMBER)  # "6330 1948 2207": one number read in groups
    for m in _QUOTED.finditer(text):
        inner = "q" if m.group("q") is not None else "q2"
        if m.group(inner) is not None:
            add(m.start(inner), m.end(inner), KIND_NAME)  # 'write "Happy 80th" on it': verbatim, nothing inside is a value
    if text == text.lower():
        # Recognised words come without capitals: a name is known here only by the words
        # that introduce one ("mr white", "my name is carl", "his teacher is ms park").
        for m in re.finditer(r"\b(?:mr|mrs|ms|miss|dr|doctor|coach)\.? (?P<n>[a-z][a-z'-]{1,15})\b|\b(?:my name is|call me|called|named) (?P<m>[a-z][a-z'-]{1,15}(?: [a-z][a-z'-]{2,15})?)\b", text):
            group = "n" if m.group("n") else "m"
            words = m.group(group).split()
            while words and (words[-1] in EN_STOPWORDS or words[-1] in L.EN_EMPTY_WORDS or words[-1] in ("and", "from", "at", "on")):
                words.pop()
            if words and words[0] not in EN_STOPWORDS and words[0] not in L.EN_EMPTY_WORDS:
                start = m.start() if group == "n" else m.start("m")
                add(start, m.start(group) + len(" ".join(words)), KIND_NAME)
    for m in _EN_RANGE.finditer(text):
        a = m.group("a") or m.group("c")
        sep = (m.group("sep") or "and").lower()
        if sep == "to" and re.fullmatch(r"(?:five|ten|twenty|twenty-five|twenty five)", a, re.I):
            continue  # "ten to twelve": ten minutes to twelve, a time
        if re.search(r"\d", text[m.end(): m.end() + 2].strip()[:1]) or _EN_CHANGE_BEFORE_RANGE.search(text[: m.start()]):
            continue  # "from 6 to 7", "make it two to four": a change, read by the update step
        if re.match(r"\s+(?!(?:am|pm|o'clock|hours?|mins?|minutes?)\b)[a-z]+s\b", text[m.end():], re.I):
            continue  # "two to four people": a count, read below
        timed = sep in ("till", "til", "until") or m.group(0).lower().startswith("between") or re.search(r"[:ap]\.?m\b|:|\b(?:half|quarter)\b", m.group(0), re.I) is not None
        add(m.start(), m.end(), KIND_TIME if timed else KIND_NUMBER)
    for m in _EN_PEOPLE_COUNT.finditer(text):
        g = 1 if m.group(1) else 2
        add(m.start(g), m.end(g), KIND_QUANTITY, unit="people")
    for m in _EN_NUMERIC.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_CHOICE.finditer(text):
        add(m.start(), m.end(), KIND_ITEM)
    for m in _EN_FRACTION.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit"))
    for m in _EN_ADDRESS.finditer(text):
        add(m.start(), m.end(), KIND_PLACE)
    for m in _EN_LABELLED.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in re.finditer(r"(?:^|(?<=[,.;:]\s))(?!Half |Quarter )[A-Z][a-z]{2,} (?:one|two|three|four|five|six|seven|eight|nine|ten|[A-Z]|\d{1,2})\b(?! (?:o'clock|am|pm)\b)(?! (?!has\b|is\b|was\b|needs\b|gets\b)[a-z]+s\b)", text):
        if m.group(0).split()[0].lower() not in EN_STOPWORDS and m.group(0).split()[0].lower() not in L.EN_EMPTY_WORDS and not _EN_DATE.match(m.group(0)) and m.group(0).split()[0].lower() not in _NOT_THINGS:
            add(m.start(), m.end(), KIND_NUMBER)  # "Hive two, five frames": a thing and its number, one value
    for m in _EN_CODE.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_TIME.finditer(text):
        add(m.start(), m.end(), KIND_TIME)
    for m in _EN_SPOKEN_TIME.finditer(text):
        add(m.start(), m.end(), KIND_TIME)  # "four thirty", "seven fifteen": an hour and its minutes
    for m in _EN_WORD_NUMERIC.finditer(text):
        if not re.fullmatch(r"(?:a )?(?:one|a) (?:one|two|three|four|five|six|seven|eight|nine)", m.group(0), re.I):
            add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_DATE.finditer(text):
        word = m.group(0).lower()
        if word in ("may", "march") and not re.search(r"\d", text[m.end(): m.end() + 4]):
            continue  # "may" the verb
        if word == "second" or word == "first" or (re.fullmatch(r"third|quarter|fifth|tenth", word) and re.search(r"\b(?:a|one|by a)\s+$", text[: m.start()], re.I)):
            continue  # "a second bike", "first thing", "by a third": ordinals alone are not dates
        add(m.start(), m.end(), KIND_DATE)
    for m in _EN_BARE_TIME.finditer(text):
        add(m.start(1), m.end(1), KIND_TIME)
    for m in _EN_MOVED_TO.finditer(text):
        add(m.start("t"), m.end("t"), KIND_TIME)
    for m in _EN_BARE_DELTA.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="", delta=True, delta_sign=-1 if m.group("dir").lower() in ("fewer", "less") else 1)
    for m in _EN_FREQUENCY.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="times a " + m.group(0).split()[-1].lower())
    for m in _EN_QUANTITY.finditer(text):
        unit = m.group("unit")
        words = unit.split()
        # A unit is the counted noun: cut at a function word ("three bikes for the afternoon").
        kept: list[str] = []
        first_raw = re.split(r"[\s-]", unit)[0]
        first = first_raw.lower()
        if first.endswith(("n't", "n’t")) or first in _NOT_A_UNIT:
            continue
        if first_raw[:1].isupper() or len(first.removesuffix("'s").removesuffix("’s")) < 2 or first.endswith("ed"):
            continue  # "2270 C", "two r's": a code or a letter, not a counted thing
        if first == "of" and unit.lower() not in ("of us", "of them"):
            continue  # "one of the guests": a person, not a count
        if m.group(0).lower().startswith("one ") and re.search(r"\b(?:the|that|this|which|each|every|any|other)\s+$", text[: m.start()], re.I):
            continue  # "the one next door", "the one ending 0938": a pronoun, not a count
        parts = re.split(r"[\s-]", unit)
        if len(parts) == 2 and re.search(r"[^s']s$", parts[0].lower()) and not parts[0].lower().endswith(("'s", "’s")):
            parts = parts[:1]  # "twelve minutes floods the trays": a plural noun is the whole unit, the word after it a verb
            unit = parts[0]
        if len(parts) == 2 and not (parts[0].lower().endswith(("'s", "’s")) or re.search(r"[^s']s$", parts[1].lower())):
            parts = parts[:1]  # "one cousin dropped": the counted noun is "cousin"
            unit = parts[0]
        for w in parts:
            if w.lower() in _UNIT_STOP or w.lower() in EN_STOPWORDS and w.lower() not in ("us", "them"):
                if not (kept == [] and w.lower() in ("of",) and unit.lower().startswith("of ")):
                    break
            kept.append(w)
        if unit.lower() in ("of us", "of them"):
            if m.group(0).lower().startswith("one "):
                continue  # "one of us is vegetarian": a person, not a count
            kept = words
        if not kept or kept[0].lower() in _NOT_UNITS and len(kept) == 1 and False:
            continue
        if not kept:
            continue
        unit_text = " ".join(kept)
        end = m.start("unit") + len(unit_text) if m.group("unit").startswith(kept[0]) else m.end()
        # The whole phrase "two adult bikes": the counted noun is the last word kept; a
        # word before it is a modifier of the unit ("adult bike" is not "bike").
        add(m.start(), end, KIND_QUANTITY, unit=unit_text, delta=bool(m.group("delta")))
    for m in _EN_FOR_COUNT.finditer(text):
        add(m.start(1), m.end(1), KIND_QUANTITY, unit="people")
    for m in _EN_ID.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_PROPER.finditer(text):
        span = m.group(0)
        start = m.start()
        # Sentence-initial capitals are names only when known to be names (a title) or
        # followed by a verb of being/doing: "Priya is driving".
        tokens = span.split()
        sentence_start = text[:start].strip(" ,;:-\"'") == "" or text[:start].rstrip()[-1:] in ".!?:"
        while tokens and (
            tokens[0].lower().strip("'’") in _EN_NOT_NAMES
            or (sentence_start and len(tokens) > 1 and not _is_name_word(tokens[0]))  # "Booking Biscuit"
            or (tokens[0].isupper() and len(tokens[0]) > 1 and not re.match(_TITLE, tokens[0]))  # "RSVP"
        ):
            start += len(tokens[0]) + 1
            tokens = tokens[1:]
        if not tokens or (len(tokens) == 1 and len(tokens[0].strip("'’")) == 1):
            continue  # "P, R, Y, C, E": letters spelled out, not names
        if len(tokens) == 1 and re.fullmatch(_TITLE + r"(?:'s|’s)?", tokens[0]):
            continue  # "Coach reckons ...": a title alone names a role, not a person
        span = " ".join(tokens)
        following = text[start + len(span):]
        if span.endswith(("'s", "’s")) and re.match(r"\s+(?:\w+ing|not|got|gone|been|on|off|in|out|the|a|an)\b", following):
            span = span[:-2]  # "Priya's taking": "Priya is taking"
            following = "'s" + following
        at_start = text[:start].strip(" ,;:-\"'") == "" or text[:start].rstrip()[-1:] in ".!?:"
        verb_next = re.match(r"\s*(?:will|'ll|is|'s|’s|says|said|can|could|has|was|would|should|and I|[a-z]{2,}s)\b", following) is not None  # "Ana wants" 
        if at_start and not re.match(_TITLE, span) and len(span.split()) == 1 and not _is_name_word(span) and span not in known and not (
            verb_next and span in _english_words()  # "Tom will come": listed as a name too
        ):
            continue  # "Return is Monday", "Bedtime is 7:30": a capital only because a sentence starts
        end = start + len(span)
        # "Rosa's bakery", "Elm Street": a place noun after the proper name belongs to it.
        tail = re.match(r"\s+(?:[a-z]+\s+)?(?P<noun>[a-z]+)\b", text[end:])
        if span.endswith(("'s", "’s")) and tail and _PLACE_NOUNS.fullmatch(tail.group("noun")):
            end += tail.end()
        else:
            right = re.match(r"\s+(?P<noun>[a-z]+)\b", text[end:])
            if right and _PLACE_NOUNS.fullmatch(right.group("noun")):
                end += right.end()  # "the Riverside clinic", "Northgate lab": a place
        titled = re.match(_TITLE + r" ", span) is not None
        kind = KIND_PLACE if not titled and (_PLACE_PREP.search(text[:start]) or _PLACE_NOUNS.search(text[start:end])) else KIND_NAME
        if kind == KIND_NAME and text[start:end].endswith(("'s", "’s")):
            end -= 2  # "Amara's swim practice": the name is Amara
        add(start, end, kind)
    for m in _EN_KIN.finditer(text):
        add(m.start(), m.end(), KIND_NAME, weak=True)
    # "at the airport", "to the hotel": a place noun phrase after a preposition of place.
    for m in re.finditer(rf"\b(?P<prep>at|to|from|in|near)\s+(?P<np>the\s+(?:[a-z]+\s+){{0,2}}?(?:{_PLACE_NOUN_WORDS}))\b", text, re.I):
        add(m.start("np"), m.end("np"), KIND_PLACE, prep=m.group("prep").lower())
    for m in _EN_BARE_NUMBER.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    found.sort(key=lambda v: v.start)
    for v in found:
        before = text[: v.start]
        pm = re.search(r"\b(at|on|in|from|to|by|for|until|till|around|near|with)\s+(?:the\s+)?$", before, re.I)
        if pm and not v.prep:
            v.prep = pm.group(1).lower()
        if _EN_NEGATED_BEFORE.search(before[-30:]) or _EN_NEGATED_AFTER.match(text[v.end:]):
            v.negated = True
        elif _EN_FROM_TO.search(before[-12:]) and re.match(r"^\s+(?:to|until|till)\b", text[v.end:], re.I):
            v.maybe_old = True
        if v.kind in (KIND_NUMBER, KIND_QUANTITY) and v.text[:1].isdigit() and text[v.start - 1: v.start] in ("£", "€", "¥", "$"):
            v.start -= 1  # "£14": the currency is part of the amount
            v.text = text[v.start: v.end]
        if v.kind == KIND_NUMBER and v.text.lower() in ("one", "a", "an") :
            v.kind = ""  # "one" alone is a pronoun far more often than a value
    return [v for v in found if v.kind and not (v.kind == KIND_NUMBER and v.text.lower() in ("one",))]


_SLOT_KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER)
# What a note leaves out: the values most often corrected on their own. Counts stay in
# the note ("a dozen eggs", "一束花" are what the note is about).
_NOTE_CUTS = (KIND_TIME, KIND_DATE, KIND_NUMBER)


def _en_without(text: str, values: list[Value], *, all_kinds: bool) -> str:
    """The text with its values (or only its slot values: times, dates, counts, numbers)
    cut out, each with the preposition that introduced it."""
    out = text
    for v in sorted(values, key=lambda v: -v.start):
        if not all_kinds and v.kind not in _NOTE_CUTS:
            continue
        cut_start = v.start
        pm = re.search(r"\b(?:at|on|in|from|to|by|for|until|till|around|near|with|than|not|of)\s+(?:the\s+)?$", out[:cut_start], re.I)
        if pm:
            cut_start = pm.start()
        out = out[:cut_start] + " " + out[v.end:]
    out = re.sub(r"\s+", " ", out)
    out = re.sub(r"\s+([,.;!?])", r"\1", out)
    out = re.sub(r"(?:,\s*){2,}", ", ", out)
    return out.strip(" ,;:.!?-")


@functools.lru_cache(maxsize=1)
def _english_words() -> frozenset[str]:
    """Webster's word list with its capitals: "Chloe" and "Max" listed as names, "return" as a word."""
    from english_words import get_english_words_set  # type: ignore[import-not-found,import-untyped]

    return frozenset(get_english_words_set(["web2"], lower=False, alpha=True))


def _is_name_word(word: str) -> bool:
    """A capitalised word at a sentence start is a name when the dictionary lists it with its
    capital, or does not know it as an ordinary word ("Priya", "Maddie")."""
    w = word.strip("'’").removesuffix("'s").removesuffix("’s")
    if "'" in w or "’" in w:
        return False  # "There'll", "We'd": a contraction
    if "-" in w.strip("-"):
        return all(_is_name_word(part) for part in w.split("-") if part)  # "Twenty-eight" is no name; "Mary-Jane" is
    words = _english_words()
    low = w.lower()
    if w in words:
        return low not in words  # "Chloe", "Ella"; but "Go", "Mark" are words first
    # The list holds base forms: "Checking" is "check" + "ing".
    forms = {low}
    for suffix, repl in (("ing", ("", "e")), ("ed", ("", "e")), ("ies", ("y",)), ("es", ("",)), ("s", ("",)), ("er", ("", "e")), ("ly", ("",))):
        if low.endswith(suffix):  # only a real ending is taken off: "Carla" is not "car" + "la"
            forms |= {low[: -len(suffix)] + r for r in repl}
    return low not in words and not any(f in words for f in forms if len(f) >= 3)  # "Go" is a word too


def _en_copula_key(text: str, value: Value) -> str:
    """'the dose is 250 mg' -> 'dose'; 'my member ID is 88421' -> 'member ID'."""
    before = text[: value.start]
    m = _COPULA.search(before)
    if m:
        head = re.split(r"[,;:]", before[: m.start()])[-1]  # the subject is in the value's own clause
        words = re.findall(r"[A-Za-z][\w'’-]*", head)[-4:]
        keep: list[str] = []
        for w in reversed(words):
            lw = w.lower()
            if lw in ("the", "my", "our", "your", "his", "her", "their", "its", "a", "an", "and", "so", "that", "this", "it", "which", "where",
                      "he", "she", "they", "we", "i", "you", "there", "here") or lw in L.EN_EMPTY_WORDS:
                break
            keep.insert(0, w)
        key = " ".join(keep[-3:])
        if key:
            return key
    return ""


# ------------------------------------------------------------------ Chinese


def _zh_is_question(sentence: str) -> bool:
    s = L.strip_zh_discourse(sentence)
    if _ZH_ASK_TO_TELL.match(s):
        return True
    if _ZH_REQUEST.match(s) and not _ZH_WH.search(s):
        return False
    # "时间能不能提前到两点？", "有没有五点十分的？": a proposal carrying its value, not a question.
    if re.search(r"能不能|可不可以|可以.{0,12}吗|行不行|有没有|(?:行|可以|好|成|有(?:人|空|位置?|号)?)[吗吧][？?]?$", s) and not _ZH_WH.search(s) and (_ZH_TIME.search(s) or _ZH_DATE.search(s) or re.search(rf"[{_ZH_NUM}]", s)):
        return False
    if re.search(r"呢[？?]?$", s) and not _ZH_WH.search(s) and (_ZH_TIME.search(s) or re.search(rf"[{_ZH_NUM}]+[号日]", s)):
        return False  # "十月六号呢？": a date proposed; "那另一个呢？" stays a question
    if re.search(r"(?:吗|吧|对不对|是不是|行不行|好不好)[？?]?$", s) and not _ZH_WH.search(s) and _carries_value(_zh_values(s)):
        return False  # "明天下午三点能来吗？", "一个月三百五对吧？": a yes/no question proposing its value
    return asks(s, "zh")


def _zh_values(text: str, known: frozenset[str] = frozenset()) -> list[Value]:
    found: list[Value] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, kind: str, **kw: object) -> None:
        if end <= start or _overlaps(taken, start, end):
            return
        taken.append((start, end))
        found.append(Value(text[start:end], kind, start, end, **kw))  # type: ignore[arg-type]

    for m in _QUOTED.finditer(text):
        add(m.start(), m.end(), KIND_NAME)  # 《三体》, “外婆八十大寿”: a title or an inscription, verbatim
    for m in _ZH_NUMERIC.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _ZH_CHOICE.finditer(text):
        end = m.end() - (1 if m.group(0).endswith("的") else 0)
        add(m.start(), end, KIND_ITEM)  # "白的" is the colour 白
    for m in _ZH_ADDRESS.finditer(text):
        start = m.start()
        while start < m.end() and text[start] in "在到去从于住是寄送":
            start += 1
        add(start, m.end(), KIND_PLACE)
    for m in _ZH_UNIT_CODE.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _ZH_FREQUENCY.finditer(text):
        period = re.match(r"一天|每天|一周|每周|一晚|每晚|一个月|每个月|一日|每日", m.group(0))
        add(m.start(), m.end(), KIND_QUANTITY, unit="次/" + (period.group(0)[-1] if period else "天"))
    for m in _ZH_DECIMAL_MEASURE.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit"))  # "三点三伏": 3.3 volts, not a clock time
    for m in _ZH_RANGE.finditer(text):
        add(m.start(), m.end(), KIND_TIME)  # "下午四点到六点": one time, a range
    for m in _ZH_DATE.finditer(text):
        part = re.match(r"(?:上午|下午|晚上|早上|中午|傍晚|凌晨|白天)(?![零〇一二两三四五六七八九十\d点半])", text[m.end():])
        if part:
            add(m.start(), m.end() + part.end(), KIND_DATE)  # "明天下午" with no clock time: one value, replaced as one
    for m in _ZH_TIME.finditer(text):
        if re.search(r"[近远多少快慢早晚好大小高低贵便宜轻重短长]$", text[: m.start()]) and not re.match(r"[半分刻钟]", text[m.end():m.end() + 1]) and m.group(0).endswith("点"):
            continue  # "近一点": a little closer, not one o'clock
        add(m.start(), m.end(), KIND_TIME)
    for m in _ZH_DATE.finditer(text):
        add(m.start(), m.end(), KIND_DATE)
    for m in _ZH_ID.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    starts = _zh_word_starts(text)
    for m in _ZH_QUANTITY.finditer(text):
        unit = m.group("unit")
        end = m.end()
        if text[m.start() - 1: m.start()] == "第" or (m.group("unit").startswith("位") and re.search(r"(?:后|最后|前|末|尾)$", text[: m.start()])):
            continue  # "第二本": an ordinal; "后四位": how many digits, not people
        if m.group("num") == "一" and text[end:end + 1] in ("是", "要", "给"):
            continue  # "一本是《活着》": one of them, not a count
        for i in range(m.start("unit") + 1, m.end()):
            if starts.get(i, "n")[:1] in "dcpryexuv":  # "八寸肯定不够": the unit is 寸, "肯定" is not counted
                unit, end = text[m.start("unit"): i], i
                break
        before = text[max(0, m.start() - 3): m.start()]
        less = re.search(r"(?:少|减|减少|去掉)了?$", before) is not None
        more = m.group("delta") == "多" or re.search(r"(?:多加|再加|加|多|增加|多买|多要|多订|再来|再要|再买)了?$", before) is not None
        add(m.start(), end, KIND_QUANTITY, unit=unit, delta=less or more, delta_sign=-1 if less else 1)
    for m in _ZH_PLACE.finditer(text):
        add(m.start("place"), m.end("place"), KIND_PLACE, prep=text[m.start()])
    for m in _ZH_TITLED.finditer(text):
        add(m.start(), m.end(), KIND_NAME)
    for m in _ZH_KIN.finditer(text):
        add(m.start(), m.end(), KIND_NAME, weak=True)
    for m in _ZH_NAME_AFTER.finditer(text):
        name = m.group("name")
        if any(c in ZH_FUNCTION_CHARS for c in name[:1]) or _ZH_DATE.fullmatch(name) or _ZH_TIME.fullmatch(name):
            continue
        if not _zh_looks_like_name(name):
            continue
        add(m.start("name"), m.end("name"), KIND_NAME)
    for start, end in _zh_segmented_names(text):
        add(start, end, KIND_NAME)
    for m in re.finditer(rf"\d+|[{_ZH_NUM}]{{2,}}", text):
        add(m.start(), m.end(), KIND_NUMBER)
    found.sort(key=lambda v: v.start)
    for v in found:
        if v.kind == KIND_NUMBER and re.fullmatch(r"[A-Za-z]\s+[零〇一二三四五六七八九幺\d]+", v.text):
            v.text = re.sub(r"\s+", "", v.text)  # "E 八八三四五六七二": the letter and its digits are one code
        if v.kind == KIND_NUMBER and re.fullmatch(rf"[{_ZH_DIGIT}]+(?:[，,\s]+[{_ZH_DIGIT}]+)+", v.text):
            v.text = re.sub(r"[，,\s]+", "", v.text)  # the pauses of reading a number in groups are not part of it
        if _ZH_NEGATED_BEFORE.search(text[max(0, v.start - 4): v.start]) or _ZH_NEGATED_AFTER.match(text[v.end:]):
            v.negated = True
    return found


@functools.lru_cache(maxsize=1)
def _jieba_tokenizer() -> Any:
    import logging

    import jieba  # type: ignore[import-not-found,import-untyped]
    import jieba.posseg  # type: ignore[import-not-found,import-untyped]

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg.POSTokenizer(jieba.Tokenizer())


def choice_class(text: str) -> str:
    """Which closed set a choice belongs to: "colour", "size" or "frequency"."""
    if re.fullmatch(_EN_FREQUENCY_CHOICE, text.strip(), re.I):
        return "frequency"
    if re.search(r"\b(?:extra[- ]small|small|medium|large|extra[- ]large|XS|XL|XXL|king[- ]size|queen[- ]size|single|double)\b|[大中小](?:号|杯|码|包|份|碗|盒|瓶|桶|袋)|加大码", text, re.I):
        return "size"
    return "colour"


def is_role_word(text: str) -> bool:
    """A person named by their role ("my sister", 孩子奶奶) rather than by name."""
    return _EN_KIN.fullmatch(text.strip()) is not None or _ZH_KIN.fullmatch(text.strip()) is not None


def warm_up() -> None:
    """Load the Chinese segmenter's dictionary now (about a second), so no turn waits for it."""
    list(_jieba_tokenizer().cut("你好"))  # the dictionary loads on the first cut


def zh_words(text: str) -> list[tuple[str, str]]:
    """Chinese words with their part of speech (jieba's tags: n noun, ns place, m numeral ...)."""
    return [(w, f) for w, f in _jieba_tokenizer().cut(text)]


def _zh_word_starts(text: str) -> dict[int, str]:
    """Where each jieba word starts in `text`, with its part of speech."""
    out: dict[int, str] = {}
    pos = 0
    for word, flag in zh_words(text):
        out[pos] = flag
        pos += len(word)
    return out


def _zh_segmented_names(text: str) -> list[tuple[int, int]]:
    """Person names jieba's tagger finds (刘建, 陈浩, 阿凯, and Latin names such as Tony),
    kept only when they look like names: a surname or 阿/小/老 first, two or three characters."""
    out: list[tuple[int, int]] = []
    pos = 0
    for word, flag in _jieba_tokenizer().cut(text):
        start = text.find(word, pos)
        if start < 0:
            continue
        pos = start + len(word)
        if flag in ("nr", "nrfg") and 2 <= len(word) <= 3 and (word[0] in _ZH_SURNAMES or word[0] in "阿小老") and not any(c in ZH_FUNCTION_CHARS for c in word[1:]):
            out.append((start, pos))
        elif flag == "eng" and re.fullmatch(r"[A-Z][a-z]{1,15}", word):
            out.append((start, pos))
        elif len(word) == 2 and word[0] in "大二三小" and word[1] in "宝毛妞娃":
            out.append((start, pos))  # 大宝, 二宝: how families name their children
    for m in re.finditer(r"[小老](?P<s>[\u4e00-\u9fff])", text):
        if m.group("s") in _ZH_SURNAMES and not any(a <= m.start() < b for a, b in out):
            out.append((m.start(), m.end()))  # 小何, 老赵: a surname with 小/老 is how colleagues are named
    return out


_ZH_SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)


def _zh_looks_like_name(text: str) -> bool:
    """A Chinese personal name: a common surname and one or two more characters."""
    return 2 <= len(text) <= 3 and text[0] in _ZH_SURNAMES


_ZH_TITLES = re.compile(r"(?:老师|医生|大夫|教练|先生|女士|小姐|师傅|经理|主任|院长|主管|科长|律师|护士|教授|老板|店长|队长|班长|组长|总|阿姨|叔叔|工)$")


def _zh_copula_key(text: str, value: Value) -> str:
    key = _zh_copula_key_said(text, value)
    if not key and value.kind == KIND_NAME:
        title = _ZH_TITLES.search(value.text)
        if title:
            return title.group(0)  # 刘医生 and 陈医生 are both "the doctor"
    return key


def _zh_copula_key_said(text: str, value: Value) -> str:
    before = text[: value.start]
    clause = re.split(r"[，。,；;！!？?]", before)[-1]
    m = _ZH_COPULA.search(clause)
    if m:
        key = re.sub(r"^(?:我的|我们的|你的|他的|她的|现在|那|这|的)+", "", m.group("key"))
        key = key.removesuffix("的")
        if key and key not in L.ZH_EMPTY_WORDS:
            return key
    return ""


_EN_CLAUSE_BREAK = re.compile(r"[,;]|:(?=\s)|\s(?:and|but|so|except|while|whereas|when)\s", re.I)  # not the colon of "6:40"
_ZH_CLAUSE_BREAK = re.compile(r"[，,；;：。]|:(?!\d)|但是|不过|而且")


_EN_ANAPHOR = re.compile(r"\b(?:her|him|them|it|that|that one|this one|those|these)\b", re.I)
_ZH_ANAPHOR = re.compile(r"她|他|它|这个|那个|这位|那位|这家|那家")


def _anaphoric_cue(text: str, values: list[Value], lang: str) -> bool:
    """A clause that changes something only by pointing back at a value of the sentence."""
    pattern = _ZH_CLAUSE_BREAK if lang == "zh" else _EN_CLAUSE_BREAK
    starts = [0] + [m.end() for m in pattern.finditer(text)] + [len(text) + 1]
    for lo, hi in zip(starts, starts[1:]):
        if any(lo <= v.start < hi for v in values):
            continue
        clause = text[lo:hi]
        if L.has_change_cue(clause, lang) and (_ZH_ANAPHOR if lang == "zh" else _EN_ANAPHOR).search(clause):
            return True
    return False


def _set_contexts(text: str, values: list[Value], lang: str) -> None:
    """Each value's clause (its words without the values), and the days said with a time."""
    breaks = [0] + [m.end() for m in (_ZH_CLAUSE_BREAK if lang == "zh" else _EN_CLAUSE_BREAK).finditer(text)] + [len(text) + 1]
    for v in values:
        lo = max(b for b in breaks if b <= v.start)
        hi = min(b for b in breaks if b > v.start)
        clause = text[lo:hi]
        for o in sorted(values, key=lambda o: -o.start):
            # Names and places stay in the others' context ("the office at 9 Bell Yard").
            if lo <= o.start and o.end <= hi and (o is v or o.kind in _SLOT_KINDS):
                clause = clause[: o.start - lo] + " " + clause[o.end - lo :]
        v.context = " ".join(clause.split())
        v.cue = L.has_change_cue(text[lo:hi], lang) or (lang != "zh" and re.search(r"\b(?:so|that makes|making it)\s+$", text[: v.start], re.I) is not None)  # "..., so three"
        if v.kind == KIND_TIME:
            own = [o.text for o in values if o.kind == KIND_DATE and lo <= o.start < hi]
            # Else the day said last before it in the sentence ("on Tuesday, so 6:30").
            before = [o for o in values if o.kind == KIND_DATE and o.start < lo]
            v.qualifiers = own or ([before[-1].text] if before else [])
        else:
            v.qualifiers = []


def _without_values(key: str, values: list[Value]) -> str:
    """A key never carries a value: "把七点" is about the time, not "七点"."""
    for v in values:
        if v.text and v.text in key:
            key = key.replace(v.text, " ")
    return " ".join(key.split())


def _zh_without(text: str, values: list[Value], *, all_kinds: bool) -> str:
    out = text
    for v in sorted(values, key=lambda v: -v.start):
        if all_kinds or v.kind in _NOTE_CUTS:
            out = out[: v.start] + out[v.end :]
    return re.sub(r"[，,]{2,}", "，", out).strip(" ，,。.！!？?")


_PEOPLE_KEY = re.compile(r"人数|人头|headcount|head count|number of (?:people|guests)|party size|guest count|group size", re.I)


@dataclass(frozen=True)
class _Reader:
    """What differs between the languages; the reading itself is one procedure."""

    is_question: Callable[[str], bool]
    strip_discourse: Callable[[str], str]
    values: Callable[[str, frozenset[str]], list[Value]]
    without: Callable[..., str]
    copula_key: Callable[[str, Value], str]


_READERS = {
    "en": _Reader(_en_is_question, L.strip_en_discourse, _en_values, _en_without, _en_copula_key),
    "zh": _Reader(_zh_is_question, L.strip_zh_discourse, _zh_values, _zh_without, _zh_copula_key),
}


def read_sentence(sentence: str, lang: str, known_names: frozenset[str] = frozenset()) -> Statement:
    lang = "zh" if lang == "zh" else "en"
    reader = _READERS[lang]
    admission = L.has_admission(sentence, lang)
    text = reader.strip_discourse(sentence)
    st = Statement(text=text, lang=lang, raw=sentence, question=reader.is_question(sentence), admission=admission)
    st.change_cue = admission or L.has_change_cue(sentence, lang)
    st.additive = L.has_additive(text, lang) or (lang == "zh" and L.has_additive(sentence, lang))  # 还有 is a filler and adds
    st.strong_cue = L.has_strong_cue(sentence, lang)
    st.proposal = not st.question and sentence.rstrip().endswith(("?", "？"))
    st.values = reader.values(text, known_names)
    st.frame = reader.without(text, st.values, all_kinds=True)
    st.note = reader.without(text, st.values, all_kinds=False)
    st.frame_keys = content_stems(st.frame)
    for v in st.values:
        if lang == "en" and v.kind == KIND_TIME and v.text.endswith(".") and not re.search(r"[ap]\.m\.$", v.text, re.I):
            v.text = v.text[:-1]  # the sentence's full stop, not an "a.m."
            v.end -= 1
        said_key = reader.copula_key(text, v)
        v.key = _without_values(said_key, st.values).lstrip("把将")
        if said_key and not content_stems(v.key):
            # "Leo's is £18": whose it is, is all the key there is.
            v.key = _without_values(said_key, [o for o in st.values if o.kind != KIND_NAME]).lstrip("把将")
    for v in st.values:
        if v.kind == KIND_NUMBER and _PEOPLE_KEY.search(v.key) and re.fullmatch(rf"[{_ZH_NUM}]+|\d+|[a-z]+(?:[- ][a-z]+)?", v.text, re.I):
            v.kind, v.unit = KIND_QUANTITY, ("人" if lang == "zh" else "people")  # "人数改成四十": forty people
    _set_contexts(text, st.values, lang)
    st.anaphoric_cue = _anaphoric_cue(text, st.values, lang)
    return st
