# A cheap energy voice-activity detector for EV_VAD_START / EV_VAD_END. It tracks the
# noise floor and calls speech when a frame is well above it for a few frames.

from sotto_fw.compat import const

VAD_NONE = const(0)
VAD_START = const(1)
VAD_END = const(2)


def mean_abs(pcm, n):
    """Mean |sample| of PCM16 pcm[:n], looking at every 4th sample.

    Plain bytecode, not native: reading a quarter of the samples with a few operations
    each is a small part of a frame's work next to the codec loops, which touch every
    sample (those are the ones compiled to native code).
    """
    total = 0
    count = 0
    i = 0
    while i + 1 < n:
        s = pcm[i] | (pcm[i + 1] << 8)
        if s >= 32768:
            s = 65536 - s
        total += s
        count += 1
        i += 8
    if count == 0:
        return 0
    return total // count


class EnergyVad:
    def __init__(self, start_frames=3, end_frames=25, min_level=300, ratio=4):
        self.start_frames = start_frames
        self.end_frames = end_frames
        self.min_level = min_level
        self.ratio = ratio
        self.reset()

    def reset(self):
        self.floor = 0
        self.active = False
        self.run = 0

    def feed(self, pcm, n):
        """One mic frame in; VAD_START / VAD_END on a change, else VAD_NONE."""
        level = mean_abs(pcm, n)
        if self.floor == 0:
            self.floor = level
        threshold = self.floor * self.ratio
        if threshold < self.min_level:
            threshold = self.min_level
        loud = level > threshold
        if not loud:
            # The floor follows quiet frames quickly down and slowly up.
            if level < self.floor:
                self.floor = (self.floor + level) // 2
            else:
                self.floor += (level - self.floor) // 32 + 1
        if self.active:
            self.run = 0 if loud else self.run + 1
            if self.run >= self.end_frames:
                self.active = False
                self.run = 0
                return VAD_END
        else:
            self.run = self.run + 1 if loud else 0
            if self.run >= self.start_frames:
                self.active = True
                self.run = 0
                return VAD_START
        return VAD_NONE
