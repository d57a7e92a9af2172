"""The agent facade: turns with fake models, malformed output, bounds, cancel, crash."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fakes_llm import FakeLanguageModel
from sotto.agent import Agent, AgentConfig
from sotto.memory.sanitize import leaks
from sotto.memory.state import FACTS_MAX, STEPS_MAX, SessionState
from sotto.memory.store import Store
from sotto.voice.budgets import BudgetConfig, LadderConfig
from sotto.voice.reply_types import ReplyControl, TurnRequest
from sotto.voice.turn_runner import TurnRunner
from fakes_voice import FakeTTS, RecordingOutput, run_turn, wait_until

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def rules_only(store: Store) -> SessionState:
    """What the rules alone make of the same words, for comparison."""
    return store.latest("s").state  # type: ignore[union-attr]


MALFORMED = [
    "not json at all",
    '{"last_topic": "x", "add_facts": ["half',
    '{"last_topic": 3, "add_facts": [], "add_names": [], "replace": []}',
    '{"last_topic": "", "add_facts": "one", "add_names": [], "replace": []}',
    '{"last_topic": "", "add_facts": [], "add_names": [], "replace": [{"old": 1}]}',
    "[]",
    "",
]


@pytest.mark.parametrize("garbage", MALFORMED)
def test_malformed_model_output_never_breaks_a_turn(store: Store, garbage: str) -> None:
    model = FakeLanguageModel(patches=[garbage], replies=["{\"facts\": []}"])
    agent = Agent(model, store)
    result = agent.run_turn("s", "Book a table at Nico's for two on Friday.")
    assert result.reply and not leaks(result.reply)
    assert result.json_failures == 1
    assert len(model.complete_calls) == 2  # one retry, told what was wrong
    assert "invalid" in model.complete_calls[1][-1].content
    # The state is what the rules committed; the model changed nothing.
    history = store.history("s")
    assert [h.source for h in history] == ["create", "rules"]
    assert "Nico's" in result.state.memory_text()
    failures = store.traces("s", kind="state_update_failed")
    assert failures and failures[0]["failures"]


def test_truncated_output_counts_as_failure(store: Store) -> None:
    model = FakeLanguageModel(patches=['{"last_topic": "a", "add_facts": [], "add_names": [], "replace": []}'], finish_reason="length")
    result = Agent(model, store).run_turn("s", "Call the plumber at noon.")
    assert result.json_failures == 1 and "noon" in result.state.memory_text()


def test_grounded_model_patch_is_merged_and_recorded(store: Store) -> None:
    patch = '{"last_topic": "table", "add_facts": ["by the window"], "add_names": ["Zed"], "replace": []}'
    model = FakeLanguageModel(patches=[patch])
    agent = Agent(model, store)
    agent.run_turn("s", "Book a table at Nico's for two on Friday.")
    result = agent.run_turn("s", "And we want a table by the window.")
    assert result.state.last_topic == "table"
    assert "Zed" not in result.state.memory_text()  # invented name refused
    assert "model" in [h.source for h in store.history("s")]
    assert model.grammars[0] and "root ::=" in model.grammars[0]


def test_leaky_or_wrong_language_replies_fall_back_to_composed(store: Store) -> None:
    model = FakeLanguageModel(replies=['Sure. {"current_task": "x"} internal state updated.'])
    agent = Agent(model, store)
    r = agent.run_turn("s", "Remind me to water the plants at six.")
    assert r.reply_source == "composed" and "water the plants" in r.reply and not leaks(r.reply)
    zh = Agent(FakeLanguageModel(replies=["Okay, noted."]), store).run_turn("z", "明天下午两点提醒我开会。")
    assert zh.reply_source == "composed" and any("\u4e00" <= c <= "\u9fff" for c in zh.reply)


def test_the_model_answers_open_questions_and_memory_answers_the_rest(store: Store) -> None:
    model = FakeLanguageModel(replies=["Nico's is a small Italian place, good for pasta.", "I think it was lunch."])
    agent = Agent(model, store)
    first = agent.run_turn("s", "Book a table at Nico's for two on Friday at 8 pm.")
    assert first.reply_source == "composed" and first.route == "confirm"
    answer = agent.run_turn("s", "What time was that again?")
    assert answer.reply_source == "composed" and "8 pm" in answer.reply
    assert model.stream_calls == []
    open_answer = agent.run_turn("s", "What kind of food do Italian places serve?")
    assert open_answer.reply_source == "model" and open_answer.route == "model"


def test_cancel_stops_the_stream_and_shorten_limits_sentences(store: Store) -> None:
    model = FakeLanguageModel(replies=["Water the plants at the base. Do it in the morning. Anything else?"])
    agent = Agent(model, store)
    turn = agent.start_turn("s", "How should I water the plants?")
    turn.shorten(1)
    assert list(turn.sentences()) == ["Water the plants at the base."]
    turn.finish()
    turn = agent.start_turn("s", "How should I water the plants?")
    it = turn.sentences()
    next(it)
    turn.cancel()
    assert list(it) == []
    result = turn.finish(run_model=False)
    assert result.interrupted and model.streams_closed == 2
    assert store.traces("s", kind="reply_interrupted")


def test_two_hundred_turns_stay_within_context_and_caps(store: Store) -> None:
    model = FakeLanguageModel(
        patches=['{"last_topic": "plans", "add_facts": ["item"], "add_names": [], "replace": []}'],
        replies=["Okay, noted."],
        n_ctx=1024,
    )
    agent = Agent(model, store)
    places = ["Oslo", "Lima", "Pune", "Kyoto", "Accra"]
    for i in range(200):
        words = f"Note number {i}: meet {places[i % 5]} team at {i % 12 + 1} pm about budget line {i * 7} " + "and more " * (i % 9)
        if i % 10 == 9:
            words = f"Remind me to send report {i} to {places[i % 5]}."
        if i % 50 == 49:
            words = "x" * 5000  # an absurdly long final is clipped, not a crash
        result = agent.run_turn("s", words)
        s = result.state
        assert result.context_overflows == 0
        assert len(s.facts) <= FACTS_MAX and len(s.pending_steps) <= STEPS_MAX
        assert all(len(v) <= 200 for v in s.all_strings())
    assert model.max_prompt_tokens <= 1024
    assert len(model.complete_calls) >= 200


def test_context_too_small_is_counted_not_crashed(store: Store) -> None:
    model = FakeLanguageModel(n_ctx=64)
    result = Agent(model, store).run_turn("s", "Book a table at Nico's for two on Friday.")
    assert result.context_overflows >= 1 and result.reply
    assert "Nico's" in result.state.memory_text()


def test_turn_engine_streams_and_finishes(store: Store) -> None:
    model = FakeLanguageModel(replies=["Sure, the plants at six."])
    agent = Agent(model, store, config=AgentConfig(model_update="before_reply"))
    runner = TurnRunner(agent, FakeTTS())

    try:
        outcome, output = asyncio.run(run_turn(runner, "s", "Remind me to water the plants at six.", 1))
        assert output.texts() == ["Okay, I'll remind you to water the plants at six."]
        assert output.texts("acknowledgement") == [] and outcome.route == "confirm"
        result = outcome.result.result(timeout=10)
        assert "plants" in result.state.memory_text() and not result.interrupted
    finally:
        runner.close()


def test_turn_cancelled_after_an_action_finishes_and_the_next_states_it(store: Store) -> None:
    agent = Agent(FakeLanguageModel(replies=["Sure."]), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    runner = TurnRunner(agent, FakeTTS())

    class BargeIn(RecordingOutput):
        acting = asyncio.Event()

        async def run_action(self, action: object) -> None:
            await super().run_action(action)  # type: ignore[arg-type]
            self.acting.set()
            await asyncio.Event().wait()  # the board never confirms

    async def barge_in_after_the_action() -> tuple[BargeIn, object]:
        output = BargeIn()
        output.acting = asyncio.Event()
        request = TurnRequest("s", "Set the volume to 30 and remind me to call Ana.", runner.clock.now(), turn_id=1)
        # With the ladder: on a loaded host it may give the reply up before the action is
        # decided; the action still runs (its own lane), and the barge-in comes after it.
        task = asyncio.create_task(runner.run(request, output, ReplyControl(), budgets=BudgetConfig()))
        await output.acting.wait()
        task.cancel()  # what a barge-in does: the reply is cancelled mid-way
        await asyncio.wait({task})
        return output, task

    try:
        output, task = asyncio.run(barge_in_after_the_action())
        # The action ran once and no answer was played (on a loaded host the ladder's phrases may have been).
        assert [i for i in output.items if i[0].startswith("action")] == [("action", "volume", 30)]
        assert output.texts() == []
        assert task.cancelled()  # type: ignore[attr-defined]
        interrupted = runner.idle("s").result(timeout=10)
        assert interrupted is None
        # The agent was released by the cancelled turn: the next one runs and says what already ran.
        outcome, later = asyncio.run(run_turn(runner, "s", "What was that?", 2, prior=("volume set to 30",)))
        assert later.texts()[0] == "Earlier I already did this: volume set to 30."
        assert not any(item[0] == "action" for item in later.items)
        result = outcome.result.result(timeout=10)
        assert result.prior_side_effects == ["volume set to 30"]
        assert "already done: volume set to 30" in [f.value for f in result.state.facts]
    finally:
        runner.close()


def test_session_opens_its_profile_before_the_first_turn_and_promotes_at_the_end(store: Store) -> None:
    agent = Agent(FakeLanguageModel(), store, config=AgentConfig(model_update="off", reply_mode="composed"))
    runner = TurnRunner(agent, FakeTTS())
    try:
        runner.open_session("monday", profile="board:kiosk-1")
        outcome, _ = asyncio.run(run_turn(runner, "monday", "My name is Maya.", 1))
        outcome.result.result(timeout=10)
        runner.end_session("monday").result(timeout=10)  # the voice session closed: stable items go to the profile
        assert store.session_profile("monday") == "board:kiosk-1"
        stored = store.profile("board:kiosk-1")
        assert stored is not None and "Maya" in stored.names
        runner.open_session("tuesday", profile="board:kiosk-1")
        outcome, _ = asyncio.run(run_turn(runner, "tuesday", "Remind me to water the plants.", 1))
        state = outcome.result.result(timeout=10).state
        assert "Maya" in state.user_profile.names  # seeded from the profile before the first turn
    finally:
        runner.close()


CRASH_CHILD = """
import sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from fakes_llm import SlowPatchModel
from sotto.agent import Agent
from sotto.memory.store import Store
agent = Agent(SlowPatchModel(Path({marker!r})), Store())
agent.run_turn("crash", "Book a table at Nico's for two on Friday.")
"""


def test_kill_during_a_turn_keeps_the_last_committed_state(tmp_path: Path) -> None:
    env = {**os.environ, "SOTTO_HOME": str(tmp_path), "PYTHONPATH": str(REPO / "host")}
    marker = tmp_path / "model-started"
    code = CRASH_CHILD.format(tests=str(REPO / "tests"), marker=str(marker))
    child = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        for _ in range(300):
            if marker.exists() or child.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), "the child never reached the model update"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    store = Store(tmp_path / "sotto.db")
    assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    latest = store.latest("crash")
    assert latest is not None and latest.source == "rules"
    assert "Nico's" in latest.state.memory_text()
    # The restarted host goes on from there.
    result = Agent(FakeLanguageModel(), store).run_turn("crash", "Make it three people.")
    assert result.turn == latest.turn + 1


def test_statements_never_run_the_model_for_a_reply(store: Store) -> None:
    model = FakeLanguageModel(replies=["{broken}"])
    agent = Agent(model, store)
    for i in range(8):
        result = agent.run_turn("s", f"Remind me to call shop {i}.")
        assert result.reply_source == "composed" and result.route == "confirm"
    assert model.stream_calls == []


def test_state_command_shows_history_and_rolls_back(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    from sotto.cli import main

    agent = Agent(FakeLanguageModel(), store)
    agent.run_turn("s", "Book a table at Nico's for four on Friday.")
    agent.run_turn("s", "Sorry, not four, five.")  # the count: four -> five
    assert main(["state", "s", "--diff", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    versions, current = lines[:-1], lines[-1]
    assert [v["source"] for v in versions] == ["create", "rules", "rules"]
    assert versions[-1]["turn"] == 2 and versions[-1]["changes"][0]["new"].endswith("five")
    assert any(f["value"] == "five" and f["kind"] == "quantity" for f in current["facts"])
    assert "four" not in json.dumps(current)
    assert main(["state", "s", "--rollback", "1", "--json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(f["value"] == "four" for f in json.loads(out[-1])["facts"])
    assert store.history("s")[-1].source == "user-edit"
    assert main(["state", "nope"]) != 0


def test_llm_load_reports_missing_and_invalid_models(tmp_path: Path) -> None:
    from sotto.engines import llm
    from sotto.errors import ModelLoadFailed, ModelNotFound

    with pytest.raises(ModelNotFound):
        llm.load(tmp_path / "missing.gguf")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file at all")
    with pytest.raises(ModelLoadFailed):
        llm.load(bogus)
    assert llm.default_threads() >= 1


def test_model_patch_is_skipped_when_the_user_already_spoke_again(store: Store) -> None:
    import threading

    gate = threading.Event()

    class GatedModel(FakeLanguageModel):
        def stream(self, messages: Any, **kw: Any) -> Any:
            gate.wait(5)
            return super().stream(messages, **kw)

    model = GatedModel(replies=["Water the plants in the morning."])
    runner = TurnRunner(Agent(model, store), FakeTTS())

    no_ladder = BudgetConfig(ladder=LadderConfig(enabled=False))  # nothing deferred by the clock here

    async def main() -> None:
        first = asyncio.create_task(run_turn(runner, "s", "How should I water the plants?", 1, budgets=no_ladder))
        await wait_until(lambda: runner.model_worker.busy_session == "s")
        second = asyncio.create_task(run_turn(runner, "s", "And feed the cat.", 2, budgets=no_ladder))
        await wait_until(lambda: runner.model_worker.pending() == 1)
        gate.set()
        outcome, _ = await first
        assert outcome.patch_skipped
        await second

    try:
        asyncio.run(main())
        runner.idle("s").result(timeout=10)
    finally:
        runner.close()
    assert store.traces("s", kind="state_update_skipped")
    assert len(model.complete_calls) == 1  # only the second turn's patch ran


def test_the_users_own_words_about_sessions_and_updates_are_spoken() -> None:
    from sotto.memory.sanitize import sanitize

    assert sanitize("Eight sessions.") == "Eight sessions."
    assert sanitize("Got it: the software update is on Friday.") is not None
    # the machinery's own phrases are still never spoken
    assert sanitize("I updated your memory.") is None and sanitize("Your session state is saved.") is None
