"""Recall answers chosen by asks: parts, subjects, follow-ups, labels, "the other one".

Each mechanism is tested on a state of hand-made items (the selection alone, whatever
keys the memory writes) and, where it matters, through the rules end to end. The
conversations are our own; none comes from an eval script.
"""

from __future__ import annotations

from sotto.agent.compose import compose_reply
from sotto.agent.recall import Ask, RecallThread, choose, question_asks
from sotto.agent.router import MEMORY, route_turn
from sotto.memory.items import KIND_DATE, KIND_ITEM, KIND_NAME, KIND_NOTE, KIND_NUMBER, KIND_PLACE, KIND_QUANTITY, KIND_TIME, Item
from sotto.memory.rules import extract
from sotto.memory.state import SessionState


def _state(*items: Item) -> SessionState:
    state = SessionState()
    state.facts = list(items)
    return state


def _ask(state: SessionState, question: str, thread: RecallThread | None = None) -> tuple[str, SessionState]:
    rules = extract(question, state)
    assert rules.question and rules.state is not None
    return " ".join(compose_reply(rules.state, question, rules, thread=thread)), rules.state


def _talk(lines: list[str]) -> list[str]:
    """Replies to a conversation run through the rules, one recall thread for the session."""
    state, thread, replies = SessionState(), RecallThread(), []
    for turn, words in enumerate(lines, 1):
        rules = extract(words, state, turn=turn)
        assert rules.state is not None
        state = rules.state
        replies.append(" ".join(compose_reply(state, words, rules, thread=thread)))
    return replies


# ------------------------------------------------------------------ a question in parts


def test_a_question_in_two_parts_gets_both_answers() -> None:
    state = _state(
        Item(key="vet appointment", value="Thursday", kind=KIND_DATE, turn=1),
        Item(key="vet appointment Thursday", value="10 am", kind=KIND_TIME, turn=1),
        Item(key="cat weighs", value="six kilos", kind=KIND_QUANTITY, turn=2),
    )
    reply, _ = _ask(state, "What time is the vet, and how many kilos does the cat weigh?")
    assert "10 am" in reply and "six kilos" in reply.lower()


def test_chinese_parts_split_at_the_question_mark() -> None:
    state = _state(
        Item(key="份 炒饭", value="三份", kind=KIND_QUANTITY, turn=1),
        Item(key="取餐", value="下午五点", kind=KIND_TIME, turn=2),
    )
    reply, _ = _ask(state, "炒饭订了几份？几点去取？")
    assert "三份" in reply and "五点" in reply


def test_day_and_time_asked_together_are_both_answered() -> None:
    # The time is keyed by its day ("Monday"), said in another turn than the day itself.
    state = _state(
        Item(key="tyres fitted", value="Monday", kind=KIND_DATE, turn=3),
        Item(key="Monday", value="quarter to five", kind=KIND_TIME, turn=4),
    )
    reply, _ = _ask(state, "So which day and what time am I booked for?")
    assert "Monday" in reply and "quarter to five" in reply


# ------------------------------------------------------------------ the subject named


def test_a_bare_subject_takes_the_kinds_of_the_part_after_it() -> None:
    state = _state(
        Item(key="Tom lesson", value="Monday", kind=KIND_DATE, turn=1),
        Item(key="Tom lesson Monday", value="4 pm", kind=KIND_TIME, turn=1),
        Item(key="Anna lesson", value="Wednesday", kind=KIND_DATE, turn=2),
        Item(key="Anna lesson Wednesday", value="6 pm", kind=KIND_TIME, turn=2),
    )
    asks = question_asks("And Anna? What day and time?")
    assert len(asks) == 1 and asks[0].day_and_time and "anna" in asks[0].subject
    reply, _ = _ask(state, "And Anna? What day and time?")
    assert "Wednesday" in reply and "6 pm" in reply and "Monday" not in reply


def test_a_follow_up_with_a_new_subject_answers_for_that_subject() -> None:
    # The last question asked a time; the follow-up names a thing whose value is a day.
    state = _state(
        Item(key="gravel delivery", value="8 am", kind=KIND_TIME, turn=1),
        Item(key="slabs coming", value="Tuesday", kind=KIND_DATE, turn=2),
    )
    state.last_topic = KIND_TIME
    reply, _ = _ask(state, "And the slabs?")
    assert reply == "On Tuesday."


def test_chinese_follow_up_names_the_person() -> None:
    state = _state(
        Item(key="副 我的", value="五副", kind=KIND_QUANTITY, turn=1),
        Item(key="副 老伴的", value="八副", kind=KIND_QUANTITY, turn=1),
        Item(key="来取", value="四点", kind=KIND_TIME, turn=2),
    )
    state.last_topic = KIND_TIME
    reply, _ = _ask(state, "那老伴的呢？")
    assert "八副" in reply and "四点" not in reply


def test_a_follow_up_about_nothing_stored_falls_back_to_the_kind_asked() -> None:
    state = _state(Item(key="heating comes on", value="half six", kind=KIND_TIME, turn=1))
    state.last_topic = KIND_TIME
    reply, _ = _ask(state, "And in the mornings?")
    assert "half six" in reply


# ------------------------------------------------------------------ labels and prices


def test_a_chinese_label_selects_the_value_that_carries_it() -> None:
    state = _state(
        Item(key="送到星光大厦", value="C座", kind=KIND_NUMBER, turn=1),
        Item(key="送到星光大厦", value="18楼", kind=KIND_NUMBER, turn=1),
        Item(key="苹果", value="十斤", kind=KIND_QUANTITY, turn=2),
    )
    reply, _ = _ask(state, "送到几楼？")
    assert "18楼" in reply and "十斤" not in reply and "C座" not in reply


def test_an_english_label_selects_the_value_that_carries_it() -> None:
    state = _state(
        Item(key="scooter service", value="Friday", kind=KIND_DATE, turn=1),
        Item(key="mum lives", value="flat 9", kind=KIND_NUMBER, turn=2),
        Item(key="bin night", value="Tuesday nights", kind=KIND_DATE, turn=3),
    )
    state.last_topic = KIND_DATE
    assert _ask(state, "And her flat number?")[0] == "Flat 9."
    assert "Tuesday nights" in _ask(state, "Which night do the bins go out?")[0]


def test_a_price_answers_how_much_and_not_how_many() -> None:
    state = _state(
        Item(key="把 菜刀", value="一把菜刀", kind=KIND_QUANTITY, turn=1),
        Item(key="块 菜刀", value="十块", kind=KIND_QUANTITY, turn=1),
    )
    assert "十块" in _ask(state, "菜刀多少钱？")[0]
    state = _state(
        Item(key="scones each", value="fifty pence", kind=KIND_QUANTITY, turn=1),
        Item(key="scones baking", value="30 scones", kind=KIND_QUANTITY, turn=2),
    )
    assert "30 scones" in _ask(state, "How many scones am I baking?")[0]
    assert "fifty pence" in _ask(state, "How much are the scones?")[0].lower()


def test_a_value_that_only_names_the_subject_does_not_answer() -> None:
    state = _state(
        Item(key="bringing", value="Priya", kind=KIND_NAME, turn=1),
        Item(key="lunch", value="Priya's bringing a lentil salad", kind=KIND_NOTE, turn=1),
    )
    reply, _ = _ask(state, "What's Priya bringing?")
    assert "lentil salad" in reply


def test_a_word_inside_a_stored_compound_is_a_mention() -> None:
    state = _state(
        Item(key="hire photobooth", value="Saturday", kind=KIND_DATE, turn=1),
        Item(key="starts", value="9 pm", kind=KIND_TIME, turn=2),
    )
    rules = extract("What time does the booth start?", state)
    assert route_turn("What time does the booth start?", rules, state).name == MEMORY


# ------------------------------------------------------------------ the other one


def test_the_other_one_asks_the_last_question_for_the_value_not_given() -> None:
    state = _state(
        Item(key="Ella tablet locks", value="8:45", kind=KIND_TIME, turn=1),
        Item(key="Max tablet locks", value="7:30", kind=KIND_TIME, turn=1),
        Item(key="Max tablet", value="silver", kind=KIND_PLACE, turn=2),
    )
    thread = RecallThread()
    first, state = _ask(state, "What time does Ella's tablet lock?", thread)
    assert "8:45" in first and thread.answered and thread.answered[0].value == "8:45"
    other, _ = _ask(state, "And the other one?", thread)
    assert "7:30" in other and "8:45" not in other


def test_chinese_the_other_one_and_mine() -> None:
    state = _state(
        Item(key="给我弟的寄到", value="成都武侯区", kind=KIND_PLACE, turn=1),
        Item(key="给我同事的寄到", value="杭州西湖区", kind=KIND_PLACE, turn=2),
        Item(key="爸爸理发", value="七点", kind=KIND_TIME, turn=3),
        Item(key="理发 我", value="六点四十", kind=KIND_TIME, turn=3),
    )
    thread = RecallThread()
    first, state = _ask(state, "给我弟的寄到哪儿？", thread)
    assert "成都" in first and "杭州" not in first
    other, state = _ask(state, "那另一个呢？", thread)
    assert "杭州" in other and "成都" not in other
    dad, state = _ask(state, "爸爸几点理发？", thread)
    assert "七点" in dad
    mine, _ = _ask(state, "那我呢？", thread)
    assert "六点四十" in mine and "七点" not in mine


def test_the_other_one_never_names_a_replaced_value() -> None:
    replies = _talk([
        "Book a table for six at Nico's on Friday.",
        "Actually make that eight people.",
        "How many people is the table for?",
        "And the other one?",
    ])
    assert "eight" in replies[2].lower() and "six" not in replies[2].lower()
    assert "six" not in replies[3].lower()


def test_without_a_thread_the_other_one_still_answers_by_kind() -> None:
    state = _state(Item(key="pickup", value="5 pm", kind=KIND_TIME, turn=1))
    state.last_topic = KIND_TIME
    assert "5 pm" in _ask(state, "And the other one?")[0]


def test_ties_from_different_turns_are_not_both_spoken() -> None:
    # Two equal times from two turns: the newer is said, not both (one may have replaced the other).
    state = _state(
        Item(key="swim lesson", value="4:15", kind=KIND_TIME, turn=1),
        Item(key="swim lesson", value="5:40", kind=KIND_TIME, turn=4),
    )
    assert choose(state, Ask("What time is the swim lesson?", (KIND_TIME, KIND_DATE), frozenset({"swim", "lesson"}))) == [state.facts[1]]


# ------------------------------------------------------------------ routing and notes


def _route(state: SessionState, question: str) -> str:
    rules = extract(question, state)
    assert rules.state is not None
    return route_turn(question, rules, rules.state, model_does=lambda lang: True).name


def test_a_follow_up_goes_to_memory_even_when_the_last_question_asked_no_kind() -> None:
    state = _state(Item(key="parents room", value="216", kind=KIND_NUMBER, turn=1))
    assert _route(state, "And mine?") == MEMORY
    assert _route(state, "And what's the capital of Peru?") != MEMORY


def test_a_name_the_user_told_us_makes_it_a_memory_question() -> None:
    state = _state(Item(key="meals", value="Carlos wants the lamb, I'll have the risotto", kind=KIND_NOTE, turn=1))
    assert _route(state, "What's Carlos eating?") == MEMORY
    assert _route(state, "What do Pandas eat?") != MEMORY
    assert "lamb" in _ask(state, "What's Carlos eating?")[0]


def test_two_in_three_question_words_in_an_item_make_it_a_memory_question() -> None:
    state = _state(Item(key="tablet", value="Max is on the silver tablet, the old one", kind=KIND_NOTE, turn=1))
    assert _route(state, "Which tablet is Max using?") == MEMORY


def test_a_note_answer_speaks_the_clause_about_the_subject() -> None:
    # The first clause holds a value that a later turn replaced; it is not replayed.
    state = _state(Item(key="events", value="哥哥报八百米，妹妹报跳绳", kind=KIND_NOTE, turn=1))
    reply, _ = _ask(state, "妹妹报的什么项目？")
    assert "跳绳" in reply and "八百米" not in reply
    state = _state(Item(key="engraving", value="Engraving inside the ring, A and R", kind=KIND_NOTE, turn=1))
    assert "A and R" in _ask(state, "What's the engraving inside the ring?")[0]


def test_a_time_for_a_day_gives_way_only_to_a_time_for_no_day() -> None:
    general = Item(key="school lets out", value="3:15", kind=KIND_TIME, turn=1)
    wednesday = Item(key="school Wednesdays", value="1:30", kind=KIND_TIME, turn=2)
    assert "3:15" in _ask(_state(general, wednesday), "What time does school let out?")[0]
    assert "1:30" in _ask(_state(general, wednesday), "What time on Wednesdays?")[0]
    # Only a time for a day is stored: a question naming no day still gets it.
    state = _state(
        Item(key="appointment", value="this morning", kind=KIND_DATE, turn=3),
        Item(key="Monday the 14th", value="9:30", kind=KIND_TIME, turn=2),
    )
    assert "9:30" in _ask(state, "What time, and how many payslips?")[0]


def test_one_question_word_over_two_things_asks_both() -> None:
    state = _state(
        Item(key="strap", value="tan", kind=KIND_ITEM, turn=1),
        Item(key="strap width", value="18 millimetres", kind=KIND_QUANTITY, turn=1),
        Item(key="battery", value="£12", kind=KIND_QUANTITY, turn=2),
    )
    asks = question_asks("And the strap, what colour and width?")
    assert [a.kinds[0] for a in asks] == [KIND_ITEM, KIND_QUANTITY]
    reply, _ = _ask(state, "And the strap, what colour and width?")
    assert "tan" in reply.lower() and "18 millimetres" in reply
    # "what day and time" stays one ask: a day with its time.
    assert len(question_asks("What day and time is it?")) == 1


# ------------------------------------------------------------------ which item answers a question asking no kind


def test_a_value_keyed_by_the_subject_beats_a_note_that_repeats_it() -> None:
    # "Which locker?": the number keyed "locker" answers; the note only says a locker was given.
    state = _state(
        Item(key="gym locker", value="They gave me a locker at the gym", kind=KIND_NOTE, turn=1),
        Item(key="locker", value="B-117", kind=KIND_NUMBER, turn=2),
    )
    reply, _ = _ask(state, "Which locker have I got?")
    assert "B-117" in reply
    # But "What cheese?" asks which cheese (the note's words), not how much of it or its colour ...
    state = _state(
        Item(key="grams smoked cheddar cheese", value="300 grams", kind=KIND_QUANTITY, turn=1),
        Item(key="smoked cheddar cheese", value="orange", kind=KIND_ITEM, turn=1),
        Item(key="cheese", value="300 grams of the orange smoked cheddar cheese", kind=KIND_NOTE, turn=1),
    )
    reply, _ = _ask(state, "What cheese am I picking up?")
    assert "cheddar" in reply
    # ... and "Which knee?" is not the surgeon's name, though the name was said with the knee.
    state = _state(
        Item(key="Surgery left knee hospital", value="Mr Osei", kind=KIND_NAME, turn=1),
        Item(key="Surgery left knee", value="Surgery on my left knee with Mr Osei at St Mary's", kind=KIND_NOTE, turn=1),
    )
    reply, _ = _ask(state, "Which knee is it?")
    assert "left" in reply


def test_which_one_of_a_kind_of_person_asks_for_a_name() -> None:
    state = _state(
        Item(key="订的阿姨", value="李秀英", kind=KIND_NAME, turn=1),
        Item(key="订的阿姨", value="订的阿姨是李秀英，住家的", kind=KIND_NOTE, turn=1),
    )
    reply, _ = _ask(state, "订的是哪个阿姨？")
    assert reply == "李秀英。"


def test_a_follow_up_with_its_own_question_word_asks_for_itself() -> None:
    # "And what's Jonah making?" after a time question asks what, not when; "my brother"
    # is Jonah, the person asked about, not what he makes.
    state = _state(
        Item(key="party starts", value="7 pm", kind=KIND_TIME, turn=1),
        Item(key="Jonah", value="my brother", kind=KIND_NAME, turn=2),
        Item(key="Jonah said he'd trifle", value="Jonah said he'd do the trifle", kind=KIND_NOTE, turn=3),
        Item(key="Jonah arrives", value="8 pm", kind=KIND_TIME, turn=3),
    )
    thread = RecallThread()
    _ask(state, "What time does the party start?", thread)
    state.last_topic = KIND_TIME
    reply, _ = _ask(state, "And what's Jonah making?", thread)
    assert "trifle" in reply


def test_called_asks_for_names_and_both_said_together_are_given() -> None:
    state = _state(
        Item(key="goldfish", value="three goldfish", kind=KIND_QUANTITY, turn=1),
        Item(key="goldfish tank", value="Bubbles", kind=KIND_NAME, turn=1),
        Item(key="goldfish tank", value="Nemo", kind=KIND_NAME, turn=1),
    )
    reply, _ = _ask(state, "What are the goldfish called?")
    assert "Bubbles" in reply and "Nemo" in reply


def test_plural_days_and_a_deadline_ask_for_a_day() -> None:
    state = _state(
        Item(key="swimming lessons", value="Tuesdays", kind=KIND_DATE, turn=1),
        Item(key="swimming lessons", value="the green hat", kind=KIND_ITEM, turn=2),
        Item(key="swimming kit", value="2 towels", kind=KIND_QUANTITY, turn=3),
        Item(key="form back", value="the 12th", kind=KIND_DATE, turn=4),
    )
    reply, _ = _ask(state, "Which days are the swimming lessons?")
    assert "Tuesdays" in reply
    reply, _ = _ask(state, "And what's the deadline for the form?")
    assert "12th" in reply


def test_an_id_word_asks_for_a_number_and_a_numbered_building_is_not_a_date() -> None:
    state = _state(
        Item(key="van hire", value="Saturday", kind=KIND_DATE, turn=1),
        Item(key="van's reg", value="LK21 WXP", kind=KIND_NUMBER, turn=2),
    )
    reply, _ = _ask(state, "What's the van's registration?")
    assert "LK21 WXP" in reply
    state = _state(
        Item(key="体检", value="周五上午", kind=KIND_DATE, turn=1),
        Item(key="体检在", value="3号楼", kind=KIND_NUMBER, turn=2),
    )
    reply, _ = _ask(state, "体检在几号楼？")
    assert "3号楼" in reply


def test_the_start_of_a_range_is_not_its_end() -> None:
    state = _state(
        Item(key="studio booked", value="10 am", kind=KIND_TIME, turn=1),
        Item(key="studio booked until", value="2 pm", kind=KIND_TIME, turn=1),
        Item(key="finish", value="3 pm", kind=KIND_TIME, turn=2),
    )
    reply, _ = _ask(state, "When does my studio session start?")
    assert "10 am" in reply


def test_a_second_part_without_a_subject_asks_about_the_first_parts() -> None:
    state = _state(
        Item(key="collecting keys from", value="Mrs Patel", kind=KIND_NAME, turn=1),
        Item(key="collecting keys from", value="at the side door", kind=KIND_PLACE, turn=1),
        Item(key="bins", value="behind the garage", kind=KIND_PLACE, turn=2),
    )
    reply, _ = _ask(state, "Who am I collecting the keys from, and where?")
    assert "Mrs Patel" in reply and "side door" in reply


def test_a_chinese_word_inside_a_longer_stored_word_is_a_mention() -> None:
    state = _state(
        Item(key="球鞋子", value="四十二码", kind=KIND_NUMBER, turn=1),
        Item(key="校服裤子", value="一百四十码", kind=KIND_NUMBER, turn=2),
    )
    reply, _ = _ask(state, "鞋买什么码？")
    assert "四十二码" in reply


def test_the_kinds_a_question_word_asks_for_route_it_to_memory() -> None:
    # "Which night": a day, asked in the first person, so only the user could have told us.
    state = _state(Item(key="quiz team", value="Wednesday", kind=KIND_DATE, turn=1))
    assert _route(state, "Which night am I going?") == MEMORY


def test_a_measure_asked_wants_its_unit() -> None:
    # "How heavy?" wants the grams, not the degrees said later; a bare number is not ruled out.
    state = _state(
        Item(key="grams weighed", value="340 grams", kind=KIND_QUANTITY, turn=1),
        Item(key="degrees oven", value="180 degrees", kind=KIND_QUANTITY, turn=2),
    )
    reply, _ = _ask(state, "How heavy was the loaf?")
    assert "340 grams" in reply
    reply, _ = _ask(state, "那个面包多重来着？")
    assert "340 grams" in reply


def test_a_chinese_label_outweighs_the_order_of_the_kinds_asked() -> None:
    # 几座 asks for the seats (a number carrying 座), not the party size said about the car.
    state = _state(
        Item(key="个人 包车坐", value="五个人", kind=KIND_QUANTITY, turn=1),
        Item(key="越野", value="九座", kind=KIND_NUMBER, turn=2),
    )
    reply, _ = _ask(state, "包车是几座的？")
    assert reply == "九座。"


def test_plural_dates_are_the_days_said_together() -> None:
    state = _state(
        Item(key="holiday", value="the 3rd", kind=KIND_DATE, turn=1),
        Item(key="cottage booked from", value="the 18th", kind=KIND_DATE, turn=2),
        Item(key="cottage booked from", value="the 22nd", kind=KIND_DATE, turn=2),
    )
    reply, _ = _ask(state, "Which dates is the cottage booked?")
    assert reply == "On the 18th and on the 22nd."


def test_the_date_asked_again_is_the_one_the_user_gave_not_today() -> None:
    state = _state(Item(key="wedding", value="the 9th of June", kind=KIND_DATE, turn=1))
    assert _route(state, "What's the date again?") == MEMORY
    assert _route(state, "What's the date today?") != MEMORY


def test_a_measure_named_asks_for_an_amount_and_reaches_the_memory() -> None:
    # "the proving temperature", 多大: an amount asked, though no "how" or "what temperature".
    state = _state(
        Item(key="proving", value="the dough proves overnight", kind=KIND_NOTE, turn=1),
        Item(key="degrees proving", value="twenty-six degrees", kind=KIND_QUANTITY, turn=2),
    )
    assert _route(state, "What's the proving temperature now?") == MEMORY
    reply, _ = _ask(state, "What's the proving temperature now?")
    assert "twenty-six degrees" in reply.lower()


def test_the_word_naming_the_kind_asked_is_no_subject_for_the_route() -> None:
    # 地址 names what is asked (a place), not something the place must be said with.
    state = _state(Item(key="楼下药店旁边", value="建设路12号", kind=KIND_PLACE, turn=1))
    assert _route(state, "寄件的地址是哪里？") == MEMORY


def test_a_name_holding_the_name_asked_about_is_not_the_answer() -> None:
    state = _state(
        Item(key="bringing", value="Uncle Jonah", kind=KIND_NAME, turn=1),
        Item(key="Jonah's bringing", value="Jonah's bringing the trifle", kind=KIND_NOTE, turn=1),
    )
    reply, _ = _ask(state, "What's Jonah bringing?")
    assert "trifle" in reply


def test_a_value_told_before_a_newer_note_about_it_does_not_win_by_being_typed() -> None:
    # The locker number was said before the user said the locker changed: the newer note
    # may be what changed it, so the old number is not spoken over it.
    state = _state(
        Item(key="locker", value="B-117", kind=KIND_NUMBER, turn=1),
        Item(key="moved locker showers", value="They moved my locker, it's by the showers now", kind=KIND_NOTE, turn=3),
    )
    reply, _ = _ask(state, "Which locker have I got?")
    assert "B-117" not in reply and "showers" in reply
