"""How a value is said, in the fifteenth round: a value said twice in one sentence is decided
at its last saying; a later sentence that keeps another value as it is does not hold back the
change said before it; a total said with a change replaces the count the change leads from;
thousands said in words are an amount; a cue without a key changes the value the turn's earlier
sentence names; a value said as confirmed, or listed with the new one, is not replaced; a name
typed wrong (打错了) is respelled; 老大 and 老二 are children, and a person's value is the one said
in the turn that named them."""

from __future__ import annotations

import pytest

from test_memory_update import say

from sotto.memory.language import has_admission
from sotto.memory.statements import read_sentence
from sotto.memory.update import later_kinds_of


@pytest.mark.parametrize(
    ("first", "then", "old", "new", "lang"),
    [
        ("Book the boiler service for Tuesday at 10 am.", "The engineer's only got 11 o'clock open that morning, so put us down for 11 o'clock.", "10 am", "11 o'clock", "en"),
        ("The delivery slot is Monday.", "The driver only has Wednesday left this week, so Wednesday it is.", "Monday", "Wednesday", "en"),
        ("体检约在周二。", "医院说周四人少一点，那就改周四吧。", "周二", "周四", "zh"),
    ],
)
def test_a_value_said_twice_is_decided_at_its_last_saying(first: str, then: str, old: str, new: str, lang: str) -> None:
    text = say(first, then, lang=lang).memory_text()
    assert new in text and old not in text.replace(new, ""), text


def test_a_later_saying_that_only_agrees_does_not_decide() -> None:
    # "Friday's fine for him too" agrees with the Friday just chosen; it does not keep the old day.
    text = say("Put the haircut down for Thursday.", "Thursday's gone now, Friday would work, and Raj says Friday's fine for him too.").memory_text()
    assert "Friday" in text and "Thursday" not in text.replace("Friday", ""), text


@pytest.mark.parametrize(("later", "kinds"), [("九点到会场不变。", frozenset()), ("九点到会场。", frozenset({"time"})), ("五点就走。", frozenset())])
def test_a_later_sentence_gives_a_kind_only_with_a_new_value(later: str, kinds: frozenset[str]) -> None:
    # 九点 said as unchanged gives no time; 五点 said again is this sentence's own value.
    now = read_sentence("怕路上堵，五点就走。", "zh")
    assert later_kinds_of(now, [read_sentence(later, "zh")]) == kinds


def test_a_total_after_a_change_replaces_the_count_it_leads_from() -> None:
    # 12 + 3 = 15: the people's count changes, not the "Two" said of the grabbers.
    text = say("The beach clean has 12 people signed up.", "Two of them are bringing the grabbers.", "Three more signed up today, so make that fifteen.").memory_text()
    assert "fifteen" in text and "12 people" not in text and "Two" in text, text


def test_thousands_said_in_words_are_an_amount() -> None:
    text = say("We drive about 8,000 miles a year.", "With the new job it's more like ten thousand a year.").memory_text()
    assert "ten thousand" in text and "8,000" not in text, text


def test_the_turns_earlier_sentence_says_whose_value_a_cue_changes() -> None:
    # "Shift them" says no key; the sentence before it names the choir, so the choir's 6 pm moves, not the band's 8.
    text = say("Book the choir's rehearsal room for 6 pm on Tuesday.", "The brass band has it at 8.", "Half the choir can't get there from work by then. Shift them to 6:45.").memory_text()
    assert "6:45" in text and "6 pm" not in text and '"8"' in text, text


def test_a_person_said_as_confirmed_is_not_the_one_replaced() -> None:
    text = say("The two readers at the launch are Imogen and Felix.", "Felix's publisher pulled him. We've got Rhona instead, Imogen's confirmed.").memory_text()
    assert "Rhona" in text and "Imogen" in text and "Felix" not in text, text


def test_a_name_typed_wrong_is_the_name_spelled_again() -> None:
    # 打错了 owns up to a slip; 李秀芳 respells 李秀芬, the aunt (姑姑) herself stays.
    text = say("登记的联系人是我姑姑，叫李秀芬。", "姑姑名字我打错了，是李秀芳。", lang="zh").memory_text()
    assert "李秀芳" in text and "李秀芬" not in text and "姑姑" in text, text


def test_a_value_listed_with_the_new_one_stays() -> None:
    text = say("The kit colours are red and black.", "After the vote it's red and white from now on.").memory_text()
    assert "red" in text and "white" in text and "black" not in text, text


@pytest.mark.parametrize(("text", "value", "kind"), [("老大下午三点上钢琴课。", "下午三点", "time"), ("老二小雨也报了个画画。", "小雨", "name")])
def test_elder_and_second_child_are_no_counts(text: str, value: str, kind: str) -> None:
    # 老大, 老二 name a family's children: 大 before 下午三点 is no "a bit bigger", 二 before 小雨 counts nothing.
    read = [(v.text, v.kind) for v in read_sentence(text, "zh").values]
    assert (value, kind) in read and not any(k == "quantity" for _, k in read), read


def test_a_persons_value_is_the_one_said_in_the_turn_that_named_them() -> None:
    text = say("老大下午三点上钢琴课。", "老二小雨也报了个画画，约的四点半。", "刚接到电话，小雨的改成五点了。", lang="zh").memory_text()
    assert "五点" in text and "四点半" not in text and "下午三点" in text, text


def test_a_make_said_with_its_number_is_a_name_like_another_make() -> None:
    text = say("Recover the pool table in Milliken 760 baize.", "The committee balked at the price, they've gone for Simonis Smart instead.").memory_text()
    assert "Simonis Smart" in text and "Milliken 760" not in text, text


@pytest.mark.parametrize("text", ["Hang on, I misread it.", "Hiya, I want to book a table.", "Grabbing the 1 kilo steel one off the shelf."])
def test_an_opening_word_is_no_name(text: str) -> None:
    # A discourse opener ("Hang on", "Hiya") or a verb with its consonant doubled ("Grabbing") starts the sentence; no one is named.
    assert not any(v.kind == "name" for v in read_sentence(text, "en").values), [(v.text, v.kind) for v in read_sentence(text, "en").values]


def test_a_count_said_by_the_first_word_of_its_noun_is_the_same_count() -> None:
    # "doubles" is short for "double rooms": the same count, changed.
    text = say("Please book 3 double rooms for the wedding.", "More family are coming, so we need five doubles.").memory_text()
    assert "five doubles" in text and "3 double rooms" not in text, text


@pytest.mark.parametrize(("text", "owned"), [("I got his weight wrong, the scales say 24 kilos.", True), ("I had my mum's number wrong.", True), ("I got her coat from the car.", False)])
def test_owning_up_to_a_possessed_thing(text: str, owned: bool) -> None:
    assert has_admission(text, "en") == owned
