# MicroPython's unix port as the board. `sotto sim --runtime micropython` runs the whole
# firmware (main.py -> BoardApp) in the real interpreter, in a heap the size of the
# board profile's (-X heapsize), and this module stands in for the board's peripherals,
# as sotto_fw.hw does on a board. Never copied to a board (sotto.flashing.HOST_ONLY).
#
# The host simulator (sotto/sim/micropython.py) starts the interpreter with open file
# descriptors named in sotto_sim.json (working directory):
#
#   uart     the board's end of the serial line: a pty, non-blocking, paced by the host
#   mic      what the microphone hears, in the profile's I2S slots (16 or 32 bits), paced
#            by the host like I2S DMA: a pipe holding at most the I2S buffer
#   speaker  what the speaker played: records of <u16 rate, u8 volume shift, u8 0,
#            u16 bytes> + PCM16, written as the I2S stage plays them out at its rate
#   control  host -> board, 5-byte records: b"B" button level, b"O" mic bytes the host
#            dropped (the I2S buffer overran), b"S" print the app's counters
#
# and stdout carries the board's notices for the host, one a line: READY, MIC <rate>,
# WELCOMED <0|1>, LED <phase>, GPIO <index> <level>, STATS <json>.
#
# Like the rest of the firmware, nothing here allocates per frame: the hardware task
# below runs beside the loop (asyncio) the way DMA and interrupts run beside it on a
# board.

import json
import struct
import sys

from sotto_fw.compat import copy_into, sleep_ms, ticks_add, ticks_diff, ticks_us
from sotto_fw.micformat import check_mic_format, slot_bytes, slots32_to_pcm16
from sotto_fw.ring import RingBuffer
from sotto_fw.serialport import PacedPort, paced_capacity
from sotto_fw.speaker import volume_shift

CONFIG_FILE = "sotto_sim.json"
SPEAKER_RECORD_HEAD = 6
SPEAKER_RECORD_MAX = 1024  # as hw.I2SSpeaker's chunk; under PIPE_BUF, so a record is written whole
_REANCHOR_S = 10


def _notice(text):
    out = sys.stdout
    out.write(text)
    out.write("\n")


class UnixMic:
    """The microphone: slots from the host's pipe, turned into PCM16 like hw.I2SMic does.
    Its buffer is the profile's I2S buffer, which the board's I2S driver allocates on the
    heap too, so the simulated heap holds what the board's would."""

    def __init__(self, stream, cfg):
        self.stream = stream
        self.bits = cfg.get("bits", 16)
        self.shift = cfg.get("shift", 16)
        check_mic_format(self.bits, self.shift)
        self.slot = slot_bytes(self.bits)
        self.stage = bytearray(cfg.get("ibuf", 4096))
        self.lost_bytes = 0  # PCM16 bytes lost before the firmware read them
        self.rate = 0

    def configure(self, rate):
        if rate != self.rate:
            self.rate = rate
            _notice("MIC %d" % rate)

    def readinto(self, dst, off, n):
        count = n >> 1
        room = len(self.stage) // self.slot
        if count > room:
            count = room
        if count <= 0:
            return 0
        got = self.stream.readinto(self.stage, count * self.slot) or 0
        samples = got // self.slot  # the host writes whole slots, atomically
        if self.slot == 4:
            return slots32_to_pcm16(self.stage, 0, samples, dst, off, self.shift)
        return copy_into(dst, off, self.stage, 0, samples * 2)


class UnixSpeaker:
    """The speaker: an I2S stage of the profile's buffer size (on the heap, as the I2S
    driver's), played out at the sample rate by the board's own clock, each played piece
    sent to the host."""

    def __init__(self, stream, cfg):
        self.stream = stream
        self.ring = RingBuffer(cfg.get("ibuf", 8192))
        self.record = bytearray(SPEAKER_RECORD_MAX)
        self.rate = 0
        self.shift = 0
        self.anchor_us = ticks_us()
        self.played = 0  # samples played since anchor_us

    def configure(self, rate):
        self.service()
        self.rate = rate
        self.ring.clear()

    def write(self, buf, off, n):
        self.service()
        return self.ring.write(buf, n & ~1, off)

    def queued(self):
        self.service()
        return self.ring.count

    def stop(self):
        self.service()
        dropped = self.ring.count
        self.ring.clear()
        return dropped

    def set_volume(self, percent):
        self.shift = volume_shift(percent)

    def service(self):
        now = ticks_us()
        ring = self.ring
        rate = self.rate
        if ring.count == 0 or rate <= 0:
            # Idle: the next audio starts playing at once.
            self.anchor_us = now
            self.played = 0
            return
        due = ticks_diff(now, self.anchor_us) * rate // 1000000 - self.played
        if due <= 0:
            return
        self.played += due  # past the stage's end it plays silence
        if self.played >= rate * _REANCHOR_S:  # keep the tick difference far from its wrap
            self.anchor_us = ticks_add(self.anchor_us, _REANCHOR_S * 1000000)
            self.played -= rate * _REANCHOR_S
        take = due * 2
        if take > ring.count:
            take = ring.count
        record = self.record
        while take > 0:
            n = take
            if n > SPEAKER_RECORD_MAX - SPEAKER_RECORD_HEAD:
                n = SPEAKER_RECORD_MAX - SPEAKER_RECORD_HEAD
            struct.pack_into("<HBBH", record, 0, rate, self.shift, 0, n)
            ring.read_into(record, n, SPEAKER_RECORD_HEAD)
            self.stream.write(record, 0, n + SPEAKER_RECORD_HEAD)  # a host not reading: the sound is lost
            take -= n


class Control:
    """Records from the host; also the board's button (its level)."""

    def __init__(self, stream):
        self.stream = stream
        self.rec = bytearray(5)
        self.level = 0

    def value(self):
        return self.level

    def poll(self, mic, app):
        rec = self.rec
        while True:
            got = self.stream.readinto(rec)
            if got == 0:
                # End of file: the simulator is gone (the pipe's only writer), and so is
                # the board's reason to run.
                sys.exit(0)
            if got is None or got < 5:
                return
            kind = rec[0]
            value = rec[1] | (rec[2] << 8) | (rec[3] << 16)
            if kind == 66:  # "B"
                self.level = 1 if value else 0
            elif kind == 79:  # "O"
                mic.lost_bytes += value
            elif kind == 83:  # "S"
                _notice("STATS " + json.dumps(app.stats))


class UnixLed:
    def __init__(self):
        self.phase = ""

    def show(self, phase):
        self.phase = phase
        out = sys.stdout
        out.write("LED ")
        out.write(phase)
        out.write("\n")


class UnixPin:
    def __init__(self, index):
        self.index = index
        self.level = 0

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = 1 if v else 0
        _notice("GPIO %d %d" % (self.index, self.level))
        return self.level


class Hardware:
    """What runs beside the loop on a board without being the firmware's doing: the
    speaker stage plays out, host records arrive, the host hears of state changes."""

    def __init__(self, mic, speaker, control):
        self.mic = mic
        self.speaker = speaker
        self.control = control

    async def run(self, app):
        welcomed = -1
        while True:
            self.speaker.service()
            self.control.poll(self.mic, app)
            now = 1 if app.handshake.active() else 0
            if now != welcomed:
                welcomed = now
                _notice("WELCOMED 1" if now else "WELCOMED 0")
            await sleep_ms(1)


def _config():
    with open(CONFIG_FILE) as f:
        return json.loads(f.read())


def board_profile(profile):
    """The profile with the simulator's settings for this board (baud, buffers, formats,
    names) applied."""
    for key, value in _config().get("profile", {}).items():
        profile[key] = value
    return profile


def button_held_at_boot(profile):
    return False


def build(profile):
    """The simulated peripherals, on the descriptors the simulator passed."""
    cfg = _config()
    fds = cfg["fds"]
    baud = profile["baud"]
    port = PacedPort(open(fds["uart"], "r+b"), baud, paced_capacity(baud, profile["uart_txbuf"]))
    mic = UnixMic(open(fds["mic"], "rb"), profile["mic_i2s"])
    speaker = UnixSpeaker(open(fds["speaker"], "wb"), profile["speaker_i2s"])
    control = Control(open(fds["control"], "rb"))
    hardware = Hardware(mic, speaker, control)
    _notice("READY")
    return {
        "port": port,
        "mic": mic,
        "speaker": speaker,
        "button": control,
        "led": UnixLed(),
        "outputs": tuple(UnixPin(i) for i in range(len(profile["outputs"]))),
        "board_id": cfg.get("board_id", profile["board"]),
        "tasks": (hardware.run,),
    }
