"""The agent never interrupts itself on its own echo; the user talking over it still does."""

from __future__ import annotations

import asyncio
from pathlib import Path


from fakes_clock import SimulatedClock, quiet_engine
from fakes_voice import EchoBoard, FakeAgent, FakeRecognizer, NoiseTTS, noise
from sotto.engines.base import Transcript
from sotto.voice import events as ev
from sotto.voice.bargein import BargeInConfig
from sotto.voice.harness import VoiceConfig, VoiceSession
from sotto.voice.phases import Phase
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.usage import UsageRecord


REPLY: list = ["one two three four five six seven eight.", "nine ten eleven twelve thirteen fourteen."]


def run_echo_session(tmp_path: Path, config: VoiceConfig, interrupt_after_s: float | None) -> tuple[VoiceSession, EchoBoard, UsageRecord]:
    clock = SimulatedClock()
    board = EchoBoard(echo_gain=0.6, echo_delay_ms=60, clock=clock)
    recognizer = FakeRecognizer()
    runner = TurnRunner(FakeAgent(script={1: REPLY}), NoiseTTS(), clock=clock)  # type: ignore[arg-type]
    clock.quiet = quiet_engine(runner, clock)
    session = VoiceSession(board, recognizer, runner, session_id="echo", config=config, trace_folder=tmp_path, clock=clock)

    async def main() -> UsageRecord:
        task = asyncio.create_task(session.run())
        mic = asyncio.create_task(board.run_mic())
        await clock.run_until(lambda: session.phase == Phase.LISTENING)
        recognizer.next(Transcript(1, "count", final=False))
        await clock.advance(0.05)
        recognizer.next(Transcript(1, "count for me", final=True))
        await clock.run_until(lambda: session.phase == Phase.SPEAKING)
        if interrupt_after_s is not None:
            await clock.advance(interrupt_after_s)
            board.user_audio += noise(500, 4000, seed=9)
        await clock.run_until(lambda: len(session.usage.turns) == 1, limit_s=10)
        board.close()
        await clock.run_until(lambda: task.done() and mic.done(), what="the session's end")
        runner.close()
        return task.result()

    return session, board, asyncio.run(main())


def test_own_echo_never_triggers_barge_in(tmp_path: Path) -> None:
    session, board, usage = run_echo_session(tmp_path, VoiceConfig(), interrupt_after_s=None)
    assert session.trace.of_type(ev.BARGE_IN) == []
    assert usage.turns[0].stop_reason == "completed"
    assert board.ended_streams == [1]


def test_user_over_the_echo_interrupts(tmp_path: Path) -> None:
    session, board, usage = run_echo_session(tmp_path, VoiceConfig(), interrupt_after_s=0.4)
    barges = session.trace.of_type(ev.BARGE_IN)
    assert len(barges) == 1 and barges[0].data["source"] == "voice"
    assert usage.turns[0].stop_reason == "interrupted"
    assert barges[0].data["playback_confirmed"] is True
    assert not any(s.after_stop for s in board.sent)


def test_without_the_echo_reference_the_echo_would_interrupt(tmp_path: Path) -> None:
    # Control: a gate that cannot look back far enough to find the 60 ms echo mistakes it for the user.
    blind = VoiceConfig(barge_in=BargeInConfig(echo_max_lag_ms=0.0))
    session, _board, usage = run_echo_session(tmp_path, blind, interrupt_after_s=None)
    assert len(session.trace.of_type(ev.BARGE_IN)) == 1
    assert usage.turns[0].stop_reason == "interrupted"
