"""The voice session: one board, one conversation, turn after turn.

The session consumes the board's events (mic audio, button, playback reports, link
status), feeds the recognizer, commits finals, and runs each reply through the one turn
engine (`sotto.voice.turn_runner`) onto the board's speaker (`sotto.voice.player`), with
the degradation ladder acting live. Barge-in goes through one path, `cancel_turn()`: the
reply task (model stream, TTS, running action, audio not yet sent) is cancelled and the
board told to stop, then the session waits until the board confirms its speaker is
silent, and only then records the barge-in and resumes listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator

from sotto.clock import MONOTONIC, Clock
from sotto.engines.base import Recognizer, Transcript
from sotto.errors import SottoError
from sotto.ids import SessionId
from sotto.link.events import (
    BoardEvent,
    BoardEventKind,
    BoardPort,
    LinkState,
    LinkStatus,
    MicAudio,
    PlaybackReport,
    PlaybackState,
    PortEvent,
)
from sotto.voice import events as ev
from sotto.voice.bargein import BargeInConfig, PlayoutTimeline
from sotto.voice.mic import MicPath
from sotto.voice.budgets import BARGE_IN, FIRST_ANSWER, FIRST_BYTE, TOTAL_TURN, BudgetConfig, judge
from sotto.voice.conversation import Conversation
from sotto.voice.phases import Phase, PhaseMachine
from sotto.voice.phrases import PhraseCache
from sotto.voice.player import SpeakerReply
from sotto.voice.trace import TraceLog, TraceSink
from sotto.voice.reply_types import ReplyOutcome, TurnRequest
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.usage import CANCELLED, COMPLETED, DEFERRED, FAILED, INTERRUPTED, TurnRecord, UsageRecord


@dataclass(frozen=True)
class VoiceConfig:
    budgets: BudgetConfig = field(default_factory=BudgetConfig)
    barge_in: BargeInConfig = field(default_factory=BargeInConfig)
    speaker_chunk_ms: int = 100  # agent audio is sent in pieces this long
    partial_min_chars: int = 2  # a partial this long (non-space) while speaking interrupts
    grace_s: float = 10.0  # a board gone longer than this closes the session
    stop_confirm_timeout_s: float = 1.0  # wait this long for PLAYBACK stopped after STOP
    drain_margin_s: float = 2.0  # beyond the audio's own length, when waiting for PLAYBACK drained
    max_held_audio_s: float = 15.0  # mic audio kept while a barge-in completes
    end_reply_s: float = 10.0  # after the board's input ends, a reply still being made gets this long, then is cancelled


_END = object()


class VoiceSession:
    def __init__(
        self,
        port: BoardPort,
        recognizer: Recognizer,
        runner: TurnRunner,
        *,
        session_id: SessionId | None = None,
        lang: str | None = None,
        config: VoiceConfig | None = None,
        sinks: tuple[TraceSink, ...] = (),
        trace_folder: Path | None = None,
        persist_trace: bool = True,
        clock: Clock = MONOTONIC,
    ) -> None:
        """`runner`: the host's turn engine (shared by every session); `lang`: the conversation's
        language (None: detected per turn)."""
        self.port = port
        self.recognizer = recognizer
        self.runner = runner
        self.lang = lang
        self.config = config or VoiceConfig()
        self.session_id = SessionId(session_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6])
        self.clock = clock
        self.trace = TraceLog(self.session_id, folder=trace_folder, sinks=sinks, clock=clock.now, persist=persist_trace)
        self.usage = UsageRecord(self.session_id)
        self.conversation = Conversation()
        self.phases = PhaseMachine()
        self.phrases: PhraseCache | None = None
        # Each turn's reply outcome by turn id; its `result` is the agent's committed outcome
        # (the state after the model's patch).
        self.outcomes: dict[int, ReplyOutcome] = {}
        self._finals_seen: set[int] = set()
        self._pending_finals: list[Transcript] = []
        self._reply: SpeakerReply | None = None
        self._cancel_task: asyncio.Task[None] | None = None
        self._detached_at: float | None = None
        self._closed = False
        self._timeline = PlayoutTimeline(port.mic_rate)
        self.mic = MicPath(recognizer, port.mic_rate, self.config.barge_in, self._timeline,
                           max_held_audio_s=self.config.max_held_audio_s)

    # ------------------------------------------------------------------ lifecycle

    @property
    def phase(self) -> Phase:
        return self.phases.phase

    async def run(self) -> UsageRecord:
        """Serve the board until its events end (completed) or the session is cancelled."""
        self.phrases = await self.runner.phrases(self.port.speaker_rate)
        self.phases.move(Phase.LISTENING)
        queue: asyncio.Queue[object] = asyncio.Queue()
        pump = asyncio.create_task(self._pump(self.port.events(), queue))
        try:
            while True:
                timeout = None
                if self._detached_at is not None:
                    timeout = max(0.0, self._detached_at + self.config.grace_s - self.clock.now())
                try:
                    item = await self.clock.wait_for(queue.get(), timeout)
                except asyncio.TimeoutError:
                    await self._close("cancelled", "board gone past the grace period")
                    break
                if item is _END:
                    await self._end_of_input()
                    await self._close("completed", "input ended")
                    break
                if isinstance(item, BaseException):
                    await self._close("cancelled", f"link failed: {item}")
                    break
                await self._dispatch(item)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            # Ctrl+C or the caller: cancel the reply first, then record the close.
            await asyncio.shield(self._close("cancelled", "session cancelled"))
            raise
        finally:
            pump.cancel()
            await asyncio.wait({pump})
        return self.usage

    async def _pump(self, source: AsyncIterator[PortEvent], queue: asyncio.Queue[object]) -> None:
        try:
            async for item in source:
                await queue.put(item)
            await queue.put(_END)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a failing port ends the session cleanly, not with a traceback
            await queue.put(exc)

    async def _end_of_input(self) -> None:
        for transcript in self.mic.flush():
            self._on_transcript(transcript)
        if self._cancel_task is not None:
            await asyncio.wait({self._cancel_task})
        for transcript in self._take_pending_finals():
            self._on_transcript(transcript)
        if self._reply is not None and self._reply.task is not None:
            # The board is gone: a reply can no longer be heard, and one stuck on the link (audio
            # with nowhere to go) must not hold the session open. _close cancels what is left.
            with contextlib.suppress(asyncio.TimeoutError):
                await self.clock.wait_for(asyncio.shield(self._reply.task), self.config.end_reply_s)

    async def _close(self, status: str, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        if self._cancel_task is not None and not self._cancel_task.done():
            await asyncio.wait({self._cancel_task})
        reply = self._reply
        if reply is not None and not reply.finished:
            await self._cancel_and_confirm(reply, "session_closed", self.clock.now(), confirm=False, stop_reason=CANCELLED)
        self.usage.status = status
        self.usage.close_reason = reason
        if self.phase != Phase.IDLE:
            self.phases.phase = Phase.IDLE  # closing is allowed from any phase
            self.phases.history.append(Phase.IDLE)
        self.trace.emit(ev.SESSION_CLOSED, None, status=status, reason=reason, usage=self.usage.summary())
        self.trace.close()

    # ------------------------------------------------------------------ board events

    async def _dispatch(self, item: PortEvent) -> None:
        if isinstance(item, MicAudio):
            self._on_mic(item)
        elif isinstance(item, BoardEvent):
            if item.kind == BoardEventKind.BUTTON_DOWN and self.phase in (Phase.THINKING, Phase.SPEAKING):
                self.cancel_turn("button", item.host_t)
        elif isinstance(item, PlaybackReport):
            self._on_playback(item)
        elif isinstance(item, LinkStatus):
            self._on_link_status(item)

    def _on_playback(self, report: PlaybackReport) -> None:
        reply = self._reply
        if report.state == PlaybackState.STARTED:
            self._timeline.anchor(report.stream_id, report.host_t)
        if reply is not None and report.stream_id == reply.stream_id:
            reply.on_playback(report)

    def _on_link_status(self, status: LinkStatus) -> None:
        self.trace.emit(ev.LINK_STATUS, None, state=status.state, board=status.board, detail=status.detail)
        if status.state == LinkState.DETACHED:
            if self._detached_at is None:
                self._detached_at = self.clock.now()
            if self._reply is not None:
                self.cancel_turn("board_detached", self.clock.now(), confirm=False, stop_reason=CANCELLED)
        elif status.state == LinkState.ATTACHED:
            self._detached_at = None  # back within the grace period: same session goes on
        elif status.state == LinkState.RESET:
            self._detached_at = None
            if self._reply is not None:
                self.cancel_turn("board_reset", self.clock.now(), confirm=False, stop_reason=CANCELLED)

    def _on_mic(self, mic: MicAudio) -> None:
        barge_in, transcripts = self.mic.hear(mic, speaking=self.phase == Phase.SPEAKING,
                                              interrupted=self.phase == Phase.INTERRUPTED)
        if barge_in:
            self.cancel_turn("voice", self.clock.now())
        for transcript in transcripts:
            self._on_transcript(transcript)

    # ------------------------------------------------------------------ transcripts

    def _on_transcript(self, transcript: Transcript) -> None:
        # Only the turn being listened to counts; a final closes it; anything later is dropped.
        if transcript.turn_id != self.mic.listen_turn or transcript.turn_id in self._finals_seen:
            return
        text = transcript.text.strip()
        if not transcript.final:
            if not text:
                return
            self.trace.emit(ev.PARTIAL_TRANSCRIPT, transcript.turn_id, text=text)
            if self.phase == Phase.SPEAKING and len(text.replace(" ", "")) >= self.config.partial_min_chars:
                self.cancel_turn("partial", self.clock.now())
            return
        if not text:
            return
        self._finals_seen.add(transcript.turn_id)
        self.mic.next_turn()
        if self.phase in (Phase.THINKING, Phase.SPEAKING, Phase.INTERRUPTED):
            # New words while a reply runs: that reply is over; answer the new words after it stopped.
            self._pending_finals.append(transcript)
            if self.phase != Phase.INTERRUPTED:
                self.cancel_turn("final", self.clock.now())
            return
        self._start_turn(transcript)

    def _take_pending_finals(self) -> list[Transcript]:
        pending, self._pending_finals = self._pending_finals, []
        return pending

    def _start_turn(self, transcript: Transcript) -> None:
        text = transcript.text.strip()
        if not self.conversation.commit_final(transcript.turn_id, text):
            return
        # `heard`: the recognised words before numbers were normalised; `words`: per-word confidence.
        self.trace.emit(ev.FINAL_TRANSCRIPT, transcript.turn_id, text=text, confidence=transcript.confidence,
                        heard=transcript.raw_text or text,
                        words=[{"word": w.word, "confidence": w.confidence} for w in transcript.words])
        reply = SpeakerReply(
            port=self.port,
            trace=self.trace,
            clock=self.clock,
            timeline=self._timeline,
            turn_id=transcript.turn_id,
            final_t=self.clock.now(),
            record=TurnRecord(transcript.turn_id, text),
            chunk_ms=self.config.speaker_chunk_ms,
            on_first_audio=lambda: self.phases.move(Phase.SPEAKING),
            heard=transcript.words,
        )
        self.outcomes[transcript.turn_id] = reply.outcome
        self._reply = reply
        self.phases.move(Phase.THINKING)
        reply.task = asyncio.create_task(self._speak(reply))

    # ------------------------------------------------------------------ the reply

    async def _speak(self, reply: SpeakerReply) -> None:
        request = TurnRequest(self.session_id, reply.record.user, reply.final_t, turn_id=reply.turn_id, lang=self.lang,
                              prior_side_effects=self.conversation.take_side_effects(), heard=reply.heard)
        try:
            await self.runner.run(request, reply, reply.control, budgets=self.config.budgets, outcome=reply.outcome,
                                  on_degrade=lambda action, data: self._record_degrade(reply, action, data))
            stop_reason = reply.outcome.stop_reason
            if stop_reason == FAILED:
                reply.record.error = "; ".join(reply.outcome.errors)
            if reply.sent_bytes:
                await self.port.end_stream(reply.stream_id)
                played_s = reply.sent_bytes / 2 / self.port.speaker_rate
                with contextlib.suppress(asyncio.TimeoutError):
                    await self.clock.wait_for(reply.drained.wait(), played_s + self.config.drain_margin_s)
        except SottoError as exc:  # the link failed under the reply: a failed turn, not a dead session
            reply.record.error = f"{exc.code}: {exc}"
            stop_reason = FAILED
        self._finish_turn(reply, stop_reason)

    def _record_degrade(self, reply: SpeakerReply, action: str, data: dict[str, Any]) -> None:
        if action not in reply.record.degrade_actions:
            reply.record.degrade_actions.append(action)
        self.trace.emit(ev.DEGRADE, reply.turn_id, action=action, **data)

    # ------------------------------------------------------------------ barge-in

    def cancel_turn(self, source: str, detected_t: float, *, confirm: bool = True, stop_reason: str = INTERRUPTED) -> None:
        """The one cancellation path: stop the reply now; record and resume listening once stopped."""
        reply = self._reply
        if reply is None or reply.cancelling or reply.finished:
            return
        reply.cancelling = True
        reply.control.cancel(f"{stop_reason}: {source}")  # the reason the turn's unsent board actions get
        if reply.task is not None:
            reply.task.cancel()  # cancel first: nothing of this reply is sent after this point
        if self.phase in (Phase.THINKING, Phase.SPEAKING):
            self.phases.move(Phase.INTERRUPTED)
        self.mic.speech_handled()
        self._cancel_task = asyncio.create_task(
            self._cancel_and_confirm(reply, source, detected_t, confirm=confirm, stop_reason=stop_reason)
        )

    async def _cancel_and_confirm(
        self, reply: SpeakerReply, source: str, detected_t: float, *, confirm: bool, stop_reason: str
    ) -> None:
        reply.cancelling = True
        reply.control.cancel(f"{stop_reason}: {source}")
        if reply.task is not None:
            reply.task.cancel()
        stop_error: str | None = None
        if reply.sent_bytes:
            try:
                await self.clock.wait_for(self.port.stop(reply.stream_id), self.config.stop_confirm_timeout_s)
            except SottoError as exc:
                stop_error = str(exc)
            except asyncio.TimeoutError:
                stop_error = "STOP not accepted by the link in time"
        if reply.task is not None:
            await asyncio.wait({reply.task})
        model_stopped_t = self.clock.now()
        report: PlaybackReport | None = None
        if reply.sent_bytes and confirm and stop_error is None:
            with contextlib.suppress(asyncio.TimeoutError):
                report = await self.clock.wait_for(asyncio.shield(reply.stopped), self.config.stop_confirm_timeout_s)
        silent_t = report.host_t if report is not None else self.clock.now()
        # Recorded only now, after everything stopped.
        record = reply.record
        record.barge_in_ms = max(0.0, (max(silent_t, model_stopped_t) - detected_t) * 1000.0)
        played = report.bytes_played if report is not None else 0
        record.spoken_prefix = reply.spoken_prefix(played)
        if record.total_turn_ms is None and reply.last_sent_t is not None:
            record.total_turn_ms = (reply.last_sent_t - reply.final_t) * 1000.0
        if stop_reason == INTERRUPTED:
            self.usage.barge_ins += 1
            self.trace.emit(
                ev.BARGE_IN, reply.turn_id, source=source, spoken_prefix=record.spoken_prefix,
                bytes_played=played, bytes_sent=reply.sent_bytes, playback_confirmed=report is not None,
                barge_in_ms=round(record.barge_in_ms, 1), stop_error=stop_error,
            )
        for description in record.actions_cancelled:
            self.trace.emit(ev.ACTION, reply.turn_id, action=description, status="cancelled")
        self._finish_turn(reply, stop_reason)
        # Listening resumes: the audio held meanwhile goes to the recognizer, then any final that waited.
        for transcript in self.mic.release_held():
            self._on_transcript(transcript)
        for transcript in self._take_pending_finals():
            if not self._closed and self._reply is None:
                self._start_turn(transcript)

    # ------------------------------------------------------------------ turn record

    def _finish_turn(self, reply: SpeakerReply, stop_reason: str) -> None:
        if reply.finished:
            return
        reply.finished = True
        record = reply.record
        record.stop_reason = stop_reason
        outcome = reply.outcome
        record.route, record.route_reason = outcome.route, outcome.route_reason
        record.predicted_first_answer_ms = outcome.predicted_first_answer_ms
        if stop_reason in (COMPLETED, DEFERRED):
            record.reply = reply.outcome.reply
            self.conversation.commit_reply(record.reply)
            record.spoken_prefix = reply.all_spoken()
        # Board actions that ran but that the reply never said (it was cut, given up, failed):
        # the next turn is told of them.
        said = record.reply if stop_reason in (COMPLETED, DEFERRED) else ""
        self.conversation.note_side_effects([d for d in record.actions_done if d not in said])
        if reply.last_sent_t is not None and stop_reason not in (INTERRUPTED, CANCELLED):
            record.total_turn_ms = (reply.last_sent_t - reply.final_t) * 1000.0
        if stop_reason == FAILED:
            self.usage.failed_attempts += 1
        for metric in (FIRST_BYTE, FIRST_ANSWER, TOTAL_TURN, BARGE_IN):
            value = getattr(record, metric)
            if value is None:
                continue
            verdict = judge(metric, value, self.config.budgets)
            record.verdicts.append(verdict)
            self.trace.emit(
                ev.VOICE_TIMING, reply.turn_id, metric=metric, value_ms=round(value, 1),
                target_ms=verdict.target_ms, limit_ms=verdict.limit_ms, over_target=verdict.over_target,
                code=verdict.code,
            )
        self.usage.turns.append(record)
        self.trace.emit(ev.TURN_COMPLETED, reply.turn_id, **record.to_json_dict())
        if self._reply is reply:
            self._reply = None
        if self.phase in (Phase.THINKING, Phase.SPEAKING, Phase.INTERRUPTED):
            self.phases.move(Phase.LISTENING)
