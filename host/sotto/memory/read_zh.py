"""Chinese sentences read into values (see `values.py` for what a value is).

The patterns for times, dates, ranges, quantities with their measure words, numbers,
codes, choices (颜色, 大号), addresses, places and names (surnames, titles, kin words and
jieba's person tags); jieba's words and parts of speech (`zh_words`, loaded once by
`warm_up`); whether a sentence asks or proposes (`_zh_is_question`); the subject a value
is said of (`_zh_copula_key`); and the sentence without its values (`_zh_without`).
`statements.read_sentence` puts them together.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from sotto.memory import language as L
from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME
from sotto.memory.text import ZH_FUNCTION_CHARS
from sotto.memory.values import _NOTE_CUTS, _QUOTED, Value, _carries_value, _overlaps, code_spans, without_appositive_roles
from sotto.text.questions import asks, zh_asks_with_question_word

_ZH_DIGIT = "零〇一二三四五六七八九幺"
# Measure words (and the metric prefixes said before a unit: 毫升, 厘米): what a number counts.
_ZH_CLASSIFIERS = "寸个位张只件台辆瓶杯份次天晚间本盒包袋箱斤公克毫厘千米里块元毛分钟小时秒岁页欧层号楼人口片粒支条把双套碗盘桌束朵对副顿周节趟兆平度棵株盆颗罐桶卷升伏安瓦扇道根枚剂贴针顶匹头场幅架艘封篇首集门项排列座码档亩吨挂串捆提沓摞筐篮屉笼缸"
# A number said before one of these is not a number said alone: it counts, dates or labels.
_ZH_CLASSIFIERS_FOR_NUMBERS = _ZH_CLASSIFIERS + "月日年届期栋单室"
# The units a decimal amount is said in ("零点九安", "三点五平米"): the amount and its unit are one measure.
_ZH_DECIMAL_UNITS = "伏|安|毫安|瓦|千瓦|平方米|平米|平|米|厘米|毫米|公里|公斤|千克|斤|克|毫克|微克|升|毫升|度|寸|摩尔|微法|纳法|皮法|匹|倍"
# "P加到二点二", "层高零点二": one digit after 点 and nothing of a clock after it (八点零五, 八点二十, 八点五分)
# is a decimal, not a clock time.
_ZH_ONE_DIGIT_DECIMAL = "[零〇一二三四五六七八九]点[一二三四五六七八九](?![零〇一二三四五六七八九十百千万分刻钟半点])"
_ZH_DECIMAL_AT = re.compile(_ZH_ONE_DIGIT_DECIMAL)
_ZH_NUMERIC = re.compile(
    rf"(?<![A-Za-z0-9])[A-Za-z]\s?(?:\d+|[{_ZH_DIGIT}十百两]+)(?![A-Za-z0-9-])"
    rf"|(?:\d+|[{_ZH_DIGIT}十百千万两]+)个?(?:G|GB|M|MB|T|TB|K)(?![A-Za-z])"  # 三十个G, 500M, 四千K
    rf"|(?<![A-Za-z0-9{_ZH_DIGIT}十百千万两])[{_ZH_DIGIT}十]+[A-Z](?![A-Za-z0-9])"  # 十二F: a seat, as 12F is
    rf"|(?<![A-Za-z0-9])\d+[A-Za-z]{{1,2}}(?![A-Za-z0-9])"  # 型号后面是13B
    rf"|(?:\d+|[{_ZH_DIGIT}十百千两]+)\s?(?:乘|×|x|\*)\s?(?:\d+|[{_ZH_DIGIT}十百千两]+)"  # 三百乘六百
    rf"|(?=(?:[{_ZH_DIGIT}][，,\s]*){{7}})[{_ZH_DIGIT}]{{3,}}(?:[，,\s]+[{_ZH_DIGIT}]{{3,}})+"  # a phone number read in groups (seven digits and more)
    # A decimal of one digit with no part of the day before it ("下午三点五" is a clock time) and no unit after it.
    rf"|(?<![零〇一二两三四五六七八九十百千万点第\d])(?<!上午)(?<!下午)(?<!晚上)(?<!早上)(?<!中午)(?<!凌晨)(?<!傍晚)(?<!夜里){_ZH_ONE_DIGIT_DECIMAL}(?!{_ZH_DECIMAL_UNITS})"
    rf"|(?<![零〇一二两三四五六七八九十百千万点第])[一二两三四五六七八九十][零〇一二两三四五六七八九十百千万]*[百千万十][零〇一二两三四五六七八九十百千万]*(?:点[零一二三四五六七八九]+)?"
    rf"(?![零〇二两三四五六七八九十百千万点{_ZH_CLASSIFIERS_FOR_NUMBERS}]|一(?![期次晚天月年周人位节堂课份]|个月))"  # 一百一十五, 三百五, 七十七点九: a number said alone; 一千八一期: per term
)
_ZH_PERCENT = re.compile(r"百分之[零〇一二两三四五六七八九十百\d]+(?:点[零〇一二三四五六七八九\d]+)?")
# 十二栋三单元五零二: a building, maybe its entrance, and the flat; read as one value, and the update
# step takes its parts apart when one is said alone (是五零一, 是十三栋).
ZH_BUILDING = r"[零〇一二两三四五六七八九十\d]+(?:栋|幢|号楼)"
ZH_FLAT = rf"(?P<building>{ZH_BUILDING})(?P<unit>[零〇一二两三四五六七八九十\d]+单元)?(?P<room>[零〇一二三四五六七八九\d]{{3,4}})(?P<end>室|号)?"
_ZH_BLOCK_ROOM = re.compile(ZH_FLAT + r"(?![零〇一二三四五六七八九\d])")
_ZH_CHOICE = re.compile(
    r"(?<![零〇一二两三四五六七八九十百千\d厘毫])(?:[深浅淡亮暗藏天酒玫]?(?:红|橙|黄|绿|蓝|紫|粉|棕|咖啡|黑|白|灰|银|金|米|青|卡其))(?:色|的)"
    r"|(?<![零〇一二两三四五六七八九十百千\d])[大中小](?:号|杯|码|包|份|碗|盒|瓶|桶|袋)|加大码|(?<![A-Za-z])(?:X{0,3}[SML]|XXL|XL)(?:号|码)"
    r"|[深浅淡亮暗藏天酒玫](?:红|橙|黄|绿|蓝|紫|粉|棕|灰)(?![色的])"
)


_ZH_NUM = "零〇一二两三四五六七八九十百千万\\d"
_ZH_TIME = re.compile(
    rf"(?:(?:早上|上午|中午|下午|晚上|傍晚|凌晨|夜里|今晚|明早)?(?<![周期拜])(?:[{_ZH_NUM}]+)(?:点|點|:\d{{2}})(?:半|一刻|三刻|[{_ZH_NUM}]+分?)?(?:钟)?|\d{{1,2}}:\d{{2}}|中午|半夜|午夜|(?:早饭|早餐|午饭|午餐|晚饭|晚餐|饭|睡觉|睡)[前后])"  # 午饭后: when a medicine is taken
)
# 号 before a place or a thing (三号场, 5号线, 12号床, 五号馆, 九号铁, 五号电池) labels it, and 大一号 or 小两号
# is a size: no day of the month.
_ZH_DATE = re.compile(
    rf"(?:大后天|后天|明天|今天|昨天|前天|今晚|明晚|明早|下下周[一二三四五六日天]?|(?:下个?|这个?|上个?|每个?)?(?:周|星期|礼拜)[一二三四五六日天末]|"
    rf"(?:[{_ZH_NUM}]+月)?(?<![大小加])[{_ZH_NUM}]+(?:日|号(?![场线床窗桌门口位车楼院栋馆厅房室间柜台机球笔字铁店站库池箱舱区栏道]|电池))|[{_ZH_NUM}]+月份?|下个?月|这个?月|下周|这周|本周|月底|月初)"
)
# "一米二", "两块五", "三斤半": the unit said between the whole and its tenth is one measure.
_ZH_MEASURES_FOR_RATE = "斤个件只份袋箱盒包瓶杯碗张本把双套米尺克升条支"  # 两块五一斤: a price a jin
_ZH_SPLIT_MEASURE = re.compile(rf"(?<![零〇一二两三四五六七八九十百千\d])[一二两三四五六七八九十]+(?P<unit>米|块|斤|尺|公斤)(?:[一二三四五六七八九]|半)(?!(?!一[{_ZH_MEASURES_FOR_RATE}])[零〇一二两三四五六七八九十百千万点个位只件])")
_ZH_DECIMAL_MEASURE = re.compile(rf"[零〇一二两三四五六七八九十\d]+点[零〇一二三四五六七八九\d]+(?P<unit>{_ZH_DECIMAL_UNITS})")
_ZH_RANGE = re.compile(rf"(?:{_ZH_TIME.pattern})(?:到|至|-|~|－|—)(?:{_ZH_TIME.pattern})")
_ZH_STOP = "才就了的吧呢吗啊也都还再要够把被给和跟在到去来是有没不很太一二两三四五六七八九十零百千万"
_ZH_QUANTITY = re.compile(rf"(?P<num>[{_ZH_NUM}]+|几|半)(?P<delta>多|来)?(?P<unit>[{_ZH_CLASSIFIERS}][^{_ZH_STOP}\s，。,.！!？?；;：:、\dA-Za-z]{{0,2}})")
# 半年, 两年, 一个半小时: a length of time the measure words above cut short (年 is no classifier:
# 今年, 一年级); 我们俩, 咱仨: a head count said with the pronoun.
_ZH_DURATION = re.compile(r"(?<![\d〇零一二两三四五六七八九十百])(?P<num>[一二两三四五六七八九十\d]{1,3}|半)(?:个)?(?:半)?(?P<unit>年|小时|钟头)半?(?![级底初代纪龄])")
_ZH_PAIR = re.compile(r"(?:我们|咱们|他们|她们|你们|咱)(?P<n>俩|仨)|俩人|仨人")
# A stored amount multiplied: 辣椒翻一倍, 亮度翻个倍, 多印一倍, 码率减半, 电压加到原来的一倍半.
_ZH_FACTOR = re.compile(r"翻[一个]倍|翻倍|加倍|多[\u4e00-\u9fff]?一倍(?!半)|翻一番|减半|砍半|(?:减|砍|去|删|少|撤)掉?一半|(?:加|提|调|降|减|改)到原来的(?P<times>一倍半|[两二三四]倍|一半)")
_ZH_TIMES = {"一倍半": 1.5, "两倍": 2.0, "二倍": 2.0, "三倍": 3.0, "四倍": 4.0, "一半": 0.5}
# An amount said as a change of a stored one: 多收/贵/涨 more, 便宜/少收/降 less (涨到 says the new amount itself).
_ZH_AMOUNT_CHANGE = re.compile(r"(?:(?P<more>多收|多付|多交|多花|贵|涨)|(?P<less>便宜|少收|少付|降|优惠|减))了?$")


# Gradable adjectives, once: the ones of more and of less size (换大一码, 调低两度), then the others.
ZH_GRADED_MORE = "大高长宽粗厚深"
ZH_GRADED_LESS = "小低短窄细薄浅"
ZH_GRADABLE = ZH_GRADED_MORE + ZH_GRADED_LESS + "近远早晚快慢多少轻重便宜贵松紧亮暗"
_NOT_A_CHANGE = "(?<![至最顶差好很许不太多])"
_NOT_A_VERB = (ZH_FUNCTION_CHARS - frozenset("来要")) | frozenset(_ZH_NUM) | frozenset("少多么久大长远")


def _zh_change_before(before: str, compared: bool = False) -> tuple[bool, bool]:
    """(fewer, more): the words right before a count change a stored one (少拿一盒, 再加两袋, 还多一年)."""
    # Not 至少, 最多, 多少, 不少, 差不多: how many, not a change.
    less = re.search(rf"{_NOT_A_CHANGE}(?:少|减|减少|去掉)(?:拿|买|要|订|带|放|做|点|送)?了?$", before) is not None
    more = re.search(rf"{_NOT_A_CHANGE}(?:多加|再加|加|再多|多|增加|再来|再)(?:拿|买|要|订|带|放|做|点|送|来|发|寄|印|备)?了?$", before) is not None
    # 多/少 right before the verb of the count, whatever the verb: 多输两天, 少来五袋.
    way = re.search(rf"{_NOT_A_CHANGE}(?P<way>多|少)(?P<verb>[\u4e00-\u9fff])了?$", before)
    if way is not None and way.group("verb") not in _NOT_A_VERB:
        less, more = less or way.group("way") == "少", more or way.group("way") == "多"
    # An adjective of a verb right before the count says by how much (`compared`): 换大一码, 调低两度.
    than = re.search(rf"(?:(?P<up>[{ZH_GRADED_MORE}])|[{ZH_GRADED_LESS}])$", before)
    if than is not None and compared:
        less, more = less or not than.group("up"), more or bool(than.group("up"))
    # 又有两个, 又翻出来三张: "again" before the verb that brings the count (not 又是三个: the same count said again)
    more = more or re.search(r"又(?!是)[\u4e00-\u9fff]{1,3}了?$", before) is not None
    return less, more


_ZH_PLATE_PROVINCES = "京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼"
# Codes written as one token are read by `values.code_spans`; these are the ones said in groups.
_ZH_ID = re.compile(r"\d[\d -]{3,}\d|[A-Za-z]{1,4}-?\d{2,}|[零〇一二三四五六七八九幺]{5,}")
_ZH_NAME_AFTER = re.compile(r"(?:叫|是|换成|改成|找|跟|和|请|给|让)(?P<name>[\u4e00-\u9fff]{2,3}?)(?=(?:老师|医生|教练|先生|女士|小姐|师傅|经理|总)?(?:[，。,.！!？?带来去吧了的]|$))")
_ZH_KIN = re.compile(r"(?:他|她|我|孩子)?(?:爸爸|妈妈|爷爷|奶奶|外公|外婆|姥姥|姥爷|哥哥|姐姐|弟弟|妹妹|老公|老婆|丈夫|妻子|儿子|女儿|舅舅|姑姑|叔叔|阿姨|婆婆|公公)")
_ZH_TITLED = re.compile(r"[王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤](?:老师|医生|大夫|教练|先生|女士|小姐|师傅|经理|主任|书记|校长|所长|处长|局长|馆长|院长|主管|科长|律师|护士|教授|老板|店长|队长|班长|组长|总|阿姨|叔叔|工)")
_ZH_FREQUENCY = re.compile(rf"(?:每|一)[{_ZH_NUM}]*(?:天|周|星期|个月|月|晚|日|小时)[^\s，。,.]{{0,3}}?[{_ZH_NUM}]+次")
# Buildings, floors and rooms read as codes: "B座", "12楼", "3号楼", "501室".
_ZH_ORDINAL_LABEL = re.compile(r"第[一二两三四五六七八九十百\d]+(?:排|层|楼|号|节|站|座|桌|车厢|车|道|组|列|行|间|路|期|批|轮|页|课|章|集|题|场|届|名|单元)")
# "3号楼", "C座"; "B区12号": a zone's numbered spot is a place's number, not the 12th of a month.
_ZH_UNIT_CODE = re.compile(r"[A-Za-z]区[\d零〇幺一二两三四五六七八九十]+号?|[A-Za-z\d零〇幺一二三四五六七八九十]+(?:座|号楼|栋|单元|室|楼|层)")
_ZH_ADDRESS = re.compile(
    r"(?:[\u4e00-\u9fff]{1,4}(?:省|市|区|县))+[\u4e00-\u9fff]{1,6}?(?:路|街|大街|大道|道|巷|胡同|弄)(?:[\d一二三四五六七八九十百零]+号(?:院|楼)?)?"
    r"|(?:[\u4e00-\u9fff]{1,4}(?:省|市|区|县))?[\u4e00-\u9fff]{1,6}(?:路|街|大街|大道|道|巷|胡同|弄)[\d一二三四五六七八九十百零]+号(?:院|楼)?(?:[\d一二三四五六七八九十]+(?:号楼|栋|单元|室|层))*"
)  # "成都高新区天府大道": a district and a road are an address even without a house number
_ZH_PLACE_END = r"(?:路|街|道|号|楼|层|室|站|机场|酒店|宾馆|医院|学校|公园|大厦|广场|中心|小区|餐厅|饭店|店|馆|门|口|厅|村|镇|市|区|县|省|园|轩|阁|苑|坊|庄|斋|茶社|会所)"
# "在湖滨路的聚丰园": a venue named after its street is one place.
_ZH_PLACE = re.compile(rf"(?:在|到|去|从|于|住)(?P<place>[^\s，。,.！!？?我你他她的了和后前时再]{{0,8}}{_ZH_PLACE_END}(?:的[^\s，。,.！!？?我你他她的了和后前时再]{{1,5}}{_ZH_PLACE_END})?)")
_ZH_COPULA = re.compile(r"(?P<key>[\u4e00-\u9fff]{1,6}?)(?:是|叫|为|改成|换成|改为|改到|变成|换到|定在|约在|定成|要)$")
_ZH_NEGATED_BEFORE = re.compile(r"(?:不是|不要|别|而不是|比|不用|取消|把)$")
ZH_NEGATED_AFTER = re.compile(r"^(?:那[顿个次天场趟班家]|的(?=没货|卖完|缺货|不合适))?(?:(?:我|他|她|我们|他们|她们|孩子)?(?:那天|那几天|当天|今天|明天|这周|下周|周[一二三四五六日天]|最近)?(?:休息|请假|出差|生病|病了|没空|不在|走不开|值班|忙不过来|排满|没时间|(?:家里|家)?没人|(?:我|他|她)?还?在(?:单位|公司|上班|开会|外地|路上)(?![楼门口下里前])|要上班|得上班)|怕?不(?:太)?够|(?:的\w{0,2})?(?:太|有点|有些)[\u4e00-\u9fff]{1,2}|撑不|(?:已经)?(?:约|订|排|报|坐|住|挂)?满了|没货了?|缺货了?|卖完了?|断货了?|不行|不合适|驾照过期|太晚|太早|太赶|有点赶|有点晚|有点早|来不了|去不了|不在家|不行了|不行|不对|不好|错了|不要了|取消|不方便|有事|改成|换成|改为|改到|调到|挪到|推迟到|提前到|是(?:去年|前年|以前|之前|原来|上回|上次|老|旧)的)")  # 三百七是去年的价: the old value
_ZH_REQUEST = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|帮我|麻烦你?|给我)")
_ZH_ASK_TO_TELL = re.compile(r"^(?:你)?(?:能不能|能|可以|可不可以|请|麻烦你?)?(?:给我|帮我|跟我)?(?:告诉我|讲讲|讲一下|讲个|说说|介绍一下|解释一下|推荐一下|推荐|给点建议|出个主意)")


# Parts of speech that carry no key: particles, prepositions, conjunctions, adverbs, pronouns, ...
ZH_NO_KEY_FLAGS = ("u", "p", "c", "d", "r", "y", "e", "x", "q")


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
        if flag[:1] in ZH_NO_KEY_FLAGS or (flag[:1] == "m" and re.search(r"[零〇一二两三四五六七八九十百千万\d几半]", word)):
            continue  # particles, prepositions, adverbs, pronouns, numerals: no key (大碗, tagged a numeral, is a thing)
        out.add(word)
        if len(word) >= 3 and flag[:1] == "n" and _known_noun(word[-2:]):
            out.add(word[-2:])  # a noun is shortened to its head: 餐厅 is the 西餐厅, 市场 the 花卉市场
    return frozenset(out)


_COMMON = 100  # how often a word occurs in the segmenter's dictionary to be taken as a word of its own


@functools.lru_cache(maxsize=4096)
def _known_noun(word: str) -> bool:
    """A common noun of the segmenter's dictionary (it tags any unknown run a noun: 蛛人 of 蜘蛛人)."""
    tokenizer = _jieba_tokenizer()
    tokenizer.tokenizer.check_initialized()  # the word frequencies load with the dictionary
    return (tokenizer.tokenizer.FREQ.get(word) or 0) >= _COMMON and tokenizer.word_tag_tab.get(word, "")[:1] == "n"




def _zh_wh(s: str) -> bool:
    """A question word that asks (the indefinites, 好几个 and 多发几个, ask nothing), or 来着 (what was it again)."""
    return zh_asks_with_question_word(s) or "来着" in s


def _zh_is_question(sentence: str) -> bool:
    s = L.strip_zh_discourse(sentence)
    if _ZH_ASK_TO_TELL.match(s):
        return True
    if _ZH_REQUEST.match(s) and not _zh_wh(s):
        return False
    # "时间能不能提前到两点？", "有没有五点十分的？", "礼拜五能送不？" (A不A, a closing 不): a proposal carrying its value.
    if re.search(r"((?![是对])[\u4e00-\u9fff])不\1|可不可以|可以.{0,12}吗|有没有|(?<![对是])不[？?]?$|(?:行|可以|好|成|有(?:人|空|位置?|号)?)[吗吧][？?]?$", s) and not _zh_wh(s) and (_ZH_TIME.search(s) or _ZH_DATE.search(s) or re.search(rf"[{_ZH_NUM}]", s)):
        return False
    if re.search(r"呢[？?]?$", s) and not _zh_wh(s) and (_ZH_TIME.search(s) or re.search(rf"[{_ZH_NUM}]+[号日]", s)):
        return False  # "十月六号呢？": a date proposed; "那另一个呢？" stays a question
    checks = re.search(r"是[^，,。]{0,8}吧[？?]?$", s) is not None  # "提醒是明天吧": checks a value, asks
    if re.search(r"(?:(?<![对是])吗|(?<![对是])吧|行不行|好不好)[？?]?$", s) and not checks and not _zh_wh(s) and _carries_value(_zh_values(s)):
        return False  # "明天下午三点能来吗？": a yes/no question proposing its value ("三点对吧" checks one: a question)
    return asks(s, "zh")


# 各加一个, 每样多来两份: every count of the list just given changes by it.
_ZH_EACH_DELTA = re.compile(r"(?:各|每样|每种)(?:再)?(?P<dir>加|多|添|来|减|少)(?:来)?(?P<n>[一两二三四五\d])[个份位张件瓶盒只]")
# A relative change of a time: 再早十分钟, 推迟一个小时, 晚半小时.
_ZH_DAY_SHIFT = re.compile(
    r"(?P<dir>提前|提早|往前提|往前挪|往前推|往前|往后推|往后挪|往后延|往后|推迟|延后|推后|延期|顺延|推|挪|延|早|晚)了?(?P<by>[零一二两三四五六七八九十\d]+个?(?:天|周|星期|礼拜))"
)
_ZH_DAY_SAID = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]|[\d一二三四五六七八九十]+[号日]")
_ZH_CLAUSE_END = re.compile(r"[了吧啊呢哦啦嘛，。,.!！?？；;、\s]|$")
_ZH_EARLIER = ("提前", "提早", "早", "往前提", "往前挪", "往前推", "往前")
_ZH_TIME_SHIFT = re.compile(
    r"(?P<dir>提前|提早|往前提|往前挪|往前|往后推|往后挪|往后|推迟|延后|推后|早|晚)了?(?P<by>[零一二两三四五六七八九十\d]+个?半?(?:分钟|小时|钟头)|半个?(?:小时|钟头)|[一二两三]刻钟?)"
)


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
    for m in _ZH_FACTOR.finditer(text):
        factor = _ZH_TIMES[m.group("times")] if m.group("times") else 0.5 if "半" in m.group(0) else 2.0
        add(m.start(), m.end(), KIND_QUANTITY, delta=True, factor=factor)
    for m in _ZH_EACH_DELTA.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="", delta=True, each=True, delta_sign=-1 if m.group("dir") in ("减", "少") else 1)
    for m in _ZH_TIME_SHIFT.finditer(text):
        add(m.start(), m.end(), KIND_TIME, delta=True, delta_sign=-1 if m.group("dir") in _ZH_EARLIER else 1)
    for m in _ZH_DAY_SHIFT.finditer(text):
        # 往后推两天: a stored day moves. Before a verb it moves only a day the turn names: 周五人太多，
        # 提前一天去 moves 周五; 阿司匹林要提前五天停 says how long before, and moves nothing.
        anchored = _ZH_CLAUSE_END.match(text, m.end()) is None
        if anchored and not _ZH_DAY_SAID.search(text[: m.start()]):
            continue  # no day said before it: a length of time (五天), read below
        add(m.start(), m.end(), KIND_DATE, delta=True, delta_sign=-1 if m.group("dir") in _ZH_EARLIER else 1, anchored=anchored)
    for m in re.finditer(r"一点(?![半钟分刻\d零一二三四五六七八九十])", text):
        if _after_an_adjective(text[: m.start()]):
            taken.append((m.start(), m.end()))  # "好认一点", "便宜一点", "冷一点": a little, not one o'clock
    for m in _ZH_RATE.finditer(text):
        # 七十五一亩, 一袋八十: 一 and a measure beside an amount say "per", they count nothing.
        if m.group("amount"):
            add(m.start("amount"), m.end("amount"), KIND_NUMBER)
        per = next(g for g in ("per", "per2", "per3", "per4") if m.group(g))
        taken.append((m.start(per), m.end(per)))
    for m in re.finditer(rf"[{_ZH_PLATE_PROVINCES}][A-Z][A-Z\d零〇一二三四五六七八九幺]{{5,6}}(?![A-Za-z\d零〇一二三四五六七八九])", text):
        add(m.start(), m.end(), KIND_NUMBER)  # 浙A七三K八五: a plate read out in words is one plate
    for start, end in code_spans(text):
        plate = start > 0 and text[start - 1] in _ZH_PLATE_PROVINCES
        add(start - 1 if plate else start, end, KIND_NUMBER)  # "沪A3K729", "3B-208", "E-41": one code
    for m in _ZH_PERCENT.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="%")  # 百分之八十: one share, not 八十 and a stray 分之
    for m in _ZH_BLOCK_ROOM.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)  # 3栋502, 五栋二单元六零一: one flat, not a building and a number
    for m in _ZH_SPLIT_MEASURE.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit"))
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
    for m in _ZH_ORDINAL_LABEL.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)  # "第十排", "第3车厢": a numbered place, labelled by its measure word
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
        decimal = _ZH_DECIMAL_AT.match(text, m.start())
        if decimal is not None and decimal.end() == m.end():
            continue  # "P加到二点二", "层高零点二": a decimal, not a clock time (read as a number or a measure)
        add(m.start(), m.end(), KIND_TIME)
    for m in _ZH_DATE.finditer(text):
        add(m.start(), m.end(), KIND_DATE)
    for m in _ZH_ID.finditer(text):
        add(m.start(), m.end(), KIND_NUMBER)
    starts = _zh_word_starts(text)
    for m in _ZH_DURATION.finditer(text):
        less, more = _zh_change_before(text[max(0, m.start() - 5): m.start()])
        add(m.start(), m.end(), KIND_QUANTITY, unit=m.group("unit"), delta=less or more, delta_sign=-1 if less else 1)  # 还多一年: one year more
    for m in _ZH_PAIR.finditer(text):
        add(m.start(), m.end(), KIND_QUANTITY, unit="人")
    for m in _ZH_QUANTITY.finditer(text):
        unit = m.group("unit")
        end = m.end()
        if text[m.start() - 1: m.start()] in ("第", "老") or (m.group("unit").startswith("位") and re.search(r"(?:后|最后|前|末|尾)$", text[: m.start()])):
            continue  # "第二本", 老二小宇: an ordinal; "后四位": how many digits, not people
        if m.group("num") == "一" and text[end:end + 1] in ("是", "要", "给"):
            continue  # "一本是《活着》": one of them, not a count
        if m.group(0).startswith(("一块儿", "一块去", "一块来")):
            continue  # "一块儿修了": together, not one 块
        for i in range(m.start("unit") + 1, m.end()):
            if starts.get(i, "n")[:1] in "adcpryexuv":  # "八寸肯定不够", "二十个根本不够": the unit is 寸, 个; "肯定", "根本" are not counted
                unit, end = text[m.start("unit"): i], i
                break
        whole = _zh_whole_word_end(text, m.start("unit") + 1, end)  # 八斤嫩豆腐: the thing counted is not cut inside a word
        if whole != end:
            unit, end = text[m.start("unit"): whole], whole
        less, more = _zh_change_before(text[max(0, m.start() - 5): m.start()], _zh_verb_adjective_at(text, m.start() - 1))
        more = more or m.group("delta") == "多"
        if m.group("num") == "几" and not (less or more):
            continue  # "要几个": how many, or a few; no count either way
        add(m.start(), end, KIND_QUANTITY, unit=unit, delta=less or more, delta_sign=-1 if less else 1)
    for m in _ZH_PLACE.finditer(text):
        add(m.start("place"), m.end("place"), KIND_PLACE, prep=text[m.start()])
    for start, end in _zh_segmented_places(text):
        add(start, end, KIND_PLACE, prep=text[start - 1])
    for m in _ZH_TEAM.finditer(text):
        add(m.start(), m.end(), KIND_NAME)
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
    found = without_appositive_roles(found, text)
    for v in found:
        each_of = re.search(rf"一([{_ZH_CLASSIFIERS}])$", text[: v.start]) if v.kind == KIND_NUMBER else None
        if each_of is not None:
            v.per = each_of.group(1)  # 一套一百三: 130 a set
        way = _ZH_AMOUNT_CHANGE.search(text[max(0, v.start - 3): v.start]) if v.kind == KIND_NUMBER else None
        if way is not None:
            v.delta, v.delta_sign = True, -1 if way.group("less") else 1  # 每晚多收一百二, 每人便宜一百二
        if v.kind == KIND_NUMBER and re.fullmatch(r"[A-Za-z]\s+[零〇一二三四五六七八九幺\d]+", v.text):
            v.text = re.sub(r"\s+", "", v.text)  # "E 八八三四五六七二": the letter and its digits are one code
        if v.kind == KIND_NUMBER and re.fullmatch(rf"[{_ZH_DIGIT}]+(?:[，,\s]+[{_ZH_DIGIT}]+)+", v.text):
            v.text = re.sub(r"[，,\s]+", "", v.text)  # the pauses of reading a number in groups are not part of it
        after = ZH_NEGATED_AFTER.match(text[v.end:])
        if after is not None and text[v.end + after.end(): v.end + after.end() + 1] == "的":
            after = None  # "下周值班的是李浩然": who is on duty, said of the day, not the day ruled out
        if _ZH_NEGATED_BEFORE.search(text[max(0, v.start - 4): v.start]) or after:
            v.negated = True
    return found


def _after_an_adjective(before: str) -> bool:
    """The text ends in an adjective (近, 冷, 便宜, 调浅): what follows says how much more, not a time."""
    if re.search(rf"[{ZH_GRADABLE}好认些冷热凉暖]$", before):
        return True
    words = zh_words(before[-6:]) if re.search(r"[\u4e00-\u9fff]$", before) else []
    return bool(words) and words[-1][1][:1] == "a"


@functools.lru_cache(maxsize=1)
def _jieba_tokenizer() -> Any:
    import logging

    import jieba  # type: ignore[import-not-found,import-untyped]
    import jieba.posseg  # type: ignore[import-not-found,import-untyped]

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg.POSTokenizer(jieba.Tokenizer())


def warm_up() -> None:
    """Load the Chinese segmenter's dictionary now (about a second), so no turn waits for it."""
    list(_jieba_tokenizer().cut("你好"))  # the dictionary loads on the first cut


def zh_words(text: str) -> list[tuple[str, str]]:
    """Chinese words with their part of speech (jieba's tags: n noun, ns place, m numeral ...)."""
    return [(w, f) for w, f in _jieba_tokenizer().cut(text)]


def _zh_whole_word_end(text: str, after: int, end: int) -> int:
    """`end` moved to the end of the noun it falls inside (八斤嫩豆|腐 -> 八斤嫩豆腐), by at most two characters;
    a noun that began at or before `after` (the measure word's own) is left as it is."""
    for start, word, flag in _zh_words_at(text):
        if after <= start < end < start + len(word) and flag.startswith("n") and start + len(word) - end <= 2 and not any(c in _ZH_STOP for c in word):
            return start + len(word)
    return end


def _zh_verb_adjective_at(text: str, at: int) -> bool:
    """The character at `at` is an adjective made part of a verb (调低, 放长) or said right after one
    (换 小, 再 短): not a noun's (墙长, 小两口), a count's (两大一小) or a size said (桌子长两米)."""
    words = _zh_words_at(text)
    for i, (start, word, flag) in enumerate(words):
        if start <= at < start + len(word):
            # jieba tags 大一码 an adverb as a whole; a lone adjective needs a verb or an adverb before it (再短五厘米)
            return flag[:1] in "vd" or (start == at and flag[:1] == "a" and i > 0 and words[i - 1][2][:1] in "vd")
    return False


def _zh_word_starts(text: str) -> dict[int, str]:
    """Where each jieba word starts in `text`, with its part of speech."""
    return {start: flag for start, _, flag in _zh_words_at(text)}


# A team said by its name: 蓝鲸队, 飞虎队 (after 是, 叫, 对阵 ...; 第一队 is an ordinal).
_ZH_TEAM = re.compile(r"(?<=[是叫阵战和跟打踢])(?![第一二三四五六七八九十这那])[\u4e00-\u9fff]{2,3}?队(?![长员伍友])")


# A rate: an amount before "一 + measure" (七十五一亩: 一 after a units digit ends no number) or
# right after it (一亩八十块, 一袋八十).
_ZH_MEASURES = re.sub(r"[十百千万两]", "", _ZH_CLASSIFIERS)  # 一千二 is a number, not "per thousand"
_ZH_RATE = re.compile(
    rf"(?P<amount>[{_ZH_NUM}]*[十百千][一二三四五六七八九])(?P<per>一[{_ZH_MEASURES}])"
    rf"|(?<![{_ZH_NUM}])(?P<per2>一[{_ZH_MEASURES}])(?=(?:[{_ZH_NUM}]{{2,}}[块元]?|[{_ZH_NUM}][块元])(?:[，。,.！!？?；;]|$))"  # 一米一 is 1.1 metres
    rf"|(?<=[零〇二两三四五六七八九十百千万\d][{_ZH_MEASURES}])(?P<per3>一[{_ZH_MEASURES}])(?=的?(?:[，。,.！!？?；;]|$))"  # 五十升一袋的: fifty litres a bag (一次一片: one a time)
    rf"|(?<=[块元][一二三四五六七八九])(?P<per4>一[{_ZH_MEASURES}])(?=的?(?:[，。,.！!？?；;]|$))"  # 两块五一斤: two and a half a jin
)


@functools.lru_cache(maxsize=256)
def _zh_words_at(text: str) -> tuple[tuple[int, str, str], ...]:
    """jieba's words with where each starts in `text` and its part of speech (one cut per
    sentence: the quantity, place and name readers all ask)."""
    pos = 0
    words: list[tuple[int, str, str]] = []
    for word, flag in _jieba_tokenizer().cut(text):
        start = text.find(word, pos)
        if start < 0:
            continue
        pos = start + len(word)
        words.append((start, word, flag))
    return tuple(words)


def _zh_segmented_places(text: str) -> list[tuple[int, int]]:
    """A place name after 在, 到, 去 that jieba tags as a place, or as a name ending the clause
    (考点在闵行, 搬到海淀): the preposition says it is a place, whatever the tagger thought."""
    out: list[tuple[int, int]] = []
    words = _zh_words_at(text)
    for i, (start, word, flag) in enumerate(words[1:], 1):
        before = words[i - 1][1]
        after = text[start + len(word): start + len(word) + 1]
        if before in ("在", "到", "去") and 2 <= len(word) <= 4 and (flag == "ns" or (flag in ("nr", "nrfg") and (after == "" or after in "，。,.！!？?；;"))):
            out.append((start, start + len(word)))
    return out


_ZH_TITLE_AHEAD = re.compile(r"老师|医生|大夫|教练|先生|女士|小姐|师傅|经理|主任|律师|教授|阿姨")


def _zh_segmented_names(text: str) -> list[tuple[int, int]]:
    """Person names jieba's tagger finds (刘建, 陈浩, 阿凯, and Latin names such as Tony),
    kept only when they look like names: a surname or 阿/小/老 first, two or three characters."""
    out: list[tuple[int, int]] = []
    words = _zh_words_at(text)
    merged: list[tuple[int, str, str]] = []
    for start, word, flag in words:
        last = merged[-1] if merged else None
        titled = _ZH_TITLE_AHEAD.match(text, start + len(word)) is not None
        if (last is not None and last[2] in ("nr", "nrfg", "ng") and last[0] + len(last[1]) == start
                and len(last[1]) == 1 and last[1] in _ZH_SURNAMES and len(word) <= 2
                and (flag in ("nr", "nrfg") or (titled and flag in ("ns", "n")) or (flag in ("a", "nz") and not any(c in ZH_FUNCTION_CHARS for c in word)))):
            # 沈 + 红梅, 林 + 秀英, 陶 + 建国 before 老师, 李 + 浩然 (an adjective): jieba cuts a full name into surname and given name
            merged[-1] = (last[0], last[1] + word, "nr")
        else:
            merged.append((start, word, flag))
    for start, word, flag in merged:
        pos = start + len(word)
        if flag in ("nr", "nrfg") and 2 <= len(word) <= 3 and word[0] in _ZH_SURNAMES and text[start - 1: start] in ("小", "老") and start > 0:
            out.append((start - 1, start + 1))  # 小 + 赵开: 小赵 is the name, the next character is the sentence's
        elif flag in ("nr", "nrfg") and 2 <= len(word) <= 3 and (word[0] in _ZH_SURNAMES or word[0] in "阿小老") and not any(c in ZH_FUNCTION_CHARS for c in word[1:]):
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


_ZH_TITLES = re.compile(r"(?:老师|医生|大夫|教练|先生|女士|小姐|师傅|经理|主任|书记|校长|所长|处长|局长|馆长|院长|主管|科长|律师|护士|教授|老板|店长|队长|班长|组长|总|阿姨|叔叔|工)$")


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
    if m is None and value.kind == KIND_PLACE:
        # 考点在徐汇: the noun before 在 is the place's key (not the end of a time: 早上七点半在公司楼下)
        m = re.search(rf"(?<![{_ZH_NUM}点半])(?P<key>[^\W\d{_ZH_NUM}]{{1,4}}?)(?:在|设在|放在)$", clause)
    if m:
        key = re.sub(r"^(?:我的|我们的|你的|他的|她的|现在|那|这|的)+", "", m.group("key"))
        key = key.removesuffix("的")
        if key and key not in L.ZH_EMPTY_WORDS:
            return key
    return ""


def _zh_without(text: str, values: list[Value], *, all_kinds: bool) -> str:
    out = text
    for v in sorted(values, key=lambda v: -v.start):
        if all_kinds or v.kind in _NOTE_CUTS:
            out = out[: v.start] + out[v.end :]
    return re.sub(r"[，,]{2,}", "，", out).strip(" ，,。.！!？?")
