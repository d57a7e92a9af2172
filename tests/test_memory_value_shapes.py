"""Value shapes the reader takes as one value, and what the update step does with them.

A value split into pieces can be neither kept verbatim nor corrected: "3B-208" stored as "3B"
and "208", "三十六码" as "三十六". Each case is a sentence of our own, not from the eval scripts.
"""

from __future__ import annotations

import pytest

from test_memory_update import say

from sotto.memory.statements import read_sentence
from sotto.memory.values import code_spans


def read(sentence: str, lang: str = "en") -> list[tuple[str, str]]:
    return [(v.text, v.kind) for v in read_sentence(sentence, lang, frozenset()).values]


@pytest.mark.parametrize(
    "text,codes",
    [
        ("Stand 4C-117 in hall two.", ["4C-117"]),
        ("The log file is called batch_0921.", ["batch_0921"]),
        ("Its address is 0x5A on the bus.", ["0x5A"]),
        ("Sort code 30-92-18, please.", ["30-92-18"]),
        ("Desk K.14 by the window.", ["K.14"]),
        ("Reg is LN23 RTA, a grey van.", ["LN23 RTA"]),
        ("登记号是 5G2K7731Q。", ["5G2K7731Q"]),
        # not codes: an ordinal, a time, a measure, a range, a decimal, a date, a word joined to a number
        ("On the 21st at 6pm, 250ml, 2-4 people, 3.5 metres, 12/03/2025, a 9-volt.", []),
    ],
)
def test_a_code_written_as_one_token_is_one_span(text: str, codes: list[str]) -> None:
    assert [text[a:b] for a, b in code_spans(text)] == codes


@pytest.mark.parametrize(
    "sentence,value,kind",
    [
        ("The booth is 4C-117.", "4C-117", "number"),
        ("Plate LN23 RTA.", "LN23 RTA", "number"),
        ("Put it in locker 12 near bench B.09.", "B.09", "number"),
        ("Grab cage 3, the other one is full.", "cage 3", "number"),
        ("I want the Pixel 8 case.", "Pixel 8", "number"),
        ("We'll go with plan B.", "plan B", "number"),
        ("Two twenty-litre drums and a five-litre can.", "Two twenty-litre drums", "quantity"),
        ("It takes a 12-volt adapter.", "12-volt", "quantity"),
        ("Bins go out on the second Tuesday of every month.", "the second Tuesday of every month", "date"),
        ("She's in Tuesday to Thursday.", "Tuesday to Thursday", "date"),
        ("The recital is on 14 June.", "14 June", "date"),
        ("Strings are 12s on the acoustic.", "12s", "number"),
        ("Account number 5521 8830 7.", "5521 8830 7", "number"),
        ("Set the nozzle gap to point three.", "point three", "number"),
        ("Log two million rows per file.", "two million rows", "quantity"),
        ("Fill 15 percent.", "15 percent", "quantity"),
    ],
)
def test_english_value_shapes_are_read_whole(sentence: str, value: str, kind: str) -> None:
    assert (value, kind) in read(sentence), read(sentence)


@pytest.mark.parametrize(
    "sentence,value",
    [
        ("展位号是 7D-305。", "7D-305"),
        ("车牌是苏E7M213。", "苏E7M213"),
        ("她穿三十八码的鞋。", "三十八码"),
        ("买两瓶二百五十毫升的。", "二百五十毫升"),
        ("要一根三十厘米的线。", "三十厘米"),
        ("风扇开到三档。", "三档"),
        # numbers said the short way
        ("月费是两千四一个月。", "两千四"),
        ("桌子要一米八的。", "一米八"),
        ("一共三块五。", "三块五"),
        ("住在五零三室。", "五零三室"),
    ],
)
def test_chinese_value_shapes_are_read_whole(sentence: str, value: str) -> None:
    assert value in [text for text, _ in read(sentence, "zh")], read(sentence, "zh")


def test_the_number_after_a_verb_or_before_its_noun_is_no_label() -> None:
    values = read("Print 300 flyers and the shelf needs 4, the bin 7 is full.")
    assert ("Print 300", "number") not in values and ("needs 4", "number") not in values
    assert ("bin 7", "number") in values


def test_a_corrected_code_replaces_the_code() -> None:
    state = say("Our stand is 4C-117.", "Sorry, I read the map wrong, it's 4C-171.")
    text = state.memory_text()
    assert "4C-171" in text and "4C-117" not in text, text


def test_a_code_of_the_same_family_is_the_one_replaced() -> None:
    state = say("The scanner is on COM3 at 9600 baud.", "Save the trace as run_17.", "Not COM3, it's COM5, wrong port.")
    text = state.memory_text()
    assert "COM5" in text and "COM3" not in text and "run_17" in text, text


def test_a_labelled_thing_replaced_by_the_same_thing_with_another_number() -> None:
    state = say("Book us bay 6 for Saturday.", "Bay 6 is closed for repairs, give us bay 9.")
    text = state.memory_text()
    assert "bay 9" in text and "bay 6" not in text.lower().replace("bay 6 is closed", ""), text


def test_a_chinese_size_correction_keeps_the_measure_word() -> None:
    state = say("童鞋要三十码的。", "我记错了，她现在穿三十一码。", lang="zh")
    text = state.memory_text()
    assert "三十一码" in text and "三十码" not in text, text


def test_a_cancelled_thing_takes_only_its_clause_out_of_a_note() -> None:
    state = say("The hedge wants trimming, and the shed roof needs new felt.", "Forget the shed roof, my brother's doing it.")
    text = state.memory_text()
    assert "hedge" in text and "felt" not in text, text


def test_a_clause_said_of_the_cancelled_thing_goes_with_it() -> None:
    state = say("Add the deep clean as well, it's forty pounds.", "Skip the deep clean this time.")
    text = state.memory_text()
    assert "forty pounds" not in text and "deep clean" not in text, text



def test_a_weekday_and_its_day_of_the_month_are_one_date() -> None:
    assert ("Friday the 20th", "date") in read("The recital moved to Friday the 20th.")
    assert ("the 11th, a Monday", "date") in read("It's the 11th, a Monday.")


def test_a_week_later_keeps_the_weekday_and_another_day_drops_it() -> None:
    text = say("The viewing is Tuesday the 4th.", "Let's push it a week, the 11th.").memory_text()
    assert "Tuesday the 11th" in text and "4th" not in text, text
    text = say("The viewing is Tuesday the 4th.", "They can only do the 6th, sorry.").memory_text()
    assert "6th" in text and "Tuesday" not in text and "4th" not in text, text


def test_a_value_said_as_unchanged_is_not_the_one_replaced() -> None:
    state = say("Lessons are Monday and Thursday.", "Monday's off this month, so Wednesday, Thursday as usual.")
    text = state.memory_text()
    assert "Wednesday" in text and "Thursday" in text and "Monday" not in text, text
    zh = say("周二和周五打扫。", "周二我出差，改到周三，周五照旧。", lang="zh").memory_text()
    assert "周三" in zh and "周五" in zh and "周二" not in zh, zh


def test_a_letter_spelled_with_a_word_is_no_value() -> None:
    assert read("It's KX21 TRN, N for November.") == [("KX21 TRN", "number")]


def test_an_amount_twenty_times_a_count_is_not_its_correction() -> None:
    zh = say("酒店住了三晚，一共一千二百六十元。", "那个，酒店金额我看错了，发票上是一千一百六十。", lang="zh").memory_text()
    assert "三晚" in zh and "一千一百六十" in zh and "一千二百六十" not in zh, zh


def test_number_words_are_read_by_the_one_number_reader() -> None:
    from sotto.memory.update import number_of

    assert number_of("two hundred and forty pounds") == 240
    assert number_of("four hundred and eighty-two") == 482
    assert number_of("两千四") == 2400
    assert number_of("a dozen eggs") == 12


def test_a_new_count_of_the_same_thing_keeps_what_was_said_of_it() -> None:
    text = say("Two large pizzas for the party, please.", "Make that three pizzas.").memory_text()
    assert "three large pizzas" in text and "Two large" not in text, text


def test_a_thing_and_its_letter_is_replaced_by_the_same_thing_with_another_letter() -> None:
    text = say("We're on plan C for the launch.", "Plan C fell through, we're going with plan D.").memory_text()
    assert "plan D" in text and "plan C" not in text.replace("Plan C fell through", ""), text


def test_a_code_is_not_a_correction_of_a_labelled_thing_it_is_not_said_of() -> None:
    text = say("Table 4 for the Lins, please.", "Their booking reference is QX7731.").memory_text()
    assert "Table 4" in text and "QX7731" in text, text


def test_words_said_of_another_value_do_not_make_a_value_replace_theirs() -> None:
    text = say("The shelves are 300 mm deep.", "The brackets need 20 mm of space, so the shelves come out at 280 deep.").memory_text()
    assert "20 mm" in text and "280" in text and "300 mm" not in text, text


def test_a_first_name_and_surname_at_the_start_of_a_sentence_are_one_name() -> None:
    assert ("Tom Achebe", "name") in read("Tom Achebe is bringing the van.")
    assert ("Biscuit", "name") in read("Booking Biscuit in for a trim.")


def test_a_number_said_again_in_words_in_the_same_turn_replaces_nothing() -> None:
    text = say("The fee is sixty pounds.", "It's desk 27, sorry, I said 72 before. Twenty-seven.").memory_text()
    assert "sixty pounds" in text and "desk 27" in text, text


def test_a_total_after_people_arrive_counts_people() -> None:
    text = say("Lunch for ten people, and it takes three hours to roast.", "The Okoros are coming as well, so that's thirteen now.").memory_text()
    assert "thirteen" in text and "ten people" not in text and "three hours" in text, text


def test_a_total_after_more_of_a_thing_counts_that_thing() -> None:
    text = say("Twenty adults and five children on the coach.", "Four more adults signed up, so twenty-four.").memory_text()
    assert "five children" in text and "Twenty adults" not in text and "twenty-four" in text, text


def test_a_chinese_thing_shortened_to_its_last_character_keeps_its_count() -> None:
    zh = say("仓库进货：卫生纸六箱，啤酒十箱。", "我看看，纸还剩不少，三箱就够了。", lang="zh").memory_text()
    assert "三箱" in zh and "十箱" in zh and "六箱" not in zh, zh


def test_leave_off_the_thing_retracts_it() -> None:
    text = say("Add two folding tables and a gazebo to the hire.", "Leave off the gazebo, the forecast is fine.").memory_text()
    assert "gazebo" not in text and "two folding tables" in text, text


def test_a_plates_letters_said_before_its_code_are_part_of_it() -> None:
    text = "The van's plate is WD 62KLP, the white one."
    assert [text[a:b] for a, b in code_spans(text)] == ["WD 62KLP"]
    other = "Boarding at 5 PM B12 is the gate."
    assert [other[a:b] for a, b in code_spans(other)] == ["B12"]  # "PM" is no plate's letters


def test_a_value_said_before_sorry_is_the_repair() -> None:
    text = say("The locker is B47.", "B74, sorry.").memory_text()
    assert "B74" in text and "B47" not in text, text


def test_chinese_measure_words_for_land_and_weight_count() -> None:
    for sentence, count in (("承包了十二亩地。", "十二亩"), ("车上装了三吨沙子。", "三吨")):
        assert any(text.startswith(count) and kind == "quantity" for text, kind in read(sentence, "zh")), read(sentence, "zh")


def test_a_number_before_hao_and_a_place_labels_the_place() -> None:
    values = read("比赛改在四号场。", "zh")
    assert not any(kind == "date" for _, kind in values), values
    assert ("四号", "date") in read("比赛改在四号。", "zh")


def test_a_chinese_yes_no_proposal_carries_its_value() -> None:
    zh = say("蛋糕周四送到。", "礼拜六能送不？", lang="zh").memory_text()
    assert "礼拜六" in zh and "周四" not in zh, zh


def test_swapped_digits_replace_a_time_unless_the_words_name_another() -> None:
    text = say("Ada's slot is 12:01 and Pip's slot is 11:45.", "Pip's slot is 12:10.").memory_text()
    assert "12:01" in text and "12:10" in text and "11:45" not in text, text
    again = say("The train leaves at 17:42.", "It leaves at 17:24, I read it wrong.").memory_text()
    assert "17:24" in again and "17:42" not in again, again


def test_dui_hao_xing_na_open_words_and_are_fillers_only_before_a_pause() -> None:
    from sotto.memory.language import strip_zh_discourse

    assert strip_zh_discourse("对面那家店关门了。").startswith("对面")
    assert strip_zh_discourse("行李箱两个。").startswith("行李")
    assert strip_zh_discourse("那天我不在。").startswith("那天")
    assert strip_zh_discourse("对，三个人。") == "三个人。"


def test_a_chinese_full_name_cut_by_the_segmenter_is_one_name() -> None:
    for name in ("韦海燕", "林秀英", "陶建国"):  # the segmenter cuts each into surname and given name
        assert (name, "name") in read(f"{name}老师带，周日上午。", "zh")
    names = [v for v, kind in read("让他徒弟小赵开过来。", "zh") if kind == "name"]
    assert names == ["小赵"], names  # not 赵开


def test_a_team_said_by_its_name_is_a_name() -> None:
    assert ("猎豹队", "name") in read("对手换了，现在是猎豹队。", "zh")
    assert not any(kind == "name" for _, kind in read("他是队长。", "zh"))


def test_a_place_after_zai_keyed_by_its_noun_is_replaced_by_the_same_key() -> None:
    zh = say("面试在下周一，地点在浦东。", "刚接到电话，地点在静安。", lang="zh").memory_text()
    assert "静安" in zh and "浦东" not in zh, zh
    route = say("先去机场接人。", "接到人以后去酒店。", lang="zh").memory_text()
    assert "机场" in route and "酒店" in route, route


def test_a_value_named_as_last_years_is_the_old_one() -> None:
    text = say("The annual pass is 120 pounds.", "Checked the leaflet, it's 140. 120 was last year's price.").memory_text()
    assert "140" in text and "120" not in text, text
    zh = say("年卡是六百八。", "我又看了一眼，七百二，六百八是去年的价。", lang="zh").memory_text()
    assert "七百二" in zh and "六百八" not in zh, zh


def test_a_size_with_its_range_is_one_choice() -> None:
    assert ("girls medium", "item") in read("Her leotard is girls medium, please.")
    text = say("The jersey size is boys large.", "He's grown, men's small will fit him better than boys large.").memory_text()
    assert "men's small" in text and "boys large" not in text, text


def test_someone_stepping_in_replaces_the_person_named_beside() -> None:
    text = say("The quiz team is Ravi Menon, Ellie and Joan.", "Ravi's got the flu, so Tomasz Wirth is stepping in.").memory_text()
    assert "Tomasz Wirth" in text and "Ravi Menon" not in text and "Ellie" in text, text


def test_a_count_of_the_unit_a_stored_number_is_keyed_by_replaces_it() -> None:
    text = say("The essay is due Friday and the word limit is 3,000.", "Hang on, two thousand five hundred words is the cap.").memory_text()
    assert "two thousand five hundred words" in text and "3,000" not in text, text


def test_a_chinese_count_closed_by_le_is_the_new_total() -> None:
    zh = say("团建报了十五个人。", "财务部又来了三个，十八个人了。", lang="zh").memory_text()
    assert "十八个人" in zh and "十五个人" not in zh, zh


def test_a_chinese_rate_is_an_amount_per_measure() -> None:
    assert read("谈好了，六十五一亩。", "zh") == [("六十五", "number")]
    assert ("一百二", "number") in read("化肥一袋一百二。", "zh") and not any(kind == "quantity" for _, kind in read("化肥一袋一百二。", "zh"))
    assert any(text.startswith("九十一袋") for text, _ in read("要九十一袋。", "zh"))  # 91 bags
    assert any(text.startswith("一米一") for text, _ in read("宽是一米一。", "zh"))  # 1.1 metres


def test_a_bare_amount_replaced_in_a_count_stays_in_a_clock_time() -> None:
    text = say("Lesson at two o'clock.", "We need boots, two of them.", "Just the one pair of boots.").memory_text()
    assert "two o'clock" in text, text


def test_a_person_already_named_said_with_anothers_whole_key_takes_that_place() -> None:
    state = say("Leon drives on Saturday.", "Ines handles the tickets.", "Leon's car is in the garage. Ines is driving Saturday.")
    names = [(i.value, i.key) for i in state.all_items() if i.kind == "name"]
    assert "Leon" not in [n for n, _ in names] and ("Ines", "drives") in names, names
    both = say("Sam's bringing the cake.", "Ana's bringing drinks, and Ana sets up.", "Ana's bringing cups too.").all_items()
    assert {"Sam", "Ana"} <= {i.value for i in both if i.kind == "name"}  # "bringing" is only part of Sam's key


def test_a_bare_number_in_a_turn_that_names_a_stored_label_is_that_labelled_number() -> None:
    text = say("Mum's on ward 7, bed by the window.", "They've changed wards overnight, the nurse said. Twelve now.").memory_text()
    assert "ward Twelve" in text and "ward 7" not in text, text
    kept = say("Box three holds the cables, nine of them.", "Wait, box three, I miscounted. Eleven of them.").memory_text()
    assert "Box three" in kept, kept  # the label says which box: the other number is another thing


def test_the_last_two_in_an_admission_are_digits_not_a_value() -> None:
    text = say("The deposit is 60 pounds and the order number is 7731-0486.", "Order number's 7731-0468. I swapped the last two.").memory_text()
    assert "60 pounds" in text and "7731-0468" in text and "7731-0486" not in text, text


def test_an_end_of_a_stored_range_said_again_changes_nothing() -> None:
    text = say("My shift on Friday is 9 pm till 3 am.", "Priti takes over from me at 3, her number is 07700 900 214.").memory_text()
    assert "9 pm till 3 am" in text, text


def test_the_week_a_sentence_is_said_in_is_no_new_day() -> None:
    text = say("The show is on Sunday the 3rd, I'm riding Jasper.", "Jasper's off his food this week so I'll ride Minty instead.").memory_text()
    assert "Sunday the 3rd" in text and "Minty" in text, text


def test_a_capitalised_cue_word_inside_a_name_is_no_cue() -> None:
    from sotto.memory.language import has_change_cue

    assert not has_change_cue("The logs come from Lower Farm Woods.", "en")
    assert not has_change_cue("Meet me at New Road Garage.", "en")
    assert has_change_cue("Now it's Tuesday.", "en") and has_change_cue("It's at the new hall.", "en")
    text = say("The fair is at Hillside School on Saturday.", "The bunting comes from Lower Mead Farm, they're lending 40 metres.").memory_text()
    assert "Hillside School" in text, text


def test_a_measure_of_each_is_no_total_of_the_count_added() -> None:
    assert ("五十升", "quantity") in read("再加两袋营养土，五十升一袋的。", "zh") and not any(t == "一袋" for t, _ in read("再加两袋营养土，五十升一袋的。", "zh"))
    assert any(t.startswith("一片") for t, _ in read("晚上吃钙片，一次一片。", "zh"))  # one tablet a time
    zh = say("买三箱矿泉水。", "再加两箱矿泉水，二十四瓶一箱的。", lang="zh").memory_text()
    assert "5箱" in zh or "五箱" in zh, zh


def test_a_few_more_then_a_total_is_the_new_count_of_the_same_thing() -> None:
    zh = say("学校订了三十本练习册。", "老师说要多订几本，一共四十五本。", lang="zh").memory_text()
    assert "四十五本练习册" in zh and "三十本" not in zh, zh
    assert not any(text.startswith("几") for text, _ in read("周五好几个人要加班。", "zh"))


def test_the_rest_of_a_sentence_that_cancels_is_still_said() -> None:
    text = say("Mia goes to the pool on Friday.", "Her bag needs goggles, a towel and a swim cap.", "Forget the swim cap, the coach hands out club ones.").memory_text()
    assert "swim cap" not in text and "club ones" in text and "goggles" in text, text


def test_a_choice_then_the_thing_it_replaces_ruled_out() -> None:
    text = say("The picnic is on Saturday.", "Jo's bringing crisps and I'm making a pasta salad.", "Sausage rolls from me, I've gone off the pasta salad idea.").memory_text()
    assert "Sausage rolls" in text and "pasta salad" not in text, text
    kept = say("The picnic is on Saturday.", "Jo's bringing crisps.", "Scones from me, I've gone off the flapjack idea.").memory_text()
    assert "crisps" in kept, kept  # nothing stored was ruled out: nothing is replaced


def test_rather_than_names_the_old_thing() -> None:
    text = say("Get a sponge cake for the party.", "I'd like a cheesecake rather than a sponge cake, she loves cheesecake.").memory_text()
    assert "Get a cheesecake" in text and "sponge" not in text, text
    van = say("Pack the blue tent for the trip.", "We'll take the camper van rather than the blue tent, it's going to pour.").memory_text()
    assert "Pack the camper van" in van and "We'll" not in van, van


def test_a_person_said_again_alone_is_the_one_the_next_sentence_of_change_replaces() -> None:
    text = say("Marta Silva is coordinating the bake sale.", "Owen from the office is bringing the urn at noon.",
               "Marta's got a chest infection. Priya Shah is in charge now.").memory_text()
    assert "Priya Shah" in text and "Marta" not in text and "Owen" in text, text


def test_a_person_already_stored_replaces_no_one_ruled_out_beside_them() -> None:
    text = say("We're reading Middlemarch and Persuasion this term.", "Greta chooses the books.",
               "Greta thinks Middlemarch is too long. We're doing Cranford with Persuasion.").memory_text()
    assert "Greta" in text and "Middlemarch" not in text and "Cranford" in text and "Persuasion" in text, text


def test_a_proper_noun_ruled_out_is_replaced_by_one_read_as_a_place() -> None:
    text = say("Leo's in the Maple group at nursery.", "I got that wrong, Maple was last year. He's in Birch now.").memory_text()
    assert "Birch" in text and "Maple" not in text, text


def test_a_value_said_as_unchanged_later_in_the_turn_is_no_target_earlier_in_it() -> None:
    text = say("The rug is 2 metres long and 1 metre wide.", "I measured the hall again, we can go up to 3 metres. The width's staying at 1.").memory_text()
    assert "3 metres" in text and "1 metre" in text and "2 metres" not in text, text
    stay = say("We're at the Lakeside Inn on Friday.", "Jo's staying two nights, I'm still doing the full week.").memory_text()
    assert "two" in stay, stay  # a stay, not a value said as unchanged


def test_a_model_with_its_number_is_no_new_booking_code() -> None:
    text = say("The hire car booking is ZT5521.", "They've no estates left, so I've been moved up to a Volvo 240 now.").memory_text()
    assert "ZT5521" in text and "Volvo 240" in text, text


def test_going_with_a_thing_after_the_stored_one_ran_out() -> None:
    text = say("I'm tiling the porch in slate this spring.", "The supplier has no slate until June, so we're going with quarry tiles.").memory_text()
    assert "quarry tiles" in text and "slate" not in text.replace("no slate", ""), text


def test_a_value_said_to_be_fine_is_kept_beside_its_replaced_sibling() -> None:
    text = say("The bunting needs pink and violet ribbon.", "The pink looked too pale in the hall. Teal it is, violet's fine.").memory_text()
    assert "Teal" in text and "violet" in text, text
    assert ("crimson", "item") in read("She wants the crimson scarf.")


def test_zh_a_deed_done_again_adds_nothing() -> None:
    zh = say("阳台要刷漆，墙面大概二十平方，栏杆六米。", "我又量了一遍，墙面是二十四平方。", lang="zh").memory_text()
    assert "二十四平方" in zh and "二十平方" not in zh and "六米" in zh, zh


def test_zh_a_time_before_a_meeting_place_at_the_office_is_kept() -> None:
    zh = say("周六秋游，早上八点一刻在学校门口集合。", lang="zh").memory_text()
    assert "八点一刻" in zh and "学校门口" in zh, zh
    zh = say("周六团建，大巴早上七点在公司楼下集合。", lang="zh").memory_text()
    assert "七点" in zh, zh


def test_zh_a_count_that_says_what_it_counts_is_decided_before_a_bare_one() -> None:
    zh = say("年会一共四十个人，订了五桌。", "来的人多了，到了五十二个，桌子我加到六桌。", lang="zh").memory_text()
    assert "五十二个" in zh and "六桌" in zh and "五桌" not in zh and "四十个人" not in zh, zh


def test_a_thing_said_to_be_unchanged_keeps_its_value_by_its_key() -> None:
    text = say("Plant the beans 15 cm apart and the squash 90 cm apart.",
               "The squash label says they trail less, so 60 cm will do. Bean spacing's fine.").memory_text()
    assert "60 cm" in text and "15 cm" in text and "90 cm" not in text, text
    text = say("Nora's swim lesson is at 4:15.", "Sam has judo at 5:30.",
               "They've pulled Nora forward to 3:45 so she's home for tea. Sam's judo is where it was.").memory_text()
    assert "3:45" in text and "5:30" in text and "4:15" not in text, text


def test_zh_a_value_said_as_unchanged_is_still_a_repeat() -> None:
    zh = say("白菜苗三百棵，辣椒苗一百二十棵。", "白菜苗少种点，两百棵就行。", "辣椒苗不动，还是一百二十棵。", lang="zh").memory_text()
    assert "两百棵" in zh and "一百二十棵" in zh and "三百棵" not in zh, zh


def test_zh_a_person_said_alone_in_an_earlier_clause_is_the_one_a_change_replaces() -> None:
    zh = say("钢琴是周老师教，声乐是吴老师教。", "周老师回老家了，钢琴现在是郑老师带，声乐还是吴老师。", lang="zh").memory_text()
    assert "郑老师" in zh and "周老师" not in zh and "吴老师" in zh, zh


def test_two_colour_words_are_one_colour_and_either_names_it() -> None:
    assert ("navy blue", "item") in read("The blazer comes in navy blue.")
    text = say("The curtains are on order in navy blue.", "I switched the curtains to mustard. Navy makes the room look gloomy.").memory_text()
    assert "mustard" in text and "navy" not in text.lower(), text


def test_a_separate_one_is_another_one() -> None:
    text = say("The table is order TB-40112.", "The chairs are a separate order, TB-40157, coming Monday.").memory_text()
    assert "TB-40112" in text and "TB-40157" in text, text


def test_a_possessive_pronoun_is_no_key() -> None:
    text = say("Our locker is number 12.", "The gym code is 5521.", "They changed all the door codes, ours is 8834 now.").memory_text()
    assert "8834" in text and "5521" not in text, text


def test_a_side_said_with_its_number_is_no_unit_and_the_other_side_said_right_stays() -> None:
    text = say("The shelf recess is 85 centimetres by 30.", "Sorry, I measured it the wrong way. The recess is 95 long; the 30 depth is right.").memory_text()
    assert "95" in text and "30" in text and "85" not in text, text
    assert ("95", "number") in read("The recess is 95 long.")


def test_zh_a_value_sold_out_is_the_old_one() -> None:
    zh = say("复合地板要十二毫米厚的。", "店里说十二毫米的缺货了，那就十五毫米的。", lang="zh").memory_text()
    assert "十五毫米" in zh and "十二毫米" not in zh, zh


def test_a_name_before_has_and_a_past_participle_is_read() -> None:
    assert ("Donna", "name") in read("Donna's offered.")
    text = say("Drivers are Claire and Steve.", "Steve's van is at the menders. Donna's offered.").memory_text()
    assert "Donna" in text and "Steve" not in text and "Claire" in text, text


def test_a_statement_before_a_closing_yes_no_question_is_kept() -> None:
    text = say("My son Rory has a hearing test at 10.", "His sister Maeve needs one too, could she go right after him?").memory_text()
    assert "Maeve" in text and "Rory" in text, text


def test_a_bare_number_said_of_a_stored_time_is_that_time() -> None:
    text = say("Registration is at half eight, doors at nine.", "The hall's running late, registration's ten now.").memory_text()
    assert "ten" in text and "half eight" not in text and "nine" in text, text


def test_leaving_a_thing_behind_retracts_it_and_the_rest_is_still_said() -> None:
    text = say("The fete is on Saturday, I'm running the cake stall.", "We're taking one gazebo.", "It's going to be windy. Take the market umbrellas, we'll leave the gazebo behind.").memory_text()
    assert "gazebo" not in text and "market umbrellas" in text, text


def test_zh_the_rest_of_a_retracting_sentence_is_still_said() -> None:
    zh = say("周末带孩子去做手工，想做个风筝。", "孩子说想做纸灯笼，风筝就算了。", lang="zh").memory_text()
    assert "灯笼" in zh and "风筝" not in zh, zh


def test_a_bare_total_after_an_added_count_is_that_count() -> None:
    text = say("The quote is for eight panels and a 5 kWh battery.", "The roofer says there's space for another two panels. So ten.").memory_text()
    # "another two panels" is read as two more (10 panels); "So ten." then says that total again
    assert ("ten" in text or "10 panels" in text) and "eight panels" not in text and "5 kWh" in text, text


def test_an_amount_in_pence_keeps_its_decimals() -> None:
    assert ("27.1p", "number") in read("It's 27.1p a unit these days.")
    text = say("The unit rate is 24.5p and the standing charge is 53p.", "I was reading last year's bill. The unit rate is 27.1p now.").memory_text()
    assert "27.1p" in text and "24.5p" not in text and "53p" in text, text


def test_the_other_value_of_a_kind_changes_beside_one_said_to_stay() -> None:
    text = say("Registration is at 9:30 and the keynote is at 10:15.",
               "The caretaker can't open up early. We'll sign people in at 9:50. The keynote stays the same.").memory_text()
    assert "9:50" in text and "10:15" in text and "9:30" not in text, text


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("合同先签半年吧。", "半年"),
        ("签两年，到期再说。", "两年"),
        ("要一个半小时。", "一个半小时"),
        ("就我们俩去。", "我们俩"),
    ],
)
def test_zh_a_length_of_time_and_a_head_count_with_a_pronoun_are_counts(said: str, value: str) -> None:
    assert [(v.text, v.kind) for v in read_sentence(said, "zh").values] == [(value, "quantity")]


def test_zh_a_school_year_and_a_calendar_year_are_no_length_of_time() -> None:
    assert not [v for v in read_sentence("孩子今年上四年级了。", "zh").values if v.kind == "quantity"]
    assert not [v for v in read_sentence("2026年5月去。", "zh").values if v.kind == "quantity"]


def test_zh_a_head_count_with_a_pronoun_replaces_the_stored_count() -> None:
    state = say("我和我妈，还有周阿姨，三个人报名春游。", "周阿姨她儿子那天回来，她不去了，就我们俩。", lang="zh")
    assert "我们俩" in state.memory_text() and "三个人" not in state.memory_text(), state.memory_text()


def test_zh_a_numbered_channel_is_a_label_a_new_one_replaces() -> None:
    state = say("风扇接在继电器第三路。", "第三路的触点有点粘，风扇挪到第四路去。", lang="zh")
    assert "第四路" in state.memory_text() and "第三路" not in state.memory_text(), state.memory_text()


def test_zh_a_length_of_time_said_as_more_changes_the_stored_one() -> None:
    state = say("洗衣机买两年延保。", "洗衣机天天转，延保再多一年吧。", lang="zh")
    assert "3年" in state.memory_text() and "两年" not in state.memory_text(), state.memory_text()


@pytest.mark.parametrize("sentence", ["The second one can only be Thursday.", "We're on the 3rd floor.", "The third time was fine.", "It's his 40th birthday."])
def test_an_ordinal_before_the_noun_it_counts_is_no_date(sentence: str) -> None:
    assert not [t for t, k in read(sentence) if k == "date" and t.lower() != "thursday"], read(sentence)


@pytest.mark.parametrize("sentence,date", [("The 15th suits them better.", "The 15th"), ("Move it to the 9th instead.", "the 9th"),
                                           ("Book it for the second.", "the second"), ("It's on the 14th March.", "the 14th March")])
def test_an_ordinal_before_a_verb_an_adverb_or_a_month_is_a_date(sentence: str, date: str) -> None:
    assert (date, "date") in read(sentence), read(sentence)


def test_a_date_said_first_in_its_sentence_keeps_no_capital_word_as_its_month() -> None:
    state = say("The 15th suits them better.", "Move it to the 9th instead.")
    dates = [i.value for i in state.facts if i.kind == "date"]
    assert dates == ["the 9th"], dates  # not "The the 9th": "The" is no month
    state = say("The fair is on the 3rd of March.", "Sorry, the 13th.")
    assert [i.value for i in state.facts if i.kind == "date"] == ["the 13th of March"]


def test_a_weekday_said_in_the_plural_names_the_stored_day_with_its_part_of_the_day() -> None:
    state = say("I read with the kids on Tuesday afternoons.", "Thursdays suit me better than Tuesdays, so I've switched to Thursday afternoons.")
    dates = [i.value for i in state.facts if i.kind == "date"]
    assert dates == ["Thursday afternoons"], dates  # one day, said more closely; no second date


def test_a_day_that_replaced_another_moves_in_the_keys_that_said_it() -> None:
    state = say("The plumber can come Wednesday afternoon, put him down for Wednesday at two.", "Hmm, I'm out on Wednesday. Thursday afternoon works, same time.")
    keys = [i.key for i in state.facts if i.kind == "time"]
    assert not any("Wednesday" in k for k in keys) and any("Thursday" in k for k in keys), state.facts


def test_a_more_precise_day_said_again_is_no_refinement_of_a_day_that_was_only_added() -> None:
    state = say("Manure from Holt's Farm, six bags, Thursday morning.", "They can only do Friday, so Friday morning, and since they're coming anyway, eight bags.")
    dates = [i.value for i in state.facts if i.kind == "date"]
    assert "Friday morning" in dates and "Thursday morning" not in dates, dates


def test_a_number_before_a_place_or_thing_is_its_label_not_a_day() -> None:
    from sotto.memory.statements import read_sentence

    def kinds(sentence: str) -> dict[str, str]:
        return {v.text: v.kind for v in read_sentence(sentence, "zh").values}

    assert kinds("训练挪到五号馆。")["五号馆"] != "date"
    assert kinds("带两节五号电池。").get("五号电池") != "date" and "五号" not in kinds("带两节五号电池。")
    assert kinds("先拿九号铁练。").get("九号铁") != "date"
    assert kinds("定在五号上午。") == {"五号上午": "date"} and kinds("二十三号考试。") == {"二十三号": "date"}
    assert "date" not in kinds("投影幕得小一号。").values() and "date" not in kinds("鞋买大一号。").values()  # a size


def test_a_little_more_after_an_adjective_is_no_one_oclock() -> None:
    from sotto.memory.statements import read_sentence

    def times(sentence: str) -> list[str]:
        return [v.text for v in read_sentence(sentence, "zh").values if v.kind == "time"]

    assert times("色温想冷一点。") == [] and times("说话温柔一点。") == []
    # A verb before the adjective (调冷: the segmenter tags it a verbal noun), or heat and depth.
    assert times("空调调冷一点。") == [] and times("水烧热一点再泡。") == [] and times("颜色调浅一点。") == []
    assert times("会议一点开始。") == ["一点"] and times("下午一点见。") == ["下午一点"]


def test_one_digit_after_dian_is_a_decimal_not_a_clock_time() -> None:
    from sotto.memory.statements import read_sentence

    def values(sentence: str) -> list[tuple[str, str]]:
        return [(v.text, v.kind) for v in read_sentence(sentence, "zh").values]

    assert values("比例系数加到二点二。") == [("二点二", "number")] and values("层高零点二。") == [("零点二", "number")]
    assert values("限流调到零点九安。") == [("零点九安", "quantity")]  # a measure keeps its unit
    assert values("按三点五平米算。") == [("三点五平米", "quantity")] and values("配零点一摩尔的。") == [("零点一摩尔", "quantity")]
    assert values("早上七点二十走。") == [("早上七点二十", "time")] and values("明天八点五分出发。")[-1] == ("八点五分", "time")
    assert values("下午三点五到。") == [("下午三点五", "time")]  # a part of the day makes it a clock time


def test_pounds_and_pence_are_one_amount() -> None:
    from sotto.memory.statements import read_sentence

    assert [v.text for v in read_sentence("The vet's bill was £342.60, for the dental work.", "en").values] == ["£342.60"]
    assert [v.text for v in read_sentence("It was £1,204.50 all in.", "en").values] == ["£1,204.50"]


@pytest.mark.parametrize(
    "sentence,value,kind",
    [
        ("书房的灯亮度调到百分之六十五。", "百分之六十五", "quantity"),  # a share, not 六十五 and a stray 分之
        ("每个镜头拍四十五秒就行。", "四十五秒", "quantity"),
        ("色温设五千K，暖一点。", "五千K", "number"),
        ("她的座位是八车厢十四C。", "十四C", "number"),
        ("快递寄到七栋二单元一零三。", "七栋二单元一零三", "number"),
        ("车牌是苏B六二Q九一。", "苏B六二Q九一", "number"),
        ("狗现在十一公斤三了。", "十一公斤三", "quantity"),  # 11.3 kg, as 一米八 is 1.8 m
        ("说明书一共一百二十页。", "一百二十页", "quantity"),
        ("退烧药一次吃零点二五毫克。", "零点二五毫克", "quantity"),
        ("喇叭是四欧的。", "四欧", "quantity"),
        ("葡萄三块八一斤。", "三块八", "quantity"),  # a price a jin: not 三块 and 八一斤
    ],
)
def test_chinese_shares_seconds_codes_and_flats_are_one_value(sentence: str, value: str, kind: str) -> None:
    assert (value, kind) in read(sentence, "zh"), read(sentence, "zh")


def test_a_flat_or_building_said_alone_corrects_that_part_of_the_address() -> None:
    def numbers(*utterances: str) -> list[str]:
        return [f.value for f in say(*utterances, lang="zh").facts if f.kind == "number"]

    assert numbers("我家住九栋三零四，下午来修空调。", "是三零六，三零四是楼下。") == ["九栋三零六"]
    assert numbers("地址是幸福小区4栋2单元801。", "记错了，是6栋。") == ["6栋2单元801"]


def test_a_bare_number_parallel_to_an_amount_takes_its_unit() -> None:
    def values(sentence: str) -> list[str]:
        return [f.value for f in say(sentence).facts if f.kind != "note"]

    assert "25 kilos" in values("The big suitcase is 32 kilos and the small one about 25.")
    assert "forty minutes" in values("The talk gets fifty minutes, the panel forty.")
    assert "six pounds" in values("Adult tickets are nine pounds, children six.")
    # A number of its own subject, or a label's number, takes no unit from the amount before it.
    assert "14" in values("He weighs 50 kilos and he's 14.")
    assert "locker 12" in values("Bring 2 litres of water, and use locker 12.")


def test_a_value_put_right_at_once_is_the_one_turned_down() -> None:
    said = read("The total is forty pounds... no, forty-five.")
    assert said[0] == ("forty pounds", "quantity")
    from sotto.memory.statements import read_sentence

    first, second = read_sentence("The total is forty pounds... no, forty-five.", "en", frozenset()).values
    assert first.negated and not second.negated
    assert [f.value for f in say("Pickup is Saturday, no, Sunday.").facts if f.kind == "date"] == ["Sunday"]


@pytest.mark.parametrize(
    "sentence,value",
    [
        ("We'll need three and a half metres of the oak trim.", "three and a half metres"),
        ("The drive there is 2 and a half hours.", "2 and a half hours"),
        ("Top up tank three one and a half litres.", "one and a half litres"),  # "tank three" labels the tank
    ],
)
def test_a_number_and_a_half_with_its_unit_is_one_amount(sentence: str, value: str) -> None:
    assert (value, "quantity") in read(sentence), read(sentence)


def test_a_surname_and_a_given_name_the_segmenter_tags_otherwise_are_one_name() -> None:
    from sotto.memory.statements import read_sentence

    # jieba cuts 李浩然 into 李 (a surname) and 浩然 (an adjective).
    names = [v.text for v in read_sentence("李浩然下周出差，值班换成孙丽。", "zh").values if v.kind == "name"]
    assert names == ["李浩然", "孙丽"], names


def test_words_that_rule_a_day_out_describe_it_when_a_relative_clause_follows() -> None:
    from sotto.memory.statements import read_sentence

    def negated(sentence: str) -> dict[str, bool]:
        return {v.text: v.negated for v in read_sentence(sentence, "zh").values}

    assert negated("下周值班的是李浩然。")["下周"] is False  # who is on duty then
    assert negated("周六我值班，改周日吧。")["周六"] is True  # the day ruled out


@pytest.mark.parametrize(
    "sentence,value",
    [
        ("订三箱矿泉水，周五送。", "三箱矿泉水"),
        ("再加两瓶洗洁精。", "两瓶洗洁精"),
        ("买两斤牛里脊。", "两斤牛里脊"),
        ("四档风太大。", "四档风"),  # jieba's 风太 holds 太: no noun to finish
    ],
)
def test_the_thing_a_chinese_count_counts_is_never_cut_inside_its_word(sentence: str, value: str) -> None:
    assert (value, "quantity") in read(sentence, "zh"), read(sentence, "zh")


def test_half_of_something_is_a_share_not_a_value() -> None:
    assert read("Half the choir has the flu.") == [], read("Half the choir has the flu.")
    assert ("half", "number") in read("Make it half.")
    facts = [f.value for f in say("We take six trays of scones to the fete.", "Half of them always come back unsold.").facts]
    assert "six trays" in facts, facts
