"""Thanks and goodbyes are answered, not remembered; a request said with thanks still is."""

import pytest

from sotto.agent.compose import compose_reply
from sotto.memory.rules import extract
from sotto.memory.state import SessionState


@pytest.mark.parametrize(
    "words",
    ["Thanks, that is all for now.", "Thank you so much!", "OK, thanks.", "Great, bye!", "No, nothing else.",
     "谢谢，就这样吧。", "好的，再见。"],
)
def test_closing_words_change_nothing_and_get_a_closing_reply(words: str) -> None:
    state = SessionState(session_id="s")
    rules = extract(words, state)
    assert rules.closing and rules.patch.is_empty()
    [reply] = compose_reply(state, words, rules)
    assert reply in ("Anytime. I'm here when you need me.", "好的，有需要再叫我。")


@pytest.mark.parametrize(
    "words,kept",
    [("Thanks, and remind me to call Bob at 5 pm.", "call Bob at 5 pm"),
     ("No, Tuesday at 4 pm works better for the dentist.", "4 pm"),
     ("谢谢，明天下午三点提醒我开会。", "三点")],
)
def test_words_with_content_are_not_closing(words: str, kept: str) -> None:
    rules = extract(words, SessionState(session_id="s"))
    assert not rules.closing
    assert rules.state is not None and kept in rules.state.memory_text()


@pytest.mark.parametrize(
    "words,step",
    [("Tomorrow at 6 pm remind me to water the basil.", "water the basil tomorrow at 6 pm"),
     ("On Friday remind me to call Priya.", "call Priya on Friday"),
     ("明天下午三点提醒我开会。", "明天下午三点开会"),
     ("Please remind me to water the basil tomorrow at 6 pm.", "water the basil tomorrow at 6 pm")],
)
def test_a_reminder_keeps_the_time_said_before_the_cue(words: str, step: str) -> None:
    assert extract(words, SessionState(session_id="s")).patch.add_steps == [step]
