# sotto_fw.hw (the real-board peripherals) against the fake `machine` in tests/mpy/fakes.
# MicroPython only: the fake machine module stands in for the board's.

import sys

from mpycheck import check, equal, hexs, run, summary, unhex

import machine
from sotto_fw import config, hw


def profile():
    return config.get_profile("esp32s3")


def mic16():
    cfg = dict(profile()["mic_i2s"])
    cfg["bits"] = 16
    return cfg


def mic_double_buffer():
    mic = hw.I2SMic(mic16(), 16000)
    i2s = mic.i2s
    equal(i2s.bits, 16, "16-bit mic read as 16-bit samples")
    buf = bytearray(700)
    equal(mic.readinto(buf, 0, 640), 0, "nothing captured yet: returns 0 at once")
    i2s.complete(0x21)  # first chunk done; the driver re-arms the second
    check(i2s.pending is mic.bufs[1], "second buffer armed from the interrupt")
    equal(mic.readinto(buf, 60, 640), 640, "hands over captured audio at the offset")
    equal((buf[59], buf[60], buf[699]), (0, 0x21, 0x21), "captured bytes, where asked")
    equal(mic.readinto(buf, 0, 640), hw.CHUNK - 640, "rest of the chunk")
    equal(mic.readinto(buf, 0, 640), 0, "then nothing until the next chunk")
    mic.configure(8000)
    equal(mic.i2s.rate, 8000, "mic re-created at the WELCOME rate")


def mic_overrun_is_counted():
    mic = hw.I2SMic(mic16(), 16000)
    mic.i2s.complete(0x01)
    mic.i2s.complete(0x02)
    mic.i2s.complete(0x03)  # the first chunk was never read: overwritten
    check(mic.overruns >= 1, "overrun counted")
    equal(mic.lost_bytes, mic.overruns * hw.CHUNK, "lost PCM16 bytes")


def mic_32bit_slots():
    """Recorded INMP441 frames (32-bit I2S slots) become the PCM16 the board streams."""
    import json

    with open(sys.argv[1]) as f:
        vectors = json.loads(f.read())
    for case in vectors["cases"]:
        cfg = dict(profile()["mic_i2s"])
        cfg["bits"] = 32
        cfg["shift"] = case["shift"]
        mic = hw.I2SMic(cfg, 16000)
        equal(mic.i2s.bits, 32, "32-bit mic read as 32-bit slots")
        slots = unhex(case["slots"])
        want = unhex(case["pcm16"])
        got = bytearray()
        pos = 0
        out = bytearray(256)
        while pos < len(slots):
            mic.i2s.complete(0, slots[pos : pos + hw.CHUNK])
            pos += hw.CHUNK
            while True:
                n = mic.readinto(out, 0, 200)
                if n == 0:
                    break
                got.extend(out[:n])
        equal(hexs(got[: len(want)]), case["pcm16"], case["name"])


def speaker_stop():
    spk = hw.I2SSpeaker(profile()["speaker_i2s"], 16000)
    data = bytearray(b"\x01\x02" * 700)
    equal(spk.write(data, 0, len(data)), hw.CHUNK, "takes one chunk")
    equal(spk.write(data, 0, len(data)), 0, "busy until the chunk played")
    equal(spk.queued(), hw.CHUNK, "queued bytes")
    first = spk.i2s
    equal(spk.stop(), hw.CHUNK, "stop discards the chunk in flight")
    check(first.closed, "stop closes the running I2S at once")
    equal(spk.write(data, 1, 100), 100, "writes again after stop, from an offset")
    equal(bytes(spk.i2s.pending), bytes(data[1:101]), "the part asked for")
    spk.i2s.complete()
    equal(spk.queued(), 0, "interrupt frees the buffer")
    spk.set_volume(25)
    equal(spk.shift, 2, "volume 25% is two halvings")


def uart_pacing():
    p = profile()
    port = hw.uart_port(p)
    big = bytearray(p["uart_txbuf"] * 2)
    k = port.write(big, 0, len(big))
    equal(k, 921600 * 10 // 10000, "first write limited to 10 ms of line")
    equal(port.write(big, 0, len(big)), 0, "no more until the line drains")
    port.stream.incoming.extend(b"abcdefghijkl")
    buf = bytearray(8)
    equal(port.readinto(buf), 8, "reads what arrived, a block at a time")
    equal(port.readinto(buf), 4, "then the rest")
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
    check(isinstance(parts["port"], hw.PacedPort), "esp32s3 profile uses the UART, paced")
    check(isinstance(machine.unique_id(), bytes), "fake machine.unique_id")
    check(not hw.button_held_at_boot(profile()), "released button (pulled up): firmware starts")


for fn in (mic_double_buffer, mic_overrun_is_counted, mic_32bit_slots, speaker_stop, uart_pacing,
           button_led_and_build):
    run(fn)
sys.exit(1 if summary() else 0)
