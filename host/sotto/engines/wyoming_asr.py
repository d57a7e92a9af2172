"""Speech recognition served by a Wyoming ASR service, behind `Recognizer`.

Per turn: one connection; `transcribe` + `audio-start` on the turn's first chunk, each
chunk streamed as `audio-chunk` as it arrives, and `audio-stop` at the endpoint (our
trailing-silence detector, like the Vosk engine's) or at `flush()`; the server's
`transcript` is the turn's one final. Classic Wyoming servers send no partials.

A server that is down or fails mid-turn does not raise into the voice session (that
would end the session): the turn yields no final, the failure is kept in `errors` /
`last_error`, and the next turn connects again, so the service recovers when the
server returns.
"""

from __future__ import annotations

from typing import Any

from sotto.engines.base import AudioChunk, Recognizer, Transcript
from sotto.engines.endpoint import TrailingSilence
from sotto.engines.wyoming_common import WyomingAddress, WyomingConnection, parse_address
from sotto.errors import AudioFormatError, RemoteEngineUnavailable

MAX_ERRORS_KEPT = 20


class WyomingRecognizer:
    def __init__(
        self,
        address: str | WyomingAddress,
        *,
        language: str | None = None,
        sample_rate: int = 16000,
        endpoint_silence_ms: float = 600.0,
        silence_rms: float = 300.0,
        connect_timeout_s: float = 2.0,
        read_timeout_s: float = 15.0,
    ) -> None:
        self.address = parse_address(address) if isinstance(address, str) else address
        self.language = language
        self.sample_rate = sample_rate
        self._endpoint = TrailingSilence(sample_rate, endpoint_silence_ms=endpoint_silence_ms, silence_rms=silence_rms)
        self.connect_timeout_s = connect_timeout_s
        self.read_timeout_s = read_timeout_s
        self.name = f"wyoming:{self.address.label}"
        self.errors: list[str] = []
        self._turn: int | None = None
        self._last_seq = -1
        self._conn: WyomingConnection | None = None
        self._done_turns: set[int] = set()
        self._turn_failed = False

    @property
    def last_error(self) -> str | None:
        return self.errors[-1] if self.errors else None

    # ------------------------------------------------------------------ Recognizer

    def accept(self, chunk: AudioChunk) -> list[Transcript]:
        if chunk.sample_rate != self.sample_rate:
            raise AudioFormatError(f"recognizer runs at {self.sample_rate} Hz, chunk is {chunk.sample_rate} Hz")
        if chunk.turn_id in self._done_turns or (self._turn is not None and chunk.turn_id < self._turn):
            return []
        if chunk.turn_id != self._turn:
            self._begin(chunk.turn_id)
        if chunk.seq <= self._last_seq:
            return []  # repeated or out of order
        self._last_seq = chunk.seq
        pcm = chunk.pcm[: len(chunk.pcm) - len(chunk.pcm) % 2]
        if not pcm or self._turn_failed:
            return []
        self._send_chunk(pcm)
        if self._endpoint.update(pcm):
            return self._finish()
        return []

    def flush(self, turn_id: int) -> list[Transcript]:
        if turn_id != self._turn or turn_id in self._done_turns:
            return []
        return self._finish()

    # ------------------------------------------------------------------ internals

    def _begin(self, turn_id: int) -> None:
        self._close()
        self._turn = turn_id
        self._last_seq = -1
        self._endpoint.reset()
        self._turn_failed = False
        from wyoming.asr import Transcribe
        from wyoming.audio import AudioStart

        try:
            self._conn = WyomingConnection(self.address, connect_timeout_s=self.connect_timeout_s,
                                           read_timeout_s=self.read_timeout_s, what="Wyoming ASR")
            self._conn.write(Transcribe(language=self.language).event())
            self._conn.write(AudioStart(rate=self.sample_rate, width=2, channels=1).event())
        except RemoteEngineUnavailable as exc:
            self._failed(exc)

    def _send_chunk(self, pcm: bytes) -> None:
        from wyoming.audio import AudioChunk as WyChunk

        if self._conn is None:
            return
        try:
            self._conn.write(WyChunk(rate=self.sample_rate, width=2, channels=1, audio=pcm).event())
        except RemoteEngineUnavailable as exc:
            self._failed(exc)

    def _finish(self) -> list[Transcript]:
        from wyoming.asr import Transcript as WyTranscript
        from wyoming.audio import AudioStop
        from wyoming.error import Error
        from wyoming.event import Event

        turn = self._turn
        assert turn is not None
        self._done_turns.add(turn)
        if len(self._done_turns) > 64:  # bounded
            for old in sorted(self._done_turns)[:-32]:
                self._done_turns.discard(old)
        conn = self._conn
        if conn is None or self._turn_failed:
            self._close()
            return []
        text: str | None = None
        try:
            conn.write(AudioStop().event())
            while text is None:
                event = conn.read()
                assert isinstance(event, Event)
                if WyTranscript.is_type(event.type):
                    text = WyTranscript.from_event(event).text or ""
                elif Error.is_type(event.type):
                    raise RemoteEngineUnavailable(f"Wyoming ASR at {self.address.label}: {Error.from_event(event).text}")
        except RemoteEngineUnavailable as exc:
            self._failed(exc)
            return []
        finally:
            self._close()
        return [Transcript(turn, text.strip()[:2000], final=True)]

    def _failed(self, exc: RemoteEngineUnavailable) -> None:
        self._turn_failed = True
        self.errors.append(f"{exc.code}: {exc}")
        del self.errors[:-MAX_ERRORS_KEPT]
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sample_rate": self.sample_rate, "language": self.language}


def _check_protocol(engine: WyomingRecognizer) -> Recognizer:
    return engine
