# A BoardApp wired to fake peripherals plus the host's side of the wire, for tests that
# run under both CPython and MicroPython.

from board_fakes import FakeButton, FakeClock, FakeLed, FakeMic, FakePin, FakePort, FakeSpeaker

from sotto_fw import app, config, wire


class BoardHarness:
    def __init__(self, profile_name="esp32s3", speaker_room=256, speaker_queue=0, mic_per_read=64, **overrides):
        self.clock = FakeClock(1000)
        self.port = FakePort()
        self.mic = FakeMic(mic_per_read)
        self.speaker = FakeSpeaker(speaker_room, speaker_queue)
        self.button = FakeButton()
        self.led = FakeLed()
        self.outputs = (FakePin(), FakePin())
        profile = config.get_profile(profile_name)
        for k in overrides:
            profile[k] = overrides[k]
        self.app = app.BoardApp(
            profile, self.port, self.mic, self.speaker, self.button, self.led, self.outputs, self.clock, board_id="test-board"
        )
        self.encoder = wire.FrameEncoder()
        self.received = []
        self.decoder = wire.FrameDecoder(self._got)

    def _got(self, mtype, seq, payload):
        self.received.append((mtype, seq, bytes(payload)))

    def send(self, mtype, payload=b""):
        """Host -> board: returns the frame's sequence number."""
        seq = self.encoder.seq
        self.port.to_board.extend(self.encoder.encode(mtype, payload))
        return seq

    def welcome(self, mic_fmt=wire.FMT_PCM16, spk_fmt=wire.FMT_PCM16, mic_rate=16000, spk_rate=16000, frame_ms=20, silence_s=5):
        """Answer the board's HELLO (one pass first if it has not said HELLO yet)."""
        if self.app.handshake.hellos_this_boot == 0:
            self.run(1)
        return self.send(wire.WELCOME, wire.pack_welcome(77, mic_fmt, mic_rate, spk_fmt, spk_rate, frame_ms, silence_s))

    def run(self, steps=1, ms=1):
        for _ in range(steps):
            self.app.step()
            self.clock.advance(ms)
        self.decoder.feed(self.port.take_output())

    def take(self, mtype=None):
        """Frames received since the last take (of one type, or all but AUDIO_UP)."""
        got = self.received
        self.received = []
        if mtype is None:
            return [f for f in got if f[0] != wire.AUDIO_UP]
        return [f for f in got if f[0] == mtype]

    def take_all(self):
        got = self.received
        self.received = []
        return got


def pcm_ramp(n_bytes, start=0):
    buf = bytearray(n_bytes)
    for i in range(n_bytes // 2):
        v = (start + i * 37) & 0xFFFF
        buf[2 * i] = v & 0xFF
        buf[2 * i + 1] = v >> 8
    return buf
