"""Voice harness with fakes: turn order, commits, barge-in, degradation, session lifecycle."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Awaitable, Callable

import pytest

from fakes_clock import SimulatedClock, quiet_engine
from fakes_voice import Delay, FakeAgent, FakePort, FakeRecognizer, FakeTTS, action, noise, silence, tone
from sotto.engines.base import Transcript
from sotto.voice import events as ev
from sotto.voice.budgets import BudgetConfig
from sotto.voice.harness import VoiceConfig, VoiceSession
from sotto.voice.phases import Phase
from sotto.voice.trace import read_trace
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.usage import UsageRecord

Scenario = Callable[[FakePort, FakeRecognizer, VoiceSession], Awaitable[None]]


def make_session(tmp_path: Path, agent: FakeAgent | None = None, config: VoiceConfig | None = None,
                 session_id: str = "test-session", sinks: tuple = ()) -> tuple[VoiceSession, FakePort, FakeRecognizer, FakeAgent]:
    """A session on simulated time: the board, the agent's pauses and every timeout run on one clock."""
    clock = SimulatedClock()
    port = FakePort(clock=clock)
    recognizer = FakeRecognizer()
    agent = agent or FakeAgent()
    agent.sleep = clock.blocking_sleep
    runner = TurnRunner(agent, FakeTTS(), clock=clock)  # type: ignore[arg-type]
    clock.quiet = quiet_engine(runner, clock)
    session = VoiceSession(port, recognizer, runner, session_id=session_id, config=config, trace_folder=tmp_path,
                           sinks=sinks, clock=clock)
    return session, port, recognizer, agent


def clock_of(session: VoiceSession) -> SimulatedClock:
    assert isinstance(session.clock, SimulatedClock)
    return session.clock


def run_scenario(session: VoiceSession, port: FakePort, recognizer: FakeRecognizer, scenario: Scenario) -> UsageRecord:
    async def main() -> UsageRecord:
        clock = clock_of(session)
        task = asyncio.create_task(session.run())
        await clock.run_until(lambda: session.phase == Phase.LISTENING)
        await scenario(port, recognizer, session)
        port.close()
        try:
            await clock.run_until(task.done, what="the session's end")
            return task.result()
        finally:
            session.runner.close()

    return asyncio.run(main())


def user_says(port: FakePort, recognizer: FakeRecognizer, turn: int, partial: str, final: str) -> None:
    recognizer.next(Transcript(turn, partial, final=False))
    port.mic(tone(40))
    recognizer.next(Transcript(turn, final, final=True))
    port.mic(silence(20))


def types(session: VoiceSession) -> list[str]:
    return [e.type for e in session.trace.events]


def test_positive_turn_event_order_and_metrics(tmp_path: Path) -> None:
    session, port, recognizer, agent = make_session(tmp_path)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "turn on", "turn on the light")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    order = [t for t in types(session) if t in (ev.PARTIAL_TRANSCRIPT, ev.FINAL_TRANSCRIPT, ev.AGENT_SPEECH_STARTED, ev.AGENT_SPEECH_CHUNK, ev.SESSION_CLOSED)]
    # Collapse repeated chunk events to check the order of kinds.
    kinds = [t for i, t in enumerate(order) if i == 0 or order[i - 1] != t]
    assert kinds == [ev.PARTIAL_TRANSCRIPT, ev.FINAL_TRANSCRIPT, ev.AGENT_SPEECH_STARTED, ev.AGENT_SPEECH_CHUNK, ev.SESSION_CLOSED]
    # Only the final (and the completed reply) are in the conversation.
    assert [(m.role, m.content) for m in session.conversation.messages] == [("user", "turn on the light"), ("assistant", "Sure. Done.")]
    record = usage.turns[0]
    assert record.stop_reason == "completed" and not record.interrupted
    assert usage.status == "completed"
    # Every metric of the turn is in the usage record and in the persisted trace.
    for metric in ("first_byte_ms", "first_answer_ms", "total_turn_ms"):
        assert getattr(record, metric) is not None and getattr(record, metric) >= 0
    stored = list(read_trace("test-session", tmp_path))
    timing = {e.data["metric"]: e.data["value_ms"] for e in stored if e.type == ev.VOICE_TIMING}
    assert set(timing) == {"first_byte_ms", "first_answer_ms", "total_turn_ms"}
    assert timing["first_byte_ms"] == round(record.first_byte_ms or 0, 1)
    closed = [e for e in stored if e.type == ev.SESSION_CLOSED][0]
    assert closed.data["usage"]["first_byte_ms_p50"] == round(record.first_byte_ms or 0, 1)
    summary = usage.summary()
    assert summary["turns"] == 1 and summary["total_turn_ms_p50"] is not None
    # The file is plain JSON lines.
    lines = (tmp_path / "test-session.jsonl").read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == [e.type for e in stored]
    assert port.ended_streams == [1]


def test_partial_after_final_and_repeated_final_change_nothing(tmp_path: Path) -> None:
    session, port, recognizer, agent = make_session(tmp_path)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "what is", "what is the time")
        await clock_of(session).run_until(lambda: len(session.conversation.messages) >= 1)
        committed = list(session.conversation.messages)
        recognizer.next(Transcript(1, "what is the tide", final=False), Transcript(1, "what is the tide", final=True))
        port.mic(silence(20))
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        assert session.conversation.messages[0] == committed[0]

    usage = run_scenario(session, port, recognizer, scenario)
    user_messages = [m.content for m in session.conversation.messages if m.role == "user"]
    assert user_messages == ["what is the time"]
    assert [e.data["text"] for e in session.trace.of_type(ev.FINAL_TRANSCRIPT)] == ["what is the time"]
    assert all(e.data["text"] != "what is the tide" for e in session.trace.of_type(ev.PARTIAL_TRANSCRIPT))
    assert len(agent.turns) == 1 and len(usage.turns) == 1


def test_barge_in_by_button_cancels_a_running_board_action(tmp_path: Path) -> None:
    agent = FakeAgent(script={
        1: [action("volume", 30, "speaker volume 30"), action("gpio", 1, "lamp on"), "Done, louder now."],
        2: ["Okay."],
    })
    session, port, recognizer, _ = make_session(tmp_path, agent)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        port.command_gate = asyncio.Event()  # the first action blocks on the board; the second never runs
        user_says(port, recognizer, 1, "louder", "louder please")
        await clock_of(session).run_until(lambda: port.commands_pending != [])
        port.button()
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        port.command_gate = None
        user_says(port, recognizer, 2, "thanks", "thanks")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    first, second = usage.turns
    assert first.stop_reason == "interrupted" and first.reply == ""
    assert first.actions_cancelled == ["speaker volume 30"] and first.actions_done == []
    assert port.commands == [] and port.commands_cancelled == [("volume", 30)]
    assert port.sent == [] or all(s.stream_id == 2 for s in port.sent)  # nothing of turn 1 was played
    assert usage.failed_attempts == 0 and usage.barge_ins == 1
    assert second.stop_reason == "completed"


def test_barge_in_by_button_stops_the_reply_then_next_turn_runs(tmp_path: Path) -> None:
    agent = FakeAgent(script={
        1: ["Here is a long answer with many words in it.", Delay(5.0), "And more words follow after that."],
        2: ["Okay."],
    })
    session, port, recognizer, _ = make_session(tmp_path, agent)
    port.auto_drain = False

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "tell me", "tell me a story")
        await clock_of(session).run_until(lambda: len(session.trace.of_type(ev.AGENT_SPEECH_CHUNK)) >= 9)
        port.button()
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        port.auto_drain = True
        user_says(port, recognizer, 2, "thanks", "thanks")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    first, second = usage.turns
    assert first.stop_reason == "interrupted" and first.interrupted
    assert first.reply == "" and first.barge_in_ms is not None
    assert usage.failed_attempts == 0 and usage.barge_ins == 1
    # No old audio after STOP, and the interrupted reply never entered the conversation.
    assert port.stopped_streams == [1]
    assert not any(s.after_stop for s in port.sent)
    assert [m.content for m in session.conversation.messages] == ["tell me a story", "thanks", "Okay."]
    assert agent.cancelled == [1]  # the model stream was stopped
    # What the board played (half of what was sent) is in the barge-in record, and only there.
    barge = session.trace.of_type(ev.BARGE_IN)[0]
    assert barge.data["source"] == "button" and barge.data["playback_confirmed"] is True
    assert 0 < len(barge.data["spoken_prefix"].split()) < len("Here is a long answer with many words in it.".split())
    assert second.stop_reason == "completed"
    chunks_turn1 = [e for e in session.trace.events if e.type == ev.AGENT_SPEECH_CHUNK and e.turn_id == 1]
    barge_index = session.trace.events.index(barge)
    assert all(session.trace.events.index(c) < barge_index for c in chunks_turn1)
    # Listening resumed only after the board confirmed it stopped.
    assert Phase.INTERRUPTED in session.phases.history


def test_side_effects_of_an_interrupted_turn_are_told_to_the_next(tmp_path: Path) -> None:
    agent = FakeAgent(script={
        1: [action("gpio", 1, "lamp on"), "The lamp is on and I will keep talking for a while now."],
        2: ["Fine."],
    })
    session, port, recognizer, _ = make_session(tmp_path, agent)
    port.auto_drain = False

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "lamp", "lamp on please")
        await clock_of(session).run_until(lambda: len(session.trace.of_type(ev.AGENT_SPEECH_CHUNK)) >= 2)
        port.button()
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        port.auto_drain = True
        user_says(port, recognizer, 2, "ok", "ok")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    assert usage.turns[0].actions_done == ["lamp on"] and port.commands == [("gpio", 1)]
    assert agent.turns[1].prior_side_effects == ("lamp on",)
    assert usage.turns[0].stop_reason == "interrupted"


def test_voice_over_the_agent_interrupts_but_a_cough_does_not(tmp_path: Path) -> None:
    long_reply = [" ".join(["word"] * 40)]
    agent = FakeAgent(script={1: long_reply, 2: long_reply})
    session, port, recognizer, _ = make_session(tmp_path, agent)
    port.auto_drain = False

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "talk", "talk to me")
        await clock_of(session).run_until(lambda: session.phase == Phase.SPEAKING)
        port.mic(noise(60, 4000))  # a cough: loud but short
        port.mic(silence(200))
        await clock_of(session).advance(0.05)
        await clock_of(session).run_until(lambda: len(recognizer.chunks) >= 15)
        assert session.trace.of_type(ev.BARGE_IN) == []
        port.mic(noise(400, 4000, seed=2))  # the user talks over the agent
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    barges = session.trace.of_type(ev.BARGE_IN)
    assert len(barges) == 1 and barges[0].data["source"] == "voice"
    assert usage.turns[0].stop_reason == "interrupted"


def test_non_empty_partial_while_speaking_interrupts(tmp_path: Path) -> None:
    agent = FakeAgent(script={1: [" ".join(["word"] * 40)]})
    session, port, recognizer, _ = make_session(tmp_path, agent)
    port.auto_drain = False

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "talk", "talk to me")
        await clock_of(session).run_until(lambda: session.phase == Phase.SPEAKING)
        recognizer.next(Transcript(2, "wait", final=False))
        port.mic(silence(20))
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    run_scenario(session, port, recognizer, scenario)
    assert session.trace.of_type(ev.BARGE_IN)[0].data["source"] == "partial"


def test_late_answer_degrades_live_and_turn_says_so(tmp_path: Path) -> None:
    # Budgets and ladder at 1/10 scale; the answer comes after 300 ms: acknowledge, shorten, defer.
    config = VoiceConfig(budgets=BudgetConfig().scaled(0.1))
    agent = FakeAgent(script={1: [Delay(0.3), "First.", "Second."]})
    session, port, recognizer, _ = make_session(tmp_path, agent, config)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "plan", "plan my week")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    record = usage.turns[0]
    assert record.degraded
    assert record.degrade_actions == ["acknowledge", "shorten", "defer"]
    assert record.stop_reason == "deferred"
    kinds = [e.data["kind"] for e in session.trace.of_type(ev.AGENT_SPEECH_STARTED)]
    assert kinds == ["acknowledgement"]
    texts = {e.data["text"] for e in session.trace.of_type(ev.AGENT_SPEECH_CHUNK)}
    assert session.phrases is not None and session.phrases.deferral.text in texts
    # Defer really defers: the turn was told to skip its deep work, and to say one sentence.
    assert agent.turns[0].run_model is False and agent.turns[0].max_sentences == 1
    assert record.over_budget_without_degradation() == []
    assert [e.data["action"] for e in session.trace.of_type(ev.DEGRADE)] == ["acknowledge", "shorten", "defer"]
    assert usage.summary()["degraded_turns"] == 1 and usage.summary()["defects"] == []
    assert usage.failed_attempts == 0


def test_slow_total_turn_shortens_the_answer(tmp_path: Path) -> None:
    config = VoiceConfig(budgets=BudgetConfig().scaled(0.1))
    sentences = [f"Sentence {i}." for i in range(6)]
    script = [sentences[0], Delay(0.25), *sentences[1:]]
    agent = FakeAgent(script={1: script})
    session, port, recognizer, _ = make_session(tmp_path, agent, config)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "tell", "tell me everything")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    record = usage.turns[0]
    assert "shorten" in record.degrade_actions
    assert len(record.reply.split(".")) - 1 < 6


def test_over_budget_without_degradation_is_flagged(tmp_path: Path) -> None:
    budgets = BudgetConfig().scaled(0.1)
    budgets.ladder = type(budgets.ladder)(enabled=False)
    config = VoiceConfig(budgets=budgets)
    agent = FakeAgent(script={1: [Delay(0.3), "Late."]})
    session, port, recognizer, _ = make_session(tmp_path, agent, config)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "hi", "hi there")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    record = usage.turns[0]
    assert not record.degraded
    assert "first_byte_ms" in record.over_budget_without_degradation()
    assert usage.summary()["defects"] == [1]
    codes = {e.data["code"] for e in session.trace.of_type(ev.VOICE_TIMING)}
    assert "voice_first_byte_ms" in codes


def test_failed_reply_is_counted_and_session_goes_on(tmp_path: Path) -> None:
    agent = FakeAgent(default=["Back."], fail_start={1: RuntimeError("model crashed")})
    session, port, recognizer, _ = make_session(tmp_path, agent)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "a", "first")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        user_says(port, recognizer, 2, "b", "second")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    assert [t.stop_reason for t in usage.turns] == ["failed", "completed"]
    assert usage.failed_attempts == 1 and "model crashed" in (usage.turns[0].error or "")


def test_board_back_within_grace_resumes_gone_past_it_closes_cancelled(tmp_path: Path) -> None:
    config = VoiceConfig(grace_s=0.2)
    session, port, recognizer, _ = make_session(tmp_path, config=config)

    async def main() -> UsageRecord:
        task = asyncio.create_task(session.run())
        await clock_of(session).run_until(lambda: session.phase == Phase.LISTENING)
        port.link("detached")
        await clock_of(session).advance(0.05)
        port.link("attached")
        await clock_of(session).advance(0.3)
        assert not task.done()  # resumed: same session
        user_says(port, recognizer, 1, "hi", "hello again")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        port.link("detached")
        await clock_of(session).run_until(task.done, what="the grace period's end")  # 0.2 s, simulated
        session.runner.close()
        return task.result()

    usage = asyncio.run(main())
    assert usage.status == "cancelled" and usage.turns[0].stop_reason == "completed"
    closed = session.trace.of_type(ev.SESSION_CLOSED)
    assert len(closed) == 1 and closed[0].data["status"] == "cancelled"


def test_ctrl_c_closes_the_session_as_cancelled(tmp_path: Path) -> None:
    agent = FakeAgent(script={1: [Delay(5.0), "never"]})
    session, port, recognizer, _ = make_session(tmp_path, agent)

    async def main() -> None:
        task = asyncio.create_task(session.run())
        await clock_of(session).run_until(lambda: session.phase == Phase.LISTENING)
        user_says(port, recognizer, 1, "hm", "think hard")
        await clock_of(session).run_until(lambda: agent.turns != [])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await clock_of(session).run_until(lambda: agent.cancelled == [1])
        session.runner.close()

    asyncio.run(main())
    assert session.usage.status == "cancelled"
    assert session.usage.turns[0].stop_reason == "cancelled"
    assert agent.cancelled == [1]
    assert session.trace.of_type(ev.SESSION_CLOSED)[0].data["status"] == "cancelled"
    assert session.usage.failed_attempts == 0


def test_extra_sink_gets_every_event_and_turn_record_has_demo_fields(tmp_path: Path) -> None:
    received: list[ev.TraceEvent] = []
    session, port, recognizer, _ = make_session(tmp_path, session_id="sink", sinks=(received.append,))

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "x", "hello")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    assert [e.type for e in received] == types(session)
    record = usage.turns[0].to_json_dict()
    for key in ("turn", "user", "final_transcript", "reply", "first_byte_ms", "first_answer_ms", "total_turn_ms",
                "barge_in_ms", "interrupted", "degraded", "degrade_actions"):
        assert key in record
    assert session.phases.history[:4] == [Phase.IDLE, Phase.LISTENING, Phase.THINKING, Phase.SPEAKING]
    assert session.phases.history[-1] == Phase.IDLE


def test_answer_stalling_mid_reply_is_cut_at_the_total_turn_limit(tmp_path: Path) -> None:
    config = VoiceConfig(budgets=BudgetConfig().scaled(0.1))
    agent = FakeAgent(script={1: ["Start.", Delay(5.0), "Never said."]})
    session, port, recognizer, _ = make_session(tmp_path, agent, config)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "go", "go on")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    usage = run_scenario(session, port, recognizer, scenario)
    record = usage.turns[0]
    assert record.reply == "Start." and record.stop_reason == "completed"
    assert record.degrade_actions == ["shorten"] and agent.cancelled == [1]


def test_a_board_action_decided_after_the_ladder_gave_up_still_reaches_the_board_once(tmp_path: Path) -> None:
    # A loaded host: the turn's start (rules, actions) takes 4 s. The ladder acknowledges,
    # shortens, defers and gives the answer up at 2.5 s, long before the action is decided.
    agent = FakeAgent(script={1: [action("volume", 30, "volume set to 30"), "Okay, volume set to 30."], 2: ["Fine."]},
                      start_delay={1: 4.0})
    session, port, recognizer, _ = make_session(tmp_path, agent)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "volume", "set the volume to 30")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        user_says(port, recognizer, 2, "ok", "ok")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    first = usage.turns[0]
    assert first.stop_reason == "deferred" and "defer" in first.degrade_actions
    assert "volume set to 30" not in first.reply  # the reply gave up before the action was decided
    assert port.commands == [("volume", 30)]  # the action reached the board, exactly once
    assert first.actions_done == ["volume set to 30"] and first.actions_not_sent == []
    actions = [(e.turn_id, e.data["status"]) for e in session.trace.of_type(ev.ACTION)]
    assert actions == [(1, "done")]
    # The given-up reply never said it: the next turn is told what already ran.
    assert agent.turns[1].prior_side_effects == ("volume set to 30",)
    assert agent.withdrawn == []  # an action that ran stays in the memory


def test_a_barge_in_before_the_decision_sends_nothing_and_says_why(tmp_path: Path) -> None:
    # The button is pressed while the turn's start is still running: the action is decided
    # after the turn was cancelled, so it is reported not sent (with the reason), never sent.
    agent = FakeAgent(script={1: [action("gpio", 1, "lamp on"), "Okay, lamp on."], 2: ["Fine."]},
                      start_delay={1: 1.0})
    session, port, recognizer, _ = make_session(tmp_path, agent)

    async def scenario(port: FakePort, recognizer: FakeRecognizer, session: VoiceSession) -> None:
        user_says(port, recognizer, 1, "lamp", "lamp on please")
        await clock_of(session).run_until(lambda: len(agent.turns) == 0 and session.phase == Phase.THINKING)
        await clock_of(session).advance(0.3)
        port.button()
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)
        await clock_of(session).run_until(lambda: session.trace.of_type(ev.ACTION) != [])
        user_says(port, recognizer, 2, "ok", "ok")
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 2)

    usage = run_scenario(session, port, recognizer, scenario)
    assert usage.turns[0].stop_reason == "interrupted"
    assert port.commands == [] and port.commands_cancelled == []
    (event,) = session.trace.of_type(ev.ACTION)
    assert event.data["status"] == "not_sent" and event.data["reason"] == "interrupted: button"
    assert agent.turns[1].prior_side_effects == ()
    # The memory is told: it must not keep "lamp on" for a lamp the board never heard of.
    assert [w[1] for w in agent.withdrawn] == [("lamp on",)]


def test_a_reply_still_running_when_the_input_ends_is_cancelled_after_a_bound(tmp_path: Path) -> None:
    agent = FakeAgent(script={1: [Delay(5.0), "too late"]})
    session, port, recognizer, _ = make_session(tmp_path, agent, config=VoiceConfig(end_reply_s=0.5))

    async def main() -> UsageRecord:
        clock = clock_of(session)
        task = asyncio.create_task(session.run())
        await clock.run_until(lambda: session.phase == Phase.LISTENING)
        user_says(port, recognizer, 1, "hm", "think hard")
        await clock.run_until(lambda: agent.turns != [])
        started = clock.now()
        port.close()  # the board leaves while the answer is still being made
        await clock.run_until(task.done, what="the session's end")
        assert clock.now() - started < 5.0  # not held open for the whole answer
        session.runner.close()
        return task.result()

    usage = asyncio.run(main())
    assert usage.status == "completed"
    assert usage.turns[0].stop_reason == "cancelled"
