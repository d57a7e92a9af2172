"""Board actions: extraction (en, zh), bounds, the state diff, and the turn engine's order."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fakes_llm import FakeLanguageModel
from sotto.agent import Agent, AgentConfig
from sotto.agent.actions import extract_actions, words_without_actions
from sotto.memory.store import Store
from sotto.voice.turn_runner import TurnRunner
from fakes_voice import FakeTTS, run_turn


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


@pytest.mark.parametrize(
    "words, lang, name, value",
    [
        ("Set the volume to 30.", "en", "volume", 30),
        ("volume 150 please", "en", "volume", 100),
        ("Louder please.", "en", "volume", 60),
        ("Turn it down.", "en", "volume", 40),
        ("Mute the speaker.", "en", "volume", 0),
        ("音量调到30", "zh", "volume", 30),
        ("大声一点", "zh", "volume", 60),
        ("Turn on the light.", "en", "gpio:0", 1),
        ("Switch off the lamp.", "en", "gpio:0", 0),
        ("Turn the fan on.", "en", "gpio:1", 1),
        ("开灯", "zh", "gpio:0", 1),
        ("关掉风扇", "zh", "gpio:1", 0),
    ],
)
def test_actions_are_extracted_with_bounded_values(words: str, lang: str, name: str, value: int) -> None:
    (action,) = extract_actions(words, lang)
    assert (action.name, action.value) == (name, value)


@pytest.mark.parametrize("words", ["I turned off the oven before leaving.", "Book a table for four.", "What is the volume?", "Turn on the radio."])
def test_ordinary_words_are_not_actions(words: str) -> None:
    assert extract_actions(words, "en") == []


def test_output_table_is_configurable_and_steps_start_from_the_known_level() -> None:
    (action,) = extract_actions("Turn on the heater.", "en", outputs={"heater": 5})
    assert (action.name, action.value) == ("gpio:5", 1)
    assert extract_actions("Turn on the light.", "en", outputs={"heater": 5}) == []
    (louder,) = extract_actions("louder", "en", volume_now=95)
    assert louder.value == 100


def test_the_rest_of_the_words_still_reach_memory() -> None:
    words = "Turn the fan on and book a table for two."
    assert words_without_actions(words, extract_actions(words, "en")) == "book a table for two."


def test_agent_records_actions_in_the_state_diff_and_confirms(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    result = agent.run_turn("s", "Set the volume to 30.")
    assert [(a.name, a.value) for a in result.actions] == [("volume", 30)]
    assert "volume set to 30" in [f.value for f in result.state.facts]
    assert not result.state.current_task  # the command is not a task
    assert any(c.field == "facts" and c.new == "volume set to 30" for c in result.changes)
    assert result.reply == "Okay, volume set to 30."
    # A later level replaces the old one; "louder" steps from the recorded level.
    result = agent.run_turn("s", "Louder.")
    assert [f.value for f in result.state.facts if f.value.startswith("volume")] == ["volume set to 40"]
    assert [f.value for f in store.latest("s").state.facts].count("volume set to 40") == 1  # type: ignore[union-attr]


def test_an_action_never_sent_leaves_the_memory(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.run_turn("s", "Book a table for two at seven.")
    result = agent.run_turn("s", "Set the volume to 30.")
    assert "volume set to 30" in [f.value for f in result.state.facts]
    agent.withdraw_actions("s", ["volume set to 30"])  # the turn was cancelled before the board got it
    latest = store.latest("s")
    assert latest is not None
    assert "volume set to 30" not in [f.value for f in latest.state.facts]
    assert "7" in latest.state.memory_text() or "seven" in latest.state.memory_text()  # nothing else goes
    assert latest.note == "board actions not sent"


def test_prior_side_effects_are_mentioned_and_noted(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    result = agent.run_turn("s", "Remind me to call Ana.", prior_side_effects=("light turned on",))
    assert result.reply.startswith("Earlier I already did this: light turned on.")
    assert "already done: light turned on" in [f.value for f in result.state.facts]
    assert "call Ana" in " ".join(s.value for s in result.state.pending_steps)


def test_turn_engine_runs_actions_before_the_answer(store: Store) -> None:
    agent = Agent(FakeLanguageModel(replies=["Sure."]), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    runner = TurnRunner(agent, FakeTTS())
    try:
        outcome, output = asyncio.run(run_turn(runner, "s", "开灯，然后提醒我买牛奶", 1))
        result = outcome.result.result(timeout=10)
    finally:
        runner.close()
    assert output.items[0] == ("action", "gpio:0", 1)
    assert output.texts()[0] == "好的，灯已打开。"
    state = result.state
    assert "灯已打开" in [f.value for f in state.facts] and any("买牛奶" in s.value for s in state.pending_steps)
