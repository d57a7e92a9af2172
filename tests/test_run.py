"""`sotto run`'s pieces: typed turns through the real pipeline over the simulated board."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fakes_pipeline import fake_engines
from sim_support import patient_link, until

from sotto.engines.base import AudioChunk, Transcript
from sotto.ids import SessionId
from sotto.link.board_link import BoardLink
from sotto.memory.store import Store
from sotto.runtime import Runtime
from sotto.voice.typed_turns import TypedTurnsRecognizer
from sotto.sim import SimulatedBoard
from sotto.voice import events as ev
from sotto.voice.events import TraceEvent

BAUD = 921600


class ScriptedRecognizer:
    name = "scripted"
    sample_rate = 16000

    def __init__(self, results: list[list[Transcript]]) -> None:
        self.results = results

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        return self.results.pop(0) if self.results else []

    def flush(self, turn_id: int) -> list[Transcript]:
        return []


def chunk(turn: int = 1, seq: int = 0) -> AudioChunk:
    return AudioChunk(turn, seq, bytes(640), 16000)


def test_a_typed_line_is_the_final_of_the_turn_being_heard() -> None:
    rec = TypedTurnsRecognizer(None)
    assert rec.accept(chunk()) == []
    rec.type_line("  hello   there \n")
    rec.type_line("   ")  # blank lines are not turns
    assert rec.accept(chunk(3)) == [Transcript(3, "hello there", final=True, confidence=1.0)]
    assert rec.accept(chunk(3, 1)) == []


def test_a_spoken_final_goes_first_and_the_typed_line_waits() -> None:
    spoken = Transcript(1, "spoken", final=True)
    rec = TypedTurnsRecognizer(ScriptedRecognizer([[spoken], []]))
    rec.type_line("typed")
    assert rec.accept(chunk()) == [spoken]
    assert rec.accept(chunk(2)) == [Transcript(2, "typed", final=True, confidence=1.0)]


@pytest.mark.realtime
def test_typed_turns_run_the_whole_pipeline_and_ctrl_c_closes_as_cancelled(tmp_path: Path) -> None:
    async def go() -> None:
        completed: list[dict[str, object]] = []

        def sink(event: TraceEvent) -> None:
            if event.type == ev.TURN_COMPLETED:
                completed.append(dict(event.data))

        store = Store(tmp_path / "run.db")
        runtime = Runtime(fake_engines(replies=("Nice to meet you, Maya.",)), store)
        recognizer = TypedTurnsRecognizer(None)
        with SimulatedBoard(baud=BAUD) as board:
            link = BoardLink(board.port_path, patient_link(BAUD))
            await link.open()
            try:
                session = runtime.voice_session(link, recognizer, session_id=SessionId("run-test"),
                                                trace_folder=tmp_path, sinks=(sink,))
                task = asyncio.create_task(session.run())
                recognizer.type_line("My name is Maya.")
                await until(lambda: bool(completed), what="the turn")
                assert completed[0]["stop_reason"] == "completed"
                assert completed[0]["reply"]
                result = await asyncio.wrap_future(session.outcomes[1].result)
                assert "Maya" in json.dumps(result.state.to_dict())
                task.cancel()  # what Ctrl+C does to the running session
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert session.usage.status == "cancelled"
            finally:
                await link.close()
                runtime.close()
                store.close()

    asyncio.run(go())
