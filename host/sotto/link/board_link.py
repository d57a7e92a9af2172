"""The host side of the wire protocol for one board (implements `sotto.link.events.BoardPort`).

    link = BoardLink("/dev/ttyACM0", LinkOptions(baud=921600))
    await link.open()            # HELLO -> formats chosen for the baud -> WELCOME
    async for event in link.events(): ...
    await link.send_audio(stream_id, pcm)   # within the board's speaker credits
    await link.stop(stream_id)              # barge-in: bypasses every queue
    await link.close()

Three tasks run while the link is open: the receiver (bytes -> frames -> messages ->
events; it also owns reconnecting after an unplug), the sender (one frame at a time,
control before audio before bulk, paced to the line rate so nothing waits in a deep
OS queue: a PING or STOP written now reaches the board within about one frame time),
and the pinger (liveness and the board clock offset). A watchdog notices a board that
stopped talking without closing the port.

The session survives the board: an unplug closes the port (LinkStatus detached), the
port is reopened with backoff, and the next HELLO with the same board_id re-attaches
the same session (a new boot_id means the board was reset: LinkStatus reset).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
import time
from collections import deque
from dataclasses import dataclass, field
from typing import AsyncIterator, Callable

from sotto_fw import wire

from sotto.errors import HandshakeTimeout, LinkClosed, LinkError, ProtocolVersionMismatch, SottoError
from sotto.guard import InputGuard
from sotto.link import messages as m
from sotto.link.audio_codec import HOST_FORMATS, WireAudioDecoder, WireAudioEncoder
from sotto.link.clock import BoardClock
from sotto.link.credits import SpeakerCredits, stream_at_or_before
from sotto.link.formats import FormatChoice, choose_formats, line_bytes_per_s, pcm_bytes_per_frame
from sotto.link.transport import ByteTransport, SerialTransport
from sotto.link.events import BoardEvent, LinkStatus, MicAudio, PlaybackReport, PortEvent
from sotto.untrusted import ascii_int, clean_text

log = logging.getLogger("sotto.link")
board_log = logging.getLogger("sotto.board")

TransportFactory = Callable[[str, int], ByteTransport]
MessageListener = Callable[[m.Message, float], None]

_PLAYBACK_STATES = {wire.PLAY_STARTED: "started", wire.PLAY_DRAINED: "drained", wire.PLAY_STOPPED: "stopped"}
_EVENT_KINDS = {
    wire.EV_BUTTON_DOWN: "button_down",
    wire.EV_BUTTON_UP: "button_up",
    wire.EV_VAD_START: "vad_start",
    wire.EV_VAD_END: "vad_end",
}
_LOG_LEVELS = {wire.LOG_DEBUG: logging.DEBUG, wire.LOG_INFO: logging.INFO, wire.LOG_WARNING: logging.WARNING,
               wire.LOG_ERROR: logging.ERROR}
BULK_QUEUE_DEPTH = 2  # bench frames waiting to go: shallow, so control frames never wait behind many


@dataclass
class LinkOptions:
    baud: int = 921600
    hello_timeout_s: float = 5.0
    silence_timeout_s: int = 2  # sent in WELCOME: the board says HELLO again after this much host silence
    ping_interval_s: float = 0.5  # must stay well under silence_timeout_s
    detach_after_s: float = 2.5  # an attached board silent this long is reported detached
    reconnect: bool = True
    backoff_initial_s: float = 0.05
    backoff_max_s: float = 2.0
    pace: float = 0.98  # share of baud/10 the host writes at: the OS queue stays near empty
    event_queue_max: int = 2000
    command_timeout_s: float = 2.0
    stop_timeout_s: float = 1.0
    # Wire formats the host accepts for the speaker (downlink), a mask of wire.FMT_*: e.g.
    # FMT_ADPCM | FMT_MULAW to spend less line time per second of reply than PCM16.
    speaker_formats: int = HOST_FORMATS


@dataclass
class LinkStats:
    frames_out: int = 0
    bytes_out: int = 0
    messages_in: int = 0
    malformed: int = 0  # CRC fine, payload did not parse
    detaches: int = 0
    reattaches: int = 0
    resets: int = 0
    reopen_attempts: int = 0
    board_errors: int = 0
    events_dropped: int = 0
    audio_frames_out: int = 0
    audio_frames_dropped: int = 0  # queued audio dropped by stop()
    mic_frames_in: int = 0
    mic_frames_bad: int = 0
    version_mismatch_frames: int = 0
    status_log: list[tuple[float, str, str]] = field(default_factory=list)


@dataclass
class _AudioItem:
    stream_id: int
    pcm: bytes
    done: asyncio.Future[None] | None


@dataclass
class _ControlItem:
    message: m.Message
    done: asyncio.Future[None] | None


def _frame_kind(mtype: int) -> str:
    return f"{wire.TYPE_NAMES.get(mtype, mtype)} frame"


def _resolve(fut: asyncio.Future[None] | None, exc: BaseException | None = None) -> None:
    if fut is None or fut.done():
        return
    if exc is None:
        fut.set_result(None)
    else:
        fut.set_exception(exc)


class BoardLink:
    """One board behind one port. See the module docstring."""

    def __init__(self, url: str, options: LinkOptions | None = None, *,
                 transport_factory: TransportFactory | None = None) -> None:
        self.url = url
        self.options = options or LinkOptions()
        self._transport_factory: TransportFactory = transport_factory or SerialTransport.open
        self._transport: ByteTransport | None = None
        self._generation = 0  # bumps on each (re)opened transport: a failure is handled once
        self.stats = LinkStats()
        self.clock = BoardClock()
        self.hello: m.Hello | None = None
        self.choice: FormatChoice | None = None
        self.session_token = random.getrandbits(32)
        self._board_id: str | None = None
        self._attached = False
        self._detached_reported = False
        self._fatal: SottoError | None = None
        self._closing = False
        self._encoder = wire.FrameEncoder()
        self._rx_messages: list[tuple[int, m.Message]] = []  # (frame seq, message) of the bytes being fed
        # Every frame's decoding and handling runs under this guard: a handler that fails
        # drops that frame (logged with type and seq, counted), never the receive task.
        self.guard = InputGuard(log, f"board link {url}")
        self._decoder = wire.FrameDecoder(self._on_frame)
        self._mic_decoder: WireAudioDecoder | None = None
        self._speaker_encoder: WireAudioEncoder | None = None
        self._speaker_stream: int | None = None
        self.credits = SpeakerCredits(0)
        self._control: deque[_ControlItem] = deque()
        self._audio: deque[_AudioItem] = deque()
        self._bulk: deque[m.Message] = deque()
        self._events: deque[PortEvent] = deque()
        self._listeners: list[MessageListener] = []
        self._pings_sent: dict[int, float] = {}
        self._nonce = itertools.count(1)
        self._action_ids = itertools.count(1)
        self._commands: dict[int, asyncio.Future[None]] = {}
        self._last_rx = 0.0
        self._silent_detach = False
        self._tasks: list[asyncio.Task[None]] = []
        # Events are created in open(), on the running loop.
        self._tx_wake: asyncio.Event | None = None
        self._bulk_room: asyncio.Event | None = None
        self._events_ready: asyncio.Event | None = None
        self._handshake: asyncio.Event | None = None
        self._connected: asyncio.Event | None = None

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Open the port and complete the handshake (HandshakeTimeout, ProtocolVersionMismatch, ...)."""
        self._tx_wake = asyncio.Event()
        self._bulk_room = asyncio.Event()
        self._events_ready = asyncio.Event()
        self._handshake = asyncio.Event()
        self._connected = asyncio.Event()
        transport = self._transport_factory(self.url, self.options.baud)
        self._use_transport(transport)
        self._tasks = [
            asyncio.create_task(self._receive_forever(), name="sotto-link-rx"),
            asyncio.create_task(self._send_forever(), name="sotto-link-tx"),
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
        if self._transport is not None:
            self._transport.close()
        closed = LinkClosed(f"{self.url}: link closed")
        for item in self._audio:
            _resolve(item.done)
        self._audio.clear()
        for citem in self._control:
            _resolve(citem.done, closed)
        self._control.clear()
        for fut in self._commands.values():
            _resolve(fut, closed)
        self._commands.clear()
        if self._events_ready is not None:
            self._events_ready.set()

    async def _wait_for_handshake(self) -> None:
        assert self._handshake is not None
        try:
            await asyncio.wait_for(self._handshake.wait(), self.options.hello_timeout_s)
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

    def _use_transport(self, transport: ByteTransport) -> None:
        assert self._connected is not None
        self._transport = transport
        self._generation += 1
        # A new port: discard a half-received frame and do not count the jump in sequence as loss.
        self._decoder.n = 0
        self._decoder.overflow = False
        self._decoder.reset_sequence()
        self._last_rx = time.monotonic()
        transport.start(asyncio.get_running_loop())
        self._connected.set()

    # ------------------------------------------------------------------ BoardPort

    @property
    def attached(self) -> bool:
        return self._attached

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
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        chunks = [pcm[i: i + step] for i in range(0, len(pcm), step)]
        for i, chunk in enumerate(chunks):
            self._audio.append(_AudioItem(stream_id & 0xFFFF, chunk, done if i == len(chunks) - 1 else None))
        self._wake()
        await done

    async def end_stream(self, stream_id: int) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._audio.append(_AudioItem(stream_id & 0xFFFF, b"", done))
        self._wake()
        await done

    async def stop(self, stream_id: int) -> None:
        """Drop queued audio of the stream (and older ones), then STOP ahead of everything else."""
        stream_id &= 0xFFFF
        kept: deque[_AudioItem] = deque()
        for item in self._audio:
            if stream_at_or_before(item.stream_id, stream_id):
                self.stats.audio_frames_dropped += 1
                _resolve(item.done)
            else:
                kept.append(item)
        self._audio = kept
        self.credits.drop_stream(stream_id)
        if not self._attached:
            log.warning("stop(%d): board not attached; dropped queued audio only", stream_id)
            return
        done = self._send_control(m.Stop(stream_id), urgent=True)
        try:
            await asyncio.wait_for(asyncio.shield(done), self.options.stop_timeout_s)
        except asyncio.TimeoutError:
            log.warning("stop(%d): STOP not written within %.1f s", stream_id, self.options.stop_timeout_s)

    async def send_command(self, name: str, value: int) -> None:
        """"volume" (0..100) or "gpio:N" / "gpioN" (0/1); waits for the board's EV_COMMAND_DONE."""
        lowered = name.strip().lower()
        if lowered == "volume":
            cmd, index = wire.CMD_VOLUME, 0
        elif lowered.startswith("gpio"):
            pin = ascii_int(lowered[4:].lstrip(":_ "), max_digits=3)
            if pin is None or pin > 255:
                raise LinkError(f"bad GPIO command name {name!r}", hint="use gpio:0, gpio:1, ...")
            cmd, index = wire.CMD_GPIO, pin
        else:
            raise LinkError(f"unknown board command {name!r}", hint="known: volume, gpio:N")
        await self.command(cmd, index, value, wait=True)

    def board_to_host_time(self, board_ms: int) -> float:
        return self.clock.to_host(board_ms)

    # ------------------------------------------------------------------ extras (bench, tools)

    def add_listener(self, listener: MessageListener) -> Callable[[], None]:
        """Call listener(message, host_t) for every message from the board. Returns a remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def command(self, cmd: int, index: int, value: int, *, wait: bool) -> int:
        """Send a COMMAND; with wait, until the board confirms (LinkError on timeout). Returns the action id."""
        if not self._attached:
            raise LinkClosed(f"{self.url}: board not attached")
        action_id = next(self._action_ids) & 0xFFFF
        fut: asyncio.Future[None] | None = None
        if wait:
            fut = asyncio.get_running_loop().create_future()
            self._commands[action_id] = fut
        self._send_control(m.Command(action_id, cmd, index & 0xFF, max(-32768, min(32767, value))))
        if fut is not None:
            try:
                await asyncio.wait_for(fut, self.options.command_timeout_s)
            except asyncio.TimeoutError:
                raise LinkError(f"the board did not confirm command {cmd} (action {action_id}) within "
                                f"{self.options.command_timeout_s:g} s") from None
            finally:
                self._commands.pop(action_id, None)
        return action_id

    def send_ping(self) -> int:
        nonce = next(self._nonce) & 0xFFFFFFFF
        self._send_control(m.Ping(nonce, int(time.monotonic() * 1000)))
        return nonce

    async def send_bulk(self, message: m.Message) -> None:
        """Lowest-priority traffic (BENCH): waits while BULK_QUEUE_DEPTH frames are already waiting."""
        assert self._bulk_room is not None
        while len(self._bulk) >= BULK_QUEUE_DEPTH or not self._attached:
            if self._closing:
                raise LinkClosed(f"{self.url}: link closed")
            self._bulk_room.clear()
            await self._bulk_room.wait()
        self._bulk.append(message)
        self._wake()

    @property
    def decoder(self) -> wire.FrameDecoder:
        """Receive-side counters (crc_errors, resyncs, lost, bad_frames)."""
        return self._decoder

    # ------------------------------------------------------------------ status

    def _emit(self, event: PortEvent) -> None:
        if len(self._events) >= self.options.event_queue_max:
            self._events.popleft()  # nobody is reading: keep the newest
            self.stats.events_dropped += 1
        self._events.append(event)
        if self._events_ready is not None:
            self._events_ready.set()

    def _status(self, state: str, detail: str) -> None:
        log.info("board %s %s: %s", self.board_name, state, detail)
        self.stats.status_log.append((time.monotonic(), state, detail))
        self._emit(LinkStatus(state, self.board_name, detail))

    def _mark_detached(self, detail: str) -> None:
        was_attached = self._attached
        self._attached = False
        self._control.clear()  # PINGs and STOPs for a board that is gone mean nothing later
        if self._bulk_room is not None:
            self._bulk_room.set()
        if was_attached or not self._detached_reported:
            self.stats.detaches += 1
            self._detached_reported = True
            self._status("detached", detail)

    # ------------------------------------------------------------------ receive

    async def _receive_forever(self) -> None:
        while not self._closing:
            transport = self._transport
            assert transport is not None
            try:
                while True:
                    data = await transport.read()
                    self._on_bytes(data)
            except LinkClosed as exc:
                if self._closing:
                    return
                self._port_failed(self._generation, str(exc))
            if not self.options.reconnect:
                self._fatal = LinkClosed(f"{self.url}: port closed")
                if self._handshake is not None:
                    self._handshake.set()
                return
            await self._reopen()

    def _port_failed(self, generation: int, detail: str) -> None:
        if generation != self._generation or self._connected is None or not self._connected.is_set():
            return  # this failure was already handled
        self._connected.clear()
        if self._transport is not None:
            self._transport.close()
        self._mark_detached(f"port lost ({detail}); reopening")

    async def _reopen(self) -> None:
        delay = self.options.backoff_initial_s
        while not self._closing:
            await asyncio.sleep(delay)
            self.stats.reopen_attempts += 1
            try:
                transport = self._transport_factory(self.url, self.options.baud)
            except SottoError as exc:
                log.debug("reopen %s failed: %s", self.url, exc)
                delay = min(self.options.backoff_max_s, delay * 2)
                continue
            log.info("reopened %s; waiting for HELLO", self.url)
            self._use_transport(transport)
            return

    def _on_frame(self, mtype: int, seq: int, payload: memoryview) -> None:
        with self.guard.handling(_frame_kind(mtype), seq):
            try:
                self._rx_messages.append((seq, m.decode_message(mtype, payload)))
            except m.MessageError as exc:
                self.stats.malformed += 1
                log.debug("dropped frame: %s", exc)

    def _on_bytes(self, data: bytes) -> None:
        now = time.monotonic()
        self._last_rx = now
        mismatches = self._decoder.version_mismatch
        self._decoder.feed(data)
        if self._decoder.version_mismatch != mismatches:
            self._on_version_mismatch(self._decoder.version_mismatch - mismatches)
        batch, self._rx_messages = self._rx_messages, []
        if batch and self._silent_detach and not any(isinstance(x, m.Hello) for _, x in batch):
            # The line came back without a reboot or a closed port: same board, same boot.
            self._silent_detach = False
            self._attached = True
            self._detached_reported = False
            self.stats.reattaches += 1
            self._status("attached", "board talking again")
        for seq, message in batch:
            self.stats.messages_in += 1
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
            self._on_hello(message, now)
        elif isinstance(message, m.AudioUp):
            self._on_audio_up(message, now)
        elif isinstance(message, m.Credit):
            self.credits.on_credit(message.last_seq, message.free_bytes, now)
            self._wake()
        elif isinstance(message, m.Playback):
            state = _PLAYBACK_STATES.get(message.state)
            if state is not None:
                self._emit(PlaybackReport(state, message.stream_id, message.bytes_played, message.board_ms,
                                          self.clock.to_host(message.board_ms)))
        elif isinstance(message, m.Event):
            self._on_event(message)
        elif isinstance(message, m.Pong):
            sent = self._pings_sent.pop(message.nonce, None)
            if sent is not None:
                self.clock.observe_pong(sent, now, message.responder_ms)
        elif isinstance(message, m.Log):
            board_log.log(_LOG_LEVELS.get(message.level, logging.INFO), "%s: %s", self.board_name,
                          clean_text(message.text))
        elif isinstance(message, m.Error):
            self.stats.board_errors += 1
            board_log.error("%s reports error %d: %s", self.board_name, message.code, clean_text(message.text))
            self._fail_command_from_error(message)

    def _on_hello(self, hello: m.Hello, now: float) -> None:
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
        was_attached = self._attached
        self.hello = hello
        self._board_id = hello.board_id
        if self.choice is None or self.choice.mic_format != choice.mic_format:
            self._mic_decoder = WireAudioDecoder(choice.mic_format)
        if self.choice is None or self.choice.speaker_format != choice.speaker_format:
            self._speaker_encoder = WireAudioEncoder(choice.speaker_format)
            self._speaker_stream = None
        self.choice = choice
        if new_boot:
            self.credits.reset(hello.speaker_buffer)
            self.clock.reset()
            self._speaker_stream = None
            self._decoder.reset_sequence()
        self._send_control(m.Welcome(self.session_token, choice.mic_format, choice.mic_rate, choice.speaker_format,
                                     choice.speaker_rate, choice.frame_ms, self.options.silence_timeout_s))
        self._attached = True
        self._silent_detach = False
        if self._bulk_room is not None:
            self._bulk_room.set()
        self._wake()
        if first:
            self._status("attached", f"{hello.board} ({hello.firmware}, id {hello.board_id}): {choice.describe()}")
        elif other_board:
            self.stats.resets += 1
            self._status("reset", f"a different board answered: {hello.board} id {hello.board_id}")
        elif new_boot:
            self.stats.resets += 1
            old_boot = f"{previous.boot_id:08x}" if previous is not None else "?"
            self._status("reset", f"board rebooted (boot {old_boot} -> {hello.boot_id:08x}); session kept")
        elif not was_attached or self._detached_reported:
            self.stats.reattaches += 1
            self._status("attached", "re-attached the same session")
        self._detached_reported = False
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
            _resolve(self._commands.get(message.value & 0xFFFF))
            return
        kind = _EVENT_KINDS.get(message.kind)
        if kind is not None:
            self._emit(BoardEvent(kind, message.board_ms, self.clock.to_host(message.board_ms)))

    def _fail_command_from_error(self, message: m.Error) -> None:
        # The board names the action in command errors: "action N: ...".
        text = message.text
        if not text.startswith("action "):
            return
        action_id = ascii_int(text[7:].split(":", 1)[0], max_digits=5)
        if action_id is not None:
            _resolve(self._commands.get(action_id), LinkError(f"the board refused the command: {clean_text(text)}"))

    # ------------------------------------------------------------------ send

    def _wake(self) -> None:
        if self._tx_wake is not None:
            self._tx_wake.set()

    def _send_control(self, message: m.Message, *, urgent: bool = False) -> asyncio.Future[None]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        item = _ControlItem(message, done)
        if urgent:
            self._control.appendleft(item)
        else:
            self._control.append(item)
        self._wake()
        return done

    def _next_data(self) -> tuple[str, _AudioItem | m.Message] | None:
        if not self._attached:
            return None
        if self._audio:
            head = self._audio[0]
            if self.credits.can_send(len(head.pcm)):
                return "audio", head
        if self._bulk:
            return "bulk", self._bulk[0]
        return None

    def _encode_audio(self, item: _AudioItem) -> bytes:
        assert self._speaker_encoder is not None
        if item.stream_id != self._speaker_stream:
            self._speaker_encoder.reset()  # ADPCM state starts fresh with each stream
            self._speaker_stream = item.stream_id
        audio = self._speaker_encoder.encode(item.pcm) if item.pcm else b""
        return m.AudioDown(item.stream_id, audio).to_payload()

    async def _send_forever(self) -> None:
        assert self._connected is not None and self._tx_wake is not None
        rate = line_bytes_per_s(self.options.baud) * self.options.pace
        burst = max(256.0, rate * 0.005)  # a frame may overdraw; the OS queue stays at ~5 ms of line
        tokens = burst
        last = time.monotonic()
        while True:
            await self._connected.wait()
            now = time.monotonic()
            tokens = min(burst, tokens + (now - last) * rate)
            last = now
            if self._control:
                citem = self._control.popleft()
                message = citem.message
                frame = m.encode_message(self._encoder, message)
                if isinstance(message, m.Ping):
                    self._remember_ping(message.nonce)
                tokens -= len(frame)
                await self._write(frame)
                _resolve(citem.done)
                continue
            picked = self._next_data()
            if picked is None:
                self._tx_wake.clear()
                await self._tx_wake.wait()
                continue
            if tokens < 0:
                # Wait for line time, but let a control frame (PING, STOP) jump in meanwhile.
                self._tx_wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._tx_wake.wait(), -tokens / rate)
                continue
            kind, item = picked
            if kind == "audio":
                assert isinstance(item, _AudioItem)
                self._audio.popleft()
                seq = self._encoder.seq
                frame = self._encoder.encode(wire.AUDIO_DOWN, self._encode_audio(item))
                self.credits.on_sent(seq, item.stream_id, len(item.pcm), now)
                self.stats.audio_frames_out += 1
                tokens -= len(frame)
                await self._write(frame)
                _resolve(item.done)
            else:
                assert not isinstance(item, _AudioItem)
                self._bulk.popleft()
                assert self._bulk_room is not None
                self._bulk_room.set()
                frame = m.encode_message(self._encoder, item)
                tokens -= len(frame)
                await self._write(frame)

    def _remember_ping(self, nonce: int) -> None:
        now = time.monotonic()
        self._pings_sent[nonce] = now
        if len(self._pings_sent) > 256:  # unanswered PINGs (lost frames) must not pile up
            for old in [k for k, t in self._pings_sent.items() if now - t > 5.0]:
                del self._pings_sent[old]

    async def _write(self, frame: bytes) -> None:
        transport = self._transport
        generation = self._generation
        if transport is None:
            return
        try:
            await transport.write(frame)
        except LinkClosed as exc:
            self._port_failed(generation, str(exc))
            return
        self.stats.frames_out += 1
        self.stats.bytes_out += len(frame)

    async def _ping_forever(self) -> None:
        while True:
            await asyncio.sleep(self.options.ping_interval_s)
            if self._attached:
                self.send_ping()

    async def _watch_silence(self) -> None:
        while True:
            await asyncio.sleep(min(0.25, self.options.detach_after_s / 4))
            if self._attached and time.monotonic() - self._last_rx > self.options.detach_after_s:
                self._silent_detach = True
                self._mark_detached(f"no data from the board for {self.options.detach_after_s:g} s")
