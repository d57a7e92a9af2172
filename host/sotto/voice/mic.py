"""A voice session's mic path: board audio -> echo gate -> resampler -> recognizer.

The echo gate tells the user's voice from the agent's own speech coming back through the
mic (it lines the uplink up against what was played); what reaches the recognizer is the
user's voice, never the agent's echo. While a barge-in completes, mic audio is held and
fed once listening resumes.
"""

from __future__ import annotations

import numpy as np

from sotto.audio.resample import StreamResampler
from sotto.engines.base import AudioChunk, Recognizer, Transcript
from sotto.link.events import MicAudio
from sotto.voice.bargein import BargeInConfig, EchoGate, PlayoutTimeline, SpeechRun


class MicPath:
    def __init__(self, recognizer: Recognizer, mic_rate: int, config: BargeInConfig, timeline: PlayoutTimeline,
                 *, max_held_audio_s: float) -> None:
        self.recognizer = recognizer
        self.config = config
        self.timeline = timeline
        self.max_held_audio_s = max_held_audio_s
        self.listen_turn = 1  # the recognizer's turn being listened to
        self._seq = 0
        self._gate = EchoGate(mic_rate, config, timeline)
        self._speech_run = SpeechRun(config)
        self._resampler: StreamResampler | None = None
        self._held: list[MicAudio] = []

    def hear(self, mic: MicAudio, *, speaking: bool, interrupted: bool) -> tuple[bool, list[Transcript]]:
        """(the user talks over the agent, transcripts) for one mic frame. While `interrupted`
        the frame is held; a frame that completes a barge-in is held too."""
        pcm = mic.pcm[: len(mic.pcm) - len(mic.pcm) % 2]
        if not pcm:
            return False, []
        frame = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        verdict = self._gate.classify(frame, mic.host_t)
        self.timeline.prune(mic.host_t, self.config.reference_keep_s)
        if interrupted:
            self._hold(mic)
            return False, []
        if speaking:
            if self._speech_run.update(verdict.voice, 1000.0 * len(frame) / mic.sample_rate, mic.host_t):
                self._hold(mic)
                return True, []
        else:
            self._speech_run.reset()
        echo_present = verdict.echo_rms > 0.1 * self.config.vad_threshold_rms
        return False, self.feed(pcm if verdict.voice or not echo_present else bytes(len(pcm)), mic.sample_rate)

    def feed(self, pcm: bytes, rate: int) -> list[Transcript]:
        if rate != self.recognizer.sample_rate:
            if self._resampler is None or self._resampler.from_rate != rate:
                self._resampler = StreamResampler(rate, self.recognizer.sample_rate)
            pcm = self._resampler.process(pcm)
        chunk = AudioChunk(self.listen_turn, self._seq, pcm, self.recognizer.sample_rate)
        self._seq += 1
        return self.recognizer.accept(chunk)

    def flush(self) -> list[Transcript]:
        return self.recognizer.flush(self.listen_turn)

    def next_turn(self) -> None:
        """A final closed the turn: the recognizer listens to the next one."""
        self.listen_turn += 1
        self._seq = 0

    def speech_handled(self) -> None:
        """The barge-in this speech caused is under way: count afresh."""
        self._speech_run.reset()

    def release_held(self) -> list[Transcript]:
        """Listening resumes: the audio held meanwhile goes to the recognizer."""
        held, self._held = self._held, []
        out: list[Transcript] = []
        for mic in held:
            out += self.feed(mic.pcm[: len(mic.pcm) - len(mic.pcm) % 2], mic.sample_rate)
        return out

    def _hold(self, mic: MicAudio) -> None:
        self._held.append(mic)
        while sum(len(m.pcm) / 2 / m.sample_rate for m in self._held) > self.max_held_audio_s:
            self._held.pop(0)
