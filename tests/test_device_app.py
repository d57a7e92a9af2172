"""BoardApp under CPython, as the simulated board runs it (fast, fake peripherals)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent / "mpy"))

from board_harness import BoardHarness, pcm_ramp  # noqa: E402
from sotto_fw import app, config, wire  # noqa: E402


def test_run_until_stop_in_an_asyncio_loop() -> None:
    h = BoardHarness()

    async def main() -> None:
        task = asyncio.create_task(h.app.run())
        await asyncio.sleep(0.05)
        h.app.stop()
        await asyncio.wait_for(task, 2)

    asyncio.run(main())
    h.decoder.feed(h.port.take_output())
    assert [t for t, _, _ in h.take_all()][:1] == [wire.HELLO]


def test_run_is_cancellable() -> None:
    h = BoardHarness()

    async def main() -> bool:
        task = asyncio.create_task(h.app.run())
        await asyncio.sleep(0.02)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(main())


def test_profiles_are_complete_and_independent_copies() -> None:
    for name in config.profile_names():
        p = config.get_profile(name)
        for key in ("board", "transport", "baud", "mic_i2s", "speaker_i2s", "mic_rates", "speaker_rates",
                    "speaker_buffer", "frame_ms", "button_pin", "led_pin", "outputs"):
            assert key in p, (name, key)
        assert p["transport"] in ("uart", "usb-cdc")
        p["baud"] = 1
        assert config.get_profile(name)["baud"] != 1
    assert config.DEFAULT_PROFILE in config.profile_names()


def test_active_profile_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert config.active_profile_name() == config.DEFAULT_PROFILE
    (tmp_path / config.PROFILE_FILE).write_text("rp2040\n")
    assert config.active_profile()["board"] == "rp2040"
    (tmp_path / config.PROFILE_FILE).write_text("nonsense\n")
    assert config.active_profile_name() == config.DEFAULT_PROFILE


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=700), max_size=12))
def test_garbage_never_crashes_the_board(chunks: list[bytes]) -> None:
    h = BoardHarness()
    h.welcome()
    h.run(2)
    for chunk in chunks:
        h.port.to_board.extend(chunk)
        h.run(3)
    assert h.app.stats["errors"] == 0
    h.take_all()
    h.port.to_board.extend(b"\x00")  # end any half frame the garbage left open
    h.send(wire.PING, wire.pack_ping(5, 6))
    h.run(3)
    assert len(h.take(wire.PONG)) == 1


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(0, 300)), min_size=1, max_size=20))
def test_a_host_that_respects_credits_never_overflows_the_ring(sends: list[tuple[int, int]]) -> None:
    """The host's rule: PCM bytes in flight after CREDIT.last_seq <= CREDIT.free_bytes."""
    h = BoardHarness(speaker_room=128, speaker_buffer=4096)
    h.welcome()
    h.run(2)
    in_flight: dict[int, int] = {}  # seq -> PCM bytes
    credit = None
    played_total = 0
    for size, speaker_room in sends:
        for _, _, payload in h.take(wire.CREDIT):
            credit = wire.unpack_credit(payload)
        if credit is not None:
            _, last_seq, free = credit
            outstanding = sum(n for seq, n in in_flight.items() if ((seq - last_seq) & 0xFFFF) < 0x8000 and seq != last_seq)
            size = min(size, free - outstanding) & ~1
            if size > 0:
                seq = h.send(wire.AUDIO_DOWN, wire.pack_audio_down(1, pcm_ramp(min(size, 1000))))
                in_flight[seq] = min(size, 1000)
        h.speaker.room = speaker_room
        h.run(3)
        played_total = len(h.speaker.played)
    assert h.app.player.overflow == 0
    assert h.app.stats["bytes_played"] == played_total


def test_reset_mid_playback_starts_clean() -> None:
    h = BoardHarness(speaker_room=32)
    h.welcome()
    h.run(2)
    h.send(wire.AUDIO_DOWN, wire.pack_audio_down(2, pcm_ramp(800)))
    h.run(3)
    h.app.reset()
    h.run(1)
    assert h.app.player.free() == h.app.profile["speaker_buffer"]
    assert not h.app.handshake.active()
    assert [t for t, _, _ in h.take_all()][-1:] == [wire.HELLO]
    assert h.speaker.stops >= 1


def test_board_app_accepts_default_clock() -> None:
    h = BoardHarness()
    board = app.BoardApp(h.app.profile, h.port, h.mic, h.speaker)
    board.step()
    h.decoder.feed(h.port.take_output())
    assert [t for t, _, _ in h.take_all()] == [wire.HELLO]


HOST_ACTIONS = st.one_of(
    st.tuples(st.just("audio"), st.integers(1, 3), st.integers(0, 600)),
    st.tuples(st.just("end"), st.integers(1, 3), st.just(0)),
    st.tuples(st.just("stop"), st.integers(1, 3), st.just(0)),
    st.tuples(st.just("ping"), st.integers(0, 1000), st.just(0)),
    st.tuples(st.just("wait"), st.integers(1, 50), st.integers(0, 512)),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(HOST_ACTIONS, min_size=1, max_size=30))
def test_random_host_sessions_keep_playback_accounting_exact(actions: list[tuple[str, int, int]]) -> None:
    """Whatever the host does, PLAYBACK reports add up to what reached the speaker."""
    h = BoardHarness(speaker_room=128)
    h.welcome()
    h.run(2)
    sent: dict[int, int] = {}
    pings = 0
    for kind, a, b in actions:
        if kind == "audio":
            h.send(wire.AUDIO_DOWN, wire.pack_audio_down(a, pcm_ramp(b & ~1)))
            sent[a] = sent.get(a, 0) + (b & ~1)
        elif kind == "end":
            h.send(wire.AUDIO_DOWN, wire.pack_audio_down(a, b""))
        elif kind == "stop":
            h.send(wire.STOP, wire.pack_stop(a))
        elif kind == "ping":
            h.send(wire.PING, wire.pack_ping(a, 0))
            pings += 1
        else:
            h.speaker.room = b
            h.run(a)
    h.speaker.room = 1 << 20
    h.run(20)
    frames = h.take_all()
    assert h.app.stats["errors"] == 0
    assert len([f for f in frames if f[0] == wire.PONG]) == pings
    reports = [wire.unpack_playback(p) for t, _, p in frames if t == wire.PLAYBACK]
    for state, stream, played, _ in reports:
        assert played <= sent.get(stream, 0)
        if state == wire.PLAY_STARTED:
            assert played == 0
    # Every stream reported drained or stopped at most once; drained streams played in full.
    finals = [(s, stream) for s, stream, _, _ in reports if s == wire.PLAY_DRAINED]
    assert len(finals) == len(set(finals))
    assert h.app.stats["bytes_played"] == len(h.speaker.played)
    assert h.app.player.overflow == 0
