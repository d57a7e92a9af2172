# Microphone capture: PCM16 from the mic collects in a preallocated frame buffer; a full
# frame is encoded straight into the frame encoder's payload for AUDIO_UP.
#
# The mic driver's interface: readinto(buf, off, n) puts up to n bytes of PCM16 at
# buf[off:] and returns how many (0 when nothing is captured yet: it never waits);
# configure(rate) optional; lost_bytes (optional): PCM16 bytes the driver had to drop
# because they were not read in time.

from sotto_fw import audiocodec, wire
from sotto_fw.compat import ticks_add, ticks_diff

# Largest PCM16 frame: 60 ms at 16 kHz. WELCOME may ask for less, never more.
MAX_FRAME_PCM = 1920


class MicCapture:
    def __init__(self, mic, max_frame_pcm=MAX_FRAME_PCM):
        self.mic = mic
        self.pcm = bytearray(max_frame_pcm)
        self.scratch = bytearray(256)  # mic reads while not streaming, discarded
        self.frame_bytes = 0
        self.rate = 16000
        self.fill = 0
        self.first_ms = 0
        # Capture-position clock: board time of the next sample to be read. Stamping a
        # frame at read time would be late by however long the audio sat in the mic's
        # buffer, which varies; the host lines the uplink up against what it played
        # (echo reference), so stamps must follow the samples, not the reads.
        self.next_sample_ms = -1
        self.sub_ms = 0  # sample remainder below one ms, in units of 1/rate ms
        self.encoder = audiocodec.AudioEncoder(wire.FMT_PCM16)
        self.frames = 0
        self.discarded = 0
        self.dropped_frames = 0  # whole frames dropped because the line was behind

    def configure(self, fmt, rate, frame_ms):
        """Apply WELCOME's mic choice. Returns False if one frame would not fit a payload."""
        frame_bytes = 2 * (rate * frame_ms // 1000)
        if frame_bytes <= 0 or frame_bytes > len(self.pcm):
            return False
        if audiocodec.encoded_size(fmt, frame_bytes // 2) > wire.MAX_PAYLOAD - wire.AUDIO_UP_HEAD:
            return False
        if hasattr(self.mic, "configure"):
            self.mic.configure(rate)
        self.frame_bytes = frame_bytes
        self.rate = rate
        self.fill = 0
        self.next_sample_ms = -1
        if self.encoder.fmt != fmt:
            self.encoder = audiocodec.AudioEncoder(fmt)
        self.encoder.reset()
        return True

    def poll(self, now):
        """Read what the mic has. Returns True when a whole frame is ready."""
        if self.frame_bytes == 0:
            return False
        if self.fill >= self.frame_bytes:
            return True
        got = self.mic.readinto(self.pcm, self.fill, self.frame_bytes - self.fill) or 0
        if got > 0:
            # The newest sample just read was captured about now, so the first one no
            # later than `latest`. Anchor there at the start and whenever the position
            # clock runs ahead of it (samples lost in the mic driver).
            latest = ticks_add(now, -((got * 500) // self.rate))
            if self.next_sample_ms < 0 or ticks_diff(self.next_sample_ms, latest) > 0:
                self.next_sample_ms = latest
                self.sub_ms = 0
            if self.fill == 0:
                self.first_ms = self.next_sample_ms
            self._advance(got >> 1)
            self.fill += got
        return self.fill >= self.frame_bytes

    def _advance(self, samples):
        # ms = samples * 1000 / rate, carried exactly so the clock never drifts.
        total = self.sub_ms + samples * 1000
        self.next_sample_ms = ticks_add(self.next_sample_ms, total // self.rate)
        self.sub_ms = total % self.rate

    def drain(self):
        """Read and drop mic audio (not streaming): the mic never backs up with stale audio."""
        got = self.mic.readinto(self.scratch, 0, len(self.scratch)) or 0
        self.discarded += got
        self.next_sample_ms = -1  # not streaming: re-anchor when streaming resumes
        return got

    def encode_into(self, dst, doff):
        """Encode the ready frame into dst[doff:], start the next. Returns bytes written."""
        n = self.encoder.encode_into(self.pcm, self.frame_bytes, dst, doff)
        self.fill = 0
        self.frames += 1
        return n

    def drop_frame(self):
        self.fill = 0
        self.discarded += self.frame_bytes
        self.dropped_frames += 1
