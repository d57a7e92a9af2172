"""Numbers and times between recognition and memory (text2num / cn2an), and what must stay words."""

from __future__ import annotations

import pytest

from sotto.engines.base import AudioChunk, Transcript, WordConfidence
from sotto.engines.normalize import NormalizingRecognizer, comparable_words, normalize, normalize_final
from sotto.metrics import word_errors


@pytest.mark.parametrize("heard, written", [
    ("tomorrow at three p m i need to pick up mr wang", "tomorrow at 3 pm i need to pick up mr wang"),
    ("about twenty guests", "about 20 guests"),
    ("at two p m", "at 2 pm"),
    ("eleven a m", "11 am"),
    ("seven thirty p m", "7:30 pm"),
    ("pick up leo from school at three fifteen", "pick up leo from school at 3:15"),
    ("eight forty five would be safer", "8:45 would be safer"),
    ("on the fifteenth", "on the 15th"),
    ("my number is zero four one two five five six seven eight one", "my number is 0412556781"),
    ("my number is oh four one two", "my number is 0412"),
    ("the id is eight eight four two one", "the id is 88421"),
    ("make it twelve people not ten", "make it 12 people not 10"),
    ("three o'clock is better", "3 o'clock is better"),
    # a phone number read in groups: digits one by one, then numbers said as numbers
    ("is zero one six one four hundred ninety six zero seven three two", "is 0161 496 0732"),
    ("my mobile zero seven nine one one one hundred twenty three four hundred fifty six", "my mobile 07911 123 456"),
    ("on zero seven seven zero zero nine hundred four hundred twelve", "on 07700 900 412"),
    ("one hundred twenty three four hundred fifty six", "123 456"),
    ("two thousand four hundred", "2400"),
    ("ninety six", "96"),
    # times said with half and quarter
    ("we'll be home by half eleven", "we'll be home by 11:30"),
    ("at half past nine", "at 9:30"),
    ("push it to a quarter to six", "push it to 5:45"),
    ("quarter past one", "1:15"),
    ("quarter to one", "12:45"),
    ("at eleven zero zero", "at 11:00"),
    ("breakfast for three at eight zero zero", "breakfast for three at 8:00"),
])
def test_english_numbers_and_times_become_digits(heard: str, written: str) -> None:
    assert normalize(heard, "en") == written


@pytest.mark.parametrize("words", [
    "one of them is vegetarian",
    "wait a second",
    "once more please",
    "the first one and the second one",
    "one adult bike and one kid's bike",
    "no one knows",
    "i am here",
    "a m",
    "someone said it was done",
    "saturday at two",  # an isolated number under ten stays a word, as people write it
    "we're three me and our daughter",
    "make it six people not four",
    "her grade three book",
    "half a cup",
    "cut it in half two times",
])
def test_english_ordinary_words_stay(words: str) -> None:
    assert normalize(words, "en") == words


@pytest.mark.parametrize("heard, written", [
    ("明天下午三点去机场接王总", "明天下午3点去机场接王总"),
    ("张医生的电话是一三九零零一二三四五六", "张医生的电话是13900123456"),
    ("明天早上六点半叫我起床", "明天早上6点半叫我起床"),
    ("二十个人", "20个人"),
    ("十一点", "11点"),
    ("十二号", "12号"),
    ("两点", "2点"),
    ("三点一刻", "3点一刻"),
    ("明天 下午 三 点", "明天下午3点"),  # the recognizer's word spaces go
])
def test_chinese_numbers_and_times_become_digits(heard: str, written: str) -> None:
    assert normalize(heard, "zh") == written


@pytest.mark.parametrize("words", [
    "我们一起去吧", "等一下", "一些东西", "统一安排", "万一下雨", "一会儿", "一定要来", "唯一的", "他一直在等",
    "三明治", "四川", "星期一", "我每周二和周四去健身房", "一五一十", "七七八八", "我有一点累", "一个人", "第一次",
])
def test_chinese_ordinary_words_stay(words: str) -> None:
    assert normalize(words, "zh") == words


def test_other_languages_are_left_alone() -> None:
    assert normalize("세 시에 만나요", "ko") == "세 시에 만나요"


def test_a_final_keeps_the_recognised_words_and_each_digit_its_lowest_confidence() -> None:
    words = tuple(WordConfidence(w, c, w) for w, c in
                  [("at", 0.9), ("three", 0.8), ("p", 0.3), ("m", 0.5), ("call", 0.95), ("mr", 1.0), ("wen", 0.2)])
    final = Transcript(3, "at three p m call mr wen", final=True, confidence=0.66, words=words)
    out = normalize_final(final, "en")
    assert out.text == "at 3 pm call mr wen" and out.raw_text == "at three p m call mr wen"
    assert [(w.word, w.confidence, w.heard) for w in out.words] == [
        ("at", 0.9, "at"), ("3", 0.8, "three"), ("pm", 0.3, "p m"), ("call", 0.95, "call"), ("mr", 1.0, "mr"),
        ("wen", 0.2, "wen")]
    assert [w.word for w in out.least_confident(0.5)] == ["pm", "wen"]
    unchanged = Transcript(3, "call mr wen", final=True)
    assert normalize_final(unchanged, "en") is unchanged and unchanged.raw_text is None
    partial = Transcript(3, "at three", final=False)
    assert normalize_final(partial, "en") is partial  # partials pass as heard


def test_normalizing_recognizer_wraps_any_recognizer() -> None:
    class Scripted:
        name = "scripted"
        sample_rate = 16000

        def accept(self, chunk: AudioChunk) -> list[Transcript]:
            return [Transcript(chunk.turn_id, "twenty", final=False), Transcript(chunk.turn_id, "twenty guests", final=True)]

        def flush(self, turn_id: int) -> list[Transcript]:
            return []

    rec = NormalizingRecognizer(Scripted(), "en")
    out = rec.accept(AudioChunk(1, 0, b"\0\0", 16000))
    assert [(t.text, t.raw_text) for t in out] == [("twenty", None), ("20 guests", "twenty guests")]
    assert rec.name == "scripted" and rec.sample_rate == 16000


def test_word_error_rate_compares_normalised_words() -> None:
    said = comparable_words("Tomorrow at 3 pm, pick up Mr. Wang. My number is 0412 556 781.", "en")
    heard = comparable_words("tomorrow at three p m pick up mr wen my number is zero four one two five five six "
                             "seven eight one", "en")
    assert said[:6] == ["tomorrow", "at", "3", "pm", "pick", "up"] and said[-1] == "0412556781"
    assert word_errors(said, heard) == 1  # only wen for wang
    assert word_errors([], ["a"]) == 1 and word_errors(["a", "b"], []) == 2
    assert comparable_words("明天下午三点。", "zh") == ["明", "天", "下", "午", "3", "点"]
