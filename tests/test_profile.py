"""Long-term profiles: promotion, seeding of the next session, no working-memory leak, edits."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from fakes_llm import FakeLanguageModel
from sotto.agent import Agent, AgentConfig
from sotto.errors import StoreError
from sotto.memory.store import Store
from sotto.memory.profile import Profile, edit, profile_key

FIRST_SESSION = [
    "My name is Ana.",
    "I prefer window seats.",
    "Book a table at Luigi's for four on Friday. Remind me to call the babysitter.",
]


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def _no_leak(state_text: str) -> None:
    for marker in ("Luigi", "babysitter", "Friday"):
        assert marker not in state_text


def test_profile_keys() -> None:
    assert profile_key("Ana") == "user:ana"
    assert profile_key("board:Kiosk 1") == "board:kiosk-1"
    with pytest.raises(StoreError):
        profile_key("  ")


def test_second_session_starts_with_stable_preferences_only(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed", profile_owner="kiosk-1"))
    for words in FIRST_SESSION:
        agent.run_turn("s1", words)
    first = store.latest("s1").state  # type: ignore[union-attr]
    assert "Luigi" in first.memory_text() and first.pending_steps
    # Promoted after turn 3 (every N=3 turns), to the board and to the named user.
    assert store.profile("board:kiosk-1") is not None
    ana = store.profile("user:ana")
    assert ana is not None and ana.preferences == ["I prefer window seats"]
    _no_leak(ana.to_json())

    second = agent.open_session("s2")
    assert second.user_profile.names == ["Ana"]
    assert "I prefer window seats" in [p.value for p in second.user_profile.preferences]
    assert not second.current_task and not second.facts and not second.pending_steps
    _no_leak(second.to_json())
    assert store.history("s2")[-1].source == "profile"


def test_a_name_said_later_brings_the_users_profile(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    for words in FIRST_SESSION:
        agent.run_turn("s1", words)
    agent.end_session("s1")
    result = agent.run_turn("other-board", "Hi, my name is Ana.")
    assert "I prefer window seats" in [p.value for p in result.state.user_profile.preferences]
    _no_leak(result.state.to_json())
    assert store.session_profile("other-board") == "user:ana"


def test_end_session_promotes_before_n_turns(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.open_session("s1", profile="Bo")
    agent.run_turn("s1", "I love jazz.")
    assert store.profile("user:bo") is None
    assert agent.end_session("s1") == ["user:bo"]
    assert store.profile("user:bo").preferences == ["I love jazz"]  # type: ignore[union-attr]


def test_edit_and_the_profile_command(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    from sotto.commands import profile as command

    p = edit(Profile("user:ana"), set_items=["preferences=window seats", "volume=30"])
    assert p.preferences == ["window seats"] and p.settings == {"volume": "30"}
    with pytest.raises(StoreError):
        edit(p, set_items=["novalue"])
    with pytest.raises(StoreError):
        edit(p, remove=["nosuch"])
    assert edit(p, remove=["volume", "preferences=window seats"]).is_empty()

    def cli(*argv: str) -> int:
        parser = argparse.ArgumentParser()
        command.add_arguments(parser)
        return command.run(parser.parse_args(list(argv)))

    assert cli("Ana", "--set", "preferences=tea, no sugar", "--set", "language=en") == 0
    capsys.readouterr()
    assert cli("Ana", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["preferences"] == ["tea, no sugar"] and data["settings"] == {"language": "en"}
    assert cli("Ana", "--remove", "language") == 0
    assert cli("Ana", "--remove", "language") == 2  # already gone: a clear error
    assert cli("Nobody") == 1
    # The edited profile seeds the next session.
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off"))
    state = agent.open_session("s9", profile="Ana")
    assert [p.value for p in state.user_profile.preferences] == ["tea, no sugar"]


@pytest.mark.slow
def test_second_session_knows_preferences_with_the_embedded_model(store: Store) -> None:
    from sotto.engines import llm

    model = llm.load(n_ctx=1024)
    agent = Agent(model, store, config=AgentConfig(model_update="after_reply", profile_owner="kiosk-1"))
    for words in FIRST_SESSION:
        agent.run_turn("s1", words)
    agent.end_session("s1")
    second = agent.open_session("s2")
    assert "Ana" in second.user_profile.names
    assert any("window seats" in p.value for p in second.user_profile.preferences)
    assert not second.current_task and not second.pending_steps and not second.facts
    _no_leak(second.to_json())
    result = agent.run_turn("s2", "What do I prefer?")
    assert result.reply
