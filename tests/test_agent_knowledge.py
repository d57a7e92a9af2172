"""System knowledge in the reply: prompt and composed answer, never in the state."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakes_llm import FakeLanguageModel
from sotto.agent import Agent, AgentConfig
from sotto.knowledge import example_path, load_knowledge
from sotto.memory.store import Store


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def test_composed_reply_answers_from_a_matching_passage(store: Store) -> None:
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"), knowledge=load_knowledge(example_path()))
    result = agent.run_turn("s", "When do you open?")
    assert "6:00" in result.reply and "23:30" in result.reply
    assert "6:00" not in result.state.to_json()  # reference, not memory
    assert store.traces("s", kind="agent_turn")[-1]["knowledge"] == ["Opening hours"]
    # The user's own words still answer questions about them.
    agent.run_turn("s", "My train leaves at 7:15 to Lyon.")
    assert "7:15" in agent.run_turn("s", "When does my train to Lyon leave?").reply


def test_without_a_match_or_knowledge_the_reply_is_unchanged(store: Store) -> None:
    kb = load_knowledge(example_path())
    with_kb = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"), knowledge=kb)
    plain = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    assert with_kb.run_turn("a", "What is the weather in Rome?").reply == plain.run_turn("b", "What is the weather in Rome?").reply


def test_passages_answer_at_once_and_never_enter_the_state_or_the_model(store: Store) -> None:
    model = FakeLanguageModel(replies=["We accept coins and cards, not banknotes."])
    agent = Agent(model, store, config=AgentConfig(model_update="after_reply"), knowledge=load_knowledge(example_path()))
    result = agent.run_turn("s", "Do you take banknotes?")
    assert result.route == "knowledge" and result.reply_source == "composed" and "banknote" in result.reply.lower()
    assert model.stream_calls == []  # the knowledge route never waits on the model
    assert all("contactless" not in m.content for call in model.complete_calls for m in call)  # not in the update call
    assert "contactless" not in result.state.to_json()
