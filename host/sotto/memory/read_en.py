"""English sentences read into values (see `values.py` for what a value is).

The patterns for times, dates, ranges, quantities with their units, numbers, codes and
IDs, choices (colours, sizes), addresses, places and names (capitals checked against a
dictionary); whether a sentence asks or proposes (`_en_is_question`); the subject a value
is said of ("the dose is ..." -> "dose", `_en_copula_key`); and the sentence without its
values (`_en_without`). `statements.read_sentence` puts them together.
"""

from __future__ import annotations

import functools
import re

from sotto.memory import language as L
from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME
from sotto.memory.text import EN_DATE as _EN_DATE
from sotto.memory.text import EN_MONTHS as _MONTHS
from sotto.memory.text import EN_COUNT_ORDINALS, EN_NUMBER_WORDS, EN_ORDINALS, EN_STOPWORDS
from sotto.memory.text import EN_WEEKDAYS as _WEEKDAYS
from sotto.memory.values import _NOTE_CUTS, _QUOTED, Value, _carries_value, _overlaps, code_spans, without_appositive_roles, spelled_again
from sotto.text.questions import asks

_NUM_WORD = rf"(?:an? (?:hundred|thousand)(?: and (?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?)?|{EN_NUMBER_WORDS}|a dozen|a couple of|a couple|a few|a pair of)"
_NUM = rf"(?:\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:[.,]\d+)?|(?:{EN_NUMBER_WORDS})(?:(?:[- ]|(?<=hundred) and |(?<=thousand) and )(?:{EN_NUMBER_WORDS}|thousand|million))*)(?: dozen)?"
_AMPM = r"(?:a\.?m\.?|p\.?m\.?)(?![a-z])"
_EN_TIME = re.compile(
    rf"\b(?:(?:half past|quarter past|quarter to|half|(?:five|ten|twenty|twenty-five|twenty five) (?:past|to)) (?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{{1,2}})\b(?: {_AMPM})?(?! (?:a|an|the|of|(?!is\b|was\b|has\b|suits\b|works\b)[a-z]+s)\b)"
    rf"|\d{{1,2}}(?::\d{{2}})?\s*{_AMPM}|\d{{1,2}}:\d{{2}}(?:\s*{_AMPM})?|(?:{_NUM})(?:[- ](?:o'clock|oh \w+))"
    rf"|(?:{EN_NUMBER_WORDS})(?:[- ](?:thirty|fifteen|forty-five|forty five|twenty|ten|oh five|forty|fifty))?\s*{_AMPM}"
    rf"|noon|midday|midnight|(?:before|after|with) (?:breakfast|lunch|dinner|supper|tea|meals|food|bed|bedtime)\b)",  # "after breakfast": when a medicine is taken
    re.I,
)
# A bare number after "at"/"by"/"until"/"around" is a time: "at seven", "back by six".
_DAYPART = r"(?: in the (?:morning|afternoon|evening)| at night| tonight| sharp)?"
_HOUR = r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[01]?\d|2[0-4])"
_EN_BARE_TIME = re.compile(rf"\b(?:at|by|until|till|around|before|after|from) ({_HOUR}(?:[- ](?:thirty|fifteen|forty-five|o'clock))?{_DAYPART})\b(?![.,]\d)(?!\s?(?:k?hz|mhz|ghz|v|volts?|amps?|a|mm|cm|m|km|kg|g|mg|ml|l|percent|per cent|%|degrees?|watts?|w|quid|pounds?|pence|p|dollars?|euros?|bucks)\b)(?! (?:people|persons|guests|of|[a-z]+s\b))", re.I)
_UNIT_WORD = r"[a-z][a-z'-]*"
_EN_QUANTITY = re.compile(
    rf"(?:\$\s?\d+(?:[.,]\d+)?|\b(?:{_NUM}|{_NUM_WORD}))(?:(?:\s|-)(?P<delta>more|extra|additional|fewer|less))?"
    rf"(?:\s|-)(?P<unit>of us|of them|(?:{_UNIT_WORD})(?:(?:\s|-)(?!(?:{EN_NUMBER_WORDS})\b)(?:{_UNIT_WORD}))?)",
    re.I,
)
# A relative change of a stored amount of money: "it's gone up by £5", "ten quid cheaper", "knock £20 off".
_EN_MONEY = rf"(?:[£$€]\s?\d+(?:\.\d\d)?|(?:{_NUM}) (?:pounds|quid|dollars|euros|bucks))"
_EN_AMOUNT_CHANGE = re.compile(
    # No word boundary before the amount: a currency sign starts no word ("they've taken £60 off").
    rf"\b(?P<dir1>up|down) by (?P<a1>{_EN_MONEY}|{_NUM}(?![\w-]|\s+[a-z]))|(?<![\w£$€.])(?P<a2>{_EN_MONEY}) (?P<dir2>more|extra|dearer|cheaper|less|off)\b|\b(?P<dir3>knock|knocks|knocked|take|takes|took) (?P<a3>{_EN_MONEY}|{_NUM}) off",  # "knock five off the order": a count
    re.I,
)
# A count moved up or down by what follows: "down" alone ("going down two teeth"), "up" only with "by"
# ("pick up two bags" moves nothing).
_EN_UP_DOWN = re.compile(r"\b(?:(?P<down>down)\s+(?:by\s+)?|up\s+by\s+)$", re.I)


def _moved_by(text: str, start: int) -> int:
    """-1 or 1 when the count at `start` moves a stored one down or up ("going down two teeth"), else 0."""
    way = _EN_UP_DOWN.search(text, 0, start)
    return 0 if way is None else -1 if way.group("down") else 1


_EN_AMOUNT_LESS = {"down", "cheaper", "less", "off", "knock", "knocks", "knocked", "take", "takes", "took"}
# A stored amount multiplied, said as an instruction about it: "Double the chilli", "so halve
# the bitrate" (not "a double room", "double-check the times").
_EN_FACTOR = re.compile(
    r"(?:^|[,;:.!?]\s+|\b(?:so|just|please|then|and|let's|we'll|i'll|can you|could you|need to|want to|better|should|must|might|to)\s+)"
    r"(?P<op>double|triple|treble|quadruple|halve)\s+(?:the|that|this|it|our|my|his|her|their)\b(?P<thing>(?:\s+(?!for\b|to\b|as\b|because\b|since\b|so\b)[a-z][\w-]*){0,3})",
    re.I,
)
EN_FACTORS = {"double": 2.0, "triple": 3.0, "treble": 3.0, "quadruple": 4.0, "halve": 0.5}
# A stored amount said as a multiple of itself: "half that many will do", "twice as much",
# "half as much again" (one and a half times).
_EN_AS_MANY = re.compile(r"\b(?P<op>half|twice|double|three times|two times) (?:as|that) (?:many|much)(?P<again> again)?\b", re.I)
EN_AS_MANY = {"half": 0.5, "twice": 2.0, "double": 2.0, "three times": 3.0, "two times": 2.0}
# A relative change of a time: "ten minutes earlier", "push it back half an hour".
_EN_SHIFT_BY = rf"(?:\d+|(?:{EN_NUMBER_WORDS})(?:-(?:{EN_NUMBER_WORDS}))?|an?|half an|a quarter of an)\s*(?:and a half\s+)?(?:minutes?|mins?|hours?|hrs?)(?:\s+and a half)?"
_EN_DAY_SHIFT_BY = rf"(?:(?:\d+|(?:{EN_NUMBER_WORDS})(?:-(?:{EN_NUMBER_WORDS}))?|an?)\s+(?:days?|weeks?)|a fortnight)"
_EN_DAY_SHIFT = re.compile(
    rf"(?<![\w-])(?P<by>{_EN_DAY_SHIFT_BY})\s+(?P<dir>earlier|later|sooner)\b"
    rf"|\bthe (?P<by3>day|week) (?P<dir3>after|before)\b(?!\s+(?:the|my|our|his|her|their|a|an|that|this|tomorrow|(?-i:[A-Z]\w*))\b)"  # "offered the day after, same time"
    rf"|\bthe (?P<dir4>next|following|previous) (?P<by4>day|week)\b"
    rf"|\b(?:push|pushed|pushing|move|moved|moving|put|bump|bumped|shift|shifted|bring|brought)\b(?:\s+(?:it|that|them|this|things|everything|us|me|him|her|the \w+))?\s+(?P<dir2>back|forward|on)\s+(?:by\s+)?(?P<by2>{_EN_DAY_SHIFT_BY})\b",
    re.I,
)
_EN_TIME_SHIFT = re.compile(
    rf"(?<![\w-])(?P<by>{_EN_SHIFT_BY})\s+(?P<dir>earlier|later|sooner)\b"  # "forty-five minutes later", not "five"
    rf"|\b(?:push|pushed|move|moved|put|bump|bumped|shift|shifted|bring|brought|pull|pulled|shuffle|shuffled)\b(?:\s+(?:it|that|them|this|things|everything|us|me|him|her|the \w+))?\s+(?P<dir2>back|forward|later|earlier|on)\s+(?:by\s+)?(?P<by2>{_EN_SHIFT_BY})\b",
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
    r"eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion)"
)
# Numbers said in words as one value: "fifty by seventy", "one point six", "a hundred and eighty",
# "three thousand two hundred", "eighty-four fifty".
_EN_SPOKEN_TIME = re.compile(
    r"(?<![-\w])(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?: |-(?=thirty|fifteen|forty|fifty|oh|o ))(?:oh five|o five|ten|fifteen|twenty-five|twenty five|twenty|thirty-five|"
    r"thirty|forty-five|forty five|forty|fifty-five|fifty)\b(?! (?:of|percent|pounds|quid|dollars|euros|pence|minutes|seconds|kilos|grams|people|pounds)\b)(?! (?:a|per|each) (?:week|month|day|year|head|person|kilo|hour)\b)",  # "two fifty a week" is money
    re.I,
)
_EN_AND = r"(?:[- ]|(?<=hundred) and |(?<=thousand) and )"  # "a hundred and eighty"; "one and two" is a list
_EN_WORD_NUMBER = rf"{_EN_NUMBER_PHRASE}(?:{_EN_AND}{_EN_NUMBER_PHRASE})*"
_EN_WORD_NUMERIC = re.compile(
    rf"\b(?:a )?{_EN_WORD_NUMBER} (?:by|x|point|over) {_EN_WORD_NUMBER}\b|\b(?:a )?{_EN_NUMBER_PHRASE}(?:{_EN_AND}{_EN_NUMBER_PHRASE})+(?: and a (?:half|quarter))?\b"
    rf"|\b(?:{_EN_NUMBER_PHRASE}|\d+) and a (?:half|quarter)\b"
    rf"|\bpoint (?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?: (?:zero|oh|one|two|three|four|five|six|seven|eight|nine))*\b",  # "point two": a decimal said without its nought
    re.I,
)
# Choices from closed sets: colours and sizes ("the silver one", "medium", 米色的, 大号).
_EN_COLOURS = (
    "red|orange|yellow|green|blue|purple|violet|pink|brown|black|white|grey|gray|silver|gold|golden|navy|beige|cream|ivory|"
    "charcoal|teal|turquoise|maroon|burgundy|olive|lilac|lavender|mint|coral|peach|tan|khaki|dove|magenta|mustard|bronze|copper|"
    "amber|scarlet|crimson|indigo|aqua|cyan|emerald|ochre|slate|taupe|fuchsia|cobalt|azure|mauve|saffron|sapphire|jade|chartreuse"
)
_EN_COLOUR_WORD = re.compile(rf"(?:{_EN_COLOURS})", re.I)


def is_colour_word(word: str) -> bool:
    return _EN_COLOUR_WORD.fullmatch(word.strip()) is not None


_EN_CHOICE = re.compile(
    rf"\b(?<!flat )(?:(?:light|dark|pale|bright|sky|royal|forest|dusty|deep|matt|matte)[- ])?(?:{_EN_COLOURS})(?:[- ](?:{_EN_COLOURS}))?\b(?![- ](?:friday|card|medal|standard)\b)"  # "charcoal grey" is one colour
    r"|\b(?:adult|youth|junior|kids'?|child(?:ren)?'s|men's|mens|women's|womens|ladies'?|boys'?|girls'?|toddler|petite|tall) (?:extra[- ]small|small|medium|large|extra[- ]large|XS|XL|XXL)\b"  # a size with its range: "youth large"
    r"|\b(?:extra[- ]small|small|medium|large|extra[- ]large|XS|XL|XXL|king[- ]size|queen[- ]size|single|double)\b(?=\s+(?:for|one|size|please|then|$)|[,.;!?]|$)"
    r"|(?<=\bthe )(?:extra[- ]small|small|medium|large|extra[- ]large)\b(?=\s+(?:is|was|comes|came|fits|fitted|runs|ran|'s)\b)"  # "the medium comes up big"
    r"|\b(?:daily|weekly|fortnightly|monthly|quarterly|annual|annually|yearly)\b(?=\s+(?:pass|plan|ticket|one|payment|subscription|please|then|is)\b|'s\b|[,.;!?]|$)",
    re.I,
)
_EN_FRACTION = re.compile(
    r"\b(?:half|a half|a quarter|quarter|three quarters|a third|one and a half|(?:\d+|one|two|three) and a half)(?: of)? (?:a |an )(?P<unit>[a-z][a-z-]+)\b"
    rf"|(?<![\w-])(?:\d+|{EN_NUMBER_WORDS}) and a half (?P<unit2>(?!(?:of|for|to|in|on|at|a|an|the|and|or|but|is|are|was|more|extra)\b)[a-z][a-z-]+)\b",
    re.I,
)  # "half a cup", "one and a half teaspoons", "two and a half litres" is a count with its unit
_EN_ID = re.compile(
    r"(?:\+?\b\d[\d -]{4,}\d\b|\b(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9][A-Z0-9-]{2,}[A-Z0-9]\b|\b[A-Z]{1,4}[- ]?\d{2,}(?:[A-Z]|\s[B-HJ-Z](?![\w'’]))?\b|\b\d{3,}\b|\b\d+[A-Z]{1,3}\b)"
)
# "grade three", "gate B12", "room 5": a label and its number are one value (a number/ID).
# Words a number is the label of ("room 12", "table nine", "platform 4").
EN_LABEL_WORDS = (
    "grade|level|room|gate|platform|size|row|table|seat|gen|generation|stage|version|series|mark|chapter|page|line|flight|bus|route|floor|year|class|apartment|flat|unit|suite|bay|"
    "aisle|locker|pin|extension|option|number|no\\.?|ward|bed|desk|counter|door|box|lot|stall|court|lane|track|terminal|zone|pier|dock|pitch|stand|plot|berth|booth|kiosk|pen|cabin|chalet|lodge|hut|pod"
)
_EN_LABELLED = re.compile(
    rf"\b(?:{EN_LABEL_WORDS})"
    rf"\s+(?:#\s*)?(?:\d+(?:\.\d+)?[A-Za-z]?|[A-Z]\d+|(?:{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?)\b",
    re.I,
)
# "a fifteen-litre", "a 9-volt", "two-metre": a number joined to its unit is one measure.
_EN_JOINED_MEASURE = re.compile(rf"\b(?:(?:{EN_NUMBER_WORDS}|a|an|\d+) )?(?:\d+(?:\.\d+)?|(?:{EN_NUMBER_WORDS})(?:-(?:one|two|three|four|five|six|seven|eight|nine))?)-(?P<unit>(?!(?:{EN_NUMBER_WORDS}|thirty|forty|fifty|off|way|on|to|ish|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|[a-z]+teenth|[a-z]+tieth)\b)[a-z]{{2,}})\b(?: [a-z]+s\b)?", re.I)
# "hood 2", "room 4.12", "iPhone 15", "pack A", "rev D": a thing and the number or letter
# that tells it from its siblings; the label is the key that a new number replaces.
_EN_THING_NUMBER = re.compile(
    r"\b(?P<thing>[A-Za-z][a-z]*[A-Z]?[a-z]+) (?:(?P<n>\d{1,6}[A-Za-z]{0,2})(?![:.,]?\d)(?!\s?(?:%|percent|per cent|am|pm|a\.m|p\.m|o'clock|degrees?|quid|pounds?|pence|dollars?|euros?|times)\b|%)|(?P<l>(?!I\b)[A-Z])(?![\w-]|['’](?!s\b)|\.\w))\b"
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
    rf"|\b(?:we're|we are) (?:at|up to|down to) ((?:{EN_NUMBER_WORDS}|\d{{1,3}})(?:[- ](?:{EN_NUMBER_WORDS}))?)(?=\s*(?:now\b|[,.;!?]|$))"
    # "the Hendersons are coming too, that's fourteen now": a total after people arrive counts people.
    rf"|\b(?:coming|joining|attending|signed up|can make it)\b[^.;!?]{{0,40}}?\b(?:that's|that makes|which makes|making|so it's|so) ((?:{EN_NUMBER_WORDS}|\d{{1,3}})(?:[- ](?:{EN_NUMBER_WORDS}))?)(?=\s*(?:now\b|in total\b|altogether\b|[,.;!?]|$))",
    re.I,
)
# "push it to 6", "move the call back to half past": a bare number a meeting is moved to is a time.
_EN_MOVED_TO = re.compile(
    rf"\b(?:push|pushed|move|moved|bump|bumped|shift|shifted|change|changed|bring|brought|put|reschedule|rescheduled)\b[^,.;!?]{{0,30}}?(?<!up )\bto (?P<t>{_HOUR}(?:[- ](?:thirty|fifteen|forty-five|o'clock))?)\b(?! (?:people|persons|guests|of|[a-z]+s\b))",
    re.I,
)
# "two more", "one fewer" with no noun: a change to the count last spoken of.
# "add another grown-up", "an extra ticket", "we'll need a third place": one more of a stored count.
_EN_ONE_MORE = re.compile(
    rf"\b(?:another|a further|an? extra|an additional|one extra|a (?:{'|'.join(EN_COUNT_ORDINALS)}))\s+"
    rf"(?:(?:{EN_NUMBER_WORDS}|\d{{1,3}})\s+)?"  # "another eight people": eight more
    r"(?P<unit>(?!(?:one|of|at|to|in|on|for|and|or|the|a|an|with|time|times|look|go|opinion|thought|chance|coat|round|try|day|week|month|year|thing|bit|while|minute|hour|second)\b)[a-z][a-z-]*)\b",
    re.I,
)
# "one more of each", "another of each", "two fewer of each": every count of the list just given.
_EN_EACH_DELTA = re.compile(rf"\b(?:(?P<n>{EN_NUMBER_WORDS}|\d{{1,3}}|a couple) (?P<dir>more|extra|fewer|less)|another(?: one)?) of (?:each|both|them all)\b", re.I)
# "add another 120 to theirs": a number more of a count named elsewhere. Followed by a word it is
# _EN_ONE_MORE's ("another 20 chairs"), unless that word is a preposition; a decimal is no count.
_EN_ANOTHER_N = re.compile(rf"\b(?:another|a further|an additional)\s+(?:{EN_NUMBER_WORDS}|\d{{1,4}})\b(?![\s-]+(?!(?:to|for|on|at|in)\b)[a-z]+\b)(?![.,:]\d)", re.I)
_EN_BARE_DELTA = re.compile(rf"\b(?:{EN_NUMBER_WORDS}|\d{{1,3}}) (?P<dir>more|extra|fewer|less)\b(?! [a-z]+s\b)", re.I)
# Codes read out with spaces ("WTU 2270 C", "DR 448193") and sizes with ×: one value (a code written
# as one token, "B12" or "700x25", is read by `values.code_spans`).
_EN_CODE = re.compile(r"\b(?=[A-Z0-9 ]*\d)(?=[A-Z0-9 ]*[A-Z])[A-Z0-9]{2,}(?: [A-Z0-9]{2,4})+(?: [B-HJ-Z](?![\w'’]))?\b(?![a-z])|\b[A-Z]{2,4}[- ]?\d{2,}(?:[- ]?[A-Z]{1,2}\b)?|\b\d+(?:\.\d+)?×\d+(?:\.\d+)?\b")
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
_STREET_END = re.compile(r" (?:Street|St|Road|Rd|Lane|Avenue|Ave|Drive|Way|Close|Crescent|Square|Park|Hill|Terrace|Gardens|Grove|Row|Walk|Mews|Place|Court)(?:'s|’s)?$")
_EN_NOT_NAMES = frozenset(
    "he she they it him her them his hers its their theirs he's she's they're it's there there's".split() +
    (_WEEKDAYS + "|" + _MONTHS).split("|")
    + "i i'm i'll i'd i've ok okay hi hello hey thanks please sorry yes no yeah oh um uh hmm wait actually so and but also "
    "the a an my our your his her their this that it it's we we're we'll can could would will what when where who how which "
    "why is are was were do does did let's let make book remind tell please just then now there here".split()
)
_COPULA = re.compile(r"\b(?:is|are|was|will be|would be|should be|'s|’s|becomes|has become|equals|=|:)\s+$", re.I)
_EN_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bnever|\bno longer|\binstead of|\brather than|\bthan|\bisn't|\bwasn't|\bno|\bdid (?:i|we) (?:say|tell you)"
    r"|\b(?:can't|cannot|can not|couldn't|won't|doesn't|don't) (?:do|make|manage|come|go|be|have|take|get to)"
    r"|\b(?:nobody|no one|no-one)(?:'s| is| will be)? (?:in|home|around|free|available|there)(?: on| at)?"
    r"|\b(?:full|booked up|fully booked|shut|closed|away|busy|unavailable|on leave|working|sold out) (?:on|at|for|that|this))\s+(?:the |at |on |for |in |an? )?$",
    re.I,
)  # "he can't do the ninth", "it's full on the ninth", "she's working that Saturday": the value ruled out
# "from 6 to 7": the first names the old value only when it is stored (else a route: "from Denver to Austin").
_EN_FROM_TO = re.compile(r"\bfrom\s+(?:the\s+)?$", re.I)
EN_NEGATED_AFTER = re.compile(
    r"^(?:\s+(?:car park|shop|office|branch|room|hall|site|venue|place|one))?\s*(?:(?:is|was|'s|’s|are|were)?\s*(?:won't|will not|doesn't|does not|don't|do not|can't|cannot|isn't|is not|wasn't|is no longer)"
    r"|(?:shuts|closes|floods|has closed|is closing|'s closing|is shutting|has shut|sold out|has sold out|'s sold out|is sold out|ran out|has run out|'s run out)\b"
    r"|(?:is|was|'s|’s|are|were)\s+(?:\w+ )?(?:wrong|out|off|cancelled|canceled|no good|not right|tricky|difficult|hard|bad|impossible|on leave|off sick|sick|ill|lame|injured|hurt|poorly|unwell|closed|shut|being (?:resurfaced|repaired|renovated|refurbished|rebuilt|painted|redone)|away|abroad|on holiday|on vacation|travelling|traveling|unavailable|not available|not around|not coming|double[- ]booked|snug|tight|too small|too big|too short|too long|not enough|"
    r"a problem|problematic|full|booked|taken|busy|(?:way |far |much |a bit |a little |just )?too \w+|no longer|awkward|out of the question)"
    r"|(?:was|is) a mistake"
    r"|(?:is|was|'s|’s|are|were)\s+(?:last year(?:'s)?|the year before|from last year|the old \w+|an old \w+|the previous \w+|out of date|outdated|last season(?:'s)?))\b",  # "Eighty-five was last year": the old value
    re.I,
)
_EN_COUNTED_STATE = re.compile(r"(?:is|was|'s|’s|are|were)\s+(?:\w+ )?(?:booked|taken|full|busy)", re.I)
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
_EN_KIN = re.compile(r"\b(?:my|his|her|their|our|the kids'|the kid's)\s+(?:mum|mom|mother|dad|father|grandma|grandmother|granny|nan|grandpa|grandfather|husband|wife|partner|brother|sister|son|daughter|uncle|aunt|auntie|neighbou?r|boss|babysitter|nanny)\b", re.I)




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


# Words before a number that are not a thing it numbers ("Plus one roll", "Maybe two").
# Prepositions are no things: "open till 9" is a time, not item "till" number 9.
_NOT_THINGS = frozenset("plus minus just only about around roughly maybe perhaps another nearly almost over under exactly till til until before after past via".split())
_UNIT_STOP = frozenset(
    "am pm a.m. p.m. o'clock oclock of at on in for to and or the a an more extra is are was were will would so now then "
    "instead please thanks too as well people's once twice thrice times daily altogether total all overall "
    "while when whenever because since if unless though although as before after until till "
    "between among amongst per by with from into over under about across through off up down out".split()
)
_NOT_A_UNIT = frozenset(
    "is are was were will would can could should shall may might must do does did has have had won't can't isn't "
    "works work worked sounds sound suits suit seems seem it that this then now instead please is better o'clock "
    "went came got said made took gave left ran sold paid put set cost felt kept told thought brought bought was goes comes "
    "fit fits needed needs coming going staying "
    "long wide high tall deep thick across".split()  # irregular verbs: "Leo's one went up"; "120 long" says which side, it counts nothing
)


def _ordinal_of_a_thing(said: str, after: str) -> bool:
    """An ordinal alone ("the 3rd", "the second") followed by a noun it counts: "the 3rd floor",
    "the second one". A date's ordinal is followed by a verb ("the 15th suits them"), a function
    word ("the 9th at ten"), an adverb ("the 8th instead") or nothing."""
    if not re.fullmatch(rf"(?:the )?(?:\d{{1,2}}(?:st|nd|rd|th)|{EN_ORDINALS})", said, re.I):
        return False
    m = re.match(r"\s+([a-z]+)\b", after)  # lower case: "the 14th March" goes on to its month
    if m is None:
        return False
    word = m.group(1)
    if word in ("one", "ones"):
        return True
    return (len(word) >= 3 and word not in EN_STOPWORDS and word not in _NOT_AFTER_A_THING
            and re.search(r"(?:s|ly|ed)$", word) is None and not _EN_DATE.match(word))


# Words that follow a date's ordinal and count nothing.
_NOT_AFTER_A_THING = frozenset("now instead next either onwards till until right again then first last morning afternoon evening night onward latest earliest".split())


def _en_quantity(m: re.Match[str], text: str) -> tuple[int, str] | None:
    """The end and the unit of a count with its counted noun ("three bikes", "twenty-eight grams"), or None."""
    unit = m.group("unit")
    words = unit.split()
    # A unit is the counted noun: cut at a function word ("three bikes for the afternoon").
    kept: list[str] = []
    first_raw = re.split(r"[\s-]", unit)[0]
    first = first_raw.lower()
    if first.endswith(("n't", "n’t")) or first in _NOT_A_UNIT:
        return None
    if first_raw[:1].isupper() or len(first.removesuffix("'s").removesuffix("’s")) < 2 or first.endswith("ed"):
        return None  # "2270 C", "two r's": a code or a letter, not a counted thing
    unit_words = re.split(r"[\s-]", unit)
    after_first = unit_words[1].lower() if len(unit_words) > 1 else ""
    if first.endswith("ing") and not re.match(r"(?:one|an?|1)\s", m.group(0), re.I) and not (after_first.endswith("s") and after_first not in _UNIT_STOP and after_first not in EN_STOPWORDS):
        return None  # "down to 220 seeing as ...", "40 running the stalls": a verb, not what is counted ("eight folding chairs" is)
    if first == "of" and unit.lower() not in ("of us", "of them"):
        return None  # "one of the guests": a person, not a count
    if re.match(r"(?:half\s+)?(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b", m.group(0), re.I) and (
            m.group(0).lower().startswith("half ") or re.search(r"\bhalf\s+$", text[: m.start()], re.I)) and not re.match(r"half\s+(?:an?|the)\b", m.group(0), re.I):
        return None  # "at half two clashes": half past two, a time
    if m.group(0).lower().startswith("one ") and re.search(r"\b(?:the|that|this|which|each|every|any|other)\s+$", text[: m.start()], re.I) and not re.search(r"\b(?:just|only) the\s+$", text[: m.start()], re.I):
        return None  # "the one next door", "the one ending 0938": a pronoun, not a count
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
            return None  # "one of us is vegetarian": a person, not a count
        kept = words
    if not kept:
        return None
    unit_text = " ".join(kept)
    end = m.start("unit") + len(unit_text) if m.group("unit").startswith(kept[0]) else m.end()
    # The whole phrase "two adult bikes": the counted noun is the last word kept; a
    # word before it is a modifier of the unit ("adult bike" is not "bike").
    return end, unit_text


_SELF_REPAIR = re.compile(r"\s*(?:\.{2,}|…|,|—|–|-)?\s*(?:no|sorry|I mean|or rather|wait)(?:,?\s+(?:wait|sorry|no|I mean))?\s*(?:,|\.{2,}|…|—)?\s*", re.I)


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

    # First: the amount is the change, before any reading of it as a count ("ten quid").
    for m in _EN_AMOUNT_CHANGE.finditer(text):
        amount = next(g for g in (m.group("a1"), m.group("a2"), m.group("a3")) if g)
        way = next(g for g in (m.group("dir1"), m.group("dir2"), m.group("dir3")) if g).lower()
        at = m.start("a1") if m.group("a1") else m.start("a2") if m.group("a2") else m.start("a3")
        add(at, at + len(amount), KIND_NUMBER, delta=True, delta_sign=-1 if way in _EN_AMOUNT_LESS else 1)

    for m in re.finditer(r"\b\d{1,2}[./]\d{1,2}[./](?:\d{4}|\d{2})\b", text):
        add(m.start(), m.end(), KIND_DATE)  # "14.06.2019": a date written with dots
    for m in re.finditer(r"(?:^|(?<=[,;:.!?] )|(?<=\bit's )|(?<=\bthat's )|(?<=\bwith a )|(?<=\bwith an ))[A-Za-z] (?:for|as in) [A-Z][a-z]+\b", text):
        taken.append((m.start(), m.end()))  # "N for November", "B as in Bravo": a letter spelled, not a value
    for start, end in code_spans(text):
        add(start, end, KIND_NUMBER)  # "3B-208", "B.07", "20-45-77": one code, however it is joined
    for m in _EN_JOINED_MEASURE.finditer(text):
        article = re.match(r"an? ", m.group(0), re.I)
        add(m.start() + (article.end() if article else 0), m.end(), KIND_QUANTITY, unit=m.group("unit").lower())
    for m in re.finditer(rf"\b(?:\d+|{EN_NUMBER_WORDS})\s*(?:foot|feet|ft)\s+(?:\d+|{EN_NUMBER_WORDS})(?:\s*(?:inches|inch|in)\b)?(?![\w-])", text, re.I):
        add(m.start(), m.end(), KIND_QUANTITY, unit="foot")  # "nine foot six": feet and inches, one length
    for m in re.finditer(rf"\b(?<!and )(?<!hundred )(?<!thousand )(?<!-)(?:a|{_NUM}) (?P<cur>pounds?|quid|dollars?|euros?|bucks)(?: (?:and )?(?:\d{{1,2}}|{EN_NUMBER_WORDS})(?:[- ](?:{EN_NUMBER_WORDS}))?(?: ?(?:p|pence|cents))?(?![\w-]))?", text, re.I):
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("cur").lower())  # "a pound fifty", "two hundred and sixty pounds": one amount
    for m in _EN_TIME_SHIFT.finditer(text):
        earlier = (m.group("dir") or m.group("dir2")).lower() in ("earlier", "sooner", "forward")
        add(m.start(), m.end(), KIND_TIME, delta=True, delta_sign=-1 if earlier else 1)
    for m in _EN_DAY_SHIFT.finditer(text):
        earlier = (m.group("dir") or m.group("dir2") or m.group("dir3") or m.group("dir4")).lower() in ("earlier", "sooner", "forward", "before", "previous")
        add(m.start(), m.end(), KIND_DATE, delta=True, delta_sign=-1 if earlier else 1)  # "pushed back a day": a stored day moves
    for m in re.finditer(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])", text):
        with_unit = _EN_QUANTITY.match(text, m.start())
        if with_unit is None or _en_quantity(with_unit, text) is None:
            add(m.start(), m.end(), KIND_NUMBER)  # "£1,840": one amount, its thousands marked
    for m in re.finditer(r"\b\d{3,}(?: \d{3,})+(?: \d{1,2}(?=\s*(?:[.,;!?]|$)))?\b", text):
        add(m.start(), m.end(), KIND_NUMBER)  # "6330 1948 2207": one number read in groups
    for m in re.finditer(r"(?<=[£$€])\d+(?:,\d{3})*\.\d\d(?![\d.])", text):
        add(m.start(), m.end(), KIND_NUMBER)  # "£342.60": pounds and pence are one amount
    for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?p(?![\w-])", text):
        add(m.start(), m.end(), KIND_NUMBER)  # "27.1p a unit": an amount in pence, decimals and all
    for m in _QUOTED.finditer(text):
        inner = "q" if m.group("q") is not None else "q2"
        if m.group(inner) is not None:
            add(m.start(inner), m.end(inner), KIND_NAME)  # 'write "Happy 80th" on it': verbatim, nothing inside is a value
    if text == text.lower():
        # Recognised words come without capitals: a name is known here only by the words
        # that introduce one ("mr white", "my name is carl", "his teacher is ms park").
        for m in re.finditer(r"(?<!\bthe )(?<!\ba )(?<!\bmy )(?<!\bher )(?<!\bhis )(?<!\bour )(?<!\byour )(?<!\btheir )\b(?:mr|mrs|ms|miss|dr|doctor|coach)\.? (?P<n>[a-z][a-z'-]{1,15})\b|\b(?:my name is|call me|called|named) (?P<m>[a-z][a-z'-]{1,15}(?: [a-z][a-z'-]{2,15})?)\b", text):
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
        change_before = _EN_CHANGE_BEFORE_RANGE.search(text[: m.start()])
        if change_before and sep in ("till", "til", "until") and change_before.group(0).lower().startswith("from"):
            change_before = None  # "from 8 pm till 11 pm": a range; "from 6 to 7" may be a change
        if re.search(r"\d", text[m.end(): m.end() + 2].strip()[:1]) or change_before:
            continue  # "from 6 to 7", "make it two to four": a change, read by the update step
        if re.match(r"\s+(?!(?:am|pm|o'clock|hours?|mins?|minutes?)\b)[a-z]+s\b", text[m.end():], re.I):
            continue  # "two to four people": a count, read below
        timed = sep in ("till", "til", "until") or m.group(0).lower().startswith("between") or re.search(r"[:ap]\.?m\b|:|\b(?:half|quarter)\b", m.group(0), re.I) is not None
        add(m.start(), m.end(), KIND_TIME if timed else KIND_NUMBER)
    for m in _EN_PEOPLE_COUNT.finditer(text):
        g = next(i for i in (1, 2, 3) if m.group(i))
        add(m.start(g), m.end(g), KIND_QUANTITY, unit="people")
    for m in _EN_FRACTION.finditer(text):
        way = _moved_by(text, m.start())
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit") or m.group("unit2"), delta=bool(way), delta_sign=-1 if way < 0 else 1)
    for m in _EN_NUMERIC.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_CHOICE.finditer(text):
        if m.group(0)[:1].isupper() and re.match(r" [A-Z][a-z]", text[m.end():]):
            continue  # "the Red Lion", "Green Park": a colour that begins a proper name
        add(m.start(), m.end(), KIND_ITEM)
    for m in _EN_ADDRESS.finditer(text):
        add(m.start(), m.end(), KIND_PLACE)
    for m in _EN_LABELLED.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in re.finditer(r"(?:^|(?<=[,.;:]\s))(?!Half |Quarter )[A-Z][a-z]{2,} (?:one|two|three|four|five|six|seven|eight|nine|ten|[A-Z]|\d{1,2})\b(?![.,]\d)(?! (?:o'clock|am|pm|percent|per cent|hundred|thousand|million|billion)\b|%)(?! (?:(?!has\b|is\b|was\b|needs\b|gets\b)[a-z]+ )?(?!has\b|is\b|was\b|needs\b|gets\b)[a-z]+s\b)", text):
        if m.group(0).split()[0].lower() not in EN_STOPWORDS and m.group(0).split()[0].lower() not in L.EN_EMPTY_WORDS and not _EN_DATE.match(m.group(0)) and m.group(0).split()[0].lower() not in _NOT_THINGS:
            add(m.start(), m.end(), KIND_NUMBER)  # "Hive two, five frames": a thing and its number, one value
    for m in _EN_CODE.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    for m in re.finditer(r"\b\d+s\b", text):
        add(m.start(), m.end(), KIND_NUMBER)  # "11s on that" (strings), "the 1990s": a number said in the plural
    for m in _EN_THING_NUMBER.finditer(text):
        thing = m.group("thing").lower()
        if thing in EN_STOPWORDS or thing in L.EN_EMPTY_WORDS or thing in _NOT_THINGS or _EN_DATE.fullmatch(thing) or re.search(r"(?:ing|ed|ly|[^su]s)$", thing):
            continue  # "at 4", "need 2", "Tuesday 3": not a thing's label
        if m.group("n") is not None and _EN_DATE.match(text, m.start("n")):
            continue
        counted = re.match(r"\s*(?:[a-z]+ )?(?!(?:has|is|was|does|goes|needs|looks|seems|works)\b)[a-z]+s\b", text[m.end():])
        if m.group("n") is not None and counted:
            continue  # "print 250 visitor badges": the number counts what follows
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_TIME.finditer(text):
        add(m.start(), m.end(), KIND_TIME)
    for m in _EN_SPOKEN_TIME.finditer(text):
        add(m.start(), m.end(), KIND_TIME)  # "four thirty", "seven fifteen": an hour and its minutes
    for m in _EN_WORD_NUMERIC.finditer(text):
        if re.fullmatch(r"(?:a )?(?:one|a) (?:one|two|three|four|five|six|seven|eight|nine)", m.group(0), re.I):
            continue
        number_start = m.start() + (2 if m.group(0).lower().startswith("a ") else 0)
        counted = _EN_QUANTITY.match(text, number_start)
        if counted and counted.end("unit") > m.end() and (_en_quantity(counted, text) or (0, ""))[0] > m.end():
            continue  # "twenty-eight grams", "two hundred and forty pounds": a count with its unit, read below
        add(m.start(), m.end(), KIND_NUMBER)
    for m in _EN_DATE.finditer(text):
        word = m.group(0).lower()
        if word in ("may", "march") and not re.search(r"\d", text[m.end(): m.end() + 4]):
            continue  # "may" the verb
        if word == "second" or word == "first" or (re.fullmatch(r"third|quarter|fifth|tenth", word) and re.search(r"\b(?:a|one|by a)\s+$", text[: m.start()], re.I)):
            continue  # "a second bike", "first thing", "by a third": ordinals alone are not dates
        if _ordinal_of_a_thing(m.group(0), text[m.end():]):
            continue  # "the second one", "the 3rd floor", "the third time": an ordinal counts the thing after it
        add(m.start(), m.end(), KIND_DATE)
    for m in _EN_BARE_TIME.finditer(text):
        bound = re.match(r"before|after", m.group(0), re.I)
        add(m.start() if bound else m.start(1), m.end(1), KIND_TIME)  # "before ten" is a limit, not ten o'clock
    for m in _EN_MOVED_TO.finditer(text):
        add(m.start("t"), m.end("t"), KIND_TIME)
    for m in _EN_FACTOR.finditer(text):
        add(m.start("op"), m.end(), KIND_QUANTITY, delta=True, factor=EN_FACTORS[m.group("op").lower()])
    for m in _EN_AS_MANY.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, delta=True, factor=EN_AS_MANY[m.group("op").lower()] + (1.0 if m.group("again") else 0.0))
    for m in _EN_ONE_MORE.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit").lower(), delta=True, anchored=True)
    for m in _EN_EACH_DELTA.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="", delta=True, each=True, delta_sign=-1 if (m.group("dir") or "").lower() in ("fewer", "less") else 1)
    for m in _EN_ANOTHER_N.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="", delta=True)
    for m in _EN_BARE_DELTA.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="", delta=True, delta_sign=-1 if m.group("dir").lower() in ("fewer", "less") else 1)
    for m in _EN_FREQUENCY.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="times a " + m.group(0).split()[-1].lower())
    for m in _EN_QUANTITY.finditer(text):
        count = _en_quantity(m, text)
        if count:
            way = _moved_by(text, m.start())
            add(m.start(), count[0], KIND_QUANTITY, unit=count[1], delta=bool(m.group("delta") or way), delta_sign=-1 if way < 0 else 1)
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
            or (sentence_start and len(tokens) > 1 and not _is_name_word(tokens[0]) and not _STREET_END.search(" ".join(tokens))
                and not (tokens[0] in _english_words() and _is_name_word(tokens[1])))  # "Booking Biscuit"; "Church Street" and "Tom Okafor" stay whole
            or (tokens[0].isupper() and len(tokens[0]) > 1 and not re.match(_TITLE + r"(?![a-z])", tokens[0]))  # "RSVP"
        ):
            start += len(tokens[0]) + 1
            tokens = tokens[1:]
        while len(tokens) > 1 and tokens[-1] in ("I", "I'm", "I'll", "I'd", "I've"):
            tokens = tokens[:-1]  # "it's Bernadette I need": the speaker, not a surname
        if not tokens or (len(tokens) == 1 and len(tokens[0].strip("'’")) == 1):
            continue  # "P, R, Y, C, E": letters spelled out, not names
        if len(tokens) == 1 and re.fullmatch(_TITLE + r"(?:'s|’s)?", tokens[0]):
            continue  # "Coach reckons ...": a title alone names a role, not a person
        span = " ".join(tokens)
        following = text[start + len(span):]
        if span.endswith(("'s", "’s")) and re.match(r"\s+(?:\w+ing|\w+ed|not|got|gone|been|on|off|in|out|the|a|an)\b", following):
            span = span[:-2]  # "Priya's taking": "Priya is taking"; "Donna's offered": "Donna has offered"
            following = "'s" + following
        at_start = text[:start].strip(" ,;:-\"'") == "" or text[:start].rstrip()[-1:] in ".!?:"
        verb_next = re.match(r"\s*(?:will|'ll|is|'s|’s|says|said|can|could|has|was|would|should|and I|[a-z]{2,}s)\b", following) is not None  # "Ana wants" 
        if at_start and span.lower() in EN_STOPWORDS and span.lower() not in ("will", "may", "can"):
            continue  # "For snacks, Isla gets ...": a function word is never a name
        marker = L.EN_DISCOURSE.match(text, start) if at_start else None
        if marker is not None and marker.end() > start + len(span.split()[0]):
            continue  # "Hang on, I misread it": the opening of a discourse marker
        if at_start and not re.match(_TITLE + r"(?![a-z])", span) and len(span.split()) == 1 and not _is_name_word(span) and span not in known and not any(spelled_again(span, k) for k in known if k[:1].isupper()) and not (
            verb_next and span in _english_words()  # "Tom will come": listed as a name too
        ):
            continue  # "Return is Monday", "Bedtime is 7:30": a capital only because a sentence starts
        end = start + len(span)
        # "Rosa's bakery", "Elm Street": a place noun after the proper name belongs to it.
        tail = re.match(r"\s+(?:[a-z]+\s+)?(?P<noun>[a-z]+)\b", text[end:])
        taking = re.search(r"\b(?:take|takes|taking|took|taken)\s+(?:over\s+)?$", text[:start], re.I) is not None
        if taking:
            pass  # "taking Freddie's place": Freddie is who, not where
        elif span.endswith(("'s", "’s")) and tail and _PLACE_NOUNS.fullmatch(tail.group("noun")):
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
        if m.group(0).lower() == "half" and re.match(r"\s+(?:of|the|our|my|your|his|her|their|them|us|these|those|this|that)\b", text[m.end():], re.I):
            continue  # "Half our lattes are oat now", "half of them": a share of something, no value
        add(m.start(), m.end(), KIND_NUMBER)
    found.sort(key=lambda v: v.start)
    found = without_appositive_roles(found, text)
    for v in found:
        before = text[: v.start]
        pm = re.search(r"\b(at|on|in|from|to|by|for|until|till|around|near|with)\s+(?:the\s+)?$", before, re.I)
        if pm and not v.prep:
            v.prep = pm.group(1).lower()
        after = EN_NEGATED_AFTER.match(text[v.end:])
        if after and v.kind == KIND_QUANTITY and _EN_COUNTED_STATE.fullmatch(after.group(0).strip()):
            after = None  # "Twelve stalls are booked": what the counted things are, not a count turned down
        repaired = _SELF_REPAIR.match(text[v.end:])
        if repaired and any(o.start == v.end + repaired.end() and o.kind in (v.kind, KIND_NUMBER) for o in found):
            v.negated = True  # "It's eighteen pounds... no, twenty-eight": said, then put right at once
        elif _EN_NEGATED_BEFORE.search(before[-30:]) or after:
            v.negated = True
        elif _EN_FROM_TO.search(before[-12:]) and re.match(r"^\s+(?:to|until|till)\b", text[v.end:], re.I):
            v.maybe_old = True
        if v.kind in (KIND_NUMBER, KIND_QUANTITY) and v.text[:1].isdigit() and text[v.start - 1: v.start] in ("£", "€", "¥", "$"):
            v.start -= 1  # "£14": the currency is part of the amount
            v.text = text[v.start: v.end]
        if v.kind == KIND_NUMBER and v.text.lower() in ("one", "a", "an") :
            v.kind = ""  # "one" alone is a pronoun far more often than a value
        if v.kind == KIND_NUMBER and re.fullmatch(r"half (?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)", v.text, re.I):
            v.kind = KIND_TIME  # "half two": half past two
    return [v for v in found if v.kind and not (v.kind == KIND_NUMBER and v.text.lower() in ("one",))]


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
            stem_ = low[: -len(suffix)]
            if suffix in ("ing", "ed", "er") and len(stem_) > 2 and stem_[-1] == stem_[-2]:
                forms.add(stem_[:-1])  # "Grabbing" is "grab" with its consonant doubled
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
                      "he", "she", "they", "we", "i", "you", "there", "here", "ours", "mine", "yours", "hers", "theirs") or lw in L.EN_EMPTY_WORDS:
                break
            keep.insert(0, w)
        key = " ".join(keep[-3:])
        if key:
            return key
    return ""
