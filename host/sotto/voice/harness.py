"""The voice session: one board, one conversation, turn after turn.

The session consumes the board's events (mic audio, button, playback reports, link
status), feeds the recognizer, commits finals, and runs each reply as one task:
responder -> board actions / TTS -> speaker audio, with the degradation ladder acting
live. Barge-in goes through one path, `cancel_turn()`: the reply task (model stream,
TTS, running action, audio not yet sent) is cancelled and the board told to stop, then
the harness waits until the board confirms its speaker is silent, and only then
records the barge-in and resumes listening.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import numpy as np

from sotto.audio.resample import StreamResampler, resample_pcm16
from sotto.engines.base import AudioChunk, Recognizer, SpeechSynthesizer, Transcript
from sotto.errors import SottoError
from sotto.voice import events as ev
from sotto.voice.acks import PhraseCache, build_phrase_cache
from sotto.voice.bargein import BargeInConfig, EchoGate, PlayoutTimeline, SpeechRun
from sotto.voice.budgets import BARGE_IN, FIRST_ANSWER, FIRST_BYTE, TOTAL_TURN, BudgetConfig, judge
from sotto.voice.conversation import Conversation
from sotto.voice.phases import Phase, PhaseMachine
from sotto.voice.ports import BoardEvent, BoardPort, LinkStatus, MicAudio, PlaybackReport, PortEvent
from sotto.voice.responder import BoardAction, ReplyControl, ReplyRequest, Responder, ReplySentence
from sotto.voice.trace import TraceLog, TraceSink
from sotto.voice.usage import CANCELLED, COMPLETED, DEFERRED, FAILED, INTERRUPTED, TurnRecord, UsageRecord

Clock = Callable[[], float]

ACKNOWLEDGE = "acknowledge"
SHORTEN = "shorten"
DEFER = "defer"


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


@dataclass(frozen=True)
class _Segment:
    text: str
    pcm: bytes  # at the speaker rate
    acknowledgement: bool = False
    deferral: bool = False


_END = object()


@dataclass
class _Reply:
    """Everything one reply owns; dropped when its turn is recorded."""

    turn_id: int
    stream_id: int
    final_t: float
    record: TurnRecord
    control: ReplyControl
    task: asyncio.Task[None] | None = None
    producer: asyncio.Task[None] | None = None
    sent_bytes: int = 0
    last_sent_t: float | None = None
    spoken: list[tuple[str, int, int]] = field(default_factory=list)  # (text, start, end) byte offsets
    answer_texts: list[str] = field(default_factory=list)
    started_playing: bool = False
    drained: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: asyncio.Future[PlaybackReport] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    running_action: str | None = None
    cancelling: bool = False
    finished: bool = False


class VoiceSession:
    def __init__(
        self,
        port: BoardPort,
        recognizer: Recognizer,
        responder: Responder,
        tts: SpeechSynthesizer,
        *,
        session_id: str | None = None,
        config: VoiceConfig | None = None,
        phrases: PhraseCache | None = None,
        sinks: tuple[TraceSink, ...] = (),
        trace_folder: Path | None = None,
        persist_trace: bool = True,
        clock: Clock = time.monotonic,
    ) -> None:
        self.port = port
        self.recognizer = recognizer
        self.responder = responder
        self.tts = tts
        self.config = config or VoiceConfig()
        self.session_id = session_id or time.strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6]
        self.clock = clock
        self.trace = TraceLog(self.session_id, folder=trace_folder, sinks=sinks, clock=clock, persist=persist_trace)
        self.usage = UsageRecord(self.session_id)
        self.conversation = Conversation()
        self.phases = PhaseMachine()
        self.phrases = phrases
        self._listen_turn = 1
        self._seq = 0
        self._finals_seen: set[int] = set()
        self._pending_finals: list[Transcript] = []
        self._reply: _Reply | None = None
        self._cancel_task: asyncio.Task[None] | None = None
        self._held_audio: list[MicAudio] = []
        self._detached_at: float | None = None
        self._closed = False
        self._timeline = PlayoutTimeline(port.mic_rate)
        self._gate = EchoGate(port.mic_rate, self.config.barge_in, self._timeline)
        self._speech_run = SpeechRun(self.config.barge_in)
        self._mic_resampler: StreamResampler | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ lifecycle

    @property
    def phase(self) -> Phase:
        return self.phases.phase

    async def run(self) -> UsageRecord:
        """Serve the board until its events end (completed) or the session is cancelled."""
        if self.phrases is None:
            self.phrases = await build_phrase_cache(self.tts, self.port.speaker_rate)
        self.phases.move(Phase.LISTENING)
        queue: asyncio.Queue[object] = asyncio.Queue()
        pump = asyncio.create_task(self._pump(self.port.events(), queue))
        try:
            while True:
                timeout = None
                if self._detached_at is not None:
                    timeout = max(0.0, self._detached_at + self.config.grace_s - self.clock())
                try:
                    item = await asyncio.wait_for(queue.get(), timeout)
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
        for transcript in self.recognizer.flush(self._listen_turn):
            self._on_transcript(transcript)
        if self._cancel_task is not None:
            await asyncio.wait({self._cancel_task})
        for transcript in self._take_pending_finals():
            self._on_transcript(transcript)
        if self._reply is not None and self._reply.task is not None:
            await asyncio.wait({self._reply.task})

    async def _close(self, status: str, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        if self._cancel_task is not None and not self._cancel_task.done():
            await asyncio.wait({self._cancel_task})
        reply = self._reply
        if reply is not None and not reply.finished:
            await self._cancel_and_confirm(reply, "session_closed", self.clock(), confirm=False, stop_reason=CANCELLED)
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
            if item.kind == "button_down" and self.phase in (Phase.THINKING, Phase.SPEAKING):
                self.cancel_turn("button", item.host_t)
        elif isinstance(item, PlaybackReport):
            self._on_playback(item)
        elif isinstance(item, LinkStatus):
            self._on_link_status(item)

    def _on_playback(self, report: PlaybackReport) -> None:
        reply = self._reply
        if report.state == "started":
            self._timeline.anchor(report.stream_id, report.host_t)
        if reply is None or report.stream_id != reply.stream_id:
            return
        if report.state == "started":
            reply.started_playing = True
        elif report.state == "drained":
            reply.drained.set()
        elif report.state == "stopped" and not reply.stopped.done():
            self._timeline.stop(report.stream_id, report.host_t)
            reply.stopped.set_result(report)

    def _on_link_status(self, status: LinkStatus) -> None:
        self.trace.emit(ev.LINK_STATUS, None, state=status.state, board=status.board, detail=status.detail)
        if status.state == "detached":
            if self._detached_at is None:
                self._detached_at = self.clock()
            if self._reply is not None:
                self.cancel_turn("board_detached", self.clock(), confirm=False, stop_reason=CANCELLED)
        elif status.state == "attached":
            self._detached_at = None  # back within the grace period: same session goes on
        elif status.state == "reset":
            self._detached_at = None
            if self._reply is not None:
                self.cancel_turn("board_reset", self.clock(), confirm=False, stop_reason=CANCELLED)

    def _on_mic(self, mic: MicAudio) -> None:
        pcm = mic.pcm[: len(mic.pcm) - len(mic.pcm) % 2]
        if not pcm:
            return
        frame = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        verdict = self._gate.classify(frame, mic.host_t)
        self._timeline.prune(mic.host_t, self.config.barge_in.reference_keep_s)
        if self.phase == Phase.INTERRUPTED:
            self._hold(mic)
            return
        frame_ms = 1000.0 * len(frame) / mic.sample_rate
        if self.phase == Phase.SPEAKING:
            if self._speech_run.update(verdict.voice, frame_ms, mic.host_t):
                self.cancel_turn("voice", self.clock())
                self._hold(mic)
                return
        else:
            self._speech_run.reset()
        # What reaches the recognizer: the user's voice, never the agent's echo.
        echo_present = verdict.echo_rms > 0.1 * self.config.barge_in.vad_threshold_rms
        feed = pcm if verdict.voice or not echo_present else bytes(len(pcm))
        self._feed_recognizer(feed, mic.sample_rate)

    def _hold(self, mic: MicAudio) -> None:
        self._held_audio.append(mic)
        limit = self.config.max_held_audio_s
        while sum(len(m.pcm) / 2 / m.sample_rate for m in self._held_audio) > limit:
            self._held_audio.pop(0)

    def _feed_recognizer(self, pcm: bytes, rate: int) -> None:
        if rate != self.recognizer.sample_rate:
            if self._mic_resampler is None or self._mic_resampler.from_rate != rate:
                self._mic_resampler = StreamResampler(rate, self.recognizer.sample_rate)
            pcm = self._mic_resampler.process(pcm)
        chunk = AudioChunk(self._listen_turn, self._seq, pcm, self.recognizer.sample_rate)
        self._seq += 1
        for transcript in self.recognizer.accept(chunk):
            self._on_transcript(transcript)

    # ------------------------------------------------------------------ transcripts

    def _on_transcript(self, transcript: Transcript) -> None:
        # Only the turn being listened to counts; a final closes it; anything later is dropped.
        if transcript.turn_id != self._listen_turn or transcript.turn_id in self._finals_seen:
            return
        text = transcript.text.strip()
        if not transcript.final:
            if not text:
                return
            self.trace.emit(ev.PARTIAL_TRANSCRIPT, transcript.turn_id, text=text)
            if self.phase == Phase.SPEAKING and len(text.replace(" ", "")) >= self.config.partial_min_chars:
                self.cancel_turn("partial", self.clock())
            return
        if not text:
            return
        self._finals_seen.add(transcript.turn_id)
        self._listen_turn += 1
        self._seq = 0
        if self.phase in (Phase.THINKING, Phase.SPEAKING, Phase.INTERRUPTED):
            # New words while a reply runs: that reply is over; answer the new words after it stopped.
            self._pending_finals.append(transcript)
            if self.phase != Phase.INTERRUPTED:
                self.cancel_turn("final", self.clock())
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
        reply = _Reply(
            turn_id=transcript.turn_id,
            stream_id=transcript.turn_id & 0xFFFF,
            final_t=self.clock(),
            record=TurnRecord(transcript.turn_id, text),
            control=ReplyControl(),
        )
        self._reply = reply
        self.phases.move(Phase.THINKING)
        reply.task = asyncio.create_task(self._speak(reply))

    # ------------------------------------------------------------------ the reply

    async def _speak(self, reply: _Reply) -> None:
        queue: asyncio.Queue[_Segment | BaseException | None] = asyncio.Queue()
        reply.producer = asyncio.create_task(self._produce(reply, queue))
        try:
            stop_reason = await self._send_loop(reply, queue)
            if reply.sent_bytes:
                await self.port.end_stream(reply.stream_id)
                played_s = reply.sent_bytes / 2 / self.port.speaker_rate
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(reply.drained.wait(), played_s + self.config.drain_margin_s)
        except SottoError as exc:  # the link failed under the reply: a failed turn, not a dead session
            reply.record.error = f"{exc.code}: {exc}"
            stop_reason = FAILED
        finally:
            await self._stop_producer(reply)
        self._finish_turn(reply, stop_reason)

    async def _stop_producer(self, reply: _Reply) -> None:
        producer = reply.producer
        if producer is not None and not producer.done():
            producer.cancel()
            await asyncio.wait({producer})

    async def _produce(self, reply: _Reply, queue: asyncio.Queue[_Segment | BaseException | None]) -> None:
        request = ReplyRequest(reply.turn_id, reply.record.user, reply.control, self.conversation.take_side_effects())
        items = self.responder.reply(request)
        answers = 0
        loop = asyncio.get_running_loop()
        try:
            async for item in items:
                if isinstance(item, BoardAction):
                    await self._run_action(reply, item)
                    continue
                if not isinstance(item, ReplySentence) or not item.text.strip():
                    continue
                if not item.acknowledgement:
                    limit = reply.control.max_sentences
                    if limit is not None and answers >= limit:
                        break
                    answers += 1
                pcm = await loop.run_in_executor(None, self._synthesize, item.text)
                await queue.put(_Segment(item.text, pcm, acknowledgement=item.acknowledgement))
            await queue.put(None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the reply failed: the turn records it, the session goes on
            await queue.put(exc)
        finally:
            closer = getattr(items, "aclose", None)
            if closer is not None:
                await closer()

    def _synthesize(self, text: str) -> bytes:
        rate = self.port.speaker_rate
        return b"".join(resample_pcm16(a.pcm, a.sample_rate, rate) for a in self.tts.synthesize(text))

    async def _run_action(self, reply: _Reply, action: BoardAction) -> None:
        description = action.describe()
        reply.running_action = description
        try:
            await self.port.send_command(action.name, action.value)
        except asyncio.CancelledError:
            reply.record.actions_cancelled.append(description)
            raise
        except SottoError as exc:
            self.trace.emit(ev.ACTION, reply.turn_id, action=description, status="failed", error=str(exc))
            return
        finally:
            reply.running_action = None
        reply.record.actions_done.append(description)
        self.trace.emit(ev.ACTION, reply.turn_id, action=description, status="done")

    def _ladder_steps(self) -> list[tuple[float, str]]:
        ladder = self.config.budgets.ladder
        if not ladder.enabled:
            return []
        return [(ladder.ack_after_ms, ACKNOWLEDGE), (ladder.shorten_after_ms, SHORTEN), (ladder.defer_after_ms, DEFER)]

    async def _send_loop(self, reply: _Reply, queue: asyncio.Queue[_Segment | BaseException | None]) -> str:
        """Send the reply's audio as it is ready; while the answer is late, walk the ladder."""
        steps = self._ladder_steps()
        answers_sent = 0
        answer_started = False
        deferred = False
        give_up_at: float | None = None  # after deferring: the first_answer hard limit
        while True:
            deadline: float | None = None
            step: str | None = None
            if not answer_started:
                if steps:
                    deadline = reply.final_t + steps[0][0] / 1000.0
                    step = steps[0][1]
                elif give_up_at is not None:
                    deadline = give_up_at
            elif self.config.budgets.ladder.enabled:
                # A reply that stalls mid-answer is cut at the total_turn hard limit.
                deadline = reply.final_t + self.config.budgets.budgets[TOTAL_TURN].limit_ms / 1000.0
            timeout = None if deadline is None else max(0.0, deadline - self.clock())
            try:
                item = await asyncio.wait_for(queue.get(), timeout)
            except asyncio.TimeoutError:
                if answer_started:
                    self._record_degrade(reply, SHORTEN, reason="answer stalled")
                    return COMPLETED
                if step is None:
                    return DEFERRED  # deferred and said so; the answer did not come in time
                steps.pop(0)
                if await self._degrade(reply, step, answer_started):
                    deferred = deferred or step == DEFER
                    if step == DEFER:
                        give_up_at = reply.final_t + self.config.budgets.budgets[FIRST_ANSWER].limit_ms / 1000.0
                continue
            if item is None:
                return DEFERRED if deferred and not answer_started else COMPLETED
            if isinstance(item, BaseException):
                reply.record.error = f"{type(item).__name__}: {item}"
                return FAILED
            if not item.acknowledgement:
                limit = reply.control.max_sentences
                if limit is not None and answers_sent >= limit:
                    return COMPLETED
                answers_sent += 1
                answer_started = True
                reply.answer_texts.append(item.text)
            await self._send_segment(reply, item)
            if answer_started and reply.control.max_sentences is None and self._total_turn_at_risk(reply):
                await self._degrade(reply, SHORTEN, answer_started, keep=answers_sent)

    def _total_turn_at_risk(self, reply: _Reply) -> bool:
        ladder = self.config.budgets.ladder
        if not ladder.enabled:
            return False
        elapsed_ms = (self.clock() - reply.final_t) * 1000.0
        return elapsed_ms > ladder.total_turn_share * self.config.budgets.budgets[TOTAL_TURN].target_ms

    async def _degrade(self, reply: _Reply, action: str, answer_started: bool, keep: int = 1) -> bool:
        """Fire one ladder step; False when it was not needed (e.g. audio already playing)."""
        assert self.phrases is not None
        if action == ACKNOWLEDGE:
            if reply.sent_bytes:
                return False
            phrase = self.phrases.next_ack()
            self._record_degrade(reply, action, phrase=phrase.text)
            await self._send_segment(reply, _Segment(phrase.text, phrase.pcm, acknowledgement=True))
            return True
        if action == SHORTEN:
            reply.control.shorten(keep)
            self._record_degrade(reply, action, max_sentences=reply.control.max_sentences)
            return True
        if action == DEFER and not answer_started:
            reply.control.defer = True
            reply.control.shorten(1)
            phrase = self.phrases.deferral
            self._record_degrade(reply, action, phrase=phrase.text)
            reply.answer_texts.append(phrase.text)
            await self._send_segment(reply, _Segment(phrase.text, phrase.pcm, deferral=True))
            return True
        return False

    def _record_degrade(self, reply: _Reply, action: str, **data: Any) -> None:
        if action not in reply.record.degrade_actions:
            reply.record.degrade_actions.append(action)
        elapsed = (self.clock() - reply.final_t) * 1000.0
        self.trace.emit(ev.DEGRADE, reply.turn_id, action=action, after_ms=round(elapsed, 1), **data)

    async def _send_segment(self, reply: _Reply, segment: _Segment) -> None:
        rate = self.port.speaker_rate
        step = max(2, int(rate * self.config.speaker_chunk_ms / 1000) * 2)
        start = reply.sent_bytes
        kind = "acknowledgement" if segment.acknowledgement else "deferral" if segment.deferral else "answer"
        for offset in range(0, len(segment.pcm), step):
            piece = segment.pcm[offset : offset + step]
            if reply.sent_bytes == 0:
                self.phases.move(Phase.SPEAKING)
                self.trace.emit(ev.AGENT_SPEECH_STARTED, reply.turn_id, stream=reply.stream_id, text=segment.text, kind=kind)
            await self.port.send_audio(reply.stream_id, piece)
            now = self.clock()
            if reply.sent_bytes == 0:
                reply.record.first_byte_ms = (now - reply.final_t) * 1000.0
            if kind != "acknowledgement" and reply.record.first_answer_ms is None:
                reply.record.first_answer_ms = (now - reply.final_t) * 1000.0
            self._timeline.add(reply.stream_id, self._to_mic_rate(piece), now)
            reply.sent_bytes += len(piece)
            reply.last_sent_t = now
            self.trace.emit(
                ev.AGENT_SPEECH_CHUNK, reply.turn_id, stream=reply.stream_id, bytes=len(piece),
                offset=reply.sent_bytes - len(piece), text=segment.text, kind=kind,
            )
        reply.spoken.append((segment.text, start, reply.sent_bytes))

    def _to_mic_rate(self, pcm: bytes) -> np.ndarray:
        resampled = resample_pcm16(pcm, self.port.speaker_rate, self.port.mic_rate)
        return np.frombuffer(resampled, dtype="<i2").astype(np.float64)

    # ------------------------------------------------------------------ barge-in

    def cancel_turn(self, source: str, detected_t: float, *, confirm: bool = True, stop_reason: str = INTERRUPTED) -> None:
        """The one cancellation path: stop the reply now; record and resume listening once stopped."""
        reply = self._reply
        if reply is None or reply.cancelling or reply.finished:
            return
        reply.cancelling = True
        if reply.task is not None:
            reply.task.cancel()  # cancel first: nothing of this reply is sent after this point
        if self.phase in (Phase.THINKING, Phase.SPEAKING):
            self.phases.move(Phase.INTERRUPTED)
        self._speech_run.reset()
        self._cancel_task = asyncio.create_task(
            self._cancel_and_confirm(reply, source, detected_t, confirm=confirm, stop_reason=stop_reason)
        )

    async def _cancel_and_confirm(
        self, reply: _Reply, source: str, detected_t: float, *, confirm: bool, stop_reason: str
    ) -> None:
        reply.cancelling = True
        if reply.task is not None:
            reply.task.cancel()
        stop_error: str | None = None
        if reply.sent_bytes:
            try:
                await asyncio.wait_for(self.port.stop(reply.stream_id), self.config.stop_confirm_timeout_s)
            except SottoError as exc:
                stop_error = str(exc)
            except asyncio.TimeoutError:
                stop_error = "STOP not accepted by the link in time"
        if reply.task is not None:
            await asyncio.wait({reply.task})
        await self._stop_producer(reply)
        model_stopped_t = self.clock()
        report: PlaybackReport | None = None
        if reply.sent_bytes and confirm and stop_error is None:
            with contextlib.suppress(asyncio.TimeoutError):
                report = await asyncio.wait_for(asyncio.shield(reply.stopped), self.config.stop_confirm_timeout_s)
        silent_t = report.host_t if report is not None else self.clock()
        # Recorded only now, after everything stopped.
        record = reply.record
        record.barge_in_ms = max(0.0, (max(silent_t, model_stopped_t) - detected_t) * 1000.0)
        played = report.bytes_played if report is not None else 0
        record.spoken_prefix = self._spoken_prefix(reply, played)
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
        self.conversation.note_side_effects(record.actions_done)
        self._finish_turn(reply, stop_reason)
        # Listening resumes: the audio held meanwhile goes to the recognizer, then any final that waited.
        held, self._held_audio = self._held_audio, []
        for mic in held:
            self._feed_recognizer(mic.pcm[: len(mic.pcm) - len(mic.pcm) % 2], mic.sample_rate)
        for transcript in self._take_pending_finals():
            if not self._closed and self._reply is None:
                self._start_turn(transcript)

    def _spoken_prefix(self, reply: _Reply, bytes_played: int) -> str:
        """The text the board actually played, estimated from each sentence's audio length."""
        words: list[str] = []
        for text, start, end in reply.spoken:
            if bytes_played >= end:
                words.extend(text.split())
            elif bytes_played > start:
                sentence = text.split()
                words.extend(sentence[: int(len(sentence) * (bytes_played - start) / (end - start))])
                break
        return " ".join(words)

    # ------------------------------------------------------------------ turn record

    def _finish_turn(self, reply: _Reply, stop_reason: str) -> None:
        if reply.finished:
            return
        reply.finished = True
        record = reply.record
        record.stop_reason = stop_reason
        if stop_reason in (COMPLETED, DEFERRED):
            record.reply = " ".join(reply.answer_texts)
            self.conversation.commit_reply(record.reply)
            record.spoken_prefix = " ".join(t for t, _s, _e in reply.spoken)
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
