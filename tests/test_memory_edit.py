"""`sotto state --set` (validated edits) and `--rollback`, recorded as user edits with the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.memory.items import Item
from sotto.agent import Agent, AgentConfig
from sotto.cli import main
from sotto.errors import StoreError
from sotto.memory.edit import edit_state
from sotto.memory.state import SessionState
from sotto.memory.store import Store


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def test_edit_state_assignments() -> None:
    s = SessionState(session_id="s", facts=[Item(value="a"), Item(key="dose", value="b", kind="quantity", turn=3)])

    def values(items: list[Item]) -> list[str]:
        return [i.value for i in items]

    assert edit_state(s, "current_task=call Ana").current_task == "call Ana"
    edited = edit_state(s, "facts[1]=B").facts
    assert values(edited) == ["a", "B"] and edited[1].key == "dose"  # the item keeps its key
    assert values(edit_state(s, "facts[-1]=").facts) == ["a"]
    assert values(edit_state(s, "facts+=c").facts) == ["a", "b", "c"]
    assert edit_state(s, "user_profile.names+=Ana").user_profile.names == ["Ana"]
    assert values(edit_state(s, "preferences+=tea").user_profile.preferences) == ["tea"]
    for bad, why in [
        ("nonsense", "expected FIELD=VALUE"),
        ("session_id=x", "unknown field"),
        ("facts=x", "is a list"),
        ("facts[5]=x", "does not exist"),
        ("current_task[0]=x", "text field"),
        ("current_task=" + "x" * 300, "at most 200"),
    ]:
        with pytest.raises(StoreError, match=why):
            edit_state(s, bad)
    too_many = SessionState(session_id="s", user_profile=edit_state(s, "names+=a").user_profile)
    for n in "bcd":
        too_many = edit_state(too_many, f"names+={n}")
    with pytest.raises(StoreError, match="at most 4"):
        edit_state(too_many, "names+=e")


def test_state_set_and_rollback_commands(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    agent.run_turn("s", "Book a table at Nico's for four on Friday.")
    agent.run_turn("s", "Remind me to call Ana.")
    assert main(["state", "s", "--set", "pending_steps[0]=call Bea", "--set", "facts+=window seat", "--json"]) == 0
    current = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [p["value"] for p in current["pending_steps"]] == ["call Bea"] and current["facts"][-1]["value"] == "window seat"
    edit = store.history("s")[-1]
    assert edit.source == "user-edit" and "--set 'pending_steps[0]=call Bea'" in edit.note
    assert {(c["field"], c["op"]) for c in edit.changes} == {("pending_steps", "set"), ("facts", "add")}
    assert main(["state", "s", "--set", "facts[9]=x"]) == 2
    assert "does not exist" in capsys.readouterr().out
    assert main(["state", "s", "--set", "a=b", "--drop", "x"]) == 2
    # Roll back to before the edit; the rollback names itself.
    before_edit = store.history("s")[-2].version
    assert main(["state", "s", "--rollback", str(before_edit), "--json"]) == 0
    restored = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert "call Ana" in restored["pending_steps"][0]["value"] and "window seat" not in json.dumps(restored["facts"])
    assert store.history("s")[-1].note == f"sotto state s --rollback {before_edit}"
    assert main(["state", "s", "--rollback", "99"]) == 2
    assert main(["state", "s", "--diff", "--json"]) == 0
    notes = [json.loads(x).get("note") for x in capsys.readouterr().out.splitlines() if '"version"' in x]
    assert sum(1 for n in notes if n) == 2
