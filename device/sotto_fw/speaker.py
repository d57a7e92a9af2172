# Speaker playback: AUDIO_DOWN audio (already PCM16) goes into a ring buffer, the ring
# feeds the speaker in chunks. The speaker driver's interface: write(buf, off, n) takes
# up to n bytes of PCM16 from buf[off:] and returns how many (0 while it is busy);
# queued() bytes it still has to play; stop() drops them and returns how many;
# configure(rate) and set_volume(percent) optional. The ring may hold several agent utterances ("streams")
# back to back; a small fixed queue of segments says how many ring bytes belong to
# which stream, so PLAYBACK reports and STOP count each stream's bytes exactly.

from array import array

from sotto_fw import wire
from sotto_fw.compat import const
from sotto_fw.ring import RingBuffer

MAX_SEGMENTS = const(8)
CHUNK_BYTES = const(1024)  # most bytes offered to the speaker in one write


def stream_at_or_before(stream_id, ref):
    """True if stream_id is ref or older, with u16 wrap-around."""
    return ((ref - stream_id) & 0xFFFF) < 0x8000


class SpeakerPlayer:
    """Ring buffer -> speaker, with per-stream accounting.

    `report(state, stream_id, bytes_played)` is called for PLAYBACK started / drained /
    stopped. Counters: bytes_played (all streams), overflow (bytes the ring had no room
    for: the host overran its credit), dropped_stopped (bytes of stopped streams).
    """

    def __init__(self, speaker, buffer_size, report, chunk_bytes=CHUNK_BYTES, ring=None):
        """`ring`: a RingBuffer of buffer_size made earlier (the board allocates its biggest
        buffer first, while the heap still has a piece that can hold it)."""
        self.speaker = speaker
        self.report = report
        self.ring = ring if ring is not None and ring.size == buffer_size else RingBuffer(buffer_size)
        self.max_write = chunk_bytes
        self.seg_id = array("H", [0] * MAX_SEGMENTS)
        self.seg_inring = array("i", [0] * MAX_SEGMENTS)
        self.seg_played = array("i", [0] * MAX_SEGMENTS)
        self.seg_flags = bytearray(MAX_SEGMENTS)  # bit 0: ended, bit 1: started
        self.bytes_played = 0
        self.overflow = 0
        self.dropped_stopped = 0
        self.dropped_stale = 0
        self.reset()

    def reset(self):
        self.ring.clear()
        self.seg_head = 0
        self.seg_count = 0
        self.stopped_id = -1
        self.newest_id = -1  # newest stream id taken in: streams only move forward
        self.done_id = -1  # last stream retired, and its played bytes (for a late STOP)
        self.done_played = 0

    def new_session(self):
        """A WELCOME: the host may number its streams afresh."""
        self.stopped_id = -1
        self.newest_id = -1
        self.done_id = -1
        self.done_played = 0

    def free(self):
        return self.ring.free()

    def active(self):
        """True while any stream has audio queued or playing."""
        return self.seg_count > 0 and self.ring.count > 0

    def _tail(self):
        return (self.seg_head + self.seg_count - 1) % MAX_SEGMENTS

    def _segment_for(self, stream_id):
        if self.seg_count:
            t = self._tail()
            if self.seg_id[t] == stream_id:
                return t
        if self.seg_count == MAX_SEGMENTS:
            return -1
        t = (self.seg_head + self.seg_count) % MAX_SEGMENTS
        self.seg_count += 1
        self.seg_id[t] = stream_id
        self.seg_inring[t] = 0
        self.seg_played[t] = 0
        self.seg_flags[t] = 0
        return t

    def accepts(self, stream_id):
        return self.stopped_id < 0 or not stream_at_or_before(stream_id, self.stopped_id)

    def _segment_taking(self, stream_id, n):
        """The segment n PCM16 bytes of stream_id go to, or -1 when they are dropped
        (a stopped or stale stream, or no segment free: counted)."""
        if not self.accepts(stream_id):
            self.dropped_stopped += n
            return -1
        if self.newest_id >= 0 and not (self.seg_count and self.seg_id[self._tail()] == stream_id):
            if stream_at_or_before(stream_id, self.newest_id):
                # Streams only move forward: an older one (repeated end, late audio) is stale.
                self.dropped_stale += n
                return -1
        self.newest_id = stream_id
        s = self._segment_for(stream_id)
        if s < 0:
            self.overflow += n
        return s

    def push(self, stream_id, pcm, n):
        """Queue n PCM16 bytes of a stream (n == 0: the host ended the stream).

        Returns bytes taken; audio of a stopped stream is dropped.
        """
        s = self._segment_taking(stream_id, n)
        if s < 0:
            return 0
        if n == 0:
            self.seg_flags[s] |= 1
            return 0
        k = self.ring.write(pcm, n)
        self.seg_inring[s] += k
        if k < n:
            self.overflow += n - k
        return k

    def push_encoded(self, stream_id, decoder, src, soff, n, pcm_n):
        """Queue a stream's wire audio src[soff:soff+n] (pcm_n bytes once decoded), decoded
        straight into the ring. Returns PCM16 bytes taken, -1 for audio the decoder
        cannot decode (nothing queued)."""
        s = self._segment_taking(stream_id, pcm_n)
        if s < 0:
            return 0
        ring = self.ring
        tail = ring.tail()
        room = ring.free()
        k = decoder.decode_wrapped(src, soff, n, ring.buf, tail, ring.size - tail, room)
        if k < 0:
            return -1
        ring.commit(k)
        self.seg_inring[s] += k
        if k < pcm_n:
            self.overflow += pcm_n - k
        return k

    def _retire_head(self):
        h = self.seg_head
        self.done_id = self.seg_id[h]
        self.done_played = self.seg_played[h]
        self.seg_head = (h + 1) % MAX_SEGMENTS
        self.seg_count -= 1

    def pump(self):
        """Move audio from the ring straight to the speaker. Returns bytes it accepted."""
        moved = 0
        ring = self.ring
        while self.seg_count:
            h = self.seg_head
            inring = self.seg_inring[h]
            if inring == 0:
                if self.seg_flags[h] & 1:
                    queued = self.speaker.queued() if hasattr(self.speaker, "queued") else 0
                    if queued:
                        return moved
                    self._retire_head()
                    self.report(wire.PLAY_DRAINED, self.done_id, self.done_played)
                    continue
                if self.seg_count > 1:
                    self._retire_head()  # the host never ended it; the next stream follows
                    continue
                return moved
            want = ring.contiguous()
            if want > inring:
                want = inring
            if want > self.max_write:
                want = self.max_write
            k = self.speaker.write(ring.buf, ring.head, want) or 0
            if k <= 0:
                return moved
            ring.skip(k)
            self.seg_inring[h] = inring - k
            if not self.seg_flags[h] & 2:
                self.seg_flags[h] |= 2
                self.report(wire.PLAY_STARTED, self.seg_id[h], 0)
            self.seg_played[h] += k
            self.bytes_played += k
            moved += k
            if k < want:
                return moved  # the speaker is full for now
        return moved

    def stop(self, stream_id):
        """Flush every queued stream up to stream_id, silence the speaker, report stopped.

        Returns the PCM bytes of stream_id that actually reached the speaker.
        """
        played = -1
        while self.seg_count and stream_at_or_before(self.seg_id[self.seg_head], stream_id):
            h = self.seg_head
            self.dropped_stopped += self.ring.skip(self.seg_inring[h])
            if self.seg_id[h] == stream_id:
                played = self.seg_played[h]
            self._retire_head()
        discarded = self.speaker.stop()
        if played < 0:
            played = self.done_played if self.done_id == stream_id else 0
        if isinstance(discarded, int) and discarded > 0:
            # The output stage's queue belonged to the stream that was playing.
            played = played - discarded if played > discarded else 0
            self.bytes_played -= discarded
        self.stopped_id = stream_id
        self.report(wire.PLAY_STOPPED, stream_id, played)
        return played


def volume_shift(percent):
    """Speaker volume as right shifts of the samples (6 dB steps): a shift needs no
    multiply and, with I2S.shift, no allocation."""
    shift = 0
    level = 100
    while level > percent and shift < 15:
        level //= 2
        shift += 1
    return shift

