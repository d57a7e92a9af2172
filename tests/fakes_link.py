"""Fakes for link tests: an in-memory transport pair and a scripted fake board.

FakeBoard speaks the wire protocol (with the real codec) in the test's own event loop,
synchronously: each frame the host writes is handled at once. It counts what it was
sent so tests can assert on credits, STOP and reconnects.
"""

from __future__ import annotations

import asyncio
import struct

from sotto_fw import wire

from sotto.errors import LinkClosed, PortNotFound
from sotto.link import messages as m


def frame_with_version(version: int, mtype: int, payload: bytes, seq: int = 0) -> bytes:
    """A well-formed frame (good CRC) claiming another protocol version."""
    raw = bytearray(struct.pack("<BBH", version, mtype, seq) + payload)
    raw += struct.pack("<I", wire.crc32(raw))
    out = bytearray(len(raw) + 4)
    k = wire.cobs_encode_into(raw, len(raw), memoryview(out))
    return b"\x00" + bytes(out[:k]) + b"\x00"


class FakePipeTransport:
    """Host end of an in-memory link to a FakeBoard."""

    def __init__(self, board: "FakeBoard") -> None:
        self.url = "fake://board"
        self.board = board
        self.closed = False
        self._rx: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.written = bytearray()

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        pass

    def deliver(self, data: bytes) -> None:
        if not self.closed:
            self._rx.put_nowait(data)

    async def read(self) -> bytes:
        item = await self._rx.get()
        if item is None:
            raise LinkClosed("fake: unplugged")
        return item

    async def write(self, data: bytes) -> None:
        if self.closed:
            raise LinkClosed("fake: unplugged")
        self.written += data
        self.board.receive(data)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._rx.put_nowait(None)


class FakeBoard:
    """A scripted board. Play audio with `play(n)`, unplug with `unplug()`."""

    def __init__(self, *, board_id: str = "fake-1", speaker_buffer: int = 4096, hello_on_connect: bool = True,
                 mic_formats: int = wire.FMT_PCM16 | wire.FMT_MULAW | wire.FMT_ADPCM,
                 speaker_formats: int = wire.FMT_PCM16 | wire.FMT_MULAW | wire.FMT_ADPCM,
                 boot_id: int = 0x1234) -> None:
        self.board_id = board_id
        self.boot_id = boot_id
        self.speaker_buffer = speaker_buffer
        self.hello_on_connect = hello_on_connect
        self.mic_formats = mic_formats
        self.speaker_formats = speaker_formats
        self.encoder = wire.FrameEncoder()
        self.decoder = wire.FrameDecoder(self._on_frame)
        self.transport: FakePipeTransport | None = None
        self.plugged = True
        self.connects = 0
        self.received: list[m.Message] = []
        self.received_seqs: list[int] = []
        self.welcomes: list[m.Welcome] = []
        self.stops: list[int] = []
        self.ring = 0  # PCM bytes held in the speaker ring
        self.max_ring = 0
        self.audio_by_stream: dict[int, int] = {}
        self.after_stop: list[int] = []  # AUDIO_DOWN stream ids that arrived after a STOP of theirs
        self.last_audio_seq = 0
        self.last_stream = 0
        self.answer_pings = True

    # -- plumbing -------------------------------------------------------------

    def open_port(self, url: str, baud: int) -> FakePipeTransport:
        """Transport factory for BoardLink."""
        if not self.plugged:
            raise PortNotFound(f"no serial port at {url!r}")
        self.transport = FakePipeTransport(self)
        self.connects += 1
        if self.hello_on_connect:
            self.say_hello()
        return self.transport

    def send(self, message: m.Message) -> None:
        self.send_raw(m.encode_message(self.encoder, message))

    def send_raw(self, data: bytes) -> None:
        if self.transport is not None and self.plugged:
            self.transport.deliver(data)

    def say_hello(self) -> None:
        self.send(m.Hello("fake-fw 1", "fakeboard", self.board_id, self.boot_id, self.mic_formats,
                          self.speaker_formats, (16000, 8000), (22050, 16000), self.speaker_buffer))

    def unplug(self) -> None:
        self.plugged = False
        if self.transport is not None:
            self.transport.close()

    def replug(self) -> None:
        self.plugged = True

    def reboot(self) -> None:
        self.boot_id += 1
        self.ring = 0
        self.encoder = wire.FrameEncoder()
        self.say_hello()

    def play(self, n: int) -> None:
        """The speaker consumed n PCM bytes: grant the room as credit."""
        self.ring = max(0, self.ring - n)
        self.send(m.Credit(self.last_stream, self.last_audio_seq, self.speaker_buffer - self.ring))

    # -- protocol -------------------------------------------------------------

    def receive(self, data: bytes) -> None:
        self.decoder.feed(data)

    def _on_frame(self, mtype: int, seq: int, payload: memoryview) -> None:
        msg = m.decode_message(mtype, payload)
        self.received.append(msg)
        self.received_seqs.append(seq)
        if isinstance(msg, m.Welcome):
            self.welcomes.append(msg)
        elif isinstance(msg, m.Ping):
            if self.answer_pings:
                self.send(m.Pong(msg.nonce, msg.sender_ms, 1000 + len(self.received)))
        elif isinstance(msg, m.AudioDown):
            self.last_audio_seq = seq
            self.last_stream = msg.stream_id
            if msg.stream_id in self.stops:
                self.after_stop.append(msg.stream_id)
                return
            pcm = self._pcm_len(msg.audio)
            self.ring += pcm
            self.max_ring = max(self.max_ring, self.ring)
            self.audio_by_stream[msg.stream_id] = self.audio_by_stream.get(msg.stream_id, 0) + pcm
        elif isinstance(msg, m.Stop):
            self.stops.append(msg.stream_id)
            played = 0
            self.ring = 0
            self.send(m.Playback(wire.PLAY_STOPPED, msg.stream_id, played, 5000))
            self.send(m.Credit(msg.stream_id, self.last_audio_seq, self.speaker_buffer))
        elif isinstance(msg, m.Command):
            self.send(m.Event(wire.EV_COMMAND_DONE, msg.action_id, 6000))

    def _pcm_len(self, audio: bytes) -> int:
        fmt = self.welcomes[-1].speaker_format if self.welcomes else wire.FMT_PCM16
        from sotto_fw import audiocodec

        return audiocodec.decoded_bytes(fmt, len(audio))

    def audio_frames(self) -> list[m.AudioDown]:
        return [x for x in self.received if isinstance(x, m.AudioDown)]
