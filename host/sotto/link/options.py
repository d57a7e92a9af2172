"""A board link's settings and counters."""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.link.audio_codec import HOST_FORMATS

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
