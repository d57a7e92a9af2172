"""ASR entity backfill in the agent: misheard known entities are corrected before the memory update."""

from __future__ import annotations

from pathlib import Path

import pytest

from sotto.agent import Agent, AgentConfig
from sotto.memory.store import Store


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def test_misheard_entity_is_corrected_before_the_update_and_traced(store: Store) -> None:
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.run_turn("s", "Book a table at Luigi for four.")
    result = agent.run_turn("s", "Also ask Louigi for a window table.")
    assert [(c.heard, c.entity) for c in result.corrections] == [("Louigi", "Luigi")]
    assert "Louigi" not in result.state.to_json() and result.words.startswith("Also ask Luigi")
    (event,) = store.traces("s", kind="asr_backfill")
    assert event["corrections"][0]["entity"] == "Luigi"
    assert store.traces("s", kind="agent_turn")[-1]["asr_text"] == "Also ask Louigi for a window table."


def test_chinese_entity_and_the_corrector_follows_the_entity_set(store: Store) -> None:
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.run_turn("s", "明天下午三点和李经理开会")
    assert agent.run_turn("s", "提醒我告诉里经理我晚到").corrections[0].entity == "李经理"
    first = agent._correctors["s"][1]
    agent.run_turn("s", "我叫王芳")
    agent.run_turn("s", "好的")
    assert agent._correctors["s"][1] is not first  # rebuilt: the entity set changed


def test_backfill_can_be_switched_off_and_leaves_ordinary_words(store: Store) -> None:
    off = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed", entity_backfill=False))
    off.run_turn("a", "Book a table at Luigi for four.")
    assert off.run_turn("a", "Ask Louigi.").corrections == []
    on = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    on.run_turn("b", "Book a table at Luigi for four.")
    assert on.run_turn("b", "Look at the menu for four.").corrections == []
