"""`sotto run` when the board is gone: the session ends with an error, not exit status 0.

Issue 15, items 1 and 9: after the receive task died, `sotto run` closed with "board gone
past the grace period" and exit status 0, so a service manager saw a clean stop. Here
the board really goes away (unplugged for longer than the grace period) under the
command's own serving code, with fake engines; the command must end with BoardGone
(exit status 3), while Ctrl+C still ends it quietly.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
from pathlib import Path

import pytest

from fakes_link import FakeBoard
from fakes_pipeline import fake_engines
from sotto import runtime
from sotto.commands import run as run_command
from sotto.errors import ModelNotFound, SottoError
from sotto.link.board_link import BoardLink, LinkOptions
from sotto.voice.harness import VoiceConfig


@pytest.fixture()
def fake_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # the typed-turns reader meets the end of input
    monkeypatch.setattr(runtime, "load_engines", lambda options: fake_engines())

    def no_recognizer(*args: object, **kwargs: object) -> object:
        raise ModelNotFound("no Vosk model in this test")

    monkeypatch.setattr(runtime, "make_recognizer", no_recognizer)
    monkeypatch.setattr(runtime, "RuntimeOptions", functools.partial(runtime.RuntimeOptions, voice=VoiceConfig(grace_s=0.5)))


def _args() -> argparse.Namespace:
    return argparse.Namespace(text=True, lang="en", asr_model=None, session="run-gone", profile=None, json=False)


async def _serve(board: FakeBoard, *, unplug: bool) -> None:
    options = runtime.EngineOptions(lang="en")
    link = BoardLink("fake://board", LinkOptions(baud=921600, hello_timeout_s=2.0, ping_interval_s=0.05,
                                                 detach_after_s=0.3, backoff_initial_s=0.01, backoff_max_s=0.02),
                     transport_factory=board.open_port)
    await link.open()
    try:
        task = asyncio.create_task(run_command._serve_link(_args(), options, link))
        await asyncio.sleep(0.5)
        if unplug:
            board.unplug()  # and it stays away
            await asyncio.wait_for(task, 20)
        else:
            task.cancel()  # what Ctrl+C does
            await task
    finally:
        await link.close()


def test_sotto_run_ends_with_an_error_when_the_board_is_gone(fake_pipeline: None) -> None:
    with pytest.raises(SottoError) as ended:
        asyncio.run(_serve(FakeBoard(), unplug=True))
    assert ended.value.code == "link_board_gone" and ended.value.exit_status != 0
    assert "grace period" in str(ended.value)


def test_ctrl_c_still_ends_sotto_run_quietly(fake_pipeline: None) -> None:
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(_serve(FakeBoard(), unplug=False))
