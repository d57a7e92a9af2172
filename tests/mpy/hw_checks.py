# sotto_fw.hw (the real-board peripherals) against the fake `machine` in tests/mpy/fakes.
# MicroPython only: the fake machine module stands in for the board's.

import sys

from mpycheck import check, equal, run, summary

import machine
from sotto_fw import config, hw


def profile():
    return config.get_profile("esp32s3")


def mic_double_buffer():
    mic = hw.I2SMic(profile()["mic_i2s"], 16000)
    i2s = mic.i2s
    buf = bytearray(640)
    equal(mic.readinto(buf), 0, "nothing captured yet: returns 0 at once")
    i2s.complete(0x21)  # first chunk done; the driver re-arms the second
    check(i2s.pending is mic.bufs[1], "second buffer armed from the interrupt")
    equal(mic.readinto(buf), 640, "hands over captured audio")
    equal(buf[0], 0x21, "captured bytes")
    equal(mic.readinto(buf), hw.CHUNK - 640, "rest of the chunk")
    equal(mic.readinto(buf), 0, "then nothing until the next chunk")
    mic.configure(8000)
    equal(mic.i2s.rate, 8000, "mic re-created at the WELCOME rate")


def speaker_stop():
    spk = hw.I2SSpeaker(profile()["speaker_i2s"], 16000)
    data = bytearray(b"\x01\x02" * 700)
    equal(spk.write(data), hw.CHUNK, "takes one chunk")
    equal(spk.write(data), 0, "busy until the chunk played")
    equal(spk.queued(), hw.CHUNK, "queued bytes")
    first = spk.i2s
    equal(spk.stop(), hw.CHUNK, "stop discards the chunk in flight")
    check(first.closed, "stop closes the running I2S at once")
    equal(spk.write(data[:100]), 100, "writes again after stop")
    spk.i2s.complete()
    equal(spk.queued(), 0, "interrupt frees the buffer")
    spk.set_volume(25)
    equal(spk.shift, 2, "volume 25% is two halvings")


def uart_pacing():
    p = profile()
    port = hw.UartPort(p)
    big = bytearray(p["uart_txbuf"] * 2)
    k = port.write(big)
    equal(k, p["uart_txbuf"] // 2, "first write limited to half the driver buffer")
    equal(port.write(big), 0, "no more until the line drains")
    port.uart.incoming.extend(b"abc")
    buf = bytearray(8)
    equal(port.readinto(buf), 3, "reads what arrived")
    equal(port.readinto(buf), 0, "nothing more: 0, not None")


def button_led_and_build():
    parts = hw.build(profile())
    equal(parts["board_id"], "1234abcd", "board id from machine.unique_id")
    parts["led"].show("listening")
    equal(parts["led"].pwm.duty, 65535, "LED full on while listening")
    parts["led"].show("idle")
    equal(parts["led"].pwm.duty, 0, "LED off when idle")
    b = parts["button"]
    b.pin.level = 0
    equal(b.value(), 1, "active-low button pressed")
    equal(len(parts["outputs"]), len(profile()["outputs"]), "outputs from the profile")
    check(isinstance(parts["port"], hw.UartPort), "esp32s3 profile uses the UART")
    check(isinstance(machine.unique_id(), bytes), "fake machine.unique_id")
    check(not hw.button_held_at_boot(profile()), "released button (pulled up): firmware starts")


for fn in (mic_double_buffer, speaker_stop, uart_pacing, button_led_and_build):
    run(fn)
sys.exit(1 if summary() else 0)
