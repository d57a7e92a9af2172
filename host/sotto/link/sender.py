"""The board link's paced priority sender: one frame at a time, control before audio before
bulk, paced to the line rate so nothing waits in a deep OS queue (a PING or STOP written
now reaches the board within about one frame time)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Awaitable, Callable

from sotto_fw import wire

from sotto.clock import Clock
from sotto.errors import LinkClosed
from sotto.link import messages as m
from sotto.link.audio_codec import WireAudioEncoder
from sotto.link.credits import SpeakerCredits, stream_at_or_before
from sotto.link.formats import line_bytes_per_s
from sotto.link.options import BULK_QUEUE_DEPTH, LinkOptions, LinkStats

PING_MEMORY = 256  # unanswered PINGs (lost frames) kept at most
PING_FORGET_S = 5.0


@dataclass
class _AudioItem:
    stream_id: int
    pcm: bytes
    done: asyncio.Future[None] | None


@dataclass
class _ControlItem:
    message: m.Message
    done: asyncio.Future[None] | None


def resolve(fut: asyncio.Future[None] | None, exc: BaseException | None = None) -> None:
    if fut is None or fut.done():
        return
    if exc is None:
        fut.set_result(None)
    else:
        fut.set_exception(exc)


class PacedSender:
    """Queues frames for the board and writes them, one at a time, at the line rate."""

    def __init__(self, options: LinkOptions, stats: LinkStats, credits: SpeakerCredits, clock: Clock,
                 write: Callable[[bytes], Awaitable[None]], attached: Callable[[], bool]) -> None:
        self.options = options
        self.stats = stats
        self.credits = credits
        self.clock = clock
        self._write = write
        self._attached = attached
        self.encoder = wire.FrameEncoder()
        self.control: deque[_ControlItem] = deque()
        self.audio: deque[_AudioItem] = deque()
        self.bulk: deque[m.Message] = deque()
        self.pings_sent: dict[int, float] = {}  # nonce -> clock time, for the PONG's round trip
        self._speaker_encoder: WireAudioEncoder | None = None
        self._speaker_stream: int | None = None
        # Created in start(), on the running loop.
        self._wake_event: asyncio.Event | None = None
        self._bulk_room: asyncio.Event | None = None

    def start(self) -> None:
        self._wake_event = asyncio.Event()
        self._bulk_room = asyncio.Event()

    def wake(self) -> None:
        if self._wake_event is not None:
            self._wake_event.set()

    # ------------------------------------------------------------------ the board's state

    def use_speaker_format(self, fmt: int) -> None:
        self._speaker_encoder = WireAudioEncoder(fmt)
        self._speaker_stream = None

    def new_boot(self) -> None:
        self._speaker_stream = None

    def board_attached(self) -> None:
        if self._bulk_room is not None:
            self._bulk_room.set()
        self.wake()

    def board_detached(self) -> None:
        self.control.clear()  # PINGs and STOPs for a board that is gone mean nothing later
        if self._bulk_room is not None:
            self._bulk_room.set()

    # ------------------------------------------------------------------ queueing

    def send_control(self, message: m.Message, *, urgent: bool = False) -> asyncio.Future[None]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        item = _ControlItem(message, done)
        if urgent:
            self.control.appendleft(item)
        else:
            self.control.append(item)
        self.wake()
        return done

    def queue_audio(self, stream_id: int, chunks: list[bytes]) -> asyncio.Future[None]:
        """Queue a stream's audio in frame-sized chunks; the future is done once the last went out."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        for i, chunk in enumerate(chunks):
            self.audio.append(_AudioItem(stream_id & 0xFFFF, chunk, done if i == len(chunks) - 1 else None))
        self.wake()
        return done

    def drop_audio(self, stream_id: int) -> None:
        """Drop queued audio of the stream and older ones (barge-in)."""
        kept: deque[_AudioItem] = deque()
        for item in self.audio:
            if stream_at_or_before(item.stream_id, stream_id):
                self.stats.audio_frames_dropped += 1
                resolve(item.done)
            else:
                kept.append(item)
        self.audio = kept

    async def send_bulk(self, message: m.Message, closing: Callable[[], bool], url: str) -> None:
        """Lowest-priority traffic (BENCH): waits while BULK_QUEUE_DEPTH frames are already waiting."""
        assert self._bulk_room is not None
        while len(self.bulk) >= BULK_QUEUE_DEPTH or not self._attached():
            if closing():
                raise LinkClosed(f"{url}: link closed")
            self._bulk_room.clear()
            await self._bulk_room.wait()
        self.bulk.append(message)
        self.wake()

    def close(self, closed: BaseException) -> None:
        for item in self.audio:
            resolve(item.done)
        self.audio.clear()
        for citem in self.control:
            resolve(citem.done, closed)
        self.control.clear()

    # ------------------------------------------------------------------ writing

    def _next_data(self) -> tuple[str, _AudioItem | m.Message] | None:
        if not self._attached():
            return None
        if self.audio:
            head = self.audio[0]
            if self.credits.can_send(len(head.pcm)):
                return "audio", head
        if self.bulk:
            return "bulk", self.bulk[0]
        return None

    def _encode_audio(self, item: _AudioItem) -> bytes:
        assert self._speaker_encoder is not None
        if item.stream_id != self._speaker_stream:
            self._speaker_encoder.reset()  # ADPCM state starts fresh with each stream
            self._speaker_stream = item.stream_id
        audio = self._speaker_encoder.encode(item.pcm) if item.pcm else b""
        return m.AudioDown(item.stream_id, audio).to_payload()

    def _remember_ping(self, nonce: int) -> None:
        now = self.clock.now()
        self.pings_sent[nonce] = now
        if len(self.pings_sent) > PING_MEMORY:
            for old in [k for k, t in self.pings_sent.items() if now - t > PING_FORGET_S]:
                del self.pings_sent[old]

    async def run(self, connected: asyncio.Event) -> None:
        """The sender task: runs until cancelled."""
        assert self._wake_event is not None and self._bulk_room is not None
        wake = self._wake_event
        rate = line_bytes_per_s(self.options.baud) * self.options.pace
        burst = max(256.0, rate * 0.005)  # a frame may overdraw; the OS queue stays at ~5 ms of line
        tokens = burst
        last = self.clock.now()
        while True:
            await connected.wait()
            now = self.clock.now()
            tokens = min(burst, tokens + (now - last) * rate)
            last = now
            if self.control:
                citem = self.control.popleft()
                message = citem.message
                frame = m.encode_message(self.encoder, message)
                if isinstance(message, m.Ping):
                    self._remember_ping(message.nonce)
                tokens -= len(frame)
                await self._write(frame)
                resolve(citem.done)
                continue
            picked = self._next_data()
            if picked is None:
                wake.clear()
                await wake.wait()
                continue
            if tokens < 0:
                # Wait for line time, but let a control frame (PING, STOP) jump in meanwhile.
                wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await self.clock.wait_for(wake.wait(), -tokens / rate)
                continue
            kind, item = picked
            if kind == "audio":
                assert isinstance(item, _AudioItem)
                self.audio.popleft()
                seq = self.encoder.seq
                frame = self.encoder.encode(wire.AUDIO_DOWN, self._encode_audio(item))
                self.credits.on_sent(seq, item.stream_id, len(item.pcm), now)
                self.stats.audio_frames_out += 1
                tokens -= len(frame)
                await self._write(frame)
                resolve(item.done)
            else:
                assert not isinstance(item, _AudioItem)
                self.bulk.popleft()
                self._bulk_room.set()
                frame = m.encode_message(self.encoder, item)
                tokens -= len(frame)
                await self._write(frame)
