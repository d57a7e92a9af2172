# Real peripherals for a MicroPython board, built from the active profile. Only the
# board imports this module: the simulated board and the tests inject their own.
#
# Everything here is non-blocking, as BoardApp expects: I2S runs in its interrupt
# mode with buffers handed over whole; the UART is paced to its baud rate so write()
# never waits for the line (sotto_fw.serialport). On MicroPython's unix port,
# sotto_fw.hw_unix stands in for this module.

import sys

import machine
from machine import I2S, PWM, Pin

from sotto_fw.compat import copy_into, micropython
from sotto_fw.micformat import check_mic_format, slot_bytes, slots32_to_pcm16
from sotto_fw.serialport import PacedPort, StreamPort, paced_capacity
from sotto_fw.speaker import volume_shift

CHUNK = 1024  # bytes per I2S transfer


def uart_port(profile):
    """machine.UART (timeout 0: a read returns what has arrived), paced to its baud."""
    uart = machine.UART(
        profile["uart_id"], baudrate=profile["baud"], tx=Pin(profile["uart_tx"]), rx=Pin(profile["uart_rx"]),
        rxbuf=profile["uart_rxbuf"], txbuf=profile["uart_txbuf"], timeout=0, timeout_char=0,
    )
    return PacedPort(uart, profile["baud"], paced_capacity(profile["baud"], profile["uart_txbuf"]))


class _CdcStream:
    """usb.device.cdc.CDCInterface as a stream with write(buf, off, n)."""

    def __init__(self, cdc):
        self.cdc = cdc
        self.buf = None
        self.mv = memoryview(b"")

    def readinto(self, buf):
        return self.cdc.readinto(buf)

    def write(self, buf, off, n):
        if self.buf is not buf:
            self.buf = buf
            self.mv = memoryview(buf)
        # CDCInterface.write takes one buffer: this view slice is an allocation per write.
        return self.cdc.write(self.mv[off : off + n])


class StdinBytePort:
    """USB-CDC through sys.stdin/stdout, one byte per read: sys.stdin cannot say how many
    bytes are waiting, and a read of more than one may wait (micropython#8772). Only when
    usb-device-cdc is not installed. Ctrl-C is disabled: audio bytes may be 0x03."""

    def __init__(self, profile):
        import select

        micropython.kbd_intr(-1)
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)

    def readinto(self, buf):
        n = 0
        limit = len(buf)
        while n < limit and self.poll.poll(0):
            b = self.stdin.read(1)
            if not b:
                break
            buf[n] = b[0]
            n += 1
        return n

    def write(self, buf, off, n):
        return self.stdout.write(buf, off, n) or 0  # pyright: ignore[reportCallIssue]


def usb_cdc_port(profile):
    """The link over USB: a second CDC interface (micropython-lib's usb-device-cdc,
    MicroPython 1.23+), read in blocks of whatever has arrived; the REPL keeps the first
    one. Without that package: sys.stdin, a byte at a time."""
    try:
        import usb.device  # pyright: ignore[reportMissingImports]
        from usb.device.cdc import CDCInterface  # pyright: ignore[reportMissingImports]
    except ImportError:
        return StdinBytePort(profile)
    cdc = CDCInterface(timeout=0, rxbuf=profile["uart_rxbuf"], txbuf=profile["uart_txbuf"])
    usb.device.get().init(cdc, builtin_driver=True)
    return StreamPort(_CdcStream(cdc))


class I2SMic:
    """I2S microphone, double-buffered in interrupt mode: readinto() hands over what has
    been captured and never waits. 32-bit slots (INMP441, SPH0645) become PCM16 here,
    shifted as the profile says (sotto_fw.micformat)."""

    def __init__(self, cfg, rate):
        self.cfg = cfg
        self.bits = cfg.get("bits", 16)
        self.shift = cfg.get("shift", 16)
        check_mic_format(self.bits, self.shift)
        self.slot = slot_bytes(self.bits)
        self.bufs = (bytearray(CHUNK), bytearray(CHUNK))
        self.filled = bytearray(2)
        self.filling = 0
        self.out_off = 0
        self.overruns = 0
        self.lost_bytes = 0  # PCM16 bytes lost to overruns
        self._irq_cb = self._irq  # bound once: no allocation in the interrupt path
        self.i2s = None
        self.configure(rate)

    def configure(self, rate):
        if self.i2s is not None:
            self.i2s.deinit()
        c = self.cfg
        self.i2s = I2S(
            c["id"], sck=Pin(c["sck"]), ws=Pin(c["ws"]), sd=Pin(c["sd"]), mode=I2S.RX, bits=self.bits,
            format=I2S.MONO, rate=rate, ibuf=c["ibuf"],
        )
        self.filled[0] = 0
        self.filled[1] = 0
        self.filling = 0
        self.out_off = 0
        self.i2s.irq(self._irq_cb)
        self.i2s.readinto(self.bufs[0])

    def _irq(self, i2s):
        done = self.filling
        if self.filled[done]:
            self.overruns += 1
            self.lost_bytes += (CHUNK // self.slot) * 2
        self.filled[done] = 1
        self.filling = done ^ 1
        i2s.readinto(self.bufs[self.filling])

    def readinto(self, dst, off, n):
        idx = self.filling ^ 1
        if not self.filled[idx]:
            return 0
        src = self.bufs[idx]
        if self.slot == 4:
            count = (CHUNK - self.out_off) >> 2
            if count > n >> 1:
                count = n >> 1
            got = slots32_to_pcm16(src, self.out_off, count, dst, off, self.shift)
            self.out_off += count * 4
        else:
            got = CHUNK - self.out_off
            if got > n:
                got = n & ~1
            copy_into(dst, off, src, self.out_off, got)
            self.out_off += got
        if self.out_off >= CHUNK:
            self.out_off = 0
            self.filled[idx] = 0
        return got


class I2SSpeaker:
    """I2S speaker in interrupt mode: write() takes one chunk while the previous one
    plays; stop() re-creates the peripheral, which empties its DMA buffers at once."""

    def __init__(self, cfg, rate):
        self.cfg = cfg
        self.buf = bytearray(CHUNK)
        self.mv = memoryview(self.buf)
        self.busy = 0
        self.shift = 0
        self.rate = rate
        self._irq_cb = self._irq
        self.i2s = None
        self.configure(rate)

    def configure(self, rate):
        if self.i2s is not None:
            self.i2s.deinit()
        c = self.cfg
        self.rate = rate
        self.i2s = I2S(
            c["id"], sck=Pin(c["sck"]), ws=Pin(c["ws"]), sd=Pin(c["sd"]), mode=I2S.TX, bits=16,
            format=I2S.MONO, rate=rate, ibuf=c["ibuf"],
        )
        self.i2s.irq(self._irq_cb)
        self.busy = 0

    def _irq(self, i2s):
        self.busy = 0

    def write(self, src, off, n):
        if self.busy:
            return 0
        if n > CHUNK:
            n = CHUNK
        copy_into(self.buf, 0, src, off, n)
        # A whole chunk (the steady state) uses the view made once; a stream's last,
        # shorter piece costs one view.
        view = self.mv if n == CHUNK else self.mv[:n]
        if self.shift:
            I2S.shift(buf=view, bits=16, shift=-self.shift)
        self.busy = n
        i2s = self.i2s
        if i2s is not None:
            i2s.write(view)
        return n

    def queued(self):
        return self.busy

    def stop(self):
        dropped = self.busy
        self.configure(self.rate)
        return dropped

    def set_volume(self, percent):
        self.shift = volume_shift(percent)  # I2S.shift works in place, allocation-free


class ActiveLowButton:
    def __init__(self, pin, active_low):
        self.pin = Pin(pin, Pin.IN, Pin.PULL_UP if active_low else Pin.PULL_DOWN)
        self.active_low = active_low

    def value(self):
        v = self.pin.value()
        return 1 - v if self.active_low else v


_LED_DUTY = {"idle": 0, "listening": 65535, "thinking": 8000, "speaking": 30000, "error": 1500}


class PwmLed:
    """One LED, the phase shown as brightness."""

    def __init__(self, pin, active_low):
        self.pwm = PWM(Pin(pin), freq=1000, duty_u16=65535 if active_low else 0)
        self.active_low = active_low

    def show(self, phase):
        duty = _LED_DUTY.get(phase, 0)
        self.pwm.duty_u16(65535 - duty if self.active_low else duty)


def board_profile(profile):
    """The profile as this board runs it: as flashed."""
    return profile


def button_held_at_boot(profile):
    """True if the user holds the button at boot: the firmware then stays out of the way so
    mpremote can reach the REPL (on USB-CDC the running firmware disables Ctrl-C)."""
    return ActiveLowButton(profile["button_pin"], profile["button_active_low"]).value() == 1


def board_id():
    uid = machine.unique_id()
    return "".join("%02x" % b for b in uid)


def build(profile):
    port = usb_cdc_port(profile) if profile["transport"] == "usb-cdc" else uart_port(profile)
    outputs = tuple(Pin(p, Pin.OUT, value=0) for p in profile["outputs"])
    return {
        "port": port,
        "mic": I2SMic(profile["mic_i2s"], profile["mic_rates"][0]),
        "speaker": I2SSpeaker(profile["speaker_i2s"], profile["speaker_rates"][0]),
        "button": ActiveLowButton(profile["button_pin"], profile["button_active_low"]),
        "led": PwmLed(profile["led_pin"], profile["led_active_low"]),
        "outputs": outputs,
        "board_id": board_id(),
    }
