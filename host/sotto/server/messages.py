"""The seed article's JSON messages, parsed and checked (everything from a client is untrusted).

In:  {"type": "text", "text": "...", "state": true?}
     {"type": "audio", "audio": "<base64 WAV>", "lang": "ko"?, "state": true?}
     {"type": "ping"}
Out: {"type": "reply", "reply", "audio": "<base64 WAV>", "state" (only when asked), ...figures}
     {"type": "ack", "text", "audio"}      an acknowledgement sent first when the answer is late
     {"type": "error", "code", "message"}  the connection stays usable
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import wave
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from sotto.audio.resample import resample_pcm16
from sotto.errors import InputRefused
from sotto.server.limits import ServeLimits
from sotto.untrusted import clean_text, load_json


class ClientMessageError(Exception):
    """A bad client message: answered with an error message, never a crash or a closed connection."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class TextIn:
    text: str
    want_state: bool


@dataclass(frozen=True)
class AudioIn:
    pcm: bytes  # mono PCM16
    sample_rate: int
    lang: str | None
    want_state: bool


@dataclass(frozen=True)
class PingIn:
    pass


ClientMessage = Union[TextIn, AudioIn, PingIn]


def parse_client_message(raw: str, limits: ServeLimits) -> ClientMessage:
    if len(raw) > limits.max_message_bytes:
        raise ClientMessageError("message_too_large", f"message of {len(raw)} bytes; the limit is {limits.max_message_bytes}")
    try:
        data = load_json(raw, what="the message", max_bytes=limits.max_message_bytes, max_depth=limits.max_json_depth)
    except InputRefused as exc:
        raise ClientMessageError("invalid_json", exc.message) from None
    if not isinstance(data, dict):
        raise ClientMessageError("invalid_message", "a message is a JSON object with a \"type\"")
    kind = data.get("type")
    want_state = data.get("state") is True
    if kind == "text":
        text = data.get("text")
        text = clean_text(text) if isinstance(text, str) else None  # no NUL, control or lone surrogate is kept
        if not text or not text.strip():
            raise ClientMessageError("invalid_message", "\"text\" must be a non-empty string")
        if len(text) > limits.max_text_chars:
            raise ClientMessageError("text_too_long", f"text of {len(text)} characters; the limit is {limits.max_text_chars}")
        return TextIn(" ".join(text.split()), want_state)
    if kind == "audio":
        audio = data.get("audio")
        if not isinstance(audio, str) or not audio:
            raise ClientMessageError("invalid_message", "\"audio\" must be a base64-encoded WAV file")
        lang = data.get("lang")
        if lang is not None and (not isinstance(lang, str) or not re.fullmatch(r"[a-z]{2,3}", lang)):
            raise ClientMessageError("invalid_message", "\"lang\" must be a language code such as \"en\" or \"ko\"")
        pcm, rate = decode_wav_base64(audio, limits)
        return AudioIn(pcm, rate, lang, want_state)
    if kind == "ping":
        return PingIn()
    shown = kind if isinstance(kind, str) else type(kind).__name__
    raise ClientMessageError("unknown_type", f"unknown message type {str(shown)[:40]!r}; expected text, audio or ping")


def decode_wav_base64(text: str, limits: ServeLimits) -> tuple[bytes, int]:
    """Base64 WAV -> mono PCM16 and its rate. 16-bit PCM WAV only (mono, or stereo mixed down)."""
    try:
        blob = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ClientMessageError("invalid_base64", f"\"audio\" is not valid base64: {exc}") from None
    try:
        with wave.open(io.BytesIO(blob), "rb") as wav:
            channels, width, rate, frames = wav.getnchannels(), wav.getsampwidth(), wav.getframerate(), wav.getnframes()
            if width != 2:
                raise ClientMessageError("invalid_wav", f"WAV has {8 * width}-bit samples; send 16-bit PCM")
            if not 8000 <= rate <= 48000 or not 1 <= channels <= 2:
                raise ClientMessageError("invalid_wav", f"WAV is {rate} Hz with {channels} channels; send 8-48 kHz mono")
            if frames / rate > limits.max_audio_s:
                raise ClientMessageError("audio_too_long", f"{frames / rate:.1f} s of audio; the limit is {limits.max_audio_s:g} s")
            pcm = wav.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise ClientMessageError("invalid_wav", f"\"audio\" is not a readable WAV file: {exc}") from None
    pcm = pcm[: len(pcm) - len(pcm) % (2 * channels)]
    if channels == 2:
        stereo = np.frombuffer(pcm, dtype="<i2").reshape(-1, 2).astype(np.int32)
        pcm = (stereo.sum(axis=1) // 2).astype("<i2").tobytes()
    if not pcm:
        raise ClientMessageError("invalid_wav", "the WAV file holds no audio")
    return pcm, rate


def encode_wav_base64(pcm: bytes, sample_rate: int) -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def to_rate(pcm: bytes, from_rate: int, to_rate: int) -> bytes:
    return pcm if from_rate == to_rate else resample_pcm16(pcm, from_rate, to_rate)


def error_message(code: str, message: str, **extra: Any) -> str:
    # The message may quote the client's input: cleaned, so it can always be encoded and shown.
    return json.dumps({"type": "error", "code": code, "message": clean_text(message), **extra}, ensure_ascii=False)
