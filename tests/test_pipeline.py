"""The pipeline over the real simulated board and host link, with fake engines: a turn's
board action runs on the board before the reply's audio, and a barge-in cancels it."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest

from fakes_pipeline import fake_engines
from sotto.engines.config import EngineConfig
from sotto.ids import SessionId
from sotto.link import messages as m
from sotto.link.board_link import BoardLink, LinkOptions
from sotto.memory.store import Store
from sotto.runtime import EngineOptions, Runtime, load_engines
from sotto.voice.typed_turns import TypedTurnsRecognizer
from sotto.sim import SimError, SimulatedBoard
from sotto.voice import events as ev
from sotto.voice.events import TraceEvent
from sotto.voice.harness import VoiceSession
from sotto_fw import wire
from sim_support import patient_link, until

BAUD = 921600


Scenario = Callable[[SimulatedBoard, BoardLink, VoiceSession, TypedTurnsRecognizer, list[tuple[str, Any]]],
                    Awaitable[None]]


def run_with_board(tmp_path: Path, scenario: Scenario, **link_options: Any) -> None:
    async def go() -> None:
        store = Store(tmp_path / "pipeline.db")
        runtime = Runtime(fake_engines(replies=("Noted.",)), store)
        recognizer = TypedTurnsRecognizer(None)
        with SimulatedBoard(baud=BAUD) as board:
            link = BoardLink(board.port_path, patient_link(BAUD, **link_options))
            await link.open()
            # One timeline: the session's trace events and the board's COMMAND_DONE events, in arrival order.
            timeline: list[tuple[str, Any]] = []

            def on_message(message: object, host_t: float) -> None:
                if isinstance(message, m.Event) and message.kind == wire.EV_COMMAND_DONE:
                    timeline.append(("command_done", board.speaker.volume))

            def sink(event: TraceEvent) -> None:
                timeline.append((event.type, event))
                if event.type == ev.AGENT_SPEECH_STARTED:
                    timeline.append(("volume_at_speech", board.speaker.volume))

            link.add_listener(on_message)
            session = runtime.voice_session(link, recognizer, session_id=SessionId("pipeline-test"), sinks=(sink,),
                                       trace_folder=tmp_path)
            task = asyncio.create_task(session.run())
            try:
                await scenario(board, link, session, recognizer, timeline)
            finally:
                task.cancel()
                await asyncio.wait({task})
                await link.close()
                runtime.close()
                store.close()

    asyncio.run(go())


def turns_completed(timeline: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [dict(e.data) for kind, e in timeline if kind == ev.TURN_COMPLETED]


@pytest.mark.realtime
def test_a_spoken_volume_request_sets_the_board_volume_before_the_reply_audio(tmp_path: Path) -> None:
    async def scenario(board: SimulatedBoard, link: BoardLink, session: VoiceSession,
                       recognizer: TypedTurnsRecognizer, timeline: list[tuple[str, Any]]) -> None:
        assert board.speaker.volume == 100
        recognizer.type_line("Set the volume to 30.")
        await until(lambda: turns_completed(timeline), what="the turn")
        record = turns_completed(timeline)[0]
        assert record["stop_reason"] == "completed"
        assert record["actions_done"] == ["volume set to 30"] and record["actions_cancelled"] == []
        assert record["reply"] == "Okay, volume set to 30."
        assert board.speaker.volume == 30
        kinds = [kind for kind, _ in timeline]
        done = kinds.index("command_done")
        action = next(i for i, (kind, e) in enumerate(timeline) if kind == ev.ACTION and e.data["status"] == "done")
        first_audio = kinds.index(ev.AGENT_SPEECH_CHUNK)
        # The board confirmed the command (its speaker already at 30) before any reply audio went out.
        assert done < action < first_audio
        assert timeline[done][1] == 30 and ("volume_at_speech", 30) in timeline
        result = await asyncio.wrap_future(session.outcomes[1].result)
        assert "volume set to 30" in [f.value for f in result.state.facts]

    run_with_board(tmp_path, scenario)


@pytest.mark.realtime
def test_a_barge_in_while_the_action_is_pending_cancels_it(tmp_path: Path) -> None:
    async def scenario(board: SimulatedBoard, link: BoardLink, session: VoiceSession,
                       recognizer: TypedTurnsRecognizer, timeline: list[tuple[str, Any]]) -> None:
        # The board hears nothing until the line is restored below: the COMMAND is lost and
        # the action stays pending however slowly the turn starts or the barge-in comes (the
        # board keeps the session through the silence: silence_timeout_s below; the host waits
        # for the command's confirmation longer than the test runs: patient_link). The line is
        # cut only once the board runs on our WELCOME: link.open() returns when the host has
        # sent it, and a WELCOME lost in the cut leaves the board without a session (no mic
        # audio, no turn: the test hung whenever the board started quickly).
        await until(lambda: board.welcomed, what="the board on the host's WELCOME")
        board.silence_host(60.0)
        recognizer.type_line("Set the volume to 30.")
        # Private peek: the harness's in-flight action (no trace event marks an action's start).
        await until(lambda: session._reply is not None and session._reply.running_action, what="the pending action")
        board.press_button()
        await until(lambda: turns_completed(timeline), what="the interrupted turn")
        board.release_button()
        record = turns_completed(timeline)[0]
        assert record["stop_reason"] == "interrupted"
        assert record["actions_cancelled"] == ["volume set to 30"] and record["actions_done"] == []
        assert not any(kind == ev.AGENT_SPEECH_CHUNK for kind, _ in timeline)  # no reply audio for it
        assert any(kind == ev.ACTION and e.data["status"] == "cancelled" for kind, e in timeline)
        board.silence_host(0.0)  # the line is back
        recognizer.type_line("Thanks.")
        await until(lambda: len(turns_completed(timeline)) == 2, what="the next turn")
        # A cancelled action is not told to the next turn as done, and never reached the board.
        result = await asyncio.wrap_future(session.outcomes[2].result)
        assert result.prior_side_effects == []
        assert board.speaker.volume == 100 and "command_done" not in [kind for kind, _ in timeline]

    run_with_board(tmp_path, scenario, silence_timeout_s=60)


@pytest.mark.realtime
def test_the_board_offers_what_the_sim_options_say_and_the_host_keeps_to_its_speaker_formats() -> None:
    async def choose(board: SimulatedBoard, options: LinkOptions) -> int:
        link = BoardLink(board.port_path, options)
        await link.open()
        try:
            assert link.choice is not None
            return link.choice.speaker_format
        finally:
            await link.close()

    with SimulatedBoard(baud=BAUD, speaker_formats=wire.FMT_ADPCM, speaker_buffer=262144) as board:
        assert board.profile["speaker_buffer"] == 262144
        assert asyncio.run(choose(board, LinkOptions(baud=BAUD))) == wire.FMT_ADPCM
    with SimulatedBoard(baud=BAUD) as board:  # the board offers all three; the host asks for mu-law
        assert asyncio.run(choose(board, LinkOptions(baud=BAUD, speaker_formats=wire.FMT_MULAW))) == wire.FMT_MULAW


def test_sim_options_outside_the_board_profile_are_clear_errors() -> None:
    for kwargs in ({"speaker_formats": 0x80}, {"speaker_buffer": 10}):
        try:
            SimulatedBoard(baud=BAUD, **kwargs)  # type: ignore[arg-type]
        except SimError as exc:
            assert "speaker" in str(exc)
        else:
            raise AssertionError(f"{kwargs} was accepted")


def test_configured_remote_engines_are_used_instead_of_loading_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sotto.engines.remote_llm import RemoteLanguageModel
    from sotto.engines.wyoming_tts import WyomingSynthesizer

    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))  # its capability probe finds no server: nothing is cached
    config = EngineConfig(llm_url="http://127.0.0.1:9/v1", tts_wyoming="127.0.0.1:9")
    engines = load_engines(EngineOptions(model="/nonexistent.gguf", voice="/nonexistent.onnx", engine_config=config))
    assert isinstance(engines.llm, RemoteLanguageModel) and isinstance(engines.tts, WyomingSynthesizer)
    assert engines.llm_file.startswith("remote:")
    assert engines.tts_name.startswith("wyoming:")
    assert engines.capabilities is not None and not engines.capabilities.reachable
    assert not engines.capabilities.does("open_answer", "en") and not engines.capabilities.does("patch")
    assert not (tmp_path / "model_capabilities.json").exists()


def test_demo_and_run_take_knowledge_profile_and_engine_flags() -> None:
    from sotto.commands import demo, run

    for command, argv in ((demo, []), (run, ["--port", "loop://"])):
        parser = argparse.ArgumentParser(prog=f"sotto {command.__name__.rsplit('.', 1)[-1]}")
        command.add_arguments(parser)
        args = parser.parse_args(argv + ["--knowledge", "kiosk.md", "--profile", "Ana", "--llm-url",
                                         "http://127.0.0.1:8080/v1", "--tts-wyoming", "127.0.0.1:10200"])
        assert (args.knowledge, args.profile) == ("kiosk.md", "Ana")
        config = EngineConfig.from_args(args)
        assert config.llm_url == "http://127.0.0.1:8080/v1" and config.tts_wyoming == "127.0.0.1:10200"
    parser = argparse.ArgumentParser(prog="sotto demo")
    demo.add_arguments(parser)
    text = parser.format_help()
    assert "IMA-ADPCM only" in text and "256 KB speaker ring" in text  # the sim's defaults are explained


@pytest.mark.realtime
@pytest.mark.slow
def test_the_demo_conversation_runs_on_remote_engines_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The LLM behind llama-cpp-python's server, TTS behind wyoming-piper: same demo code."""
    import json

    from remote_servers import free_port, start_llama_server, start_wyoming_piper, stop
    from sotto.demo.runner import DemoOptions, run_demo

    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))
    script = tmp_path / "two.json"
    script.write_text(json.dumps({"name": "two", "lang": "en", "turns": [
        {"user": "My name is Maya."}, {"user": "Set the volume to 30."}]}), encoding="utf-8")
    llm_port, tts_port = free_port(), free_port()
    llm_server = start_llama_server(llm_port)
    try:
        tts_server = start_wyoming_piper(tts_port)
        try:
            config = EngineConfig(llm_url=f"http://127.0.0.1:{llm_port}/v1", tts_wyoming=f"127.0.0.1:{tts_port}")
            options = DemoOptions(engines=EngineOptions(engine_config=config), script=str(script),
                                  database=tmp_path / "demo.db", echo_gain=0.0, think_s=0.1, turn_timeout_s=60.0,
                                  replay_transcripts=True)
            result = asyncio.run(run_demo(options, lambda kind, payload: None))
        finally:
            stop(tts_server)
    finally:
        stop(llm_server)
    assert result.summary["llm"].startswith("remote:") and result.summary["tts"].startswith("wyoming:")
    assert [t["final_transcript"] for t in result.turns] == ["My name is Maya.", "Set the volume to 30."]
    assert all(t["reply"] and not t["interrupted"] for t in result.turns)
    assert "Maya" in json.dumps(result.turns[0]["state"])
    assert "volume set to 30" in [f["value"] for f in result.turns[1]["state"]["facts"]]
    assert result.details["board"].get("speaker_bytes_played", 0) > 0
