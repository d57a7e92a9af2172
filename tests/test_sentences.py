"""The incremental sentence splitter: English and Chinese, abbreviations, streaming."""

from __future__ import annotations

import pytest

from sotto.text.sentences import SentenceSplitter, split_sentences, split_stream


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello there. How are you? Fine!", ["Hello there.", "How are you?", "Fine!"]),
        ("First part; second part.", ["First part;", "second part."]),
        ("Wait… what happened?", ["Wait… what happened?"]),
        ("Wait… What happened?", ["Wait…", "What happened?"]),
        ("I think... maybe not.", ["I think... maybe not."]),
        ("I see... Well, okay.", ["I see...", "Well, okay."]),
        ("Really?! Yes.", ["Really?!", "Yes."]),
        ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
        ("No trailing punctuation", ["No trailing punctuation"]),
        ("", []),
        ("   ", []),
        ("... !!", []),
    ],
)
def test_english_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'll pick up Mr. Wang at the airport. See you.", ["I'll pick up Mr. Wang at the airport.", "See you."]),
        ("Dr. Smith and Mrs. Lee arrive. Good.", ["Dr. Smith and Mrs. Lee arrive.", "Good."]),
        ("The flight lands at 3 p.m. tomorrow. Be there.", ["The flight lands at 3 p.m. tomorrow.", "Be there."]),
        ("The flight lands at 3 p.m. Be there.", ["The flight lands at 3 p.m.", "Be there."]),
        ("Meet at 9 a.m. on Monday.", ["Meet at 9 a.m. on Monday."]),
        ("It costs 3.5 dollars. Cheap.", ["It costs 3.5 dollars.", "Cheap."]),
        ("Pickup at 3:00 sharp. Thanks.", ["Pickup at 3:00 sharp.", "Thanks."]),
        ("Bring fruit, e.g. apples. Done.", ["Bring fruit, e.g. apples.", "Done."]),
        ("Written by J. R. Tolkien. Great.", ["Written by J. R. Tolkien.", "Great."]),
        ("Room No. 5 is free. Go.", ["Room No. 5 is free.", "Go."]),
        ("Visit example.com today. Bye.", ["Visit example.com today.", "Bye."]),
        ("It is 1,000 dollars. Ok.", ["It is 1,000 dollars.", "Ok."]),
        ("I live in the U.S. My name is Ann.", ["I live in the U.S.", "My name is Ann."]),
    ],
)
def test_no_split_on_abbreviations_numbers_times(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("明天下午三点去机场。接王先生！好吗？", ["明天下午三点去机场。", "接王先生！", "好吗？"]),
        ("第一句；第二句。", ["第一句；", "第二句。"]),
        ("他说：「好的。」然后走了。", ["他说：「好的。」", "然后走了。"]),
        ("价格是3.5元。谢谢", ["价格是3.5元。", "谢谢"]),
        ("OK.好的。", ["OK.", "好的。"]),
    ],
)
def test_chinese_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_line_breaks_end_sentences() -> None:
    assert split_sentences("Item one\nItem two\n\nItem three") == ["Item one", "Item two", "Item three"]


def _feed_each_char(splitter: SentenceSplitter, text: str) -> list[tuple[int, str]]:
    """(index of the character that completed it, sentence) for every sentence."""
    out: list[tuple[int, str]] = []
    for index, char in enumerate(text):
        out.extend((index, s) for s in splitter.feed(char))
    out.extend((len(text), s) for s in splitter.flush())
    return out


def test_sentence_is_released_as_soon_as_it_can_be_known() -> None:
    text = "Sure thing. I will be there."
    released = _feed_each_char(SentenceSplitter(), text)
    # The first sentence is known at the space after its period, not at the end of the text.
    assert released[0] == (text.index(" I"), "Sure thing.")
    assert released[1] == (len(text), "I will be there.")


def test_chinese_sentence_released_on_next_character() -> None:
    text = "好的。我知道了。"
    released = _feed_each_char(SentenceSplitter(), text)
    assert released[0] == (text.index("我"), "好的。")


def test_abbreviation_waits_for_next_word_in_a_stream() -> None:
    splitter = SentenceSplitter()
    assert splitter.feed("We land at 3 p.m. ") == []  # the next word decides
    assert splitter.feed("tomorrow. ") == ["We land at 3 p.m. tomorrow."]
    assert splitter.feed("Bye") == []
    assert splitter.flush() == ["Bye"]


@pytest.mark.parametrize(
    "text",
    [
        "Hello Mr. Wang, your car arrives at 3 p.m. tomorrow. It is a business car; the driver waits. Thanks!",
        "明天下午三点，王先生到机场。商务车！谢谢？好的",
        "Decimals 3.5 and 2.75, times 3:00 and 15:30... Then done.",
    ],
)
@pytest.mark.parametrize("piece_size", [1, 2, 3, 7, 1000])
def test_streaming_matches_whole_text(text: str, piece_size: int) -> None:
    pieces = [text[i : i + piece_size] for i in range(0, len(text), piece_size)]
    assert list(split_stream(pieces)) == split_sentences(text)


def test_streaming_loses_no_text() -> None:
    text = "One. Two three, four! 五六。Seven; eight... nine"
    joined = "".join(split_sentences(text)).replace(" ", "")
    assert joined == text.replace(" ", "")


def test_first_clause_cut_at_comma_when_long() -> None:
    text = "Sure, I will pick up Mr. Wang at the airport, in a business car. Anything else?"
    chunks = split_sentences(text, first_clause_min_chars=20)
    assert chunks == ["Sure, I will pick up Mr. Wang at the airport,", "in a business car.", "Anything else?"]


def test_first_clause_cut_only_applies_to_the_first_chunk() -> None:
    text = "Okay. Then we go to the hotel, which is near the station, and rest."
    chunks = split_sentences(text, first_clause_min_chars=5)
    assert chunks == ["Okay.", "Then we go to the hotel, which is near the station, and rest."]


def test_first_clause_not_cut_at_number_comma_or_time_colon() -> None:
    text = "The total cost is 1,250 dollars at 3:00 today, paid by card."
    assert split_sentences(text, first_clause_min_chars=10)[0] == "The total cost is 1,250 dollars at 3:00 today,"


def test_first_clause_chinese_comma() -> None:
    text = "好的，明天下午三点我去机场接王先生。"
    assert split_sentences(text, first_clause_min_chars=2) == ["好的，", "明天下午三点我去机场接王先生。"]
    assert split_sentences(text, first_clause_min_chars=10) == [text]


def test_short_first_clause_is_not_cut() -> None:
    assert split_sentences("Yes, sure.", first_clause_min_chars=20) == ["Yes, sure."]


def test_run_on_text_is_cut_at_a_space() -> None:
    words = " ".join(["word"] * 100)
    chunks = split_sentences(words, max_chars=50)
    assert all(len(c) <= 50 for c in chunks)
    assert " ".join(chunks) == words


def test_reset_drops_pending_text_and_restores_first_clause() -> None:
    splitter = SentenceSplitter(first_clause_min_chars=5)
    assert splitter.feed("Hello there, half a sent") == ["Hello there,"]
    splitter.reset()
    assert splitter.pending == ""
    assert splitter.feed("Again then, more") == ["Again then,"]


def test_rejects_tiny_max_chars() -> None:
    with pytest.raises(ValueError):
        SentenceSplitter(max_chars=5)
