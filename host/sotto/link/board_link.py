"""The host side of the wire protocol for one board (implements `sotto.link.events.BoardPort`).

    link = BoardLink("/dev/ttyACM0", LinkOptions(baud=921600))
    await link.open()            # HELLO -> formats chosen for the baud -> WELCOME
    async for event in link.events(): ...
    await link.send_audio(stream_id, pcm)   # within the board's speaker credits
    await link.stop(stream_id)              # barge-in: bypasses every queue
    await link.close()

Four tasks run while the link is open: the receiver (bytes -> frames -> messages ->
`_dispatch` -> events; it also owns reconnecting after an unplug), the paced sender
(sotto.link.sender), the pinger (liveness and the board clock offset) and a watchdog that
notices a board that stopped talking without closing the port. Command round trips go
through sotto.link.commands.

The session survives the board: an unplug closes the port (LinkStatus detached), the
port is reopened with backoff, and the next HELLO with the same board_id re-attaches
the same session (a new boot_id means the board was reset: LinkStatus reset). Where the
board is stands in one `AttachState`.

Over 400 lines on purpose: what is left here is one state machine (attach state, formats,
board clock, handshake) whose receive handlers all read and write it; the sender, the
command channel and the port are split out on their seams.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import random
from collections import deque
from typing import AsyncIterator, Callable

from sotto_fw import wire

from sotto.clock import MONOTONIC, Clock
from sotto.errors import HandshakeTimeout, LinkClosed, LinkError, ProtocolVersionMismatch, SottoError
from sotto.guard import InputGuard
from sotto.link import messages as m
from sotto.link.audio_codec import HOST_FORMATS, WireAudioDecoder
from sotto.link.clock import BoardClock
from sotto.link.commands import CommandChannel
from sotto.link.credits import SpeakerCredits
from sotto.link.events import (
    BoardEvent,
    BoardEventKind,
    LinkState,
    LinkStatus,
    MicAudio,
    PlaybackReport,
    PlaybackState,
    PortEvent,
)
from sotto.link.formats import FormatChoice, choose_formats, pcm_bytes_per_frame
from sotto.link.options import BULK_QUEUE_DEPTH, LinkOptions, LinkStats
from sotto.link.sender import PacedSender
from sotto.link.port import ReopeningPort, TransportFactory
from sotto.link.transport import SerialTransport
from sotto.untrusted import clean_text

__all__ = ["AttachState", "BULK_QUEUE_DEPTH", "BoardLink", "LinkOptions", "LinkStats", "TransportFactory"]

log = logging.getLogger("sotto.link")
board_log = logging.getLogger("sotto.board")

MessageListener = Callable[[m.Message, float], None]

_PLAYBACK_STATES = {wire.PLAY_STARTED: PlaybackState.STARTED, wire.PLAY_DRAINED: PlaybackState.DRAINED,
                    wire.PLAY_STOPPED: PlaybackState.STOPPED}
_EVENT_KINDS = {
    wire.EV_BUTTON_DOWN: BoardEventKind.BUTTON_DOWN,
    wire.EV_BUTTON_UP: BoardEventKind.BUTTON_UP,
    wire.EV_VAD_START: BoardEventKind.VAD_START,
    wire.EV_VAD_END: BoardEventKind.VAD_END,
}
_LOG_LEVELS = {wire.LOG_DEBUG: logging.DEBUG, wire.LOG_INFO: logging.INFO, wire.LOG_WARNING: logging.WARNING,
               wire.LOG_ERROR: logging.ERROR}


def _frame_kind(mtype: int) -> str:
    return f"{wire.TYPE_NAMES.get(mtype, mtype)} frame"


class AttachState(enum.Enum):
    WAITING = "waiting"  # no HELLO yet, nothing reported
    ATTACHED = "attached"  # a HELLO was answered; the board is talking
    DETACHED = "detached"  # reported gone (port lost); a HELLO re-attaches
    SILENT = "silent"  # reported gone because it stopped talking; talking again (or a HELLO) re-attaches


class BoardLink:
    """One board behind one port. See the module docstring."""

    def __init__(self, url: str, options: LinkOptions | None = None, *,
                 transport_factory: TransportFactory | None = None, host_clock: Clock = MONOTONIC) -> None:
        self.url = url
        self.options = options or LinkOptions()
        self.host_clock = host_clock  # every wait and timeout of the link goes through it
        self.stats = LinkStats()
        self.port = ReopeningPort(url, self.options, transport_factory or SerialTransport.open, host_clock, self.stats,
                                  on_bytes=self._on_bytes, on_new=self._new_port, on_lost=self._mark_detached)
        self.clock = BoardClock(host_clock.now)  # the board's clock as seen from here (PING offset)
        self.hello: m.Hello | None = None
        self.choice: FormatChoice | None = None
        self.session_token = random.getrandbits(32)
        self.state = AttachState.WAITING
        self._board_id: str | None = None
        self._fatal: SottoError | None = None
        self._closing = False
        self._rx_messages: list[tuple[int, m.Message]] = []  # (frame seq, message) of the bytes being fed
        # Every frame's decoding and handling runs under this guard: a handler that fails
        # drops that frame (logged with type and seq, counted), never the receive task.
        self.guard = InputGuard(log, f"board link {url}")
        self._decoder = wire.FrameDecoder(self._on_frame)
        self._mic_decoder: WireAudioDecoder | None = None
        self.credits = SpeakerCredits(0)
        self.sender = PacedSender(self.options, self.stats, self.credits, host_clock, self.port.write,
                                  lambda: self.attached)
        self.commands = CommandChannel(url, self.options.command_timeout_s, host_clock, self.sender.send_control,
                                       lambda: self.attached)
        self._events: deque[PortEvent] = deque()
        self._listeners: list[MessageListener] = []
        self._nonce = itertools.count(1)
        self._last_rx = 0.0
        self._tasks: list[asyncio.Task[None]] = []
        # Events are created in open(), on the running loop.
        self._events_ready: asyncio.Event | None = None
        self._handshake: asyncio.Event | None = None

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the port and complete the handshake (HandshakeTimeout, ProtocolVersionMismatch, ...)."""
        self.sender.start()
        self._events_ready = asyncio.Event()
        self._handshake = asyncio.Event()
        self.port.open()
        assert self.port.connected is not None
        self._tasks = [
            asyncio.create_task(self._receive_forever(), name="sotto-link-rx"),
            asyncio.create_task(self.sender.run(self.port.connected), name="sotto-link-tx"),
            asyncio.create_task(self._ping_forever(), name="sotto-link-ping"),
            asyncio.create_task(self._watch_silence(), name="sotto-link-watchdog"),
        ]
        try:
            await self._wait_for_handshake()
        except BaseException:
            await self.close()
            raise

    async def __aenter__(self) -> "BoardLink":
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.port.close()
        closed = LinkClosed(f"{self.url}: link closed")
        self.sender.close(closed)
        self.commands.close(closed)
        if self._events_ready is not None:
            self._events_ready.set()

    async def _wait_for_handshake(self) -> None:
        assert self._handshake is not None
        try:
            await self.host_clock.wait_for(self._handshake.wait(), self.options.hello_timeout_s)
        except asyncio.TimeoutError:
            if self._fatal is not None:
                raise self._fatal from None
            d = self._decoder
            if d.bytes_in == 0:
                detail = "nothing arrived"
                hint = "is the sotto firmware running on the board, and is this its port?"
            else:
                detail = (f"{d.bytes_in} bytes arrived, {d.frames_ok} valid frames, {d.crc_errors} CRC errors, "
                          f"{d.bad_frames} unframed")
                hint = "check the baud rate (both sides must match) and that the board runs sotto firmware"
            raise HandshakeTimeout(f"no HELLO from the board on {self.url} within {self.options.hello_timeout_s:g} s "
                                   f"({detail})", hint=hint) from None
        if self._fatal is not None:
            raise self._fatal

    def _new_port(self) -> None:
        self._decoder.reset()  # a new port: no half frame, and the jump in sequence is not loss
        self._last_rx = self.host_clock.now()

    # ------------------------------------------------------------------ BoardPort

    @property
    def attached(self) -> bool:
        return self.state == AttachState.ATTACHED

    @property
    def board_name(self) -> str:
        return clean_text(self.hello.board) if self.hello else "?"

    @property
    def board_id(self) -> str | None:
        """The attached board's id from its HELLO (stable across resets), None before one."""
        return self.hello.board_id if self.hello else None

    @property
    def mic_rate(self) -> int:
        return self._require_choice().mic_rate

    @property
    def speaker_rate(self) -> int:
        return self._require_choice().speaker_rate

    def _require_choice(self) -> FormatChoice:
        if self.choice is None:
            raise LinkError("no board attached yet: formats are chosen at the handshake")
        return self.choice

    async def events(self) -> AsyncIterator[PortEvent]:
        assert self._events_ready is not None, "open() first"
        while True:
            while self._events:
                yield self._events.popleft()
            if self._closing:
                return
            self._events_ready.clear()
            await self._events_ready.wait()

    async def send_audio(self, stream_id: int, pcm: bytes) -> None:
        """Queue PCM16 speaker audio; returns once every frame of it went out (or stop() dropped it)."""
        choice = self._require_choice()
        pcm = pcm[: len(pcm) & ~1]
        if not pcm:
            return
        step = pcm_bytes_per_frame(choice.speaker_rate, choice.frame_ms)
        if self.hello is not None and self.hello.speaker_buffer:
            step = min(step, max(2, (self.hello.speaker_buffer // 4) & ~1))
        await self.sender.queue_audio(stream_id, [pcm[i: i + step] for i in range(0, len(pcm), step)])

    async def end_stream(self, stream_id: int) -> None:
        await self.sender.queue_audio(stream_id, [b""])

    async def stop(self, stream_id: int) -> None:
        """Drop queued audio of the stream (and older ones), then STOP ahead of everything else."""
        stream_id &= 0xFFFF
        self.sender.drop_audio(stream_id)
        self.credits.drop_stream(stream_id)
        if not self.attached:
            log.warning("stop(%d): board not attached; dropped queued audio only", stream_id)
            return
        done = self.sender.send_control(m.Stop(stream_id), urgent=True)
        try:
            await self.host_clock.wait_for(asyncio.shield(done), self.options.stop_timeout_s)
        except asyncio.TimeoutError:
            log.warning("stop(%d): STOP not written within %.1f s", stream_id, self.options.stop_timeout_s)

    async def send_command(self, name: str, value: int) -> None:
        """"volume" (0..100) or "gpio:N" / "gpioN" (0/1); waits for the board's EV_COMMAND_DONE."""
        await self.commands.send_command(name, value)

    def board_to_host_time(self, board_ms: int) -> float:
        return self.clock.to_host(board_ms)

    # ------------------------------------------------------------------ extras (bench, tools)

    def add_listener(self, listener: MessageListener) -> Callable[[], None]:
        """Call listener(message, host_t) for every message from the board. Returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def command(self, cmd: int, index: int, value: int, *, wait: bool) -> int:
        """Send a COMMAND; with wait, until the board confirms (LinkError on timeout). Returns the action id."""
        return await self.commands.command(cmd, index, value, wait=wait)

    def send_ping(self) -> int:
        nonce = next(self._nonce) & 0xFFFFFFFF
        self.sender.send_control(m.Ping(nonce, int(self.host_clock.now() * 1000)))
        return nonce

    async def send_bulk(self, message: m.Message) -> None:
        """Lowest-priority traffic (BENCH): waits while BULK_QUEUE_DEPTH frames are already waiting."""
        await self.sender.send_bulk(message, lambda: self._closing, self.url)

    @property
    def decoder(self) -> wire.FrameDecoder:
        """Receive-side counters (crc_errors, resyncs, lost, bad_frames)."""
        return self._decoder

    # ------------------------------------------------------------------ attach state

    def _emit(self, event: PortEvent) -> None:
        if len(self._events) >= self.options.event_queue_max:
            self._events.popleft()  # nobody is reading: keep the newest
            self.stats.events_dropped += 1
        self._events.append(event)
        if self._events_ready is not None:
            self._events_ready.set()

    def _status(self, state: LinkState, detail: str) -> None:
        log.info("board %s %s: %s", self.board_name, state.value, detail)
        self.stats.status_log.append((self.host_clock.now(), state.value, detail))
        self._emit(LinkStatus(state, self.board_name, detail))

    def _mark_detached(self, detail: str, *, silent: bool = False) -> None:
        previous = self.state
        self.state = AttachState.SILENT if silent or previous == AttachState.SILENT else AttachState.DETACHED
        self.sender.board_detached()
        if previous in (AttachState.ATTACHED, AttachState.WAITING):  # reported once per loss
            self.stats.detaches += 1
            self._status(LinkState.DETACHED, detail)

    def _attach(self) -> None:
        self.state = AttachState.ATTACHED
        self.sender.board_attached()

    # ------------------------------------------------------------------ receive

    async def _receive_forever(self) -> None:
        await self.port.receive_forever(lambda: self._closing)
        if not self._closing:  # the port was lost and reconnecting is off
            self._fatal = LinkClosed(f"{self.url}: port closed")
            if self._handshake is not None:
                self._handshake.set()

    def _on_frame(self, mtype: int, seq: int, payload: memoryview) -> None:
        with self.guard.handling(_frame_kind(mtype), seq):
            try:
                self._rx_messages.append((seq, m.decode_message(mtype, payload)))
            except m.MessageError as exc:
                self.stats.malformed += 1
                log.debug("dropped frame: %s", exc)

    def _on_bytes(self, data: bytes) -> None:
        now = self.host_clock.now()
        self._last_rx = now
        mismatches = self._decoder.version_mismatch
        self._decoder.feed(data)
        if self._decoder.version_mismatch != mismatches:
            self._on_version_mismatch(self._decoder.version_mismatch - mismatches)
        batch, self._rx_messages = self._rx_messages, []
        if batch and self.state == AttachState.SILENT and not any(isinstance(x, m.Hello) for _, x in batch):
            # The line came back without a reboot or a closed port: same board, same boot.
            self._attach()
            self.stats.reattaches += 1
            self._status(LinkState.ATTACHED, "board talking again")
        for seq, message in batch:
            self.stats.messages_in += 1
            self._dispatch(seq, message, now)

    def _dispatch(self, seq: int, message: m.Message, now: float) -> None:
        """Every message from the board passes here, once: its handler (under the input guard),
        then the listeners."""
        with self.guard.handling(_frame_kind(message.TYPE), seq):
            self._handle(message, now)
        for listener in list(self._listeners):
            try:
                listener(message, now)
            except Exception:  # noqa: BLE001 - a broken listener must not break the link
                log.exception("link listener failed")

    def _on_version_mismatch(self, count: int) -> None:
        self.stats.version_mismatch_frames += count
        theirs = self._decoder.last_foreign_version
        error = ProtocolVersionMismatch(
            f"the board on {self.url} speaks wire protocol version {theirs}; this host speaks {wire.PROTOCOL_VERSION}",
            hint="flash matching firmware with `sotto flash --port PORT`",
        )
        if self.hello is None and self._fatal is None:
            self._fatal = error
            if self._handshake is not None:
                self._handshake.set()
        elif self.stats.version_mismatch_frames == count:
            log.error("%s", error)

    def _handle(self, message: m.Message, now: float) -> None:
        if isinstance(message, m.Hello):
            self._on_hello(message)
        elif isinstance(message, m.AudioUp):
            self._on_audio_up(message, now)
        elif isinstance(message, m.Credit):
            self.credits.on_credit(message.last_seq, message.free_bytes, now)
            self.sender.wake()
        elif isinstance(message, m.Playback):
            state = _PLAYBACK_STATES.get(message.state)
            if state is not None:
                self._emit(PlaybackReport(state, message.stream_id, message.bytes_played, message.board_ms,
                                          self.clock.to_host(message.board_ms)))
        elif isinstance(message, m.Event):
            self._on_event(message)
        elif isinstance(message, m.Pong):
            sent = self.sender.pings_sent.pop(message.nonce, None)
            if sent is not None:
                self.clock.observe_pong(sent, now, message.responder_ms)
        elif isinstance(message, m.Log):
            board_log.log(_LOG_LEVELS.get(message.level, logging.INFO), "%s: %s", self.board_name,
                          clean_text(message.text))
        elif isinstance(message, m.Error):
            self.stats.board_errors += 1
            board_log.error("%s reports error %d: %s", self.board_name, message.code, clean_text(message.text))
            self.commands.on_error(message)

    def _on_hello(self, hello: m.Hello) -> None:
        previous = self.hello
        first = self._board_id is None
        other_board = not first and hello.board_id != self._board_id
        new_boot = previous is None or hello.boot_id != previous.boot_id or other_board
        try:
            choice = choose_formats(self.options.baud, hello.mic_formats, hello.mic_rates,
                                    hello.speaker_formats & self.options.speaker_formats, hello.speaker_rates, HOST_FORMATS)
        except LinkError as exc:
            if first and self._fatal is None:
                self._fatal = exc
                if self._handshake is not None:
                    self._handshake.set()
            else:
                log.error("%s", exc)
            return
        was = self.state
        self.hello = hello
        self._board_id = hello.board_id
        if self.choice is None or self.choice.mic_format != choice.mic_format:
            self._mic_decoder = WireAudioDecoder(choice.mic_format)
        if self.choice is None or self.choice.speaker_format != choice.speaker_format:
            self.sender.use_speaker_format(choice.speaker_format)
        self.choice = choice
        if new_boot:
            self.credits.reset(hello.speaker_buffer)
            self.clock.reset()
            self.sender.new_boot()
            self._decoder.reset_sequence()
        self.sender.send_control(m.Welcome(self.session_token, choice.mic_format, choice.mic_rate, choice.speaker_format,
                                           choice.speaker_rate, choice.frame_ms, self.options.silence_timeout_s))
        self._attach()
        if first:
            self._status(LinkState.ATTACHED, f"{hello.board} ({hello.firmware}, id {hello.board_id}): {choice.describe()}")
        elif other_board:
            self.stats.resets += 1
            self._status(LinkState.RESET, f"a different board answered: {hello.board} id {hello.board_id}")
        elif new_boot:
            self.stats.resets += 1
            old_boot = f"{previous.boot_id:08x}" if previous is not None else "?"
            self._status(LinkState.RESET, f"board rebooted (boot {old_boot} -> {hello.boot_id:08x}); session kept")
        elif was != AttachState.ATTACHED:
            self.stats.reattaches += 1
            self._status(LinkState.ATTACHED, "re-attached the same session")
        if self._handshake is not None:
            self._handshake.set()

    def _on_audio_up(self, message: m.AudioUp, now: float) -> None:
        if self.choice is None or self._mic_decoder is None:
            return
        pcm = self._mic_decoder.decode(message.audio)
        if not pcm:
            self.stats.mic_frames_bad += 1
            return
        self.stats.mic_frames_in += 1
        # The frame's last sample was taken about now; its first one a frame earlier.
        self.clock.observe_rough(now - len(pcm) / 2 / self.choice.mic_rate, message.board_ms)
        self._emit(MicAudio(pcm, self.choice.mic_rate, message.board_ms, self.clock.to_host(message.board_ms)))

    def _on_event(self, message: m.Event) -> None:
        if message.kind == wire.EV_COMMAND_DONE:
            self.commands.on_done(message.value)
            return
        kind = _EVENT_KINDS.get(message.kind)
        if kind is not None:
            self._emit(BoardEvent(kind, message.board_ms, self.clock.to_host(message.board_ms)))

    # ------------------------------------------------------------------ liveness

    async def _ping_forever(self) -> None:
        while True:
            await self.host_clock.sleep(self.options.ping_interval_s)
            if self.attached:
                self.send_ping()

    async def _watch_silence(self) -> None:
        while True:
            await self.host_clock.sleep(min(0.25, self.options.detach_after_s / 4))
            if self.attached and self.host_clock.now() - self._last_rx > self.options.detach_after_s:
                self._mark_detached(f"no data from the board for {self.options.detach_after_s:g} s", silent=True)
