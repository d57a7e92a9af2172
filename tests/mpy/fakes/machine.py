# Fake `machine` module for running sotto_fw.hw under the unix MicroPython port.
# The real module only exists on a board; tests drive these fakes by hand.


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 2
    PULL_DOWN = 3

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        self.mode = mode
        self.pull = pull
        if value is None:
            value = 1 if pull == Pin.PULL_UP else 0  # a pulled-up input idles high
        self.level = value

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = v


class PWM:
    def __init__(self, pin, freq=0, duty_u16=0):
        self.pin = pin
        self.freq = freq
        self.duty = duty_u16

    def duty_u16(self, v=None):
        if v is None:
            return self.duty
        self.duty = v


class UART:
    def __init__(self, id, baudrate=115200, tx=None, rx=None, rxbuf=256, txbuf=256, timeout=0, timeout_char=0):
        self.id = id
        self.baudrate = baudrate
        self.incoming = bytearray()
        self.sent = bytearray()

    def any(self):
        return len(self.incoming)

    def readinto(self, buf):
        n = min(len(buf), len(self.incoming))
        if n == 0:
            return None
        buf[:n] = self.incoming[:n]
        self.incoming = self.incoming[n:]
        return n

    def write(self, buf, off=0, n=-1):
        # Like MicroPython streams: write(buf[, off[, n]]) takes a part without a slice.
        if n < 0:
            n = len(buf) - off
        self.sent.extend(bytes(buf[off : off + n]))
        return n


class I2S:
    RX = 0
    TX = 1
    MONO = 0
    STEREO = 1
    instances = []

    def __init__(self, id, sck=None, ws=None, sd=None, mode=0, bits=16, format=0, rate=16000, ibuf=4096):
        self.id = id
        self.mode = mode
        self.bits = bits
        self.rate = rate
        self.handler = None
        self.pending = None
        self.written = bytearray()
        self.closed = False
        I2S.instances.append(self)

    def irq(self, handler):
        self.handler = handler

    def readinto(self, buf):
        self.pending = buf  # non-blocking: filled later by complete()
        return 0

    def write(self, buf):
        self.pending = buf
        return 0

    def complete(self, fill=0x11, data=None):
        """The DMA finished the pending transfer: fill (RX: with `fill`, or the bytes of
        `data` from the start) or take (TX) it, call the handler."""
        buf = self.pending
        self.pending = None
        if self.mode == I2S.RX:
            for i in range(len(buf)):
                buf[i] = fill
            if data is not None:
                buf[: len(data)] = data
        else:
            self.written.extend(bytes(buf))
        if self.handler is not None:
            self.handler(self)

    def deinit(self):
        self.closed = True

    @staticmethod
    def shift(buf=None, bits=16, shift=0):
        for i in range(0, len(buf), 2):
            v = buf[i] | (buf[i + 1] << 8)
            if v >= 32768:
                v -= 65536
            v = (v << shift) if shift > 0 else (v >> -shift)
            v &= 0xFFFF
            buf[i] = v & 0xFF
            buf[i + 1] = v >> 8


def unique_id():
    return b"\x12\x34\xab\xcd"
