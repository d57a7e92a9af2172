"""`sotto demo`'s engine room: a simulated board speaks a scripted conversation to the
full host pipeline, over a paced pty, with the speaker's echo leaking into its mic.

The simulated user speaks each utterance, then waits until the agent's reply is over
(the board reported its speaker drained and the turn was recorded) before speaking
the next one, except on a barge-in turn: there it starts the next utterance
`barge_in_after_ms` after the board began playing the reply, talking over the agent
(`sotto.demo.interruption`: pulled in for a short reply, reported when it cannot be).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from sotto.clock import MONOTONIC
from sotto.demo.interruption import InterruptAt, InterruptionTimer
from sotto.metrics import percentile
from sotto.errors import SottoError
from sotto.ids import SessionId
from sotto.link.board_stats import BoardStatsCollector
from sotto.runtime import EngineOptions, LoadedEngines, Runtime, RuntimeOptions, load_engines, make_recognizer
from sotto.runtime.engines import peak_rss_mb
from sotto.voice import events as ev
from sotto.voice.events import TraceEvent
from sotto.voice.phases import Phase

if TYPE_CHECKING:
    from sotto.knowledge.base import KnowledgeBase

DEMO_FIELDS = ("turn", "user", "final_transcript", "reply", "state", "first_byte_ms", "first_answer_ms",
               "total_turn_ms", "barge_in_ms", "interrupted", "degraded", "degrade_actions", "route", "route_reason")


DEMO_SPEAKER_BUFFER = 262144
DEMO_SPEAKER_FORMAT = "adpcm"
DEMO_PROFILE = "demo"  # the simulated user's long-term profile
NOTHING_HEARD_GRACE_S = 3.0
SESSION_CLOSE_S = 30.0  # after the last turn and the board leaving, the session must end within this  # after an utterance, how long a final may take before it counts as unheard
SPEAKER_FORMATS = ("pcm16", "mulaw", "adpcm")


class DemoError(SottoError):
    code = "demo"


@dataclass(frozen=True)
class DemoOptions:
    engines: EngineOptions = field(default_factory=EngineOptions)
    script: str | None = None  # a memory-script JSON; None: the built-in conversation
    baud: int = 921600
    session_id: str | None = None
    database: Path | None = None  # None: the user's store (sotto.paths.database_path())
    echo_gain: float = 0.3  # the speaker leaks into the mic, as on a real kiosk
    echo_delay_s: float = 0.03
    # The board's speaker ring in PCM16 bytes. An ESP32-S3 with PSRAM holds a whole reply
    # (256 KB ~ 5.9 s at 22050 Hz), so the host can send ahead and finish early.
    speaker_buffer: int | None = DEMO_SPEAKER_BUFFER
    # What the simulated board offers for its speaker. total_turn_ms ends at the LAST chunk
    # sent, so line time counts: PCM16 at 22050 Hz fills ~half of 921600 baud (a 4 s reply
    # needs ~2 s of line), IMA-ADPCM a quarter of that.
    speaker_format: str = DEMO_SPEAKER_FORMAT
    think_s: float = 0.3  # the simulated user's pause after a reply before speaking again
    turn_timeout_s: float = 60.0
    trace_folder: Path | None = None
    started_at: float | None = None  # time.monotonic() at process start, for ready_ms
    knowledge: "KnowledgeBase | None" = None  # system knowledge for the replies (--knowledge)
    profile: str | None = DEMO_PROFILE  # seeded from / promoted to (a user name or a key)
    # The script's words revealed in step with the audio instead of recognised from it
    # (--replay-transcripts): the conversation without recognition errors.
    replay_transcripts: bool = False
    runtime: str = "cpython"  # the simulated board's firmware: imported into CPython, or in MicroPython
    board: str = "esp32s3"  # the board profile it runs (its heap, on MicroPython)


@dataclass
class DemoResult:
    turns: list[dict[str, Any]]
    summary: dict[str, Any]
    usage: dict[str, Any]
    details: dict[str, Any]


Emit = Callable[[str, dict[str, Any]], None]  # ("status" | "turn", payload)


class _TalkOver:
    """Feeds one scripted interruption's timer: the board's playback reports of the next reply
    (a link listener) and the reply audio the host sends (from the trace)."""

    def __init__(self, timer: InterruptionTimer, speaker_rate: int) -> None:
        self.timer = timer
        self.speaker_rate = speaker_rate
        self.stream: int | None = None

    def on_message(self, message: Any, host_t: float) -> None:
        from sotto.link import messages as m
        from sotto_fw import wire

        if not isinstance(message, m.Playback):
            return
        if message.state == wire.PLAY_STARTED and self.stream is None:
            self.stream = message.stream_id
            self.timer.playback_started(host_t)
        elif message.stream_id == self.stream and message.state in (wire.PLAY_DRAINED, wire.PLAY_STOPPED):
            self.timer.playback_ended()

    def on_event(self, event: TraceEvent) -> None:
        if event.type == ev.AGENT_SPEECH_CHUNK and self.stream in (None, event.data.get("stream")):
            self.timer.audio_sent(int(event.data.get("bytes", 0)) / 2 / self.speaker_rate * 1000.0)


class _Watcher:
    """Trace sink: turn records and reply starts, as asyncio-awaitable counts."""

    def __init__(self) -> None:
        self.talk_over: _TalkOver | None = None  # the scripted interruption being timed
        self.completed: list[dict[str, Any]] = []
        self.speech_started: list[int] = []
        self.changed = asyncio.Event()
        self.events: list[TraceEvent] = []
        self.final_at: dict[int, float] = {}  # turn id -> time.monotonic() of its final

    def __call__(self, event: TraceEvent) -> None:
        if self.talk_over is not None:
            self.talk_over.on_event(event)
        if event.type == ev.FINAL_TRANSCRIPT and event.turn_id is not None:
            self.final_at[event.turn_id] = time.monotonic()
        if event.type == ev.TURN_COMPLETED:
            self.completed.append(dict(event.data))
            self.changed.set()
        elif event.type == ev.AGENT_SPEECH_STARTED and event.turn_id is not None:
            self.speech_started.append(event.turn_id)
            self.changed.set()
        if event.type in (ev.FINAL_TRANSCRIPT, ev.BARGE_IN, ev.DEGRADE, ev.SESSION_CLOSED):
            self.events.append(event)

    def heard(self) -> dict[int, str]:
        """The recognised words of each turn, before numbers were normalised."""
        return {e.turn_id: str(e.data.get("heard") or e.data.get("text") or "")
                for e in self.events if e.type == ev.FINAL_TRANSCRIPT and e.turn_id is not None}

    async def until(self, condition: Callable[[], bool], timeout_s: float, what: str, check: Callable[[], None]) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition():
            check()
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise DemoError(f"timed out after {timeout_s:g} s waiting for {what}")
            try:
                await asyncio.wait_for(self.changed.wait(), min(left, 0.5))
            except asyncio.TimeoutError:
                pass


def speaker_format_mask(name: str) -> int:
    from sotto_fw import wire

    masks = {"pcm16": wire.FMT_PCM16, "mulaw": wire.FMT_MULAW, "adpcm": wire.FMT_ADPCM}
    if name not in masks:
        raise DemoError(f"unknown speaker format {name!r}; choose from {', '.join(SPEAKER_FORMATS)}")
    return masks[name]


def summarize(turns: list[dict[str, Any]], *, asr: str, llm: str, tts: str,
              llm_jobs: dict[str, str] | None = None) -> dict[str, Any]:
    def values(key: str) -> list[float]:
        return [float(t[key]) for t in turns if t.get(key) is not None]

    return {
        "summary": True,
        "turns": len(turns),
        "first_byte_ms_p50": percentile(values("first_byte_ms"), 50),
        "first_byte_ms_p95": percentile(values("first_byte_ms"), 95),
        "first_answer_ms_p50": percentile(values("first_answer_ms"), 50),
        "total_turn_ms_p50": percentile(values("total_turn_ms"), 50),
        "barge_in_ms_p95": percentile(values("barge_in_ms"), 95),
        "asr": asr,
        "llm": llm,
        "tts": tts,
        "llm_jobs": llm_jobs or {},  # which jobs the model passed in its start-up probe, and why
    }


async def run_demo(options: DemoOptions, emit: Emit, *, engines: LoadedEngines | None = None) -> DemoResult:
    """The whole demo; `emit` gets status lines and each finished turn (in order)."""
    from sotto.demo.script import load_demo_script, synthesize_utterances
    from sotto.link.board_link import BoardLink, LinkOptions
    from sotto.memory.diff import diff_states
    from sotto.memory.state import SessionState
    from sotto.memory.store import Store
    from sotto.sim import SimulatedBoard

    started = options.started_at if options.started_at is not None else time.monotonic()
    script = load_demo_script(options.script)
    if engines is None:
        emit("status", {"step": "loading models"})
        engines = await asyncio.to_thread(load_engines, options.engines)
    emit("status", {"step": "models loaded", "llm": engines.llm_file, "tts": engines.tts_name, "load_ms": engines.load_ms})
    if engines.tts is None:
        raise DemoError("the demo needs a voice: load the engines with one")
    utterances, made = await asyncio.to_thread(synthesize_utterances, script, engines.tts)
    recognizer, asr_label = await asyncio.to_thread(
        make_recognizer, script.lang, asr_model=options.engines.asr_model, transcripts=[t.user for t in script.turns],
        durations_s=[u.duration_s for u in utterances], replay_transcripts=options.replay_transcripts,
        engine_config=options.engines.engine_config,
    )
    emit("status", {"step": "speech recognition", "asr": asr_label, "utterances_synthesised": made})
    store = Store(options.database) if options.database is not None else Store()
    session_id = SessionId(options.session_id or time.strftime("demo-%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:4])
    runtime = Runtime(engines, store, RuntimeOptions(lang=script.lang, knowledge=options.knowledge))
    board = SimulatedBoard(baud=options.baud, echo_gain=options.echo_gain, echo_delay_s=options.echo_delay_s,
                           speaker_buffer=options.speaker_buffer,
                           speaker_formats=speaker_format_mask(options.speaker_format),
                           runtime=options.runtime, profile=options.board)
    board_stats = BoardStatsCollector()
    watcher = _Watcher()
    turn_lines: list[dict[str, Any]] = []
    details: dict[str, Any] = {"session": session_id, "baud": options.baud, "load_ms": engines.load_ms}
    link: BoardLink | None = None
    session_task: asyncio.Task[Any] | None = None
    try:
        board.start()
        board_started = time.monotonic()
        link = BoardLink(board.port_path, LinkOptions(baud=options.baud))
        link.add_listener(board_stats.on_message)
        await link.open()
        details["formats"] = link.choice.describe() if link.choice is not None else ""
        session = runtime.voice_session(link, recognizer, session_id=session_id, sinks=(watcher,),
                                              trace_folder=options.trace_folder, profile=options.profile)
        session_task = asyncio.create_task(session.run(), name="sotto-demo-session")

        def check() -> None:
            board.check_alive()
            if session_task is not None and session_task.done():
                exc = session_task.exception()
                raise DemoError(f"the voice session ended early: {exc or session.usage.close_reason}")

        while session.phase != Phase.LISTENING:
            check()
            await asyncio.sleep(0.005)
        details["ready_ms"] = round((time.monotonic() - started) * 1000.0, 1)
        emit("status", {"step": "listening", "ready_ms": details["ready_ms"], "session": session_id,
                        "formats": details["formats"]})

        previous_state = SessionState(session_id=session_id)
        emitted = 0
        spoken: list[tuple[float, int]] = []  # (time.monotonic(), script index) of each utterance played

        def speak(index: int, label: str) -> None:
            utterance = utterances[index]
            board.play_utterance(utterance.pcm, rate=utterance.sample_rate, label=label)
            spoken.append((time.monotonic(), index))

        def said_index(turn_id: int) -> int | None:
            """The utterance a turn answers: the last one played before its final came."""
            final_at = watcher.final_at.get(turn_id)
            started = [index for at, index in spoken if final_at is not None and at <= final_at]
            return started[-1] if started else None

        def said(turn_id: int) -> str | None:
            index = said_index(turn_id)
            return None if index is None else script.turns[index].user

        def answered(index: int) -> bool:
            """A turn for this utterance is recorded and no other final is still being answered."""
            return (any(said_index(int(r["turn"])) == index for r in watcher.completed)
                    and len(watcher.completed) >= len(watcher.final_at))

        def heard_nothing(index: int) -> bool:
            """Recognition found no words in the utterance: no final since it was played."""
            played_at = max(at for at, i in spoken if i == index)
            return not any(at >= played_at for at in watcher.final_at.values())

        async def emit_finished() -> None:
            nonlocal emitted, previous_state
            while emitted < len(watcher.completed):
                record = watcher.completed[emitted]
                reply = session.outcomes.get(int(record["turn"]))
                outcome = reply.result if reply is not None else None
                state = None
                if outcome is not None and not outcome.cancelled():  # cancelled: the turn was talked over before it started
                    try:
                        result = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(outcome)),
                                                        options.turn_timeout_s)
                        state = result.state
                    except asyncio.CancelledError:
                        if outcome is None or not outcome.cancelled():
                            raise
                    except (asyncio.TimeoutError, SottoError):
                        pass
                if state is None:
                    state = store.ensure_session(session_id)
                heard = watcher.heard()
                line = {k: record.get(k) for k in DEMO_FIELDS}
                line["user"] = said(int(record["turn"])) or record.get("user")  # said; final_transcript: heard
                line["state"] = state.to_dict()
                turn_lines.append(line)
                emitted += 1
                changes = [c.describe() for c in diff_states(previous_state, state)]
                previous_state = state
                emit("turn", {**line, "_changes": changes, "_stop_reason": record.get("stop_reason"),
                              "_spoken_prefix": record.get("spoken_prefix"),
                              "_heard": heard.get(int(record["turn"]))})

        index = 0
        while index < len(script.turns):
            turn = script.turns[index]
            if turn.barge_in_after_ms is not None:
                # Timed from the board's first speaker frame of the reply (not from our words).
                timer = InterruptionTimer(MONOTONIC, turn.barge_in_after_ms)
                talk_over = _TalkOver(timer, link.speaker_rate)
                watcher.talk_over = talk_over
                remove = link.add_listener(talk_over.on_message)
                speak(index, f"turn {index + 1}")
                try:
                    decision = await timer.wait(options.turn_timeout_s)
                except asyncio.TimeoutError:
                    raise DemoError(f"the reply to turn {index + 1} neither reached its scripted interruption "
                                    f"nor ended within {options.turn_timeout_s:g} s") from None
                finally:
                    remove()
                    watcher.talk_over = None
                if isinstance(decision, InterruptAt):
                    details.setdefault("talk_over", []).append(
                        {"turn": index + 1, "after_ms": decision.after_ms, "scripted_ms": turn.barge_in_after_ms,
                         "pulled_in": decision.pulled_in})
                    speak(index + 1, f"turn {index + 2} (talks over the reply {decision.after_ms:.0f} ms in)")
                else:
                    emit("status", {"step": "no barge-in", "turn": index + 1, "reason": decision.describe()})
                    details.setdefault("talk_over", []).append(
                        {"turn": index + 1, "after_ms": None, "scripted_ms": turn.barge_in_after_ms,
                         "reason": decision.describe()})
                    await watcher.until(lambda: answered(index), options.turn_timeout_s,
                                        f"the reply to turn {index + 1}", check)
                    await emit_finished()
                    speak(index + 1, f"turn {index + 2}")
                index += 1
            else:
                speak(index, f"turn {index + 1}")
            current = index
            # An utterance in which recognition heard nothing gets no turn: after its audio and
            # a grace period the simulated user goes on.
            silent_after = time.monotonic() + utterances[current].duration_s + NOTHING_HEARD_GRACE_S
            await watcher.until(lambda: answered(current) or (time.monotonic() > silent_after and heard_nothing(current)),
                                options.turn_timeout_s, f"the reply to turn {index + 1}", check)
            if not answered(current):
                emit("status", {"step": "nothing heard", "user": script.turns[current].user})
            await emit_finished()
            index += 1
            if index < len(script.turns):
                await asyncio.sleep(options.think_s)
        # The last turn's state patch, then the board leaves: the session ends "completed".
        await asyncio.wrap_future(runtime.runner.idle(session_id))
        await link.close()
        try:
            usage = await asyncio.wait_for(session_task, SESSION_CLOSE_S)
        except asyncio.TimeoutError:
            # e.g. a reply to words recognised in the agent's own echo after the script ended
            raise DemoError(f"the voice session did not close within {SESSION_CLOSE_S:g} s after the board left "
                            f"(turns recorded: {len(watcher.completed)}, finals: {len(watcher.final_at)})") from None
        await emit_finished()
        details["usage"] = usage.summary()
        details["queued_ms"] = {t: round(o.queued_ms, 1) for t, o in session.outcomes.items() if o.queued_ms is not None}
        details["state_patches_skipped"] = [t for t, o in session.outcomes.items() if o.patch_skipped]
        details["tts_ms"] = [round(t.synth_ms) for t in getattr(engines.tts, "timings", [])][-20:]
        details["peak_rss_mb"] = round(peak_rss_mb(), 1)
        details["barge_ins"] = usage.barge_ins
        details["board"] = {k: v for k, v in board.stats.items() if isinstance(v, (int, float))}
        summary = summarize(turn_lines, asr=asr_label, llm=engines.llm_file, tts=engines.tts_name,
                            llm_jobs=engines.capabilities.summary() if engines.capabilities is not None else None)
        if options.runtime != "cpython":
            summary["runtime"] = f"{options.runtime} ({options.board}, heap {board.heap_bytes} bytes)"
        # What the board says its loop cost, after its first second (MicroPython only).
        loop = board_stats.summary(since=board_started + 1.0)
        if loop is not None:
            summary["board"] = loop
        return DemoResult(turn_lines, summary, usage.summary(), details)
    finally:
        if session_task is not None and not session_task.done():
            session_task.cancel()
            await asyncio.wait({session_task})
        if link is not None:
            await link.close()
        board.close()
        runtime.close()
        store.close()


def medians(results: list[DemoResult]) -> dict[str, float | None]:
    """Across several demo runs: the median of each summary figure."""
    keys = ("first_byte_ms_p50", "first_byte_ms_p95", "first_answer_ms_p50", "total_turn_ms_p50", "barge_in_ms_p95")
    out: dict[str, float | None] = {}
    for key in keys:
        vals = [float(r.summary[key]) for r in results if r.summary.get(key) is not None]
        out[key] = percentile(vals, 50)
    return out
