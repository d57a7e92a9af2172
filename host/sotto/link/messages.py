"""Typed wire messages for the host.

The bytes are defined once, in `sotto_fw.wire` (the same file the board runs); these
dataclasses give the host names and types for them. Every message has `to_payload()`
and `from_payload()`, and `decode_message()` turns a received frame into one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, ClassVar, Union

from sotto_fw import wire


class MessageError(ValueError):
    """A frame passed its CRC but its payload does not parse as its type."""


@dataclass(frozen=True)
class Hello:
    TYPE: ClassVar[int] = wire.HELLO
    firmware: str
    board: str
    board_id: str
    boot_id: int
    mic_formats: int
    speaker_formats: int
    mic_rates: tuple[int, ...]
    speaker_rates: tuple[int, ...]
    speaker_buffer: int

    def to_payload(self) -> bytes:
        return wire.pack_hello(
            self.firmware, self.board, self.board_id, self.boot_id, self.mic_formats,
            self.speaker_formats, list(self.mic_rates), list(self.speaker_rates), self.speaker_buffer,
        )

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Hello":
        f, b, bid, boot, mf, sf, mr, sr, sb = wire.unpack_hello(payload)
        return cls(f, b, bid, boot, mf, sf, tuple(mr), tuple(sr), sb)


@dataclass(frozen=True)
class Welcome:
    TYPE: ClassVar[int] = wire.WELCOME
    session_token: int
    mic_format: int
    mic_rate: int
    speaker_format: int
    speaker_rate: int
    frame_ms: int
    silence_timeout_s: int

    def to_payload(self) -> bytes:
        return wire.pack_welcome(
            self.session_token, self.mic_format, self.mic_rate, self.speaker_format,
            self.speaker_rate, self.frame_ms, self.silence_timeout_s,
        )

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Welcome":
        return cls(*wire.unpack_welcome(payload))


@dataclass(frozen=True)
class AudioUp:
    TYPE: ClassVar[int] = wire.AUDIO_UP
    board_ms: int
    audio: bytes

    def to_payload(self) -> bytes:
        return wire.pack_audio_up(self.board_ms, self.audio)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "AudioUp":
        return cls(*wire.unpack_audio_up(payload))


@dataclass(frozen=True)
class AudioDown:
    TYPE: ClassVar[int] = wire.AUDIO_DOWN
    stream_id: int
    audio: bytes

    def to_payload(self) -> bytes:
        return wire.pack_audio_down(self.stream_id, self.audio)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "AudioDown":
        return cls(*wire.unpack_audio_down(payload))


@dataclass(frozen=True)
class Credit:
    TYPE: ClassVar[int] = wire.CREDIT
    stream_id: int
    last_seq: int
    free_bytes: int

    def to_payload(self) -> bytes:
        return wire.pack_credit(self.stream_id, self.last_seq, self.free_bytes)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Credit":
        return cls(*wire.unpack_credit(payload))


@dataclass(frozen=True)
class Stop:
    TYPE: ClassVar[int] = wire.STOP
    stream_id: int

    def to_payload(self) -> bytes:
        return wire.pack_stop(self.stream_id)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Stop":
        return cls(*wire.unpack_stop(payload))


@dataclass(frozen=True)
class Playback:
    TYPE: ClassVar[int] = wire.PLAYBACK
    state: int
    stream_id: int
    bytes_played: int
    board_ms: int

    def to_payload(self) -> bytes:
        return wire.pack_playback(self.state, self.stream_id, self.bytes_played, self.board_ms)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Playback":
        return cls(*wire.unpack_playback(payload))


@dataclass(frozen=True)
class Event:
    TYPE: ClassVar[int] = wire.EVENT
    kind: int
    value: int
    board_ms: int

    def to_payload(self) -> bytes:
        return wire.pack_event(self.kind, self.value, self.board_ms)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Event":
        return cls(*wire.unpack_event(payload))


@dataclass(frozen=True)
class Ping:
    TYPE: ClassVar[int] = wire.PING
    nonce: int
    sender_ms: int

    def to_payload(self) -> bytes:
        return wire.pack_ping(self.nonce, self.sender_ms)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Ping":
        return cls(*wire.unpack_ping(payload))


@dataclass(frozen=True)
class Pong:
    TYPE: ClassVar[int] = wire.PONG
    nonce: int
    echo_ms: int
    responder_ms: int

    def to_payload(self) -> bytes:
        return wire.pack_pong(self.nonce, self.echo_ms, self.responder_ms)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Pong":
        return cls(*wire.unpack_pong(payload))


@dataclass(frozen=True)
class Log:
    TYPE: ClassVar[int] = wire.LOG
    level: int
    text: str

    def to_payload(self) -> bytes:
        return wire.pack_log(self.level, self.text)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Log":
        return cls(*wire.unpack_log(payload))


@dataclass(frozen=True)
class Error:
    TYPE: ClassVar[int] = wire.ERROR
    code: int
    text: str

    def to_payload(self) -> bytes:
        return wire.pack_error(self.code, self.text)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Error":
        return cls(*wire.unpack_error(payload))


@dataclass(frozen=True)
class Bench:
    """Link-test traffic: a counter and a pattern the receiver can check."""

    TYPE: ClassVar[int] = wire.BENCH
    payload: bytes = field(repr=False)

    def to_payload(self) -> bytes:
        return self.payload

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Bench":
        return cls(bytes(payload))

    @classmethod
    def make(cls, counter: int, size: int) -> "Bench":
        buf = bytearray(size)
        wire.bench_fill(buf, counter, size)
        return cls(bytes(buf))

    @property
    def valid(self) -> bool:
        return bool(wire.bench_check(self.payload))


@dataclass(frozen=True)
class Command:
    """A side-effecting board action (speaker volume, a GPIO output)."""

    TYPE: ClassVar[int] = wire.COMMAND
    action_id: int
    command: int
    index: int
    value: int

    def to_payload(self) -> bytes:
        return wire.pack_command(self.action_id, self.command, self.index, self.value)

    @classmethod
    def from_payload(cls, payload: bytes | memoryview) -> "Command":
        return cls(*wire.unpack_command(payload))


Message = Union[Hello, Welcome, AudioUp, AudioDown, Credit, Stop, Playback, Event, Ping, Pong, Log, Error, Bench, Command]

MESSAGE_CLASSES: tuple[type[Message], ...] = (
    Hello, Welcome, AudioUp, AudioDown, Credit, Stop, Playback, Event, Ping, Pong, Log, Error, Bench, Command,
)

# type code -> parser of that type's payload
_PARSERS: dict[int, Callable[[bytes | memoryview], Message]] = {cls.TYPE: cls.from_payload for cls in MESSAGE_CLASSES}
MESSAGE_TYPES: dict[int, type[Message]] = {cls.TYPE: cls for cls in MESSAGE_CLASSES}


def decode_message(mtype: int, payload: bytes | memoryview) -> Message:
    """Build the typed message for a received frame; MessageError if it does not parse."""
    parse = _PARSERS.get(mtype)
    if parse is None:
        raise MessageError(f"unknown message type {mtype}")
    try:
        return parse(payload)
    except (ValueError, TypeError, UnicodeError) as exc:
        raise MessageError(f"malformed {wire.TYPE_NAMES.get(mtype, mtype)} payload: {exc}") from exc


def encode_message(encoder: wire.FrameEncoder, message: Message) -> bytes:
    """Frame a typed message with the encoder's next sequence number."""
    return encoder.encode(message.TYPE, message.to_payload())
