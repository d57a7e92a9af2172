"""The update step on corrections that carry no cue word, and on values that must both stay.

Each case is a conversation of its own (not from the eval scripts): the old value must be
gone from the whole state, the new one stored as an item with its kind, and every other
value kept. The phrasings are ordinary speech, one per mechanism of `sotto.memory.update`.
"""

from __future__ import annotations

import re

import pytest

from sotto.agent.compose import compose_reply
from sotto.memory.clock import shift_days, shifted_date
from sotto.memory.evaluation import noisy
from sotto.memory.items import Item
from sotto.memory.rules import extract
from sotto.memory.state import SessionState


def say(*utterances: str, lang: str | None = None) -> SessionState:
    state = SessionState(session_id="t")
    for turn, words in enumerate(utterances, 1):
        result = extract(words, state, lang=lang, turn=turn)
        assert result.state is not None
        state = result.state
    return state


def items(state: SessionState) -> list[Item]:
    return state.all_items()


def kinds_of(state: SessionState, value: str) -> set[str]:
    return {i.kind for i in items(state) if i.value == value or i.value.endswith(" " + value)}


def assert_replaced(state: SessionState, old: str, new: str) -> None:
    text = state.memory_text()
    assert new in text, text
    assert old not in text.replace(new, ""), text
    assert not noisy(state), text


CORRECTIONS = [
    # a restated slot: the same key, another value
    ("restated id", ["My locker number is 4471.", "The locker number is 4417."], "4471", "4417"),
    ("restated place", ["The garage is on Birch Lane.", "I got that wrong, the garage is on Alder Lane."], "Birch", "Alder"),
    # a changed quantity: the same unit
    ("changed quantity", ["We need chairs for twelve guests.", "Turns out fifteen guests are coming."], "twelve", "fifteen"),
    ("make that", ["I'd like two kayaks for Sunday.", "Make that three kayaks."], "two kayaks", "three kayaks"),
    ("relative change", ["Dinner for six people on Friday.", "Two more people are joining."], "six people", "8 people"),
    # a changed person
    ("changed person", ["The driver on Monday is Oskar.", "Actually Renata is driving on Monday now."], "Oskar", "Renata"),
    # comparatives
    ("comparative than", ["Book the plumber for Tuesday.", "Hmm, Wednesday would be better than Tuesday."], "Tuesday", "Wednesday"),
    ("comparative alone", ["The viewing is on the 9th.", "The agent says the 11th suits her better."], "9th", "11th"),
    # admissions
    ("admission", ["The dosage is 40 mg twice a day.", "Sorry, I read it wrong, it's 20 mg."], "40 mg", "20 mg"),
    ("bare restatement", ["Table for five at eight.", "Um, seven, then."], "five", "seven"),
    # the explicit forms
    ("explicit not", ["The meeting is at 3 pm.", "Not 3 pm, 4 pm."], "3 pm", "4 pm"),
    ("explicit change", ["I want a medium cappuccino.", "Change the cappuccino to a mocha."], "cappuccino", "mocha"),
    ("from to", ["The bus leaves at 7:10.", "They moved it from 7:10 to 7:25."], "7:10", "7:25"),
    ("a partial number", ["Call me on 0412 338 901.", "Oops, it ends 907, not 901."], "338 901", "338 907"),
]


@pytest.mark.parametrize("name,utterances,old,new", CORRECTIONS, ids=[c[0] for c in CORRECTIONS])
def test_an_implicit_correction_replaces_the_value_everywhere(name: str, utterances: list[str], old: str, new: str) -> None:
    assert_replaced(say(*utterances), old, new)


ZH_CORRECTIONS = [
    ("人数变了", ["周日聚餐，一共十二个人。", "人数变了，来十五个人。"], "十二个人", "十五个人"),
    ("换人", ["这次带队的是陈刚。", "带队换人了，现在是周敏。"], "陈刚", "周敏"),
    ("看错了", ["药是每次三片。", "我看错了，是每次两片。"], "三片", "两片"),
    ("改到", ["会议定在下午两点。", "改到下午三点吧。"], "两点", "三点"),
    ("比较好", ["周二去取车。", "周三比较好。"], "周二", "周三"),
]


@pytest.mark.parametrize("name,utterances,old,new", ZH_CORRECTIONS, ids=[c[0] for c in ZH_CORRECTIONS])
def test_a_chinese_correction_replaces_the_value(name: str, utterances: list[str], old: str, new: str) -> None:
    assert_replaced(say(*utterances, lang="zh"), old, new)


KEEP_BOTH = [
    (["My flight lands at 4 pm.", "Hotel check-in is at 3 pm."], ["4 pm", "3 pm"]),
    (["Pick up Nora at 3:15 most days.", "On Thursdays it's 1:45."], ["3:15", "1:45"]),
    (["Mum's number is 0400 111 222.", "The clinic is 0400 111 333."], ["0400 111 222", "0400 111 333"]),
    (["I need two lemons and three onions."], ["two lemons", "three onions"]),
    (["每天早上八点吃一片，晚上九点吃两片。"], ["八点", "九点"]),
]


@pytest.mark.parametrize("utterances,values", KEEP_BOTH)
def test_two_values_of_one_kind_about_different_things_both_stay(utterances: list[str], values: list[str]) -> None:
    state = say(*utterances)
    text = state.memory_text()
    assert all(v in text for v in values), text


def test_keep_both_then_change_one_of_them() -> None:
    state = say("My flight lands at 4 pm.", "Hotel check-in is at 3 pm.", "The flight is delayed, it lands at 6 pm now.")
    assert_replaced(state, "4 pm", "6 pm")
    assert "3 pm" in state.memory_text()


def test_items_carry_key_value_kind_and_turn() -> None:
    state = say("Book the boat for Saturday.", "The skipper is Ines.", "Our group is nine people.")
    by_value = {i.value: i for i in items(state)}
    assert by_value["Ines"].kind == "name" and "skipper" in by_value["Ines"].key.lower() and by_value["Ines"].turn == 2
    assert by_value["nine people"].kind == "quantity" and by_value["nine people"].turn == 3
    assert by_value["Saturday"].kind == "date"


def test_discourse_words_are_never_stored() -> None:
    state = say("Hmm, the dentist is on Friday.", "Oops, I mixed it up, the dentist is on Thursday.", "Um, bring the X-rays too.")
    assert not noisy(state), state.memory_text()
    assert "Thursday" in state.memory_text() and "Friday" not in state.memory_text()


def test_a_recall_answer_names_only_the_current_value() -> None:
    words = ["We're making curry for six people tonight.", "Two more friends just said they're coming, so eight people now."]
    state = say(*words)
    rules = extract("How many people are we cooking for?", state, turn=3)
    assert rules.state is not None
    [answer] = compose_reply(rules.state, "How many people are we cooking for?", rules)
    assert "eight" in answer.lower() and "six" not in answer.lower()
    garage = say("The garage is on Elm Street.", "I mixed that up, the garage is on Oak Street.")
    rules = extract("Which street is the garage on?", garage, turn=3)
    assert rules.state is not None
    [answer] = compose_reply(rules.state, "Which street is the garage on?", rules)
    assert "Oak Street" in answer and "Elm" not in answer


def test_a_confirmation_says_the_new_value_once() -> None:
    state = say("The dose is 500 milligrams.")
    rules = extract("Wait, the dose is 250 milligrams, I read it wrong.", state, turn=2)
    assert rules.state is not None
    [reply] = compose_reply(rules.state, "Wait, the dose is 250 milligrams, I read it wrong.", rules)
    assert "250 milligrams" in reply and "500" not in reply


def test_forty_turns_stay_bounded() -> None:
    from sotto.memory.state import FACTS_MAX

    lines = [f"Item {n}: order {n + 2} boxes of screws for bay {n}." for n in range(40)]
    state = say(*lines)
    assert len(state.facts) <= FACTS_MAX and len(state.to_json()) < 16_000


def test_a_forty_turn_session_never_overflows_the_prompt(tmp_path: object) -> None:
    """Every model call of a 40-turn session fits a 2048-token context (the state is bounded)."""
    from pathlib import Path

    from fakes_llm import FakeLanguageModel

    from sotto.agent.core import Agent, AgentConfig
    from sotto.memory.prompts import UPDATE_INSTRUCTION, fit_messages
    from sotto.memory.store import Store

    model = FakeLanguageModel(n_ctx=2048)
    agent = Agent(model, Store(Path(str(tmp_path)) / "m.db"), config=AgentConfig(model_update="off", reply_mode="composed"))
    for n in range(40):
        words = f"Note {n}: the crate for bay {n} holds {n + 3} boxes of hinges from Harlow Supplies, delivered by Tomasz on the {n % 28 + 1}th."
        result = agent.run_turn("long", words)
        assert result.context_overflows == 0
        fitted = fit_messages(model, result.state, words, UPDATE_INSTRUCTION, 72)
        assert fitted is not None
        messages, _, dropped = fitted
        assert sum(model.count_tokens(m.content) for m in messages) + 72 <= model.n_ctx


# Mechanisms added in the second round: each with a conversation of its own.
MORE_CORRECTIONS = [
    ("cue in the sentence before", ["The courier comes on the 14th."], "Ugh, I got the day wrong. The 16th.", "14th", "16th"),
    ("end of a stay", ["Storage from the 2nd to the 9th, please."], "We need it a bit longer, until the 12th.", "9th", "12th"),
    ("a repeated value brings its person", ["Tom drives on Monday, Lena drives on Friday."], "Friday's changed hands. Ruth is taking it.", "Lena", "Ruth"),
    ("same noun, another modifier", ["I'd like the oak frame for the print."], "Hmm, walnut frame instead.", "oak", "walnut"),
    ("a thing said with a person", ["Ana wants the risotto, I'll have the steak."], "Ana changed her mind, she's going for the salmon.", "risotto", "salmon"),
    ("a code part read again", ["The voucher is KT-5512-Q."], "The middle bit is 5521, I swapped them.", "KT-5512-Q", "KT-5521-Q"),
    ("swapped digits of a time", ["My train is the 16:35."], "Wait, my ticket says 16:53.", "16:35", "16:53"),
    ("a name spelled again", ["The booking is under Niamh Gallager."], "It's Gallagher, with an h after the g, G-A-L-L-A-G-H-E-R.", "Gallager", "Gallagher"),
    ("a colour said with more than", ["The sofa cover is grey."], "It's more green than grey, honestly.", "grey", "green"),
    ("a proposal in a longer sentence", ["The inspection is on the 3rd."], "The 3rd is a bank holiday... how about the 5th?", "3rd", "5th"),
    ("someone unavailable, someone else", ["Your tutor is Gemma."], "Gemma's away this week. Oskar will cover.", "Gemma", "Oskar"),
    ("a retraction inside a sentence", ["Two lamps, a rug and the side table, please."], "Leave the rug off, it won't fit.", "rug", ""),
    ("a number read in groups", ["My member number is 4410 2287."], "Sorry, it's four four one oh, two two eight seven... no, two two seven eight.", "4410 2287", "4410 2278"),
]


ZH_MORE = [
    ("同一个东西换了修饰", ["周六去东区分馆还书。"], "西区分馆离我近一点。", "东区", "西区"),
    ("话题在前，换了选择", ["一等奖是扫地机器人，二等奖是保温杯。"], "二等奖那个，大家说要蓝牙音箱。", "保温杯", "蓝牙音箱"),
    ("不要了", ["要一份凉皮，还有个肉夹馍。"], "肉夹馍就不要了，吃不下。", "肉夹馍", ""),
    ("有人没空，换人", ["这次来修的是老赵。"], "老赵那天出差，换小吴来。", "老赵", "小吴"),
    ("同音别字", ["登记的名字是王晓明。"], "明天的明写错了，是王晓鸣，鸣叫的鸣。", "王晓明", "王晓鸣"),
    ("太X了", ["空调设到二十六度。"], "二十六度太热了，调到二十四度。", "二十六度", "二十四度"),
]


@pytest.mark.parametrize(
    "lang,name,before,words,old,new",
    [("en", *c) for c in MORE_CORRECTIONS] + [("zh", *c) for c in ZH_MORE],
    ids=[c[0] for c in MORE_CORRECTIONS] + [c[0] for c in ZH_MORE],
)
def test_more_implicit_corrections(lang: str, name: str, before: list[str], words: str, old: str, new: str) -> None:
    """The new value is stored (when there is one) and the old one is gone from the whole state."""
    text = say(*before, words, lang=lang).memory_text()
    if new:
        assert new in text, text
    assert (old not in text.replace(new, "")) if new else (old not in text), text


MORE_KEEP_BOTH = [
    (["一等奖三台，二等奖十台。"], ["三台", "十台"]),
    (["有铅的用三百二十度。", "无铅的用三百六十度。"], ["三百二十度", "三百六十度"]),
    (["Hive one has eight frames of brood.", "Hive two, five frames."], ["eight frames", "five frames"]),
    (["Maya's trip is £14 and Leo's is £18.", "Leo is in Year 5."], ["£14", "£18", "Year 5"]),
    (["He rides a pony called Bramble.", "My son is Kit."], ["Bramble", "Kit"]),
]


@pytest.mark.parametrize("utterances,values", MORE_KEEP_BOTH)
def test_more_values_of_one_kind_both_stay(utterances: list[str], values: list[str]) -> None:
    lang = "zh" if any("\u4e00" <= c <= "\u9fff" for c in "".join(utterances)) else None
    text = say(*utterances, lang=lang).memory_text()
    assert all(v in text for v in values), text


def test_the_reader_never_fails_on_recognised_word_salad() -> None:
    """Recognition produces any sequence of words ("2 more 1 then so add them to the cow");
    the update step must take every one without an exception."""
    import random

    words = (
        "2 more 1 then so add them to the cow at 6 pm 40 minus less fewer one another too the of us "
        "instead not rather than make it Tuesday the 5th Kit Mr Ng B X dash 4 4 oh seven half past "
        "a hundred and eighty by over point 14.06 £ 12 % , . ? no sorry my mistake leave off"
    ).split()
    zh = list("两个多少一二三四五六七八九十百点半号周日改成不要了还是吧，。？老小王李的人份斤米")
    rng = random.Random(7)
    for lang, vocab, joiner in (("en", words, " "), ("zh", zh, "")):
        state = SessionState(session_id="fuzz")
        for turn in range(1, 301):
            said = joiner.join(rng.choice(vocab) for _ in range(rng.randint(1, 14)))
            result = extract(said, state, lang=lang, turn=turn)
            assert result.state is not None
            state = result.state


def test_recognised_words_without_capitals_still_carry_names() -> None:
    """A recogniser writes no capitals; a name is known by the words that introduce it."""
    state = say("i need to pick up mr osei from the station at five", "my name is dana kowal")
    names = [i.value for i in items(state) if i.kind == "name"] + state.user_profile.names
    assert any("osei" in n.lower() for n in names), state.memory_text()
    typed = say("Pick up the white box.")
    assert not [i for i in items(typed) if i.kind == "name"], typed.memory_text()


# Third round: each mechanism on a conversation of its own (none from the eval scripts).
THIRD_ROUND = [
    ("en", "proposal question", ["The plumber comes at 11 am."], "Could he come at quarter to one instead?", "11 am", "quarter to one"),
    ("zh", "proposal question", ["师傅明天上午十点来修热水器。"], "下午两点能来吗？", "上午十点", "下午两点"),
    ("en", "range", ["Book the upstairs room, nine till eleven."], "The later slot suits us, so one till three.", "nine till eleven", "one till three"),
    ("en", "ruled out, then the new one", ["Ravi will sign for the parcel."], "Ravi's on leave all next week. Nadia can sign for it.", "Ravi", "Nadia"),
    ("en", "named alone in its own clause", ["Tickets for me, Sol and Bea."], "Bea has pulled out, her flatmate Ines is taking her place.", "Bea", "Ines"),
    ("en", "shorter mention of a stored day", ["The tyres go on Saturday morning."], "My daughter has a recital on Saturday. Tuesday evening then.", "Saturday", "Tuesday evening"),
    ("en", "swap for", ["Starters: a lentil soup and garlic bread."], "Swap the lentil soup for a tomato soup.", "lentil", "tomato soup"),
    ("zh", "换到 after a named place", ["聚会定在湘味馆。"], "湘味馆那天没位子了，换到对面的老街酒楼。", "湘味馆", "老街酒楼"),
    ("en", "people count", ["About twenty kids are coming."], "Replies are all in, we've got thirty-one coming.", "twenty kids", "thirty-one"),
    ("en", "rescaled unit", ["Set the timebase to 200 nanoseconds per division."], "Too short. Five microseconds per division on the timebase.", "200 nanoseconds", "Five microseconds"),
    ("zh", "stored place named by its last word", ["包裹放在小区南门的快递柜。"], "物业说南门那个柜子拆了，以后去西门取。", "小区南门", "西门"),
    ("en", "raise it to", ["The fundraising target is £400."], "We've passed that already! Raise it to six hundred.", "£400", "six hundred"),
    ("en", "a short code restated", ["Probe the signal at TP4."], "Sorry, I meant TP6.", "TP4", "TP6"),
    ("zh", "fully booked, then the new day", ["游泳课约在周四上午。"], "我弄错了，周四上午已经约满了，换成周五下午。", "周四", "周五"),
    ("zh", "a letter size chosen again", ["衣服要S码的。"], "孩子长得快，还是M码吧。", "S码", "M码"),
    ("zh", "a graded colour with no suffix", ["窗帘要米色的。"], "米色的没货了，就要深绿。", "米色", "深绿"),
    ("zh", "X算了 retracts X", ["我要洗鞋。", "皮鞋要护理，羽毛球鞋要刷白。"], "羽毛球鞋算了，还能凑合穿。", "羽毛球鞋", "皮鞋"),
    ("zh", "a misreading owned up to, the amount of the same size", ["学费一学期三千二。"], "我看错了，一学期是三千六。", "三千二", "三千六"),
    ("en", "the wrong week owned up to", ["The vet appointment is on Tuesday."], "It's the Thursday, I was looking at the wrong week.", "Tuesday", "Thursday"),
    ("zh", "换 with a thing after a named one", ["书桌面板用胡桃木。"], "胡桃木太贵了，桌面换松木。", "胡桃木", "松木"),
    ("en", "the end of the named number", ["Office line 0161 555 0142.", "Her mobile is 07700 900 311."], "Her mobile ends three one six, the rest is right.", "07700 900 311", "07700 900 316"),
    ("zh", "最后两位 said apart from the digits", ["会员号是 M 三四五六七八九。"], "会员号最后两位我又核对了一下，是九一。", "M三四五六七八九", "M三四五六七九一"),
    ("en", "a choice after the old one found wanting", ["Worktop edging in matt black."], "Black edging shows every fingerprint. Brushed steel it is.", "matt black", "Brushed steel"),
    ("en", "sold out, so a proper name", ["The hinges are Blum Clip Top."], "Blum Clip Tops are sold out everywhere, so Hettich Sensys.", "Blum", "Hettich Sensys"),
    ("en", "a pronoun ruled out, then a new person", ["Tomasz Zielinski will collect the parts."], "No wait, he's away that week. Send them to me, Ewa Nowak.", "Tomasz", "Ewa Nowak"),
    ("en", "on second thoughts", ["Fit the 40 amp fuse."], "On second thoughts the 40 amp fuse is overkill, a 30 amp one will do.", "40 amp", "30 amp"),
    ("en", "a new contact brings a new number", ["Emergency contact is my aunt, Joan Pryor, on 07700 900 218."], "Joan's in hospital that week. Our neighbour Dev Shah will be the contact, his number is 07700 900 655.", "07700 900 218", "07700 900 655"),
    ("zh", "a numbered row said again", ["电影票买第八排的。"], "其实第十二排看得更舒服。", "第八排", "第十二排"),
    ("zh", "one fewer, with a verb between", ["团购鸡蛋三盒。"], "家里还有鸡蛋，少拿一盒。", "三盒", "2盒"),
    ("zh", "a retraction beside a new order", ["点外卖：小龙虾三斤。", "再加四瓶啤酒。"], "下午要开会，啤酒不要了，换六罐可乐。", "啤酒", "六罐可乐"),
    ("en", "a colour that begins a name is a name", ["Pick us up from the Red Lion at six."], "Pick-up's the Crown now, the Red Lion car park's being resurfaced.", "Red Lion", "Crown"),
    ("en", "a range from ... till ... replaced", ["The photo booth runs from 7 pm till 10 pm."], "We've got the later slot, so it'll be nine till midnight.", "7 pm till 10 pm", "nine till midnight"),
    ("zh", "再多来两斤", ["五花肉要五斤。"], "五花肉再多来两斤，儿子一家也回来。", "五斤", "7斤"),
    ("en", "label with a cue", ["It's a Pixel, gen six."], "Sorry, the box says gen seven.", "gen six", "gen seven"),
]


@pytest.mark.parametrize(
    ("utterances", "values"),
    [
        # a value said twice in one turn does not replace itself: the cue is about an earlier one
        (["I'm a 27 in boots. She's a 24, I think."], ["27", "24"]),
        # a cue without a key does not change a value of another kind
        (["We're training for the Bristol half.", "Coach reckons five fifteen is better."], ["Bristol"]),
        # a range keeps both ends as one value, and another range of another thing stays
        (["Main hall ten till twelve.", "And the small room two till four."], ["ten till twelve", "two till four"]),
        # two measures in one unit about different things both stay
        (["The rail is 5 volts.", "Trigger at 2.5 volts on the rising edge."], ["5 volts", "2.5 volts"]),
        # a decimal after "at" is a measure, not a clock time
        (["Charge pack B at 1.3 amps."], ["1.3 amps"]),
        # a tag question (是吧) is not a cue: the count of children stays
        (["给两个孩子报编程课。", "学费一学期两千四是吧。"], ["两个孩子", "两千四"]),
        # owning up to a misreading does not change an amount of another size
        (["Pulse 72, pressure 130 over 80.", "Hang on, I misread it. The top number's 138."], ["72"]),
        # owning up with nothing read as a value keeps what was said (看成 is the admission)
        (["疫苗本上写的是乙肝。", "本子上这次是水痘，我看成别的了。"], ["水痘"]),
        # a dish chosen beside a person keeps the person; a refusal chooses nothing
        (["We're three: me, Carlos and Rosa.", "Carlos wants the sea bass, I'll have the risotto."], ["Carlos", "sea bass"]),
        (["The strap in black."], ["black"]),
        # "three adults" is not a correction of "one child"
        (["Two adults and one child on the ferry.", "My aunt is coming too, so that's three adults."], ["one child"]),
        # a yes/no question about a period is a question, not a value
        (["The barbecue is on the twelfth."], ["twelfth"]),
    ],
)
def test_third_round_values_that_stay(utterances: list[str], values: list[str]) -> None:
    state = say(*utterances, "Is it going to rain this weekend?")
    text = state.memory_text()
    for value in values:
        assert value in text, text


def test_did_i_say_rules_the_value_out() -> None:
    from sotto.memory.statements import read_sentence

    values = read_sentence("Did I say fourteen?", "en").values
    assert [v.text for v in values] == ["fourteen"] and values[0].negated


def test_a_number_replaced_inside_a_time_or_decimal_stays() -> None:
    from sotto.memory.patch import replace_everywhere

    assert replace_everywhere("at 4:30, table 30", "30", "43") == "at 4:30, table 43"
    assert replace_everywhere("1.30 m, 30 cm", "30", "35") == "1.30 m, 35 cm"


def test_discourse_words_anywhere_in_a_sentence_never_stay() -> None:
    """Each discourse word of the state_noise definition, put into the tuning conversations at
    the start, between commas and at the end: no state keeps one (a fuzz of the metric)."""
    import glob
    from pathlib import Path

    from sotto.memory.evaluation import load_script

    en = ["hmm", "um", "uh", "actually", "sorry", "oops", "wait", "I mean", "I read it wrong", "I mixed that up", "my mistake", "scratch that"]
    zh = ["嗯", "呃", "哦", "不好意思", "抱歉", "我说错了", "我搞错了", "我看错了"]
    root = Path(__file__).parent.parent / "eval" / "memory" / "tune"
    checked = 0
    for k, path in enumerate(sorted(glob.glob(str(root / "*.json")))):
        script = load_script(path)
        lang = script.lang or "en"
        state = SessionState(session_id="t")
        for i, turn in enumerate(script.turns):
            words = en if lang == "en" else zh
            w = words[(k + i) % len(words)]
            u = turn.user
            if lang == "en":
                variants = [f"{w[0].upper() + w[1:]}, {u[0].lower() + u[1:]}", u.rstrip(".!?") + f", {w}.", u.replace(", ", f", {w}, ", 1)]
            else:
                variants = [f"{w}，{u}", u.rstrip("。！？") + f"，{w}。", u.replace("，", f"，{w}，", 1)]
            for said in variants:
                result = extract(said, state, turn=i + 1, lang=lang)
                assert result.state is not None and not noisy(result.state), (said, result.state.memory_text())
                checked += 1
            next_state = extract(u, state, turn=i + 1, lang=lang).state
            assert next_state is not None
            state = next_state
    assert checked > 300


# Fourth round: each mechanism on a conversation of its own (none from the eval scripts).
FOURTH_ROUND = [
    ("en", "an amount in words keeps its unit", ["The cake order comes to two hundred and forty pounds."], "Sorry, it comes to two hundred and sixty pounds.", "two hundred and forty pounds", "two hundred and sixty pounds"),
    ("en", "a bare amount names the stored measure", ["Freezer alarm at minus eighteen degrees.", "Open the vents at seventy percent humidity."], "Seventy trips it all day. Make it eighty.", "seventy percent", "eighty percent"),
    ("en", "a bare count after a reason", ["Print three hundred flyers."], "The fair's bigger this year, so they want five hundred.", "three hundred flyers", "five hundred"),
    ("en", "an irregular plural is one unit", ["The van is nineteen feet long."], "Sorry, it's twenty-one foot, I was thinking of the old van.", "nineteen feet", "twenty-one foot"),
    ("en", "full on the day said", ["Book the hut for the third."], "The hut's full on the third, so we'll go on the fourth.", "the third", "the fourth"),
    ("en", "a clock time said with a hyphen", ["The two-thirty tour, please."], "They say the two-thirty is sold out. Go for quarter past four then.", "two-thirty", "quarter past four"),
    ("en", "a choice after a thing kept in a note", ["We'd like the long route past the quarry."], "The quarry path is muddy after the rain. We'll do the forest loop.", "quarry", "forest loop"),
    ("en", "a choice said alone, please", ["Make the sign in brushed aluminium."], "Aluminium's too pricey for us. Acrylic, please.", "aluminium", "Acrylic"),
    ("en", "a choice that will do", ["A tin of wood filler, oak colour."], "No oak filler left? Pine will do.", "oak", "Pine"),
    ("en", "a choice, then", ["Two portions of the lamb tagine, please."], "The tagine's all gone? OK, vegetable couscous then.", "tagine", "vegetable couscous"),
    ("en", "I'll have, with more said after", ["Half a kilo of the smoked ham."], "The ham looks a bit fatty today. I'll have the roast beef, same weight.", "ham", "roast beef"),
    ("zh", "那就拿 after a question", ["猫砂要豆腐砂，买两袋。"], "豆腐砂没货了？那就拿膨润土的吧。", "豆腐砂", "膨润土"),
    ("en", "a total after an addition", ["Order one bag of compost."], "The raised bed needs filling as well, so three bags.", "one bag", "three bags"),
    ("zh", "这样就 after an addition", ["年夜饭订十个人的位子。"], "舅舅一家也来，这样就十四个人了。", "十个人", "十四个人"),
    ("en", "a clock time said another way is the one ruled out", ["Kick-off is at 2:30, be there at 1:45."], "The coach says meet at 1 o'clock now, not quarter to two.", "1:45", "1 o'clock"),
    ("en", "a day of the month replaces a day of the month", ["They fly out Tuesday evening and land back on the 14th."], "They've stayed on, back on the 19th now.", "14th", "19th"),
    ("en", "a meal time replaces a meal time", ["Amoxicillin at 8 am.", "Metformin after breakfast."], "The doctor says the metformin is better after dinner.", "after breakfast", "after dinner"),
    ("en", "it'll be, after the old thing ran out", ["Get a whole sea bass for Friday."], "The market's got no sea bass, so it'll be sea bream.", "sea bass", "sea bream"),
    ("en", "a later clock time said with 'is'", ["Bedtime for the twins is half eight."], "Half eight is too early in summer. Let's say nine.", "half eight", "nine"),
    ("zh", "one end of a stored range", ["周六值班，从早上八点到下午四点。"], "下班时间改到五点半吧，那天要盘点。", "下午四点", "五点半"),
    ("en", "a new person in the place of one named", ["The first aid course is for me and Sam Okoro."], "Sam's on holiday that week, so put Priya Shah in his place.", "Sam Okoro", "Priya Shah"),
    ("en", "an amount with thousands marked", ["The quote came to £2,450."], "Sorry, I misread it, it's £2,540.", "£2,450", "£2,540"),
    ("en", "owning up said after the value", ["The caravan is twenty-two feet long."], "Sorry, it's twenty-five foot. I was thinking of our old caravan.", "twenty-two feet", "twenty-five foot"),
    ("en", "thinking about it", ["We'll take the four-person tent."], "Um, thinking about it, the six-person tent.", "four-person", "six-person"),
    ("zh", "a measure word for windows", ["纱窗要换三扇。"], "阳台那扇也坏了，那就是四扇了。", "三扇", "四扇"),
]


@pytest.mark.parametrize(("lang", "name", "before", "words", "old", "new"), THIRD_ROUND + FOURTH_ROUND, ids=[c[1] + "-" + c[0] for c in THIRD_ROUND + FOURTH_ROUND])
def test_third_and_fourth_round_corrections(lang: str, name: str, before: list[str], words: str, old: str, new: str) -> None:
    assert_replaced(say(*before, words, lang=lang), old, new)


@pytest.mark.parametrize(
    ("utterances", "values"),
    [
        # a statement with a tag that checks it keeps its new values ...
        (["我要修自行车。", "补胎二十五，换链条六十，对吧？"], ["二十五", "六十"]),
        # ... but a stored value it checks is not changed by it
        (["后天下午四点取车。", "是三点取对吧？"], ["四点"]),
        (["Pick-up is at 4 pm.", "It's three, right?"], ["4 pm"]),
        # a price said as "eighty-four fifty" is an amount, not the time 4:50
        (["The fee is eighty-four fifty a term."], ["eighty-four fifty"]),
        # "so tell them" is not a choice: the dog named in a note stays
        (["Two dogs at the groomer: Biscuit for a full clip.", "Biscuit's allergic to tea tree shampoo, so tell them."], ["Biscuit"]),
    ],
)
def test_fourth_round_values_that_stay(utterances: list[str], values: list[str]) -> None:
    text = say(*utterances, lang="zh" if any("\u4e00" <= c <= "\u9fff" for c in utterances[0]) else "en").memory_text()
    for value in values:
        assert value in text, text


def test_a_relative_change_of_a_stored_time() -> None:
    assert_replaced(say("Doors open at 7 pm.", "The venue wants the doors pushed back half an hour."), "7 pm", "7:30 pm")
    assert_replaced(say("集合时间是早上七点二十。", "领队说大家要再早十分钟到。", lang="zh"), "七点二十", "7点10")
    # the time said is the new one; the shift only says why
    state = say("Leave at 6:40.", "Let's leave ten minutes earlier, so 6:30.")
    assert "6:30" in state.memory_text() and "6:40" not in state.memory_text()


def test_a_relative_change_of_a_stored_day() -> None:
    # the weekday moves with the day of the month
    assert_replaced(say("The dinner is on Friday the 13th at 7 pm.", "The restaurant's pushed us back a day."), "Friday the 13th", "Saturday the 14th")
    assert_replaced(say("Our flight home is on the 10th of April.", "It lands two days later than I thought."), "10th", "the 12th of April")
    assert_replaced(say("新生报到是九月六号，早上八点。", "台风要来，报到往后推两天。", lang="zh"), "九月六号", "九月八号")
    assert_replaced(say("复诊约在周三。", "医生出差，提前一天吧。", lang="zh"), "周三", "周二")
    # a day said before the shift is the one it moves, not the latest
    state = say("The fitting is on the 3rd, and the party is the 20th.", "The 3rd is no good for me, can we push it back two days?")
    assert_replaced(state, "the 3rd", "the 5th")
    assert "the 20th" in state.memory_text()
    state = say("推拿约在周日上午十点，晚上七点还有个会。", "十点我怕起不来，再往后挪一个钟头。", lang="zh")
    assert_replaced(state, "上午十点", "上午11点")
    assert "晚上七点" in state.memory_text()
    # "the day after", "the next day" move the day the turn names, else the latest
    state = say("The fitter comes on Wednesday at ten.", "He can't do Wednesday after all, he's offered the day after at the same time.")
    assert_replaced(state, "Wednesday", "Thursday")
    assert "ten" in state.memory_text()
    assert_replaced(say("The signing is on Saturday the 14th at 2 pm.", "The shop emailed: it's moved to the next day, same time."), "Saturday the 14th", "Sunday the 15th")
    # before a verb, a Chinese shift moves only a day the turn names
    assert_replaced(say("红包周五去银行换新钱。", "周五银行人太多，提前一天去吧。", lang="zh"), "周五", "周四")
    # a day said after the shift is the new one; the shift only says why
    state = say("Pick-up is the 3rd.", "It got pushed back a week to the 11th.")
    assert "the 11th" in state.memory_text() and "3rd" not in state.memory_text() and "10th" not in state.memory_text()


def test_one_more_of_a_stored_count() -> None:
    state = say("Two adults and two juniors for the tour.", "My sister's decided to come, so add another grown-up.")
    assert_replaced(state, "Two adults", "3 adults")
    assert "two juniors" in state.memory_text()
    assert_replaced(say("Book two places for the signing.", "Mum wants to come along too, so we'll need a third place."), "two places", "3 places")
    assert_replaced(say("Forty-five guests for the party.", "My cousin's lot are coming after all. That's another eight people."), "Forty-five guests", "53 guests")
    # with no count of it stored, "another" changes nothing and adds no count
    state = say("The walls need white paint.", "The painter says another room needs doing too.")
    assert not [i for i in items(state) if i.kind == "quantity"], state.memory_text()


@pytest.mark.parametrize(
    ("stored", "days", "lang", "moved"),
    [
        ("the 12th", 2, "en", "the 14th"),
        ("Friday the 13th", 1, "en", "Saturday the 14th"),
        ("the nineteenth of December", 7, "en", "the 26th of December"),
        ("Tuesday", -1, "en", "Monday"),
        ("Friday", 7, "en", None),  # a week on is still a Friday: nothing to write
        ("the 30th", 3, "en", None),  # the month is not said: no day past the 28th is guessed
        ("5月18日", 7, "zh", "5月25日"),
        ("九月三十号", 1, "zh", None),
        ("周六", 1, "zh", "周日"),
        ("下午三点", 1, "zh", None),
    ],
)
def test_a_stored_day_moved_is_written_as_it_was(stored: str, days: int, lang: str, moved: str | None) -> None:
    assert shifted_date(stored, days, lang) == moved
    assert shift_days("a fortnight", "en") == 14 and shift_days("一个礼拜", "zh") == 7 and shift_days("three days", "en") == 3


@pytest.mark.parametrize(
    ("utterances", "values"),
    [
        # "the day after the wedding" is another day, not a stored one moved
        (["The wedding is on Saturday the 14th.", "We fly home the day after the wedding."], ["Saturday the 14th"]),
        # a shift from a day new in this sentence is another day, not a stored one moved
        (["The quote is two hundred pounds.", "You're collecting on the sixth, and bringing them back three weeks later."], ["sixth"]),
        (["毕业典礼上午九点半开始，让家长提前二十分钟到。"], ["九点半"]),
        # 提前五天停 is how long before something, not a stored day moved
        (["胃镜约在周二。", "医生说阿司匹林要提前五天停。"], ["周二", "五天"]),
        # past the end of the month the day is not guessed
        (["The lease ends on the 30th of April.", "Can we push it back a week?"], ["the 30th of April"]),
        # a clock time does not replace a time said by a meal, nor the other way round
        (["Aspirin after lunch.", "Blood pressure tablet at 9 pm.", "The statin at 10 pm instead."], ["after lunch"]),
        # money said like a clock time is money
        (["Pocket money is three fifty a week."], ["three fifty"]),
        # 周六 and 九点 are a day and a time, not one time
        (["周六九点上游泳课。"], ["周六", "九点"]),
    ],
)
def test_fourth_round_more_values_that_stay(utterances: list[str], values: list[str]) -> None:
    state = say(*utterances, lang="zh" if any("\u4e00" <= c <= "\u9fff" for c in utterances[0]) else "en")
    text = state.memory_text()
    for value in values:
        assert value in text, text
    if utterances[0].startswith("Pocket"):
        assert all(i.kind != "time" for i in state.all_items()), text


def test_the_speaker_is_no_part_of_a_name() -> None:
    state = say("Ask for Colin in accounts.", "Colin's left the company, it's Bernadette I need.")
    assert [i.value for i in state.all_items() if i.kind == "name"] == ["Bernadette"], state.memory_text()


def test_one_of_a_list_retracted_keeps_the_rest() -> None:
    text = say("露营要带帐篷和睡袋。", "帐篷就不要了，营地有。", lang="zh").memory_text()
    assert "帐篷" not in text and "睡袋" in text, text


def test_just_the_one_is_a_count() -> None:
    assert_replaced(say("Collect two sofas on Monday.", "My sister's having one of them, so it's just the one sofa now."), "two sofas", "one sofa")


def test_a_place_named_by_its_first_word_then_chosen_instead() -> None:
    assert_replaced(say("体检约在城南体检中心。", "城南那边约满了，城北还有号，就城北吧。", lang="zh"), "城南体检中心", "城北")


def test_a_person_taken_off_by_a_pronoun() -> None:
    state = say("Book the minibus for me and Dev on Friday.", "Dev's hurt his back, so take him off the booking.")
    text = state.memory_text()
    assert "Dev" not in text and "Friday" in text, text


@pytest.mark.parametrize(
    ("utterances", "values", "absent"),
    [
        # "Dr" is a title only as a word: "Drivers" is no person
        (["Drivers are Claire, Imran and Steve."], ["Claire", "Steve"], ['"value": "Drivers"']),
        # "nine forty-five" is one time
        (["We meet at the clubhouse at nine forty-five."], ["nine forty-five"], []),
        # money said with its unit and pence is one amount, not a clock time
        (["Raffle tickets at two quid.", "Nobody's buying at two quid, I'll do them at a pound fifty."], ["a pound fifty"], ["two quid"]),
    ],
)
def test_fourth_round_readings(utterances: list[str], values: list[str], absent: list[str]) -> None:
    text = say(*utterances).memory_text()
    for value in values:
        assert value in text, text
    for value in absent:
        assert value not in text, text


@pytest.mark.parametrize(
    ("before", "words", "old", "new"),
    [
        (["The parcel is for Mrs Catherine Bell."], "Sorry, she spells it K, A, T, H, R, Y, N. Kathryn.", "Catherine", "Kathryn"),
        (["Pick-up is under Mr Phillips."], "I had the name wrong, it's F, I, L, I, P, S. Filips.", "Phillips", "Filips"),
        (["Collection for Mrs Jenkin."], "Hang on, that's J, E, N, K, I, N, S. Jenkins.", "Jenkin", "Jenkins"),
    ],
)
def test_a_name_spelled_again_replaces_the_one_that_sounds_the_same(before: list[str], words: str, old: str, new: str) -> None:
    state = say(*before, words)
    names = [i.value for i in state.all_items() if i.kind == "name"]
    assert any(new in n for n in names) and not any(re.search(rf"\b{old}\b", n) for n in names), names


def test_the_reason_names_the_replaced_colour_by_its_last_word() -> None:
    assert_replaced(say("Letters in dark red on the van.", "Hmm, that red's too close to the bank's logo. Let's go teal."), "red", "teal")


def test_a_little_is_not_one_o_clock() -> None:
    state = say("字体要篆书。", "还是隶书好认一点。", lang="zh")
    assert all(i.kind != "time" for i in state.all_items()), state.memory_text()


def test_a_moved_address_leaves_the_keys_of_other_items() -> None:
    state = say("Collect the sofa from 14 Elm Rise on the sixth.", "We're not at Elm Rise any more, we've moved to 3 Birch Close.")
    assert "Elm Rise" not in state.memory_text() and "3 Birch Close" in state.memory_text() and "sixth" in state.memory_text(), state.memory_text()


def test_an_imperative_choice_replaces_the_thing_found_wanting() -> None:
    assert_replaced(say("Book the small meeting room for the demo.", "The small room hasn't got a screen. Give me the boardroom."), "small", "boardroom")
    # a person named before the choice is not the thing replaced
    state = say("Rota: Maya does the dishes and Leo walks the dog.", "Leo can't do the dog, he's allergic. Put him on the bins.")
    assert "Leo" in state.memory_text(), state.memory_text()


# A tie no word of the sentence breaks goes to the stored value the fitted model finds likeliest,
# when it leads by the model's margin; otherwise the latest stays the choice. The fake models
# below stand in for the fitted weights (their threshold keeps the model's own step out).
def _fake_model(weights: dict[str, float]) -> "ReplaceModel":
    from sotto.memory.replace_model import ReplaceModel

    return ReplaceModel(weights=weights, bias=-2.0, threshold=2.0, margin=0.1)


@pytest.mark.parametrize(
    ("weights", "kept", "replaced"),
    [
        ({"said_two_turns_ago": 5.0}, "6:10", "4:20"),  # the fake prefers the older one: it goes
        ({}, "4:20", "6:10"),  # no lead: the latest, as before
    ],
)
def test_a_tie_goes_to_the_likeliest_stored_value_only_with_a_lead(monkeypatch: pytest.MonkeyPatch, weights: dict[str, float], kept: str, replaced: str) -> None:
    from sotto.memory import replace_model

    monkeypatch.setattr(replace_model, "load", lambda: _fake_model(weights))
    text = say("The vet appointment is at 4:20.", "Band practice finishes at 6:10.", "The surgery rang, can we do 4:50 instead?").memory_text()
    assert "4:50" in text and kept in text and replaced not in text, text


def test_the_likeliest_needs_the_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    from sotto.memory import replace_model
    from sotto.memory.update import _likeliest

    monkeypatch.setattr(replace_model, "load", lambda: _fake_model({}))  # the fake's margin is 0.1, whatever the fit chose

    a, b = Item(key="", value="a", kind="time", turn=1), Item(key="", value="b", kind="time", turn=2)
    assert _likeliest([a, b], lambda pool: [0.9, 0.3]) is a
    assert _likeliest([a, b], lambda pool: [0.42, 0.40]) is None  # a near tie is no evidence


@pytest.mark.parametrize(
    ("before", "words", "old", "new"),
    [
        ("For the candle I'd like the fig and cedar scent.", "Fig's too sweet for me, I think. Sea salt.", "fig", "Sea salt"),
        ("Tea for the meeting: a pot of earl grey.", "Nobody drinks earl grey here, honestly. Peppermint.", "earl grey", "Peppermint"),
        ("The quilt backing will be the flannel.", "The flannel is out, the shop sold the last bolt. Just plain calico, then.", "flannel", "calico"),
    ],
)
def test_a_thing_said_alone_after_the_stored_one_is_ruled_out_replaces_it(before: str, words: str, old: str, new: str) -> None:
    state = say(before, words)
    text = state.memory_text()
    assert new in text and old not in text.lower(), text  # the reason sentence goes with the old thing
    assert not noisy(state), text


def test_a_thing_said_alone_without_a_ruling_out_is_another_thing() -> None:
    text = say("The lamp base is brass.", "The shade is linen. Oak table.").memory_text()
    assert "brass" in text and "linen" in text, text
    text = say("Drinks: a pot of earl grey.", "And biscuits. Shortbread.").memory_text()
    assert "earl grey" in text, text


def test_too_before_a_word_is_a_degree_and_at_the_end_is_also() -> None:
    from sotto.memory.language import has_additive

    assert not has_additive("The green is too loud for the hall.", "en")
    assert not has_additive("Fig's too sweet for me.", "en")
    assert has_additive("Sam is coming too.", "en") and has_additive("I'll have the soup too, please.", "en")


@pytest.mark.parametrize(
    ("before", "words", "old", "new"),
    [
        ("书架想要樱桃木的，两米高。", "樱桃木太红了，跟地板不配，白橡木吧。", "樱桃木", "白橡木"),
        ("包子要猪肉大葱的，一共二十个。", "包子换韭菜鸡蛋的吧，猪肉的太腻了。", "猪肉大葱", "韭菜鸡蛋"),
        ("坐垫要亚麻的，四个。", "坐垫换成灯芯绒的，亚麻的太扎了。", "亚麻", "灯芯绒"),
    ],
)
def test_zh_a_thing_chosen_alone_replaces_the_one_ruled_out(before: str, words: str, old: str, new: str) -> None:
    text = say(before, words, lang="zh").memory_text()
    assert new in text and old not in text, text


def test_zh_a_topic_before_na_ge_is_not_the_thing_ruled_out() -> None:
    text = say("客厅刷米白色，卧室刷浅灰色。", "卧室那个灰太冷了，要奶茶色。", lang="zh").memory_text()
    assert "卧室" in text, text


def test_a_number_read_with_its_digits_swapped_replaces_that_number() -> None:
    state = say("My locker is forty-two and the padlock code is 1357.", "The pool lane fee is thirty-five.", "Sorry, I'm on twenty-four, I had it backwards.")
    text = state.memory_text()
    assert "twenty-four" in text and "forty-two" not in text and "thirty-five" in text, text
    # a decimal is no number read backwards
    text = say("Layer height 0.2 for the brackets.", "Infill 20 percent.").memory_text()
    assert "0.2" in text and "20 percent" in text, text


@pytest.mark.parametrize(
    ("lang", "before", "words", "old", "new", "kept"),
    [
        # an amount of money changed by a sum
        ("zh", "民宿一晚五百四，押金两百。", "房东说周末要加价，每晚多收六十，押金不变。", "五百四", "600", "两百"),
        ("zh", "洗牙一次三百二。", "今天有活动，每人便宜八十。", "三百二", "240", ""),
        ("en", "The boiler service is £85.", "They've put it up by £10 since January.", "£85", "£95", ""),
        ("en", "The frame repair is sixty pounds.", "He'll knock fifteen quid off if I pay cash.", "sixty pounds", "45 pounds", ""),
        # a time moved by an amount: the one named, never the one said to stay
        ("en", "The tasting starts at 3 pm and dinner is at 7:30.", "Can we move the tasting an hour and a half later? Dinner is fine where it is.", "3 pm", "4:30", "7:30"),
        ("en", "Assembly at the church gate at 9:15, coffee at 11.", "The vicar wants it done sooner, so they've pulled the assembly forward by half an hour.", "9:15", "8:45", "11"),
        # a new time said with its shift replaces the time the shift leads from
        ("en", "His scan is at 9:40 and physio at 3.", "The hospital's pushed him back by an hour, so he's in at 10:40 now.", "9:40", "10:40", "3"),
        ("zh", "体检八点，复诊下午两点。", "体检推迟一个钟头，九点到。", "八点", "九点", "下午两点"),
        # a stored amount multiplied keeps its unit
        ("en", "Poll the sensor every 30 seconds and keep 200 readings.", "Hmm, that drains the battery, so double the poll interval.", "30 seconds", "60 seconds", "200 readings"),
        ("en", "The dough needs 800 grams of flour and 12 grams of salt.", "It's only the two of us, halve the flour.", "800", "400", "12"),
        ("zh", "米线要三斤，香菜半斤。", "米线翻一倍吧，周末来人多。", "三斤", "6斤", "半斤"),
        ("zh", "充电电流五百毫安，电压五伏。", "电流太小了，调到原来的两倍。", "五百毫安", "1000毫安", "五伏"),
        # eleventh round
        # a count changed by a sum: the count, never the money beside it
        ("en", "Print 2,000 leaflets, and the quote is £140.", "Take three hundred off the leaflets, we've got some left.", "2,000 leaflets", "1700 leaflets", "£140"),
        # said as a multiple of itself
        ("en", "We need eight folding chairs and two tables.", "Actually, half that many chairs is plenty.", "eight folding chairs", "4 folding chairs", "two tables"),
        ("en", "The deposit is 40 pounds.", "They want half as much again for the deposit at weekends.", "40 pounds", "60 pounds", ""),
        ("en", "Two kilos of rice and a bag of onions.", "With the cousins coming we'd better double the rice.", "Two kilos", "4 kilos", "onions"),
        ("zh", "订六十份盒饭，二十箱水。", "来的人少，盒饭砍掉一半。", "六十份", "30份", "二十箱"),
        # one more of a count written in the number it now has
        ("en", "Three adult tickets and one child ticket for the zoo.", "My niece is coming too, so add another child.", "one child", "2 children", "Three adult"),
        # a full name with one character otherwise, the slip owned up to
        ("zh", "新同事叫王雨桐，下周一报到。", "不好意思名字记岔了，是王雨晴。", "王雨桐", "王雨晴", "下周一"),
        # a day named in part ("周五" of 下周五) is the one a shift moves
        ("zh", "窗帘下周五来装，师傅姓孙。", "周五那天孙师傅排满了，往后推一天。", "下周五", "下周六", "孙"),
        # a count keyed by the thing a numeral-tagged word names (大碗), moved by a sum
        ("zh", "大桶水订八十个，纸杯一百二十个。", "工地说大桶水不够喝，再加二十个。", "八十个", "100个", "一百二十个"),
        # a bare number replacing money keeps the currency
        ("en", "The entry fee is £12 and the raffle starts at three.", "That's steep for families, so we've dropped it to eight.", "£12", "eight pounds", "three"),
        # 第N页: a numbered page is one value
        ("zh", "明天讲课本第三十页。", "我记错了，是第三十六页。", "第三十页", "第三十六页", ""),
        # 还是 with the value ending its clause keeps that value
        ("zh", "报名十号截止，比赛十八号。", "截止往后拖到十二号吧，比赛还是十八号。", "十号", "十二号", "十八号"),
        # a person with a title the reader knows (书记, 校长)
        ("zh", "开幕请吴校长讲话。", "吴校长那天出差，改请街道的罗书记。", "吴校长", "罗书记", ""),
        # a venue named after its street, then another booked instead
        ("zh", "聚餐定在中山路的福满楼，七点。", "福满楼那天装修，我改订了对面的松鹤轩。", "福满楼", "松鹤轩", "七点"),
        # a day of the same month is the one moved
        ("zh", "孩子七月五号去夏令营，八月二十号接回来。", "营地说提前结束，那就八月十六号接。", "八月二十号", "八月十六号", "七月五号"),
        # twelfth round
        # a price said in other money words ("quid" for "pounds")
        ("en", "The window cleaner charges twenty pounds a visit, every other Monday.", "He's put his prices up, it's twenty-four quid now.", "twenty pounds", "twenty-four quid", "Monday"),
        # people counted by another word for them
        ("en", "The picnic is for twelve children and five adults.", "More parents want to stay, call it nine grown-ups.", "five adults", "nine grown-ups", "twelve children"),
        # twenty-first round
        # a sum taken off, the currency sign opening it; a bare sum "up by" changes the stored sum
        ("en", "The kayak hire is £75 for the day.", "The lad at the desk has taken £15 off since it's drizzling.", "£75", "£60", ""),
        ("en", "Rewiring the shed comes to £350, and the sparky starts on the 9th.", "He rang, copper's gone up, so it's up by forty.", "£350", "£390", "9th"),
        # a count moved down by a count, written the way it was stored
        ("en", "The rear cassette is a 28-tooth and the chainring is 50-tooth.", "Hills are brutal, so go down four teeth on the chainring.", "50-tooth", "46-tooth", "28-tooth"),
        # 多/少 before any verb of the count; an adjective of a verb says by how much
        ("zh", "鸡蛋订八箱，豆腐十块。", "周末食堂人少，鸡蛋少进三箱。", "八箱", "5箱", "十块"),
        ("zh", "住院观察两天，周五复查。", "护士说指标还没降，还得多住一天。", "两天", "3天", "周五"),
        ("zh", "工作服订三十八码的，帽子均码。", "穿上太紧了，换大一码。", "三十八码", "39码", "均码"),
        ("zh", "晾衣绳要十二米，夹子五十个。", "阳台没那么宽，绳子再短两米。", "十二米", "10米", "五十个"),
        # a stored count multiplied, said as 翻个倍 or 多 + verb + 一倍
        ("zh", "米饭煮两杯，菜炒三个。", "来的人多了，米饭翻个倍。", "两杯", "4杯", "三个"),
        ("zh", "传单印两百份，海报十张。", "传单多印一倍吧。", "两百份", "400份", "十张"),
        # a shift said with a compound number word
        ("en", "Parents' evening slot is 5:10, the bus is at 6.", "School moved our slot thirty-five minutes later.", "5:10", "5:45", "6"),
    ],
)
def test_a_correction_replaces_that_value_and_keeps_the_others(lang: str, before: str, words: str, old: str, new: str, kept: str) -> None:
    text = say(before, words, lang=lang).memory_text()
    assert new in text and old not in text and kept in text, text


@pytest.mark.parametrize(
    ("lang", "before", "words", "kept"),
    [
        # how many, not a change: 至少, 最多, 差不多; a size said after a noun (桌子长两米), a noun's adjective (小两口)
        ("zh", "桌布要两块。", "客人至少来六个。", "两块"),
        ("zh", "饮料买四箱。", "活动差不多三个钟头。", "四箱"),
        ("zh", "客厅的桌子要定做。", "桌子长两米，宽九十公分。", "两米"),
        ("zh", "饮料买四箱。", "小两口刚搬来。", "四箱"),
        # two alterations "by" an amount each: the second is no total of the first
        ("en", "Hem the curtains for the bay window.", "Take the left one up by 4 centimetres and the right one by 3 centimetres.", "4 centimetres"),
    ],
)
def test_a_count_said_beside_words_of_more_or_less_that_change_nothing_is_kept(lang: str, before: str, words: str, kept: str) -> None:
    facts = [f.value for f in say(before, words, lang=lang).facts]
    assert kept in facts, facts  # an item of its own, not only the note of the sentence


def test_an_amount_change_with_nothing_stored_is_kept_as_said() -> None:
    text = say("Can you note the parking?", "It's gone up by £2 this year.").memory_text()
    assert "£2" in text, text


def test_double_as_a_word_of_a_thing_multiplies_nothing() -> None:
    text = say("Book two nights for four people.", "A double room, please, and double-check the parking.").memory_text()
    assert "two nights" in text and "four people" in text, text


@pytest.mark.parametrize(
    ("before", "words", "old", "new"),
    [
        ("The quiz team is Priya Shah, Dom and me.", "Priya's got a work do — her flatmate Jess is taking her place.", "Priya", "Jess"),
        ("Relay order: Callum, Ben, Idris, Zoe.", "Callum's ankle is bad, so Marcus is taking Callum's spot.", "Callum", "Marcus"),
    ],
)
def test_a_person_taking_anothers_place_replaces_them(before: str, words: str, old: str, new: str) -> None:
    text = say(before, words).memory_text()
    assert new in text and old not in text, text


def test_someones_place_is_still_a_place_when_nobody_takes_it() -> None:
    state = say("We're meeting at Freddie's place at six.", "Bring the cards.")
    assert any(i.kind == "place" and "Freddie's place" in i.value for i in state.all_items()), state.memory_text()



def test_a_code_read_again_with_one_character_otherwise_replaces_the_stored_codes_end() -> None:
    text = say("对方车牌浙B5M817，修车大概六百。", "我又看了看照片，车牌是5N817，刚才把N看成M了。", lang="zh").memory_text()
    assert "浙B5N817" in text and "5M817" not in text and "六百" in text, text
    from sotto.memory.update import _misread_code

    assert _misread_code("500 mg", "20 mg") is None  # an amount with its unit is no code read again
    assert _misread_code("BX-4471", "BX-4471") is None  # the same code said again
    assert _misread_code("AB-1234", "AB-1284") == "AB-1284"


def test_a_small_number_ruled_out_names_the_stored_amount() -> None:
    text = say("Set the pump to 4 millilitres an hour.", "I misread the chart, it's three and a half, not four.").memory_text()
    assert "three and a half millilitres" in text and "4 millilitres" not in text, text


def test_a_unit_agrees_with_its_count() -> None:
    from sotto.memory.update import agree

    assert [agree("child", 2), agree("boxes", 1), agree("kg", 3), agree("quid", 5), agree("adult tickets", 1)] == ["children", "box", "kg", "quid", "adult ticket"]


def test_amounts_for_two_parts_of_the_day_both_stay() -> None:
    text = say("The morning dose is 400 mg.", "The evening dose is 30 mg.").memory_text()
    assert "400 mg" in text and "30 mg" in text, text
    # a change said for one part of the day moves only that one's amount, even with a cue
    text = say("Run the heater at 18 degrees in the daytime.", "Turn it down to 15 degrees at night.", "Actually the night one should be 16 degrees.").memory_text()
    assert "18 degrees" in text and "16 degrees" in text and "15 degrees" not in text, text


def test_a_new_name_replaces_the_place_the_sentence_rules_out() -> None:
    text = say("Book the Roundhouse for Sunday with my sister Nell.", "The Roundhouse is sold out on Sunday, so put us down for the Barbican.").memory_text()
    assert "Barbican" in text and "Roundhouse" not in text and "Nell" in text, text


def test_a_function_word_opening_a_sentence_is_no_name() -> None:
    text = say("Pack lunches: Noor wants hummus wraps and Elliot wants pasta.", "For pudding, Noor gets a pear and Elliot a flapjack.").memory_text()
    assert "Noor" in text and "Elliot" in text and '"For"' not in text, text


def test_a_capital_that_only_opens_the_sentence_makes_no_person() -> None:
    text = say("Pack lunches: Noor wants hummus wraps and Elliot wants pasta.", "Elliot's gone right off pasta. Rice it is.").memory_text()
    assert "Elliot" in text and "Rice" in text and "pasta" not in text, text




def test_the_month_a_date_names() -> None:
    from sotto.memory.update import _month

    assert [_month("the 3rd of March"), _month("we may come"), _month("May the 4th"), _month("八月十五号")] == ["mar", "", "may", "八"]


@pytest.mark.parametrize(
    ("lang", "before", "words", "new"),
    [
        ("en", "Two adults and three children for the ferry, please, and one dog.", "My brother and his boy are coming, so one more of each.", ["3 adults", "4 children"]),
        ("zh", "要三份炒饭，两份汤面。", "又来了两个朋友，各加一份吧。", ["4份", "3份汤面"]),
    ],
)
def test_one_more_of_each_moves_every_count_of_the_list(lang: str, before: str, words: str, new: list[str]) -> None:
    text = say(before, words, lang=lang).memory_text()
    assert all(n in text for n in new), text


@pytest.mark.parametrize(
    ("before", "words", "old", "new", "kept"),
    [
        ("Twelve people for the curry night.", "Four more said yes, so make that sixteen.", "Twelve people", "sixteen", ""),
        ("The fence panels are £45 each.", "I'd stretch to half as much again on the panels if they're treated.", "£45", "67.50", ""),
    ],
)
def test_eleventh_round_sums_and_totals(before: str, words: str, old: str, new: str, kept: str) -> None:
    text = say(before, words).memory_text()
    assert new in text and old not in text and kept in text and "20 people" not in text, text  # the total is not counted twice


def test_a_sum_taken_off_leaves_a_smaller_number_alone() -> None:
    text = say("Print 3,000 calendars for the charity shop.", "Inside pages on 90 gsm.", "The shop's closing, so knock six hundred off the order.").memory_text()
    assert "2400 calendars" in text and "90 gsm" in text and "3,000" not in text, text


def test_a_swap_names_the_old_thing_with_its_owner() -> None:
    text = say("Packed lunch: Theo has a banana and crisps.", "Can you swap out Theo's banana for a pear? It comes home every day.").memory_text()
    assert "pear" in text and "banana" not in text and "crisps" in text, text


def test_same_day_is_fine_chooses_nothing() -> None:
    text = say("We want the pottery class on the 9th of June.", "Swap the pottery for weaving, please. Same time is fine.").memory_text()
    assert "weaving" in text and "pottery" not in text and "Same time" not in text.replace("Same time is fine", ""), text  # no thing named "Same time"


def test_a_person_ruled_out_in_one_sentence_is_replaced_by_the_next_named() -> None:
    state = say("Grandad and Aunt Sue are collecting the kids on Friday.", "Grandad can't make it, his knee's playing up. Our neighbour Tomasz will go instead.")
    text = state.memory_text()
    assert "Tomasz" in text and "Grandad" not in text and "Friday" in text, text
    # the sentence that ruled him out goes with him, not rewritten with the new person
    assert "Tomasz can't" not in text, text


def test_half_an_hour_word_is_a_time_and_a_labelled_number_said_bare_is_said_again() -> None:
    text = say("Tea at the cafe at one, then the bowling lane at half four.", "The lane at half four clashes with a league match, can we push it to five?").memory_text()
    assert "five" in text and "half four" not in text, text
    text = say("We've set the gate code 2580 and the alarm for Friday.", "Actually 2580 is her old PIN, so make it 3691.").memory_text()
    assert "3691" in text and "2580" not in text, text


@pytest.mark.parametrize(
    ("before", "words", "both"),
    [
        ("包子蒸一百个，豆浆二十杯。", "面粉订两袋，五十斤装的。", ["一百个", "五十斤", "二十杯"]),  # 斤 is no count of 个
        ("装修师傅干四个小时。", "挂钩先买二十个。", ["四个小时", "二十个"]),  # a bare 个 is no count of hours
    ],
)
def test_a_count_in_another_measure_word_is_another_count(before: str, words: str, both: list[str]) -> None:
    """A bare 个 counts anything, so only the same measure word (or people) makes two counts one."""
    text = say(before, words, lang="zh").memory_text()
    assert all(value in text for value in both), text


def test_a_clock_time_or_a_decimal_is_no_clause_break_when_a_value_is_said_unchanged() -> None:
    """"5:45 start as before" keeps the 5:45, not also the day stored with the same "start" (split at
    the colon, "45 start as before" was a clause with no value that kept whatever its words named)."""
    from sotto.memory.statements import read_sentence
    from sotto.memory.update import said_unchanged

    stored = [Item(key="junior session start", value="Tuesday evenings", kind="date"), Item(key="start Tuesday evenings", value="5:45", kind="time")]
    sentence = read_sentence("The junior session is on Fridays now, 5:45 start as before.", "en", frozenset())
    assert [i.value for i in said_unchanged(sentence, stored)] == ["5:45"]


def test_zh_a_reason_naming_the_replaced_place_by_its_last_two_characters_goes() -> None:
    """小区东门 is 东门 in the reason for moving: the note that keeps it alive goes with it."""
    text = say("我在小区群里跟了个水果团购，团长是李姐。", "自提点在小区东门，下午四点以后。",
               "李姐在群里讲了，东门那边要装修，以后都到西门拿。", lang="zh").memory_text()
    assert "东门" not in text and "西门" in text and "李姐" in text and "下午四点" in text, text


def test_a_key_said_this_turn_names_no_replaced_person() -> None:
    state = say("Our driver for the trip is Kwame.", "Declan Ross is driving instead, Kwame's off sick next Tuesday.")
    assert "Kwame" not in state.memory_text() and "Declan Ross" in state.memory_text(), state.memory_text()
    assert any(i.value == "next Tuesday" for i in items(state))


def test_a_stored_person_said_with_a_person_of_their_own_in_another_sentence_stays() -> None:
    """"Freya's lesson with coach Petrakis" gives a person of its own: Freya is not the one the other
    sentence's new person (Oscar) replaces."""
    text = say("My daughter Freya Dunn needs a helmet.", "Also gloves for my son Oscar. Freya's lesson with coach Petrakis is Monday at 4:30.").memory_text()
    assert all(v in text for v in ("Freya Dunn", "Oscar", "Petrakis", "4:30")), text


def test_an_amount_and_a_half_said_bare_is_a_candidate_for_a_stored_measure() -> None:
    """"thirteen and a half" said alone may be the new "twelve kilos": a bare amount, not a code."""
    from sotto.memory.statements import read_sentence
    from sotto.memory.update import _kind_compatible

    value = next(v for v in read_sentence("Weighed again, thirteen and a half.", "en", frozenset()).values if "half" in v.text)
    assert _kind_compatible(Item(key="dog weighs", value="twelve kilos", kind="quantity"), value, "en")


def test_a_name_said_after_an_article_does_not_replace_the_latest_person() -> None:
    """"the Roman baths", "the Aquae tour": capitalised words after an article are things; a cue of
    change does not make them replace the guide."""
    text = say("Our tour guide on Saturday is Ibrahim.", "We've swapped the castle for the Roman baths now, the Aquae tour at eleven.").memory_text()
    assert "Ibrahim" in text and "Aquae" in text and "eleven" in text, text


def test_a_code_corrected_by_its_own_key_not_by_a_word_its_turn_shared() -> None:
    # Both pins were told in one turn: 数据 is the data pin's key, not a reason to change the clock pin.
    state = SessionState(session_id="t")
    state.facts = [
        Item(key="主控用", value="STM32", kind="number", turn=1), Item(key="数据脚接", value="PA9", kind="number", turn=1),
        Item(key="时钟脚接", value="PA10", kind="number", turn=1), Item(key="主控用，的数据脚接，时钟脚接", value="主控用，的数据脚接，时钟脚接", kind="note", turn=1),
    ]
    values = [f.value for f in extract("哎我看错原理图了，数据脚接的是PB6，时钟那根没接错。", state, lang="zh", turn=2).state.facts if f.kind != "note"]
    assert "PB6" in values and "PA9" not in values and "PA10" in values, values


def test_a_clause_that_says_it_was_not_got_wrong_keeps_its_value() -> None:
    from sotto.memory.statements import read_sentence
    from sotto.memory.update import said_unchanged

    stored = [Item(key="数据脚接", value="PA9", kind="number", turn=1), Item(key="时钟脚接", value="PA10", kind="number", turn=1)]
    assert [i.value for i in said_unchanged(read_sentence("时钟脚没接错", "zh"), stored)] == ["PA10"]
    assert [i.value for i in said_unchanged(read_sentence("时钟那根没接错", "zh"), stored)] == ["PA10"]
    assert said_unchanged(read_sentence("时钟脚没接上", "zh"), stored) == []


def test_a_chinese_noun_shortened_to_its_head_is_the_same_key() -> None:
    # 餐厅 is the 西餐厅 of the first turn: its time changes, the film's stays.
    state = say("七夕那天我订了江边那家西餐厅，晚上七点，吃完去看九点的电影。", "餐厅刚来电话，只剩六点半的位子了，那就六点半吧。", lang="zh")
    times = [f.value for f in state.facts if f.kind == "time"]
    assert "六点半" in times and "九点" in times and not any("七点" in t for t in times), times
    from sotto.memory.statements import content_stems

    assert {"西餐厅", "餐厅"} <= content_stems("西餐厅")
    assert content_stems("蜘蛛人") == {"蜘蛛人"} and content_stems("一等奖") == {"一等奖"}  # no head of a word the dictionary lacks


def test_no_key_keeps_a_replaced_or_turned_down_thing() -> None:
    from sotto.memory.patch import Replacement, StatePatch
    from sotto.memory.rules import RuleResult, _keys_without_replaced, _Working

    state = SessionState(session_id="t")
    state.facts = [Item(key="bags reorder litter clumping clay", value="four bags", kind="quantity", turn=1),
                   Item(key="litter order", value="ten litre bags", kind="quantity", turn=1)]
    result = RuleResult(patch=StatePatch(), lang="en", retired=["clumping clay", "ten litre bags"],
                        corrections=[Replacement(old="ten litre bags", new="fifteen litre bags")])
    _keys_without_replaced(_Working(state, result, 2), result, "en")
    assert [f.key for f in state.facts] == ["bags reorder litter", "litter order"]  # "litre bags" is said by the new value too
    state.facts = [Item(key="季度会在的星河厅开", value="五楼", kind="number", turn=1), Item(key="星河厅", value="星河厅", kind="place", turn=1)]
    result = RuleResult(patch=StatePatch(), lang="zh", retired=["星河厅"])
    _keys_without_replaced(_Working(state, result, 2), result, "zh")
    assert [f.key for f in state.facts] == ["季度会在的开", "星河厅"]  # a key stays with the value that is the thing itself


def test_one_dish_called_off_keeps_the_count_keyed_by_the_whole_order() -> None:
    state = say("晚饭叫隔壁的外卖，红烧肉、糖醋排骨、油焖笋，大概八个人吃。", "糖醋排骨算了，太甜了。", lang="zh")
    (count,) = [f for f in state.facts if f.kind == "quantity"]
    assert count.value == "八个人" and "糖醋排骨" not in count.key and "糖醋排骨" not in state.memory_text(), state.memory_text()


def test_a_measure_word_is_no_only() -> None:
    # 只 "only" cues a change; 一只狗 counts a dog: the dog's twenty jin is another sack, not the cat's ten.
    from sotto.memory.language import has_change_cue

    assert has_change_cue("只要两袋就够了", "zh") and not has_change_cue("家里还有一只狗", "zh")
    quantities = [f.value for f in say("给猫订了一袋猫粮，十斤装的。", "家里还有一只狗，它的狗粮要二十斤的。", lang="zh").facts if f.kind == "quantity"]
    assert "十斤" in quantities and "二十斤" in quantities, quantities


def test_new_or_different_describes_a_thing_added() -> None:
    def values(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances).facts if f.kind != "note"]

    both = values("A pallet of blocks is arriving on Thursday from the builders' merchant.", "There's a second pallet, gravel, coming on Saturday from a different supplier.")
    assert "Thursday" in both and "Saturday" in both, both
    both = values("The dining table needs new felt pads, it's the 8-seater.", "There's also the 4-seater in the kitchen that needs new legs.")
    assert "8-seater" in both and "4-seater" in both, both
    assert values("The meeting is on Thursday.", "The new date is Friday.") == ["Friday"]  # said of what is stored, "new" still changes it


def test_a_value_said_as_still_holding_later_in_the_turn_is_not_the_one_changed() -> None:
    # 还是 earlier in the clause of a value said again keeps it; the appointment's nine o'clock is what moved.
    times = [f.value for f in say("牙科约在周四上午九点，拔牙前一天晚上十点以后别喝酒。",
                                  "诊所来电话，说医生那天有手术，改到下午三点。不喝酒还是从前一天晚上十点开始。", lang="zh").facts if f.kind == "time"]
    assert sorted(times) == ["下午三点", "晚上十点"], times


def test_a_note_keyed_by_a_swapped_out_thing_loses_it() -> None:
    # The swap rewrote the note's text; its key must not keep the wood that is gone. A note that
    # still says the wood keeps it in its key.
    from sotto.memory.patch import Replacement, StatePatch
    from sotto.memory.rules import RuleResult, _keys_without_replaced, _Working

    state = SessionState(session_id="t")
    state.facts = [Item(key="cupboard doors frosted glass walnut", value="Four doors: frosted glass on the top two and birch veneer on the bottom two", kind="note", turn=1),
                   Item(key="sample walnut", value="Bring a walnut offcut for the sample board", kind="note", turn=1)]
    result = RuleResult(patch=StatePatch(), lang="en", retired=["walnut veneer"], corrections=[Replacement(old="walnut veneer", new="birch veneer")])
    _keys_without_replaced(_Working(state, result, 2), result, "en")
    assert [f.key for f in state.facts] == ["cupboard doors frosted glass", "sample walnut"]


def test_a_stored_value_said_as_someone_elses_is_replaced_by_the_new_one() -> None:
    def numbers(*utterances: str, lang: str = "en") -> list[str]:
        return [f.value for f in say(*utterances, lang=lang).facts if f.kind == "number"]

    assert numbers("快递送到三零二，放门口就行。", "是三零三，三零二是隔壁王阿姨家。", lang="zh") == ["三零三"]
    assert numbers("The locker code for the gym is 4471.", "It's 4417, 4471 is the work locker.") == ["4417"]
    # Said again as what it is about, the old value stays: both are kept.
    kept = numbers("Our flat is number 12.", "The parking space is 40, and 12 is the flat as I said.")
    assert "40" in kept and any(k.endswith("12") for k in kept), kept


def test_only_a_value_of_a_kind_it_could_replace_competes_for_the_new_values_words() -> None:
    # "Ruth" is a name: her item's key sharing "coach" with the new time says nothing against the
    # stored time being the one the new time replaces.
    from sotto.memory.statements import read_sentence
    from sotto.memory.update import replace_features

    person = Item(key="niece coming coach", value="Ruth", kind="name", turn=1)
    arrival = Item(key="gets into Leeds", value="ten past two", kind="time", turn=1)
    statement = read_sentence("Ruth's coach is due in at 3:05.", "en")
    (new_time,) = [v for v in statement.values if v.kind == "time"]
    features = replace_features(new_time, arrival, statement, 3, [arrival], [person, arrival], [])
    assert features["key_elsewhere"] == 0.0
    other_time = Item(key="coach back", value="6 pm", kind="time", turn=2)
    features = replace_features(new_time, arrival, statement, 3, [arrival, other_time], [person, arrival, other_time], [])
    assert features["key_elsewhere"] == 1.0  # another time keyed by the coach does compete


def test_an_old_value_named_with_its_own_key_in_another_clause_still_holds() -> None:
    # Said again with what it is about, the gate code is restated beside the shed's new code.
    numbers = [f.value for f in say("The gate code is 2580.", "The shed has its own code, 1397, and 2580 is the gate code as I said.").facts if f.kind == "number"]
    assert sorted(numbers) == ["1397", "2580"], numbers
    # Named with its key in a clause that rules it out, it is the one the new value replaces.
    dates = [f.value for f in say("The party is on the 14th.", "Let's do the 21st. The 14th doesn't work for the party.").facts if f.kind == "date"]
    assert dates == ["the 21st"], dates


def test_a_person_named_after_a_new_one_with_news_of_their_own_stays() -> None:
    def names(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances).facts if f.kind == "name"]

    kept = names("Mine is the blue kayak, and Arlo takes the red one.", "The instructor is Wendy. Arlo will need a smaller paddle.")
    assert "Arlo" in kept and "Wendy" in kept, kept
    kept = names("Our two cats are Miso and Udon.", "The vet weighed Miso today. Udon hasn't changed.")
    assert "Udon" in kept and "Miso" in kept, kept
    # Named first with news that puts them out, the person is the one the new person replaces.
    replaced = names("The plumber coming on Friday is Gary.", "Gary's broken his wrist, so his apprentice Kieran is coming instead.")
    assert "Kieran" in replaced and "Gary" not in replaced, replaced


def test_one_shared_word_and_no_word_of_change_keeps_both_values() -> None:
    # "Output" and "May" are shared, but nothing says the first value changed: another output, another
    # machine's date.
    values = [f.value for f in say("Output A of the generator runs a sine at 2 kHz.", "Output B is a triangle wave at 40 kHz, 5 volts, for the filter test.").facts]
    assert "2 kHz" in values and "40 kHz" in values and "Output A" in values, values
    dates = [f.value for f in say("The boiler service is on the 12th of May.", "The Vaillant in the garage comes back on the twentieth of May.").facts if f.kind == "date"]
    assert sorted(dates) == ["the 12th of May", "the twentieth of May"], dates
    # With a word of change the same shared word does replace.
    dates = [f.value for f in say("The boiler service is on the 12th of May.", "The boiler service has moved to the twentieth of May.").facts if f.kind == "date"]
    assert dates == ["the twentieth of May"], dates


def test_a_value_whose_clause_rules_it_out_then_one_of_its_kind_is_the_old_one_of_a_contrast() -> None:
    from sotto.memory.statements import read_sentence

    def negated(sentence: str, lang: str) -> dict[str, bool]:
        return {v.text: v.negated for v in read_sentence(sentence, lang).values}

    # The words that rule the first value out stand away from it in its clause.
    assert negated("周五那场我们去不成了，改看周日的。", "zh") == {"周五": True, "周日": False}
    assert negated("王师傅这礼拜排满了，来修的是赵师傅。", "zh") == {"王师傅": True, "赵师傅": False}
    assert negated("The 4:10 ferry we really can't catch, the 5:40 is fine.", "en") == {"4:10": True, "5:40": False}
    # No contrast: the later value's clause rules out too, or the values are in one clause.
    assert negated("周五去不成，周日也去不成。", "zh") == {"周五": False, "周日": False}
    assert negated("Not the 4:10 but the 5:40.", "en")["5:40"] is False
    # Through the update: the contrasted stored value is replaced, not kept beside the new one.
    dates = [f.value for f in say("家具城说沙发周二送。", "周二家里没人收不了，周四送过来。", lang="zh").facts if f.kind == "date"]
    assert dates == ["周四"], dates


def test_must_is_a_word_of_change_only_right_before_the_value_it_makes_so() -> None:
    def dates(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances, lang="zh").facts if f.kind == "date"]

    def times(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances, lang="zh").facts if f.kind == "time"]

    # 得 as "has to" of another deed tells a new fact beside the stored day.
    kept = dates("部门例会定在周四下午。", "报告得在周二之前交给主任。")
    assert any("周四" in d for d in kept) and any("周二" in d for d in kept), kept
    # Right before the value it says what the value must now be.
    assert times("师傅说九点到。", "路上堵车，估计得十点半了。") == ["十点半"]
    # "就…得了": that will do.
    names = [f.value for f in say("礼物我想送茅台。", "茅台太贵了，就送五粮液得了。", lang="zh").all_items()]
    assert not any("茅台" in n for n in names), names


def test_a_thing_swapped_in_replaces_the_stored_word_of_its_head() -> None:
    def said(*utterances: str) -> str:
        return say(*utterances, lang="zh").memory_text()

    # 短袖 and 长袖 end in one head, 袖: the stored one is what the swap takes out.
    text = said("给女儿订一套长袖校服，一百四十的码。", "天热了，校服换成短袖的吧。")
    assert "短袖" in text and "长袖" not in text, text
    # Two stored words of that head: which one goes is not said, both stay.
    text = said("订一杯红茶和一杯绿茶。", "换成花茶吧。")
    assert "红茶" in text and "绿茶" in text, text


def test_a_sum_of_money_for_another_thing_keeps_the_stored_sum() -> None:
    def amounts(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances).facts if f.kind == "quantity"]

    kept = amounts("The deposit for the hall was three hundred pounds.", "The caterer wants ninety pounds for the cake.")
    assert sorted(kept) == ["ninety pounds", "three hundred pounds"], kept
    # Said of the same thing, the sum replaces the stored one.
    assert amounts("The deposit for the hall was three hundred pounds.", "The hall deposit is four hundred pounds now.") == ["four hundred pounds"]


def test_a_thing_swapped_in_is_not_cut_to_its_head_nor_matched_inside_a_stored_word() -> None:
    # 台灯 is a thing, not the classifier 台 and a lamp; 落地灯 holds no word 地灯 to swap.
    text = say("我想买一盏落地灯。", "换成台灯吧。", lang="zh").memory_text()
    assert "落台灯" not in text and "落地灯" in text, text


def test_the_count_of_a_thing_turned_down_goes_with_it() -> None:
    facts = [f.value for f in say("家长八点要送孩子去礼堂，我还想买一束向日葵给她。", "向日葵那家花店没货了，店员说可以包一束白色满天星，也要得。", lang="zh").facts]
    assert "八点" in facts and not any("向日葵" in f for f in facts), facts


def test_a_thing_chosen_rather_than_one_named_by_its_head_replaces_the_stored_one() -> None:
    # "a big cleaner" names the stored "carpet cleaner" by its head; the new side is the noun
    # phrase chosen, not the clause that chooses it.
    text = say("Hire a carpet cleaner and a wet vac for Saturday.", "The stairs are narrow, so I will need the small handheld steamer rather than a big cleaner.").memory_text()
    assert "small handheld steamer" in text and "carpet cleaner" not in text and "wet vac" in text and "need the" not in text, text


@pytest.mark.parametrize(
    ("lang", "words", "both"),
    [
        ("zh", "我和表哥一起租车，我那辆押金三千五；他那辆押金四千二。", ("三千五", "四千二")),
        ("en", "Mum's flight lands at 4:10. Dad's flight lands at 6:25.", ("4:10", "6:25")),
    ],
)
def test_values_one_message_lists_side_by_side_all_stay(lang: str, words: str, both: tuple[str, str]) -> None:
    facts = [f.value for f in say(words, lang=lang).facts]
    assert all(any(b in f for f in facts if f) for b in both), facts


def test_a_value_the_same_message_changed_is_no_list_and_its_key_still_replaces_it() -> None:
    # The first sentence restates the count (owned up to); the second says the count now.
    facts = [f.value for f in say("Thirty revision cards for the exam.", "Oh, I muddled that, the thirty cards were last term's. This term's pack has 48 in it.").facts]
    assert "48 revision cards" in facts and not any("thirty" in f for f in facts), facts
