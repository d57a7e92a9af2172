"""Counts and amounts in the fourteenth round: totals said without their noun or alone in a
clause, counts of another noun weighed by the fitted step, plurals folded, prices kept apart
from measures, and readings ("a thousand points", "open till 9", "220 seeing as")."""

from __future__ import annotations

import pytest

from test_memory_update import say

from sotto.memory.replace_model import ReplaceModel
from sotto.memory.statements import read_sentence
from sotto.memory.text import stem


def _read(text: str, lang: str = "en") -> list[tuple[str, str]]:
    return [(v.text, v.kind) for v in read_sentence(text, lang).values]


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("Put me in the league at a thousand points.", "a thousand points", "quantity"),
        ("We'll want a hundred and twenty programmes printed.", "a hundred and twenty programmes", "quantity"),
        ("The depot stays open till 8 on Fridays.", "8", "time"),
        ("Eight folding chairs for the hall.", "Eight folding chairs", "quantity"),
    ],
)
def test_readings_of_counts_and_times(text: str, value: str, kind: str) -> None:
    assert (value, kind) in _read(text), _read(text)


@pytest.mark.parametrize("text", ["Prices are up to 340 seeing as fuel went up.", "They want 25 helping on the day."])
def test_a_verb_after_a_number_is_not_what_it_counts(text: str) -> None:
    assert not any(kind == "quantity" for _, kind in _read(text)), _read(text)


def test_plurals_fold_to_one_stem() -> None:
    assert stem("tube") == stem("tubes") and stem("case") == stem("cases") and stem("glass") == stem("glasses")
    assert stem("mattress") == stem("mattresses") and stem("mattress") != stem("mat")


def test_one_more_of_the_same_noun_in_the_singular_and_plural() -> None:
    text = say("Order one crate of cider for the fete.", "The darts club is coming too, so two crates.").memory_text()
    assert "two crates" in text and "one crate" not in text, text


def test_a_total_without_its_noun_counts_what_was_counted() -> None:
    text = say("The choir has 48 singers on the list, rehearsal is at 7 pm.", "Three dropped out over the summer, we're down to 45.").memory_text()
    assert "45" in text and "48" not in text and "7 pm" in text, text


def test_a_count_alone_in_its_clause_after_someone_joins_is_the_total() -> None:
    zh = say("周末自驾去千岛湖，我们三个人。", "我同事也想去，五个人。", lang="zh").memory_text()
    assert "五个人" in zh and "三个人" not in zh, zh


def test_a_count_in_a_list_of_settings_is_not_a_total() -> None:
    zh = say("一号炉烤面包，两百度。", "另外三号炉烤饼干，上下火，一百八十度。", lang="zh").memory_text()
    assert "两百度" in zh and "一百八十度" in zh, zh


def test_a_change_said_after_the_total_does_not_hold_the_total_back() -> None:
    text = say("I'm running the school craft fair.", "Twelve stalls are booked so far.", "Fourteen stalls, the bakery is bringing two more.").memory_text()
    assert "Fourteen stalls" in text and "Twelve stalls" not in text, text


def test_a_price_never_replaces_a_measure() -> None:
    text = say("They'll cut the hedge down to 2 metres.", "The quote was £300 including clearing the cuttings.").memory_text()
    assert "2 metres" in text and "£300" in text, text


@pytest.mark.parametrize(("weight", "replaced"), [(6.0, True), (-6.0, False)])
def test_a_count_of_another_noun_is_weighed_by_the_fitted_step(monkeypatch: pytest.MonkeyPatch, weight: float, replaced: bool) -> None:
    from sotto.memory import replace_model

    fake = ReplaceModel(weights={"other_noun": weight}, bias=-1.0, threshold=0.5)  # a fake: only this feature speaks
    monkeypatch.setattr(replace_model, "load", lambda: fake)
    text = say("We're hiring 60 headphones for the silent disco.", "More people are coming, we'll need 85 headsets.").memory_text()
    assert "85 headsets" in text and ("60 headphones" not in text) == replaced, text


def test_a_value_is_about_what_its_turn_said() -> None:
    # The 8:10's own clause says only where and when; its turn says what it is for (the blood test).
    text = say("The scan is booked for the 12th, 7:50 in the evening.", "Dr Shah wants a blood test first, at the health centre on Thursday at 8:10.",
               "The nurse is off sick, so the blood test's at 8:45 now.").memory_text()
    assert "8:45" in text and "8:10" not in text and "7:50" in text, text


@pytest.mark.parametrize("text", ["I always get those two buses muddled.", "I get confused with the dates.", "I keep getting the two codes mixed up."])
def test_owning_up_to_a_muddle_is_an_admission(text: str) -> None:
    from sotto.memory.language import EN_ADMISSIONS

    assert EN_ADMISSIONS.search(text), text


@pytest.mark.parametrize("text", ["I get up at 6 on weekdays.", "I got up late on Sunday.", "I keep getting up at night with the baby."])
def test_getting_up_is_no_admission(text: str) -> None:
    from sotto.memory.language import EN_ADMISSIONS

    assert not EN_ADMISSIONS.search(text), text


def _counts(state) -> list[str]:  # type: ignore[no-untyped-def]
    return [i.value for i in state.facts if i.kind == "quantity"]


def test_again_before_the_verb_that_brings_a_count_adds_to_the_stored_count() -> None:
    # 又 + verb + count is "more"; 又是 + count is the same count said again.
    assert "15张照片" in _counts(say("一共十二张照片要修。", "我妈又翻出来三张，一块儿修了。", lang="zh"))
    assert "5盆花" in _counts(say("我们买了三盆花。", "下午又要两盆。", lang="zh"))
    counts = _counts(say("我们买了三盆花。", "又是三个人来。", lang="zh"))
    assert "三盆花" in counts, counts


def test_people_named_by_their_noun_count_as_the_people_stored() -> None:
    counts = _counts(say("她们队一共八个人。", "又有两个阿姨加进来了。", lang="zh"))
    assert "10个人" in counts and "八个人" not in counts, counts


def test_a_measure_word_of_strings_and_bundles_counts() -> None:
    assert "30挂" in _counts(say("鞭炮订了二十挂。", "鞭炮再加十挂。", lang="zh"))


def test_together_is_no_count_of_kuai() -> None:
    assert not [t for t, k in _read("我们一块儿去吧。", "zh") if k == "quantity"]


def test_an_amount_said_per_measure_word_is_a_price_not_a_count_of_people() -> None:
    state = say("她们队一共八个人。", "队服是统一买的，一套一百三，球拍用她自己那副就行。", lang="zh")
    assert "八个人" in _counts(state), state.facts
    assert any(i.value == "一百三" for i in state.facts)


@pytest.mark.parametrize("text,value", [("Add another 40 to ours.", "another 40"), ("Put in a further 30 bags.", "a further 30 bags")])
def test_another_number_is_a_change_of_a_count(text: str, value: str) -> None:
    values = [(v.text, v.delta) for v in read_sentence(text, "en").values]
    assert (value, True) in values, values


def test_another_number_said_of_one_order_adds_to_that_order() -> None:
    state = say("Two bread orders: the bakery wants 60 rolls on Friday.", "The other is the cafe on Mill Street, 25 on Saturday.",
                "The bakery's got a party on, so add another 40 to theirs.")
    counts = [i.value for i in state.facts if i.kind in ("quantity", "number")]
    assert "100 rolls" in counts and "60 rolls" not in counts and "25" in counts, counts
