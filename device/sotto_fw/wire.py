# sotto wire codec: one source file, run by the board (MicroPython) and the host (CPython).
#
# Frame on the line:  COBS( version | type | seq (u16 LE) | payload | crc32 (u32 LE) ) 0x00
#
# COBS removes every zero byte from the frame so 0x00 is a pure delimiter: after garbage
# or a lost byte the receiver resynchronises at the next 0x00. The CRC covers header and
# payload; a frame that fails it is counted and dropped, never delivered. Sequence
# numbers run per direction and wrap at 65536; the receiver counts gaps as lost frames.
#
# Written in the subset both interpreters run: no dataclasses, no annotations that
# MicroPython rejects, struct/binascii and sotto_fw.compat only. Buffers are allocated
# once per encoder/decoder so the board's audio loop does not allocate per frame.

import struct

from sotto_fw.compat import compile_accelerated, const

try:
    from binascii import crc32 as _crc32

    _crc32(b"\x00")
except (ImportError, AttributeError):  # ports built without binascii.crc32
    _crc32 = None

PROTOCOL_VERSION = const(1)

# Message types. Values are part of the protocol: never renumber.
HELLO = const(1)
WELCOME = const(2)
AUDIO_UP = const(3)
AUDIO_DOWN = const(4)
CREDIT = const(5)
STOP = const(6)
PLAYBACK = const(7)
EVENT = const(8)
PING = const(9)
PONG = const(10)
LOG = const(11)
ERROR = const(12)
BENCH = const(13)
COMMAND = const(14)

TYPE_NAMES = {
    HELLO: "HELLO",
    WELCOME: "WELCOME",
    AUDIO_UP: "AUDIO_UP",
    AUDIO_DOWN: "AUDIO_DOWN",
    CREDIT: "CREDIT",
    STOP: "STOP",
    PLAYBACK: "PLAYBACK",
    EVENT: "EVENT",
    PING: "PING",
    PONG: "PONG",
    LOG: "LOG",
    ERROR: "ERROR",
    BENCH: "BENCH",
    COMMAND: "COMMAND",
}

# Audio formats, as a bitmask in HELLO and a single value in WELCOME.
FMT_PCM16 = const(1)
FMT_MULAW = const(2)
FMT_ADPCM = const(4)

FORMAT_NAMES = {FMT_PCM16: "pcm16", FMT_MULAW: "mulaw", FMT_ADPCM: "ima-adpcm"}

# PLAYBACK states.
PLAY_STARTED = const(1)
PLAY_DRAINED = const(2)
PLAY_STOPPED = const(3)

# EVENT kinds.
EV_BUTTON_DOWN = const(1)
EV_BUTTON_UP = const(2)
EV_VAD_START = const(3)
EV_VAD_END = const(4)
EV_COMMAND_DONE = const(5)  # value: the COMMAND's action id

# COMMAND ids: side-effecting board actions requested by the agent.
CMD_VOLUME = const(1)  # value 0..100
CMD_GPIO = const(2)  # index: output number in the board profile, value 0/1
CMD_BENCH = const(3)  # index: BENCH payload size / 8, value: seconds of link benchmark

# ERROR codes the board sends.
ERR_BAD_PAYLOAD = const(1)  # a frame whose payload does not parse as its type
ERR_BAD_WELCOME = const(2)  # WELCOME asks for a format or rate the board lacks
ERR_BAD_COMMAND = const(3)  # unknown COMMAND or output index
ERR_UNEXPECTED = const(4)  # a message the board does not take (e.g. AUDIO_UP from the host)

# LOG levels.
LOG_DEBUG = const(10)
LOG_INFO = const(20)
LOG_WARNING = const(30)
LOG_ERROR = const(40)

HEADER_LEN = const(4)
CRC_LEN = const(4)
MAX_PAYLOAD = const(1024)
MAX_RAW = const(1032)  # HEADER_LEN + MAX_PAYLOAD + CRC_LEN
# COBS adds one byte per 254 and one at the start: the most a frame takes between delimiters.
MAX_ENCODED = const(1038)
MAX_TEXT = const(200)  # LOG / ERROR text, bytes
MAX_NAME = const(32)  # names in HELLO, bytes

_HDR = "<BBH"
_CRC = "<I"


# ---------------------------------------------------------------------------- CRC-32

_CRC_TABLE = None


def _crc32_py(data, value=0):
    # Same result as binascii.crc32 (IEEE 802.3, reflected, 0xEDB88320).
    global _CRC_TABLE
    if _CRC_TABLE is None:
        table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
            table.append(c)
        _CRC_TABLE = table
    t = _CRC_TABLE
    c = value ^ 0xFFFFFFFF
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def crc32(data, value=0):
    if _crc32 is None:
        return _crc32_py(data, value)
    return _crc32(data, value) & 0xFFFFFFFF


# ---------------------------------------------------------------------------- COBS


def cobs_encode_into(src, n, dst, src_mv=None):
    """COBS-encode src[:n] (a bytearray) into dst, no trailing delimiter. Returns length.

    src_mv: a memoryview of src, if the caller keeps one (saves creating it per call).
    """
    if _cobs_encode_viper is not None:
        return _cobs_encode_viper(src, n, dst)
    code_pos = 0
    o = 1
    i = 0
    if src_mv is None:
        src_mv = memoryview(src)  # copy from a view: slicing a bytearray copies
    while True:
        z = src.find(b"\x00", i, n)
        end = n if z < 0 else z
        run = end - i
        if run > 254:
            run = 254
        if run:
            dst[o : o + run] = src_mv[i : i + run]
            o += run
            i += run
        if run == 254:
            # A full block: no implied zero, a new block starts.
            dst[code_pos] = 255
            code_pos = o
            o += 1
            continue
        dst[code_pos] = run + 1
        if z < 0 or i != z:
            return o
        code_pos = o  # the zero at i is implied by this block's end
        o += 1
        i += 1


def cobs_decode_into(src, n, dst):
    """Decode COBS src[:n] into dst. Returns length, or -1 if src is not valid COBS."""
    if _cobs_decode_viper is not None:
        return _cobs_decode_viper(src, n, dst)
    i = 0
    o = 0
    while i < n:
        code = src[i]
        if code == 0:
            return -1
        i += 1
        run = code - 1
        if i + run > n:
            return -1
        if run:
            dst[o : o + run] = src[i : i + run]
            o += run
            i += run
        if code != 255 and i < n:
            dst[o] = 0
            o += 1
    return o


# On MicroPython the COBS loops run as viper code: the Python versions above step
# from zero byte to zero byte, which is fast on CPython (bytearray.find is C) but far
# too slow on a microcontroller for audio with many zero bytes (quiet PCM16). Both
# produce the same bytes (tests/mpy/wire_vectors_check.py compares them). The viper
# loops are source compiled at import by the board's own compiler (sotto_fw.compat):
# a decorator in this file would stop `mpy-cross wire.py` without -march. None on
# CPython and on a port without a native emitter: the Python versions run there.

_COBS_ENCODE_VIPER_SOURCE = """\
def _cobs_encode_v(src: ptr8, n: int, dst: ptr8) -> int:
    code_pos = 0
    o = 1
    code = 1
    i = 0
    while i < n:
        b = src[i]
        if b == 0:
            dst[code_pos] = code
            code_pos = o
            o += 1
            code = 1
        else:
            dst[o] = b
            o += 1
            code += 1
            if code == 255:
                dst[code_pos] = code
                code_pos = o
                o += 1
                code = 1
        i += 1
    dst[code_pos] = code
    return o
"""

_COBS_DECODE_VIPER_SOURCE = """\
def _cobs_decode_v(src: ptr8, n: int, dst: ptr8) -> int:
    i = 0
    o = 0
    while i < n:
        code = src[i]
        if code == 0:
            return -1
        i += 1
        end = i + code - 1
        if end > n:
            return -1
        while i < end:
            dst[o] = src[i]
            o += 1
            i += 1
        if code != 255 and i < n:
            dst[o] = 0
            o += 1
    return o
"""

_cobs_encode_viper = compile_accelerated(_COBS_ENCODE_VIPER_SOURCE, "_cobs_encode_v", "viper")
_cobs_decode_viper = compile_accelerated(_COBS_DECODE_VIPER_SOURCE, "_cobs_decode_v", "viper")


# ---------------------------------------------------------------------------- encoder


class FrameEncoder:
    """Builds frames into preallocated buffers.

    The caller writes the payload straight into `payload` (a memoryview) and calls
    `finish(type, n)`, then sends `out[:k]`. `encode()` is the convenience form for
    control messages. Sequence numbers are assigned here, one counter per direction.
    """

    def __init__(self):
        self.raw = bytearray(MAX_RAW)
        self.raw_mv = memoryview(self.raw)
        self.payload = self.raw_mv[HEADER_LEN : HEADER_LEN + MAX_PAYLOAD]
        self.out = bytearray(MAX_ENCODED + 2)
        self.out_mv = memoryview(self.out)
        self._out_body = self.out_mv[1:]
        self.seq = 0
        self.frames = 0

    def finish(self, mtype, n):
        """Frame the first n payload bytes already in `payload`. Returns the line length."""
        if n < 0 or n > MAX_PAYLOAD:
            raise ValueError("payload too long")
        seq = self.seq
        self.seq = (seq + 1) & 0xFFFF
        struct.pack_into(_HDR, self.raw, 0, PROTOCOL_VERSION, mtype, seq)
        end = HEADER_LEN + n
        struct.pack_into(_CRC, self.raw, end, crc32(self.raw_mv[:end]))
        # A delimiter on both sides: a frame that follows line garbage still arrives whole.
        k = cobs_encode_into(self.raw, end + CRC_LEN, self._out_body, self.raw_mv)
        self.out[k + 1] = 0
        self.frames += 1
        return k + 2

    def encode(self, mtype, payload=b""):
        """Frame a whole payload and return the line bytes (allocates: control messages)."""
        n = len(payload)
        if n > MAX_PAYLOAD:
            raise ValueError("payload too long")
        self.payload[:n] = payload
        k = self.finish(mtype, n)
        return bytes(self.out_mv[:k])


# ---------------------------------------------------------------------------- decoder


class FrameDecoder:
    """Turns a byte stream into frames; never raises on input, whatever it is.

    `feed(data)` calls `on_frame(type, seq, payload)` for each frame whose CRC and
    version check out. The payload memoryview is valid only during the call. Counters
    say what was dropped and why.
    """

    def __init__(self, on_frame):
        self.on_frame = on_frame
        self.buf = bytearray(MAX_ENCODED)
        self.buf_mv = memoryview(self.buf)
        self.dec = bytearray(MAX_ENCODED)
        self.dec_mv = memoryview(self.dec)
        self.n = 0
        self.overflow = False
        self.frames_ok = 0
        self.crc_errors = 0
        self.bad_frames = 0  # not COBS, too short, oversize
        self.version_mismatch = 0
        self.last_foreign_version = -1
        self.lost = 0  # gaps in sequence numbers
        self.resyncs = 0
        self.bytes_in = 0
        self.expected_seq = -1

    def reset_sequence(self):
        self.expected_seq = -1

    def reset(self):
        """A new line (a reopened port): drop any half-received frame and start the sequence
        afresh, so the jump is not counted as loss. The counters keep their totals."""
        self.n = 0
        self.overflow = False
        self.expected_seq = -1

    def feed(self, data, n=-1):
        """Take the first n bytes of data (all of it when n < 0).

        Pass a bytearray/bytes and n to avoid copies: memoryviews have no find()
        (neither on CPython nor MicroPython), so they are copied once per call.
        """
        if n < 0 or n > len(data):
            n = len(data)
        self.bytes_in += n
        if not hasattr(data, "find"):
            data = bytes(data[:n])
        view = memoryview(data)
        i = 0
        while i < n:
            z = data.find(b"\x00", i, n)
            end = n if z < 0 else z
            take = end - i
            if take:
                if self.overflow or self.n + take > MAX_ENCODED:
                    self.overflow = True
                else:
                    self.buf_mv[self.n : self.n + take] = view[i:end]
                    self.n += take
            if z < 0:
                return
            self._end_of_frame()
            i = z + 1

    def _end_of_frame(self):
        n = self.n
        self.n = 0
        if self.overflow:
            self.overflow = False
            self.bad_frames += 1
            self.resyncs += 1
            return
        if n == 0:
            return  # back-to-back delimiters: idle line
        k = cobs_decode_into(self.buf_mv, n, self.dec_mv)
        if k < HEADER_LEN + CRC_LEN:
            self.bad_frames += 1
            self.resyncs += 1
            return
        body = k - CRC_LEN
        (want,) = struct.unpack_from(_CRC, self.dec, body)
        if crc32(self.dec_mv[:body]) != want:
            self.crc_errors += 1
            self.resyncs += 1
            return
        version, mtype, seq = struct.unpack_from(_HDR, self.dec, 0)
        if version != PROTOCOL_VERSION:
            self.version_mismatch += 1
            self.last_foreign_version = version
            return
        exp = self.expected_seq
        if exp >= 0 and seq != exp:
            gap = (seq - exp) & 0xFFFF
            if gap < 0x8000:
                self.lost += gap
        self.expected_seq = (seq + 1) & 0xFFFF
        self.frames_ok += 1
        self.on_frame(mtype, seq, self.dec_mv[HEADER_LEN:body])


# ---------------------------------------------------------------------------- payloads
#
# pack_* return payload bytes; unpack_* take a payload (bytes or memoryview) and return
# a tuple, raising ValueError on a malformed payload. Strings are u8 length + UTF-8,
# cut to their bound.


def _pack_str(s, limit):
    b = s.encode("utf-8")[:limit]
    return bytes((len(b),)) + b


def _unpack_str(p, off):
    if off >= len(p):
        raise ValueError("truncated string")
    n = p[off]
    end = off + 1 + n
    if end > len(p):
        raise ValueError("truncated string")
    try:
        s = bytes(p[off + 1 : end]).decode("utf-8")
    except UnicodeError:
        raise ValueError("string is not UTF-8")
    return s, end


def _need(p, n):
    if len(p) < n:
        raise ValueError("payload too short")


def _pack_rates(rates):
    rates = rates[:8]
    return bytes((len(rates),)) + struct.pack("<" + "H" * len(rates), *rates)


def _unpack_rates(p, off):
    _need(p, off + 1)
    n = p[off]
    _need(p, off + 1 + 2 * n)
    return tuple(struct.unpack_from("<" + "H" * n, p, off + 1)), off + 1 + 2 * n


def pack_hello(firmware, board, board_id, boot_id, mic_formats, speaker_formats, mic_rates, speaker_rates, speaker_buffer):
    return (
        _pack_str(firmware, MAX_NAME)
        + _pack_str(board, MAX_NAME)
        + _pack_str(board_id, MAX_NAME)
        + struct.pack("<IBBI", boot_id, mic_formats, speaker_formats, speaker_buffer)
        + _pack_rates(mic_rates)
        + _pack_rates(speaker_rates)
    )


def unpack_hello(p):
    firmware, off = _unpack_str(p, 0)
    board, off = _unpack_str(p, off)
    board_id, off = _unpack_str(p, off)
    _need(p, off + 10)
    boot_id, mic_formats, speaker_formats, speaker_buffer = struct.unpack_from("<IBBI", p, off)
    mic_rates, off = _unpack_rates(p, off + 10)
    speaker_rates, off = _unpack_rates(p, off)
    return (firmware, board, board_id, boot_id, mic_formats, speaker_formats, mic_rates, speaker_rates, speaker_buffer)


_WELCOME = "<IBHBHBH"  # session token, mic fmt, mic rate, spk fmt, spk rate, frame ms, host silence timeout s


def pack_welcome(session_token, mic_format, mic_rate, speaker_format, speaker_rate, frame_ms, silence_timeout_s):
    return struct.pack(_WELCOME, session_token, mic_format, mic_rate, speaker_format, speaker_rate, frame_ms, silence_timeout_s)


def unpack_welcome(p):
    _need(p, struct.calcsize(_WELCOME))
    return struct.unpack_from(_WELCOME, p, 0)


AUDIO_UP_HEAD = const(4)  # board time (ms, u32) of the first sample


def pack_audio_up(board_ms, audio):
    return struct.pack("<I", board_ms & 0xFFFFFFFF) + bytes(audio)


def unpack_audio_up(p):
    _need(p, 4)
    return struct.unpack_from("<I", p, 0)[0], bytes(p[4:])


AUDIO_DOWN_HEAD = const(2)  # stream id (u16): one per agent utterance


def pack_audio_down(stream_id, audio):
    return struct.pack("<H", stream_id & 0xFFFF) + bytes(audio)


def unpack_audio_down(p):
    _need(p, 2)
    return struct.unpack_from("<H", p, 0)[0], bytes(p[2:])


_CREDIT = "<HHI"  # stream id, last AUDIO_DOWN seq taken in, free speaker-buffer bytes (PCM16)


def pack_credit(stream_id, last_seq, free_bytes):
    return struct.pack(_CREDIT, stream_id & 0xFFFF, last_seq & 0xFFFF, free_bytes)


def unpack_credit(p):
    _need(p, 8)
    return struct.unpack_from(_CREDIT, p, 0)


def pack_stop(stream_id):
    return struct.pack("<H", stream_id & 0xFFFF)


def unpack_stop(p):
    _need(p, 2)
    return struct.unpack_from("<H", p, 0)


_PLAYBACK = "<BHII"  # state, stream id, PCM bytes played of that stream, board ms


def pack_playback(state, stream_id, bytes_played, board_ms):
    return struct.pack(_PLAYBACK, state, stream_id & 0xFFFF, bytes_played, board_ms & 0xFFFFFFFF)


def unpack_playback(p):
    _need(p, 11)
    return struct.unpack_from(_PLAYBACK, p, 0)


_EVENT = "<BhI"  # kind, value, board ms


def pack_event(kind, value, board_ms):
    return struct.pack(_EVENT, kind, value, board_ms & 0xFFFFFFFF)


def unpack_event(p):
    _need(p, 7)
    return struct.unpack_from(_EVENT, p, 0)


def pack_ping(nonce, sender_ms):
    return struct.pack("<II", nonce & 0xFFFFFFFF, sender_ms & 0xFFFFFFFF)


def unpack_ping(p):
    _need(p, 8)
    return struct.unpack_from("<II", p, 0)


def pack_pong(nonce, echo_ms, responder_ms):
    return struct.pack("<III", nonce & 0xFFFFFFFF, echo_ms & 0xFFFFFFFF, responder_ms & 0xFFFFFFFF)


def unpack_pong(p):
    _need(p, 12)
    return struct.unpack_from("<III", p, 0)


def pack_log(level, text):
    return bytes((level & 0xFF,)) + text.encode("utf-8")[:MAX_TEXT]


def unpack_log(p):
    _need(p, 1)
    try:
        text = bytes(p[1 : 1 + MAX_TEXT]).decode("utf-8")
    except UnicodeError:
        text = repr(bytes(p[1 : 1 + MAX_TEXT]))
    return p[0], text


def pack_error(code, text):
    return struct.pack("<H", code & 0xFFFF) + text.encode("utf-8")[:MAX_TEXT]


def unpack_error(p):
    _need(p, 2)
    try:
        text = bytes(p[2 : 2 + MAX_TEXT]).decode("utf-8")
    except UnicodeError:
        text = repr(bytes(p[2 : 2 + MAX_TEXT]))
    return struct.unpack_from("<H", p, 0)[0], text


_COMMAND = "<HBBh"  # action id, command, index, value


def pack_command(action_id, command, index, value):
    return struct.pack(_COMMAND, action_id & 0xFFFF, command, index, value)


def unpack_command(p):
    _need(p, 6)
    return struct.unpack_from(_COMMAND, p, 0)


# BENCH: link test traffic. counter (u32) + pattern bytes derived from the counter, so
# the receiver can check every delivered payload without knowing what was sent.


def bench_fill(buf, counter, n):
    struct.pack_into("<I", buf, 0, counter & 0xFFFFFFFF)
    x = (counter * 2654435761 + 1) & 0xFF
    for i in range(4, n):
        buf[i] = x
        x = (x * 5 + 1) & 0xFF
    return n


def bench_check(p):
    """True when a BENCH payload is exactly what bench_fill made for its counter."""
    n = len(p)
    if n < 4:
        return False
    counter = struct.unpack_from("<I", p, 0)[0]
    x = (counter * 2654435761 + 1) & 0xFF
    for i in range(4, n):
        if p[i] != x:
            return False
        x = (x * 5 + 1) & 0xFF
    return True
