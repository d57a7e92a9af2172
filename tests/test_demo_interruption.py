"""The demo's scripted talk-over is timed from the board's first speaker frame (simulated time)."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

import pytest

from fakes_clock import SimulatedClock
from sotto.demo.interruption import InterruptAt, InterruptionTimer, ReplyTooShort
from sotto.demo.runner import _TalkOver
from sotto.link import messages as m
from sotto.voice import events as ev
from sotto.voice.events import TraceEvent
from sotto_fw import wire

RATE = 22050


def run(script: Callable[[SimulatedClock, InterruptionTimer], Awaitable[None]], scripted_ms: float = 900.0,
        timeout_s: float = 30.0) -> tuple[InterruptAt | ReplyTooShort, float]:
    """Run the timer against a scripted board; (decision, seconds after the playback start)."""

    async def main() -> tuple[InterruptAt | ReplyTooShort, float]:
        clock = SimulatedClock()
        timer = InterruptionTimer(clock, scripted_ms)
        waiting = asyncio.create_task(timer.wait(timeout_s))
        await script(clock, timer)
        await clock.run_until(waiting.done, what="the decision")
        assert timer.started_at is not None
        return waiting.result(), round(clock.now() - timer.started_at, 3)

    return asyncio.run(main())


def test_the_user_talks_the_scripted_time_after_the_reply_starts_playing() -> None:
    async def board(clock: SimulatedClock, timer: InterruptionTimer) -> None:
        timer.audio_sent(3000.0)  # the host sent the whole reply ahead
        await clock.advance(0.7)  # ... and the board starts playing it 0.7 s later (line, buffering)
        timer.playback_started(clock.now())

    decision, after_s = run(board)
    assert decision == InterruptAt(900.0, pulled_in=False) and after_s == pytest.approx(0.9, abs=0.006)  # run_until's step


def test_a_short_reply_is_talked_over_earlier_so_the_barge_in_is_still_heard() -> None:
    async def board(clock: SimulatedClock, timer: InterruptionTimer) -> None:
        timer.playback_started(clock.now())
        timer.audio_sent(1000.0)  # "I don't know that one." is about a second long

    decision, after_s = run(board)
    assert isinstance(decision, InterruptAt) and decision.pulled_in
    assert decision.after_ms == 400.0  # 1000 ms of reply minus the 600 ms the talk-over needs to be heard


def test_audio_arriving_later_moves_the_point_back_to_the_script() -> None:
    async def board(clock: SimulatedClock, timer: InterruptionTimer) -> None:
        timer.playback_started(clock.now())
        timer.audio_sent(300.0)  # only an acknowledgement so far: too short to talk over
        await clock.advance(0.25)
        timer.audio_sent(2500.0)  # the answer follows

    decision, after_s = run(board)
    assert decision == InterruptAt(900.0, pulled_in=False) and after_s == pytest.approx(0.9, abs=0.006)  # run_until's step


def test_a_reply_that_ends_before_any_talk_over_could_be_heard_is_reported() -> None:
    async def board(clock: SimulatedClock, timer: InterruptionTimer) -> None:
        timer.playback_started(clock.now())
        timer.audio_sent(400.0)
        await clock.advance(0.4)
        timer.playback_ended()

    decision, after_s = run(board)
    assert decision == ReplyTooShort(400.0, 900.0) and after_s == pytest.approx(0.4, abs=0.006)
    assert "ended before the scripted interruption" in decision.describe()


def test_a_reply_that_never_plays_times_out() -> None:
    async def board(clock: SimulatedClock, timer: InterruptionTimer) -> None:
        return None

    async def main() -> None:
        clock = SimulatedClock()
        timer = InterruptionTimer(clock, 900.0)
        waiting = asyncio.create_task(timer.wait(5.0))
        await clock.advance(5.1)
        with pytest.raises(asyncio.TimeoutError):
            await waiting

    asyncio.run(main())


def test_a_reply_that_starts_but_never_ends_times_out() -> None:
    # "One moment." played, then the board detached: no end report ever comes. Seen hanging a
    # demo run for 9 minutes on a starved machine before the deadline covered this case.
    async def main() -> None:
        clock = SimulatedClock()
        timer = InterruptionTimer(clock, 200.0)
        waiting = asyncio.create_task(timer.wait(5.0))
        await clock.advance(1.0)
        timer.audio_sent(300.0)  # too short to talk over (300 - 600 < 0): wait for more audio or the end
        timer.playback_started(clock.now())
        await clock.advance(4.9)
        assert not waiting.done()  # the deadline counts from the playback start
        await clock.advance(0.2)
        with pytest.raises(asyncio.TimeoutError):
            await waiting

    asyncio.run(main())


def test_the_board_reports_and_the_trace_feed_the_timer() -> None:
    async def main() -> tuple[InterruptAt | ReplyTooShort, float]:
        clock = SimulatedClock()
        timer = InterruptionTimer(clock, 900.0)
        talk = _TalkOver(timer, RATE)
        waiting = asyncio.create_task(timer.wait(30.0))
        chunk = 2 * RATE // 10  # 100 ms of PCM16
        for offset in range(0, 20 * chunk, chunk):  # 2 s of reply audio sent on stream 7
            talk.on_event(TraceEvent(ev.AGENT_SPEECH_CHUNK, "s", 7, 0.0, {"stream": 7, "bytes": chunk, "offset": offset}))
        await clock.advance(0.2)
        talk.on_message(m.Playback(wire.PLAY_STARTED, 7, 0, 0), clock.now())  # the board's first speaker frame
        talk.on_event(TraceEvent(ev.AGENT_SPEECH_CHUNK, "s", 9, 0.0, {"stream": 9, "bytes": chunk}))  # another stream
        talk.on_message(m.Playback(wire.PLAY_DRAINED, 9, 0, 0), clock.now())  # not this reply's end
        await clock.run_until(waiting.done)
        assert timer.audio_ms == pytest.approx(2000.0)
        assert timer.started_at is not None
        return waiting.result(), round(clock.now() - timer.started_at, 3)

    decision, after_s = asyncio.run(main())
    assert decision == InterruptAt(900.0, pulled_in=False) and after_s == pytest.approx(0.9, abs=0.006)  # run_until's step
