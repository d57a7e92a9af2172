"""A board connection as its users see it: the events it delivers and the port it offers.

`sotto.link` implements this over the serial wire protocol (and `sotto serve` over a
WebSocket); the harness tests use a fake. All audio here is PCM16 mono: the link
converts to and from the negotiated wire format.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import AsyncIterator, Protocol, Union


class BoardEventKind(str, enum.Enum):
    """What a wire EVENT reports (the board's button and on-board voice activity)."""

    BUTTON_DOWN = "button_down"
    BUTTON_UP = "button_up"
    VAD_START = "vad_start"
    VAD_END = "vad_end"


class PlaybackState(str, enum.Enum):
    """The board's speaker, per agent stream (wire PLAYBACK)."""

    STARTED = "started"
    DRAINED = "drained"
    STOPPED = "stopped"


class LinkState(str, enum.Enum):
    """The board behind the port, as the link reports it."""

    ATTACHED = "attached"
    DETACHED = "detached"
    RESET = "reset"  # a new boot (or another board) answered: the session is kept


@dataclass(frozen=True)
class MicAudio:
    """Microphone audio from the board, already decoded to PCM16."""

    pcm: bytes
    sample_rate: int
    board_ms: int  # board clock at the first sample
    host_t: float  # host monotonic seconds, board_ms mapped through the clock offset


@dataclass(frozen=True)
class BoardEvent:
    """Button or on-board voice activity (wire EVENT)."""

    kind: BoardEventKind
    board_ms: int
    host_t: float


@dataclass(frozen=True)
class PlaybackReport:
    """The board's speaker state for one agent stream (wire PLAYBACK)."""

    state: PlaybackState
    stream_id: int
    bytes_played: int  # PCM16 bytes of that stream actually played
    board_ms: int
    host_t: float


@dataclass(frozen=True)
class LinkStatus:
    """Attach / detach / reset of the board behind the port."""

    state: LinkState
    board: str
    detail: str = ""


PortEvent = Union[MicAudio, BoardEvent, PlaybackReport, LinkStatus]


class BoardPort(Protocol):
    """One board's audio and events, as the harness sees them."""

    @property
    def speaker_rate(self) -> int: ...

    @property
    def mic_rate(self) -> int: ...

    def events(self) -> AsyncIterator[PortEvent]:
        """Everything the board sends, in order of arrival."""
        ...

    async def send_audio(self, stream_id: int, pcm: bytes) -> None:
        """Queue speaker audio (PCM16 at speaker_rate); waits for the board's credits."""
        ...

    async def end_stream(self, stream_id: int) -> None:
        """No more audio for this stream: the board reports drained once it has played it."""
        ...

    async def stop(self, stream_id: int) -> None:
        """Barge-in: drop queued audio for the stream and tell the board to flush now."""
        ...

    async def send_command(self, name: str, value: int) -> None:
        """A side-effecting board command (speaker volume, a GPIO output)."""
        ...

    def board_to_host_time(self, board_ms: int) -> float:
        """Map a board timestamp to host monotonic seconds (PING clock offset)."""
        ...
