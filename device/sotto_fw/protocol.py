# The board side of the handshake: HELLO until the host answers WELCOME, HELLO again
# when the host has been silent too long. Also checks that a WELCOME asks only for what
# this board can do.

from sotto_fw import audiocodec, wire
from sotto_fw.compat import const, random_u32

WAITING = const(0)  # no WELCOME yet: send HELLO every HELLO_INTERVAL_MS
ACTIVE = const(1)  # welcomed: stream audio
HELLO_INTERVAL_MS = const(1000)
DEFAULT_SILENCE_S = const(5)


class Handshake:
    def __init__(self, profile, board_id):
        self.profile = profile
        self.board_id = board_id
        self.new_boot()

    def new_boot(self):
        self.boot_id = random_u32()
        self.state = WAITING
        self.last_hello_ms = 0
        self.hello_sent = False
        self.hellos_this_boot = 0
        self.last_rx_ms = 0
        self.silence_ms = DEFAULT_SILENCE_S * 1000
        self.session_token = 0
        self.mic_format = wire.FMT_PCM16
        self.mic_rate = self.profile["mic_rates"][0]
        self.speaker_format = wire.FMT_PCM16
        self.speaker_rate = self.profile["speaker_rates"][0]
        self.frame_ms = self.profile["frame_ms"]
        self.welcomes = 0
        self.host_lost = 0

    def active(self):
        return self.state == ACTIVE

    def hello_payload(self):
        p = self.profile
        return wire.pack_hello(
            p["firmware"], p["board"], self.board_id, self.boot_id, p["mic_formats"],
            p["speaker_formats"], list(p["mic_rates"]), list(p["speaker_rates"]), p["speaker_buffer"],
        )

    def hello_due(self, now, ticks_diff):
        if self.state != WAITING:
            return False
        return not self.hello_sent or ticks_diff(now, self.last_hello_ms) >= HELLO_INTERVAL_MS

    def hello_sent_at(self, now):
        self.hello_sent = True
        self.hellos_this_boot += 1
        self.last_hello_ms = now

    def heard_host(self, now):
        self.last_rx_ms = now

    def check_silence(self, now, ticks_diff):
        """Back to WAITING when the host went quiet. Returns True on that change."""
        if self.state == ACTIVE and ticks_diff(now, self.last_rx_ms) > self.silence_ms:
            self.state = WAITING
            self.hello_sent = False  # say HELLO at once
            self.host_lost += 1
            return True
        return False

    def check_welcome(self, welcome):
        """An error text if WELCOME asks for something this board lacks, else None."""
        _token, mic_fmt, mic_rate, spk_fmt, spk_rate, frame_ms, _silence = welcome
        p = self.profile
        if not (mic_fmt & p["mic_formats"]) or not audiocodec.format_supported(mic_fmt):
            return "mic format %d not supported" % mic_fmt
        if not (spk_fmt & p["speaker_formats"]) or not audiocodec.format_supported(spk_fmt):
            return "speaker format %d not supported" % spk_fmt
        if mic_rate not in p["mic_rates"]:
            return "mic rate %d not supported" % mic_rate
        if spk_rate not in p["speaker_rates"]:
            return "speaker rate %d not supported" % spk_rate
        if frame_ms < 5 or frame_ms > 60:
            return "frame_ms %d out of range 5..60" % frame_ms
        return None

    def apply_welcome(self, welcome, now):
        token, mic_fmt, mic_rate, spk_fmt, spk_rate, frame_ms, silence_s = welcome
        self.session_token = token
        self.mic_format = mic_fmt
        self.mic_rate = mic_rate
        self.speaker_format = spk_fmt
        self.speaker_rate = spk_rate
        self.frame_ms = frame_ms
        self.silence_ms = (silence_s if silence_s > 0 else DEFAULT_SILENCE_S) * 1000
        self.state = ACTIVE
        self.last_rx_ms = now
        self.welcomes += 1
