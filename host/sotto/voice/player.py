"""One reply on a board's speaker: the turn engine's `ReplyOutput` for a voice session.

It sends each segment's audio in pieces within the board's credits (the link paces and
encodes it), runs board actions on the same cancellable path, keeps what was sent where
(so a barge-in can tell what the board actually played) and measures first byte, first
answer and the last chunk sent for the turn record.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from sotto.agent.actions import RequestedAction
from sotto.audio.resample import resample_pcm16
from sotto.clock import Clock
from sotto.engines.base import WordConfidence
from sotto.errors import SottoError
from sotto.link.events import BoardPort, PlaybackReport, PlaybackState
from sotto.voice import events as ev
from sotto.voice.bargein import PlayoutTimeline
from sotto.voice.reply_types import ReplyControl, ReplyOutcome, Segment
from sotto.voice.trace import TraceLog
from sotto.voice.usage import TurnRecord


@dataclass
class SpeakerReply:
    """Everything one reply owns on the board; dropped when its turn is recorded."""

    port: BoardPort
    trace: TraceLog
    clock: Clock
    timeline: PlayoutTimeline
    turn_id: int
    final_t: float
    record: TurnRecord
    chunk_ms: int
    on_first_audio: Callable[[], None]  # the session moves to SPEAKING
    control: ReplyControl = field(default_factory=ReplyControl)
    outcome: ReplyOutcome = field(default_factory=ReplyOutcome)
    task: asyncio.Task[None] | None = None
    sent_bytes: int = 0
    last_sent_t: float | None = None
    spoken: list[tuple[str, int, int]] = field(default_factory=list)  # (text, start, end) byte offsets
    started_playing: bool = False
    drained: asyncio.Event = field(default_factory=asyncio.Event)
    stopped: asyncio.Future[PlaybackReport] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    running_action: str | None = None  # the board action in flight, if any
    heard: tuple[WordConfidence, ...] = ()  # the final's words with their confidences, for the agent
    cancelling: bool = False
    finished: bool = False

    @property
    def stream_id(self) -> int:
        return self.turn_id & 0xFFFF

    # ------------------------------------------------------------------ ReplyOutput

    @property
    def sample_rate(self) -> int:
        return self.port.speaker_rate

    @property
    def has_played(self) -> bool:
        return self.sent_bytes > 0

    async def run_action(self, action: RequestedAction) -> None:
        description = action.description or f"{action.name}={action.value}"
        self.running_action = description
        try:
            await self.port.send_command(action.name, action.value)
        except asyncio.CancelledError:
            self.record.actions_cancelled.append(description)
            raise
        except SottoError as exc:
            self.trace.emit(ev.ACTION, self.turn_id, action=description, status="failed", error=str(exc))
            return
        finally:
            self.running_action = None
        self.record.actions_done.append(description)
        self.trace.emit(ev.ACTION, self.turn_id, action=description, status="done")

    def action_not_sent(self, action: RequestedAction, reason: str) -> None:
        description = action.description or f"{action.name}={action.value}"
        self.record.actions_not_sent.append(description)
        self.trace.emit(ev.ACTION, self.turn_id, action=description, status="not_sent", reason=reason)

    async def play(self, segment: Segment) -> None:
        rate = self.port.speaker_rate
        step = max(2, int(rate * self.chunk_ms / 1000) * 2)
        start = self.sent_bytes
        for offset in range(0, len(segment.pcm), step):
            piece = segment.pcm[offset: offset + step]
            if self.sent_bytes == 0:
                self.on_first_audio()
                self.trace.emit(ev.AGENT_SPEECH_STARTED, self.turn_id, stream=self.stream_id, text=segment.text,
                                kind=segment.kind)
            await self.port.send_audio(self.stream_id, piece)
            now = self.clock.now()
            if self.sent_bytes == 0:
                self.record.first_byte_ms = (now - self.final_t) * 1000.0
            if segment.kind != "acknowledgement" and self.record.first_answer_ms is None:
                self.record.first_answer_ms = (now - self.final_t) * 1000.0
            self.timeline.add(self.stream_id, self._to_mic_rate(piece), now)
            self.sent_bytes += len(piece)
            self.last_sent_t = now
            self.trace.emit(ev.AGENT_SPEECH_CHUNK, self.turn_id, stream=self.stream_id, bytes=len(piece),
                            offset=self.sent_bytes - len(piece), text=segment.text, kind=segment.kind)
        self.spoken.append((segment.text, start, self.sent_bytes))

    def _to_mic_rate(self, pcm: bytes) -> np.ndarray:
        resampled = resample_pcm16(pcm, self.port.speaker_rate, self.port.mic_rate)
        return np.frombuffer(resampled, dtype="<i2").astype(np.float64)

    # ------------------------------------------------------------------ the board's reports

    def on_playback(self, report: PlaybackReport) -> None:
        if report.state == PlaybackState.STARTED:
            self.started_playing = True
        elif report.state == PlaybackState.DRAINED:
            self.drained.set()
        elif report.state == PlaybackState.STOPPED and not self.stopped.done():
            self.timeline.stop(report.stream_id, report.host_t)
            self.stopped.set_result(report)

    def spoken_prefix(self, bytes_played: int) -> str:
        """The text the board actually played, estimated from each sentence's audio length."""
        words: list[str] = []
        for text, start, end in self.spoken:
            if bytes_played >= end:
                words.extend(text.split())
            elif bytes_played > start:
                sentence = text.split()
                words.extend(sentence[: int(len(sentence) * (bytes_played - start) / (end - start))])
                break
        return " ".join(words)

    def all_spoken(self) -> str:
        return " ".join(t for t, _s, _e in self.spoken)

