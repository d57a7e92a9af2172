"""Deterministic fakes for the voice session tests: board port, recognizer, agent, TTS."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterator, Sequence, Union

import numpy as np

from sotto.clock import MONOTONIC, Clock
from sotto.engines.base import AudioChunk, SpeechAudio, Transcript
from sotto.link.events import BoardEvent, BoardEventKind, LinkState, LinkStatus, MicAudio, PlaybackReport, PlaybackState, PortEvent
from sotto.agent.actions import RequestedAction
from sotto.memory.state import SessionState

RATE = 16000
FRAME_MS = 20


def tone(ms: float, amplitude: float = 3000.0, freq: float = 220.0, rate: int = RATE) -> bytes:
    n = int(rate * ms / 1000)
    t = np.arange(n) / rate
    return (amplitude * np.sin(2 * math.pi * freq * t)).astype("<i2").tobytes()


def noise(ms: float, amplitude: float = 3000.0, seed: int = 1, rate: int = RATE) -> bytes:
    n = int(rate * ms / 1000)
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) * amplitude).clip(-32000, 32000).astype("<i2").tobytes()


def silence(ms: float, rate: int = RATE) -> bytes:
    return bytes(2 * int(rate * ms / 1000))


@dataclass
class SentAudio:
    stream_id: int
    pcm: bytes
    after_stop: bool


class FakePort:
    """A board behind a queue. It 'plays' audio as soon as it is sent, unless told to hold it.

    `stopped_fraction` is the share of a stream's audio the board reports played at STOP.
    """

    def __init__(self, speaker_rate: int = RATE, mic_rate: int = RATE, *, clock: Clock = MONOTONIC) -> None:
        self.clock = clock
        self._speaker_rate = speaker_rate
        self._mic_rate = mic_rate
        self._queue: asyncio.Queue[PortEvent | None] = asyncio.Queue()
        self.sent: list[SentAudio] = []
        self.stopped_streams: list[int] = []
        self.ended_streams: list[int] = []
        self.commands: list[tuple[str, int]] = []
        self.commands_cancelled: list[tuple[str, int]] = []
        self.commands_pending: list[tuple[str, int]] = []  # started, waiting on command_gate
        self.command_gate: asyncio.Event | None = None  # set -> commands block until the event is set
        self.stopped_fraction = 0.5
        self.auto_drain = True
        self._started: set[int] = set()

    @property
    def speaker_rate(self) -> int:
        return self._speaker_rate

    @property
    def mic_rate(self) -> int:
        return self._mic_rate

    async def events(self) -> AsyncIterator[PortEvent]:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            yield item

    # --- what the harness calls
    async def send_audio(self, stream_id: int, pcm: bytes) -> None:
        await asyncio.sleep(0)
        self.sent.append(SentAudio(stream_id, pcm, stream_id in self.stopped_streams))
        if stream_id not in self._started:
            self._started.add(stream_id)
            self.push(PlaybackReport(PlaybackState.STARTED, stream_id, 0, 0, self.clock.now()))

    async def end_stream(self, stream_id: int) -> None:
        self.ended_streams.append(stream_id)
        if self.auto_drain:
            self.push(PlaybackReport(PlaybackState.DRAINED, stream_id, self.bytes_sent(stream_id), 0, self.clock.now()))

    async def stop(self, stream_id: int) -> None:
        self.stopped_streams.append(stream_id)
        played = int(self.bytes_sent(stream_id) * self.stopped_fraction) // 2 * 2
        self.push(PlaybackReport(PlaybackState.STOPPED, stream_id, played, 0, self.clock.now()))

    async def send_command(self, name: str, value: int) -> None:
        try:
            if self.command_gate is not None:
                self.commands_pending.append((name, value))
                await self.command_gate.wait()
        except asyncio.CancelledError:
            self.commands_cancelled.append((name, value))
            raise
        self.commands.append((name, value))

    def board_to_host_time(self, board_ms: int) -> float:
        return board_ms / 1000.0

    # --- what the test scenario calls
    def bytes_sent(self, stream_id: int) -> int:
        return sum(len(s.pcm) for s in self.sent if s.stream_id == stream_id)

    def push(self, item: PortEvent) -> None:
        self._queue.put_nowait(item)

    def mic(self, pcm: bytes) -> None:
        """Mic audio in FRAME_MS frames, timed as if the last sample arrived now."""
        step = 2 * int(self._mic_rate * FRAME_MS / 1000)
        now = self.clock.now()
        total = len(pcm) // 2 / self._mic_rate
        for i, offset in enumerate(range(0, len(pcm), step)):
            self.push(MicAudio(pcm[offset : offset + step], self._mic_rate, 0, now - total + i * FRAME_MS / 1000))

    def button(self) -> None:
        self.push(BoardEvent(BoardEventKind.BUTTON_DOWN, 0, self.clock.now()))

    def link(self, state: str) -> None:
        self.push(LinkStatus(LinkState(state), "fake"))

    def close(self) -> None:
        self._queue.put_nowait(None)


class FakeRecognizer:
    """Emits what the test queued, on the next chunk it accepts; drops repeated/out-of-order chunks."""

    name = "fake-asr"
    sample_rate = RATE

    def __init__(self) -> None:
        self._pending: list[Transcript] = []
        self._flush: list[Transcript] = []
        self.chunks: list[AudioChunk] = []
        self._last_seq: dict[int, int] = {}

    def next(self, *transcripts: Transcript) -> None:
        self._pending.extend(transcripts)

    def on_flush(self, *transcripts: Transcript) -> None:
        self._flush.extend(transcripts)

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        if chunk.seq <= self._last_seq.get(chunk.turn_id, -1):
            return []
        self._last_seq[chunk.turn_id] = chunk.seq
        self.chunks.append(chunk)
        out, self._pending = self._pending, []
        return out

    def flush(self, turn_id: int) -> list[Transcript]:
        out, self._flush = self._flush, []
        return out


@dataclass(frozen=True)
class Delay:
    seconds: float


def action(name: str, value: int, description: str) -> RequestedAction:
    return RequestedAction(name, value, description, span=description)


ScriptItem = Union[str, RequestedAction, Delay, BaseException]


@dataclass
class FakeReport:
    source: str = "composed"
    rejected: list[str] = field(default_factory=list)


@dataclass
class FakeTurnResult:
    turn: int
    reply: str
    state: SessionState


class FakeTurn:
    """One scripted agent turn: board actions first, then sentences (Delays pause the worker)."""

    def __init__(self, agent: "FakeAgent", session_id: str, number: int, words: str, prior: Sequence[str],
                 script: list[ScriptItem]) -> None:
        self.agent = agent
        self.session_id = session_id
        self.number = number
        self.words = words
        self.prior_side_effects = tuple(prior)
        self.actions = [i for i in script if isinstance(i, RequestedAction)]
        self._script = [i for i in script if not isinstance(i, RequestedAction)]
        self.report = FakeReport()
        self.max_sentences: int | None = None
        self.said: list[str] = []
        self.cancelled = threading.Event()
        self.run_model: bool | None = None  # what finish() was told: False = the deep work was deferred

    def cancel(self) -> None:
        self.cancelled.set()

    def shorten(self, max_sentences: int = 1) -> None:
        self.max_sentences = max_sentences if self.max_sentences is None else min(self.max_sentences, max_sentences)

    def sentences(self) -> Iterator[str]:
        for item in self._script:
            if self.cancelled.is_set():
                return
            if isinstance(item, Delay):
                self.agent.sleep(item.seconds, self.cancelled)
                continue
            if isinstance(item, BaseException):
                raise item
            self.said.append(item)
            yield item

    def finish(self, *, run_model: bool = True) -> FakeTurnResult:
        self.run_model = run_model
        if self.cancelled.is_set():
            self.agent.cancelled.append(self.number)
        else:
            self.agent.finished.append(self.number)
        return FakeTurnResult(self.number, " ".join(self.said), SessionState(session_id=self.session_id))


def _wall_sleep(seconds: float, cancelled: threading.Event) -> None:
    cancelled.wait(seconds)


@dataclass
class FakeAgent:
    """Replies from a script per turn id; records its turns (requests, cancellations, deferrals).

    `sleep(seconds, cancelled)` is how a Delay waits on the worker thread: the wall clock by
    default, a simulated clock's `blocking_sleep` in timing tests."""

    script: dict[int, list[ScriptItem]] = field(default_factory=dict)
    default: list[ScriptItem] = field(default_factory=lambda: ["Sure.", "Done."])
    fail_start: dict[int, BaseException] = field(default_factory=dict)
    # Seconds a turn's start takes (its rules and actions decided only then): a loaded host.
    start_delay: dict[int, float] = field(default_factory=dict)
    turns: list[FakeTurn] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    finished: list[int] = field(default_factory=list)
    opened: list[tuple[str, str | None]] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    heard: list[tuple[Any, ...]] = field(default_factory=list)  # each turn's word confidences, as given
    withdrawn: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # actions the memory was told were not sent
    sleep: Callable[[float, threading.Event], None] = _wall_sleep

    def start_turn(self, session_id: str, words: str, *, turn: int | None = None, lang: str | None = None,
                   prior_side_effects: Sequence[str] = (), heard: Sequence[Any] = ()) -> Any:
        number = turn if turn is not None else len(self.turns) + 1
        self.heard.append(tuple(heard))
        if number in self.start_delay:
            self.sleep(self.start_delay[number], threading.Event())
        if number in self.fail_start:
            raise self.fail_start[number]
        made = FakeTurn(self, session_id, number, words, prior_side_effects, list(self.script.get(number, self.default)))
        self.turns.append(made)
        return made

    def open_session(self, session_id: str, *, profile: str | None = None) -> SessionState:
        self.opened.append((session_id, profile))
        return SessionState(session_id=session_id)

    def end_session(self, session_id: str) -> list[str]:
        self.ended.append(session_id)
        return []

    def withdraw_actions(self, session_id: str, descriptions: Sequence[str]) -> None:
        self.withdrawn.append((session_id, tuple(descriptions)))

    def state(self, session_id: str) -> SessionState:
        return SessionState(session_id=session_id)


class FakeTTS:
    """100 ms of tone per word at 16 kHz, so audio lengths are predictable."""

    name = "fake-tts"
    sample_rate = RATE

    def __init__(self, ms_per_word: float = 100.0) -> None:
        self.ms_per_word = ms_per_word
        self.texts: list[str] = []

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        self.texts.append(text)
        yield SpeechAudio(text, tone(self.ms_per_word * max(1, len(text.split()))), self.sample_rate)


async def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll until the condition holds (the timeout only stops a broken test from hanging)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.002)


class NoiseTTS(FakeTTS):
    """Speech-like broadband audio (seeded by the text), so echo alignment matters."""

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        self.texts.append(text)
        seed = sum(text.encode()) % 1000
        yield SpeechAudio(text, noise(self.ms_per_word * max(1, len(text.split())), 3000.0, seed), self.sample_rate)


class EchoBoard(FakePort):
    """A board that plays in real time and hears its own speaker: mic = gain * speaker(t - delay) + user.

    `run_mic()` produces a 20 ms mic frame every 20 ms until `close()`.
    """

    def __init__(self, echo_gain: float = 0.6, echo_delay_ms: float = 60.0, *, clock: Clock = MONOTONIC) -> None:
        super().__init__(clock=clock)
        self.echo_gain = echo_gain
        self.echo_delay_s = echo_delay_ms / 1000.0
        self._play: dict[int, bytearray] = {}
        self._play_start: dict[int, float] = {}
        self._stopped_at: dict[int, float] = {}
        self.user_audio = bytearray()  # the user's voice, consumed frame by frame
        self._closed = False
        self.noise_floor_rms = 150.0
        self._rng = np.random.default_rng(5)

    async def send_audio(self, stream_id: int, pcm: bytes) -> None:
        await asyncio.sleep(0)
        self.sent.append(SentAudio(stream_id, pcm, stream_id in self.stopped_streams))
        if stream_id not in self._play:
            self._play[stream_id] = bytearray()
            self._play_start[stream_id] = self.clock.now()
            self.push(PlaybackReport(PlaybackState.STARTED, stream_id, 0, 0, self._play_start[stream_id]))
        self._play[stream_id] += pcm

    def _played_bytes(self, stream_id: int, at: float) -> int:
        end = self._stopped_at.get(stream_id, at)
        elapsed = max(0.0, min(at, end) - self._play_start[stream_id])
        return min(len(self._play[stream_id]), int(elapsed * self.speaker_rate) * 2)

    async def end_stream(self, stream_id: int) -> None:
        self.ended_streams.append(stream_id)
        remaining = (len(self._play.get(stream_id, b"")) - self._played_bytes(stream_id, self.clock.now())) / 2 / self.speaker_rate

        async def drained() -> None:
            await self.clock.sleep(max(0.0, remaining))
            if stream_id not in self._stopped_at:
                self.push(PlaybackReport(PlaybackState.DRAINED, stream_id, len(self._play[stream_id]), 0, self.clock.now()))

        asyncio.ensure_future(drained())

    async def stop(self, stream_id: int) -> None:
        now = self.clock.now()
        self.stopped_streams.append(stream_id)
        if stream_id in self._play:
            played = self._played_bytes(stream_id, now)
            self._stopped_at[stream_id] = now
            self.push(PlaybackReport(PlaybackState.STOPPED, stream_id, played, 0, now))

    def _speaker_at(self, t0: float, n: int) -> np.ndarray:
        out = np.zeros(n)
        for stream_id, buf in self._play.items():
            samples = np.frombuffer(bytes(buf), dtype="<i2").astype(np.float64)
            start = self._play_start[stream_id]
            stop = self._stopped_at.get(stream_id, float("inf"))
            idx = np.arange(n)
            times = t0 + idx / self.speaker_rate
            k = np.floor((times - start) * self.speaker_rate).astype(int)
            ok = (k >= 0) & (k < len(samples)) & (times < stop)
            out[ok] += samples[k[ok]]
        return out

    async def run_mic(self) -> None:
        n = int(self.mic_rate * FRAME_MS / 1000)
        next_t = self.clock.now()
        while not self._closed:
            next_t += FRAME_MS / 1000
            await self.clock.sleep(max(0.0, next_t - self.clock.now()))
            t0 = next_t - FRAME_MS / 1000
            frame = self.echo_gain * self._speaker_at(t0 - self.echo_delay_s, n)
            frame += self._rng.standard_normal(n) * self.noise_floor_rms  # room and mic noise
            if self.user_audio:
                user = np.frombuffer(bytes(self.user_audio[: 2 * n]), dtype="<i2").astype(np.float64)
                del self.user_audio[: 2 * n]
                frame[: len(user)] += user
            self.push(MicAudio(np.clip(frame, -32768, 32767).astype("<i2").tobytes(), self.mic_rate, 0, t0))

    def close(self) -> None:
        self._closed = True
        super().close()


class RecordingOutput:
    """The turn engine's `ReplyOutput`, recording what a turn did in order: ("action", name,
    value) and (kind, text) for each segment played."""

    def __init__(self, sample_rate: int = RATE) -> None:
        self._rate = sample_rate
        self.items: list[tuple[Any, ...]] = []

    @property
    def sample_rate(self) -> int:
        return self._rate

    @property
    def has_played(self) -> bool:
        return any(not kind.startswith("action") for kind, *_ in self.items)

    async def run_action(self, action: RequestedAction) -> None:
        self.items.append(("action", action.name, action.value))

    def action_not_sent(self, action: RequestedAction, reason: str) -> None:
        self.items.append(("action_not_sent", action.name, reason))

    async def play(self, segment: Any) -> None:
        self.items.append((segment.kind, segment.text))

    def texts(self, kind: str = "answer") -> list[str]:
        return [item[1] for item in self.items if item[0] == kind]


async def run_turn(runner: Any, session_id: str, words: str, turn_id: int, *, prior: tuple[str, ...] = (),
                   control: Any = None, budgets: Any = None) -> tuple[Any, RecordingOutput]:
    """One turn through the turn engine onto a RecordingOutput; (outcome, output)."""
    from sotto.voice.budgets import BudgetConfig
    from sotto.voice.reply_types import ReplyControl, TurnRequest

    output = RecordingOutput()
    request = TurnRequest(session_id, words, runner.clock.now(), turn_id=turn_id, prior_side_effects=prior)
    outcome = await runner.run(request, output, control or ReplyControl(), budgets=budgets or BudgetConfig())
    return outcome, output
