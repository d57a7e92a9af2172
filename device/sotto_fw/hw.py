# Real peripherals for a MicroPython board, built from the active profile. Only the
# board imports this module: the simulated board and the tests inject their own.
#
# Everything here is non-blocking, as BoardApp expects: I2S runs in its interrupt
# mode with buffers handed over whole; the UART is paced to its baud rate so write()
# never waits for the line.

import sys

import machine
from machine import I2S, PWM, Pin

from sotto_fw.compat import micropython, ticks_diff, ticks_ms

CHUNK = 1024  # bytes per I2S transfer


class UartPort:
    """machine.UART, with write() accepting only what the line can take now."""

    def __init__(self, profile):
        self.uart = machine.UART(
            profile["uart_id"], baudrate=profile["baud"], tx=Pin(profile["uart_tx"]), rx=Pin(profile["uart_rx"]),
            rxbuf=profile["uart_rxbuf"], txbuf=profile["uart_txbuf"], timeout=0, timeout_char=0,
        )
        self.bytes_per_ms = profile["baud"] // 10000 + 1
        # Token bucket: half the driver's TX buffer may be queued at once.
        self.capacity = profile["uart_txbuf"] // 2
        self.tokens = self.capacity
        self.last = ticks_ms()

    def any(self):
        return self.uart.any()

    def readinto(self, buf):
        if not self.uart.any():
            return 0
        return self.uart.readinto(buf) or 0

    def write(self, buf):
        now = ticks_ms()
        self.tokens += ticks_diff(now, self.last) * self.bytes_per_ms
        self.last = now
        if self.tokens > self.capacity:
            self.tokens = self.capacity
        n = len(buf)
        if n > self.tokens:
            n = self.tokens
        if n <= 0:
            return 0
        k = self.uart.write(buf[:n] if n < len(buf) else buf) or 0
        self.tokens -= k
        return k


class UsbCdcPort:
    """USB-CDC through sys.stdin/stdout. Ctrl-C is disabled: audio bytes may be 0x03."""

    def __init__(self, profile):
        import select

        micropython.kbd_intr(-1)
        self.stdin = sys.stdin.buffer
        self.stdout = sys.stdout.buffer
        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)

    def any(self):
        return 1 if self.poll.poll(0) else 0

    def readinto(self, buf):
        n = 0
        limit = len(buf)
        # One byte per read: stdin.read(n) would wait for all n bytes.
        while n < limit and self.poll.poll(0):
            b = self.stdin.read(1)
            if not b:
                break
            buf[n] = b[0]
            n += 1
        return n

    def write(self, buf):
        return self.stdout.write(buf) or 0


class I2SMic:
    """I2S microphone, double-buffered in interrupt mode: readinto() hands over what has
    been captured and never waits."""

    def __init__(self, cfg, rate):
        self.cfg = cfg
        self.bufs = (bytearray(CHUNK), bytearray(CHUNK))
        self.views = (memoryview(self.bufs[0]), memoryview(self.bufs[1]))
        self.filled = bytearray(2)
        self.filling = 0
        self.out_off = 0
        self.overruns = 0
        self._irq_cb = self._irq  # bound once: no allocation in the interrupt path
        self.i2s = None
        self.configure(rate)

    def configure(self, rate):
        if self.i2s is not None:
            self.i2s.deinit()
        c = self.cfg
        self.i2s = I2S(
            c["id"], sck=Pin(c["sck"]), ws=Pin(c["ws"]), sd=Pin(c["sd"]), mode=I2S.RX, bits=16,
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
        self.filled[done] = 1
        self.filling = done ^ 1
        i2s.readinto(self.bufs[self.filling])

    def readinto(self, dst):
        idx = self.filling ^ 1
        if not self.filled[idx]:
            return 0
        n = CHUNK - self.out_off
        if n > len(dst):
            n = len(dst)
        dst[:n] = self.views[idx][self.out_off : self.out_off + n]
        self.out_off += n
        if self.out_off >= CHUNK:
            self.out_off = 0
            self.filled[idx] = 0
        return n


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

    def write(self, src):
        if self.busy:
            return 0
        n = len(src)
        if n > CHUNK:
            n = CHUNK
        self.mv[:n] = src[:n] if n < len(src) else src
        if self.shift:
            I2S.shift(buf=self.mv[:n], bits=16, shift=-self.shift)
        self.busy = n
        i2s = self.i2s
        if i2s is not None:
            i2s.write(self.mv[:n])
        return n

    def queued(self):
        return self.busy

    def stop(self):
        dropped = self.busy
        self.configure(self.rate)
        return dropped

    def set_volume(self, percent):
        # Volume in halvings (6 dB steps): I2S.shift works in place, allocation-free.
        shift = 0
        level = 100
        while level > percent and shift < 15:
            level //= 2
            shift += 1
        self.shift = shift


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


def button_held_at_boot(profile):
    """True if the user holds the button at boot: the firmware then stays out of the way so
    mpremote can reach the REPL (on USB-CDC the running firmware disables Ctrl-C)."""
    return ActiveLowButton(profile["button_pin"], profile["button_active_low"]).value() == 1


def board_id():
    uid = machine.unique_id()
    return "".join("%02x" % b for b in uid)


def build(profile):
    port = UsbCdcPort(profile) if profile["transport"] == "usb-cdc" else UartPort(profile)
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
