"""`sotto stats` over synthetic voice traces and store events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakes_llm import FakeLanguageModel
from sotto import paths
from sotto.agent import Agent, AgentConfig
from sotto.cli import main
from sotto.memory.store import Store


def _turn(session: str, turn: int, first_answer: float, *, degraded: bool = False, barge_in: float | None = None) -> dict[str, object]:
    return {
        "type": "turn_completed", "session": session, "turn": turn, "t_ms": 1.0, "first_byte_ms": first_answer / 2,
        "first_answer_ms": first_answer, "total_turn_ms": first_answer * 3, "barge_in_ms": barge_in,
        "degraded": degraded, "interrupted": barge_in is not None,
    }


def test_stats_from_synthetic_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    folder = paths.traces_dir()
    events = [_turn("v1", i, 100.0 * i) for i in range(1, 11)]
    events[2] = _turn("v1", 3, 300.0, degraded=True, barge_in=80.0)
    events += [{"type": "barge_in", "session": "v1", "turn": 3, "t_ms": 2.0}, {"type": "degrade", "session": "v1", "turn": 3, "t_ms": 3.0, "action": "acknowledge"}]
    (folder / "v1.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\nnot json\n", encoding="utf-8")
    (folder / "v2.jsonl").write_text(json.dumps(_turn("v2", 1, 2000.0, degraded=True)) + "\n", encoding="utf-8")
    store = Store()
    agent = Agent(FakeLanguageModel(patches=["garbage"]), store, config=AgentConfig(model_update="before_reply"))
    agent.run_turn("a1", "Book a table at Nico's for four.")
    store.close()

    assert main(["stats", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["voice_turns"] == 11 and out["sessions"] == 3
    assert out["first_answer_ms_p50"] == 600.0 and out["first_answer_ms_p95"] == 1500.0  # interpolated between 1000 and 2000
    assert out["barge_in_ms_p50"] == 80.0 and out["barge_ins"] == 1 and out["interrupted_turns"] == 1
    assert out["degraded_turns"] == 2 and out["degradation_rate"] == round(2 / 11, 4)
    assert out["degrade_actions"] == {"acknowledge": 1}
    assert out["agent_turns"] == 1 and out["state_update_failures"] == 1 and out["state_update_failure_rate"] == 1.0
    assert out["update_prompt_tokens"] > 0 and out["update_completion_tokens"] > 0
    assert out["unreadable_lines"] == 1

    assert main(["stats", "--json", "--session", "v2"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["voice_turns"] == 1 and one["first_answer_ms_p95"] == 2000.0 and one["agent_turns"] == 0
    assert main(["stats"]) == 0
    assert "first_answer_ms" in capsys.readouterr().out
