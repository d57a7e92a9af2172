# Firmware logic under real MicroPython (and CPython): codec vectors, ring buffer,
# credits, STOP flush, HELLO/WELCOME state machine, PING, COMMAND, button, bench,
# and allocations in the audio loop.
# Usage: micropython device_checks.py PATH/TO/audio_vectors.json

import json
import struct
import sys

from board_fakes import FakeClock, FakeSpeaker
from board_harness import BoardHarness, pcm_ramp
from mpycheck import check, equal, hexs, run, summary, unhex

from sotto_fw import audiocodec, compat, loopsrc, wire
from sotto_fw.credits import CreditGranter
from sotto_fw.ring import RingBuffer

AUDIO = json.load(open(sys.argv[1]))


def codec_vectors():
    for case in AUDIO["cases"]:
        fmt = case["format"]
        enc = audiocodec.AudioEncoder(fmt)
        dec = audiocodec.AudioDecoder(fmt)
        name = "%s %s %d" % (wire.FORMAT_NAMES[fmt], case["signal"], case["samples"])
        for frame in case["frames"]:
            pcm = bytearray(unhex(frame["pcm"]))
            buf = bytearray(audiocodec.encoded_size(fmt, len(pcm) // 2))
            k = enc.encode_into(pcm, len(pcm), buf, 0)
            equal(hexs(buf[:k]), frame["encoded"], "encode " + name)
            out = bytearray(audiocodec.decoded_bytes(fmt, k))
            m = dec.decode_into(buf, 0, k, out)
            equal(hexs(out[:m]), frame["decoded"], "decode " + name)


_CODEC_LOOPS = (
    ("_mulaw_encode", loopsrc.MULAW_ENCODE),
    ("_mulaw_decode", loopsrc.MULAW_DECODE),
    ("_adpcm_encode", loopsrc.ADPCM_ENCODE),
    ("_adpcm_decode", loopsrc.ADPCM_DECODE),
)


def native_codec_loops_match_bytecode():
    """On MicroPython the codec loops are native code (the unix port has an x64 emitter):
    each must give the same bytes and state as the same source compiled to bytecode."""
    for name, _ in _CODEC_LOOPS:
        if compat.MICROPYTHON:
            check(name in compat.ACCELERATED, name + " compiled as native code", compat.ACCELERATED)
        else:
            check(name not in compat.ACCELERATED, name + " is bytecode on CPython")
    fast = dict((name, getattr(audiocodec, name)) for name, _ in _CODEC_LOOPS)
    plain = dict((name, compat.compile_function(source, name)) for name, source in _CODEC_LOOPS)
    if compat.MICROPYTHON:
        for name, _ in _CODEC_LOOPS:
            check(fast[name] is not plain[name], name + " fast and plain are two functions")
    steps, deltas = audiocodec._STEPS, audiocodec._INDEX_DELTA
    x = 987654321
    for case in range(60):
        samples = 1 + (case * 29) % 400  # odd and even counts: ADPCM pads odd ones
        amplitude = (1, 300, 8000, 32768)[case % 4]
        pcm = bytearray(2 * samples)
        for i in range(samples):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            v = ((x >> 8) % (2 * amplitude)) - amplitude
            if case % 5 == 0 and i % 7 == 0:
                v = (-32768, 32767, 0)[i % 3]  # the extremes and silence
            v &= 0xFFFF
            pcm[2 * i] = v & 0xFF
            pcm[2 * i + 1] = v >> 8
        n = len(pcm)
        pred = (x % 65536) - 32768 if case % 3 else 0
        index = case % 89
        outs = []
        for fns in (fast, plain):
            mu = bytearray(samples + 3)
            k = fns["_mulaw_encode"](pcm, n, mu, 3, audiocodec._EXP_LUT)
            mu_pcm = bytearray(2 * k)
            m = fns["_mulaw_decode"](mu, 3, k, mu_pcm, 0, audiocodec._MULAW_DECODE)
            adpcm = bytearray(2 + (samples + 1) // 2)
            enc_state = fns["_adpcm_encode"](pcm, n, adpcm, 2, pred, index, steps, deltas)
            ad_pcm = bytearray(4 * (len(adpcm) - 2))
            dec_state = fns["_adpcm_decode"](adpcm, 2, len(adpcm) - 2, ad_pcm, 0, pred, index, steps, deltas)
            outs.append((k, bytes(mu), m, bytes(mu_pcm), enc_state, bytes(adpcm), dec_state, bytes(ad_pcm)))
        if not equal(outs[0], outs[1], "native codec loops match bytecode case %d" % case):
            break


def decode_across_the_ring_end():
    """Speaker audio decoded straight into the ring gives the same PCM as a plain decode,
    wherever the ring's end falls (an ADPCM byte's two samples may straddle it), and
    stops at the ring's room."""
    from sotto_fw.speaker import SpeakerPlayer

    pcm = pcm_ramp(400)
    for fmt in (wire.FMT_PCM16, wire.FMT_MULAW, wire.FMT_ADPCM):
        enc = audiocodec.AudioEncoder(fmt)
        wire_audio = bytearray(500)
        n = enc.encode_into(pcm, len(pcm), wire_audio, 0)
        plain = bytearray(audiocodec.decoded_bytes(fmt, n))
        audiocodec.AudioDecoder(fmt).decode_into(wire_audio, 0, n, plain)
        for start in (0, 2, 4, 6, 100, 398, 400, 402, 510):
            player = SpeakerPlayer(FakeSpeaker(room=0), 512, lambda *a: None)
            player.ring.head = start
            k = player.push_encoded(1, audiocodec.AudioDecoder(fmt), wire_audio, 0, n, len(plain))
            out = bytearray(len(plain))
            player.ring.read_into(out, k)
            name = "%s from %d" % (wire.FORMAT_NAMES[fmt], start)
            equal(k, len(plain), "all of it queued, " + name)
            equal(hexs(out), hexs(plain), "same PCM as a plain decode, " + name)
        small = SpeakerPlayer(FakeSpeaker(room=0), 256, lambda *a: None)
        small.ring.head = 250
        k = small.push_encoded(1, audiocodec.AudioDecoder(fmt), wire_audio, 0, n, len(plain))
        check(k <= 256 and small.ring.count == k, "no more than the ring's room (%s)" % wire.FORMAT_NAMES[fmt])
        equal(small.overflow, len(plain) - k, "the rest counted as overflow (%s)" % wire.FORMAT_NAMES[fmt])
        out = bytearray(k)
        small.ring.read_into(out, k)
        equal(hexs(out), hexs(plain[:k]), "what fits is the start of it (%s)" % wire.FORMAT_NAMES[fmt])
    bad = bytearray(b"\x00\x00\x7f\x00\x12\x34")  # step index 127: not IMA-ADPCM
    player = SpeakerPlayer(FakeSpeaker(room=0), 512, lambda *a: None)
    equal(player.push_encoded(1, audiocodec.AudioDecoder(wire.FMT_ADPCM), bad, 0, 6, 8), -1, "bad ADPCM refused")
    equal(player.ring.count, 0, "nothing queued from it")


def failed_acceleration_falls_back():
    """A decorator the port rejects (as a port without a native emitter rejects native)
    gives None, and native_or_bytecode still returns a working function."""
    source = "def _twice(v):\n    return 2 * v\n"
    equal(compat.compile_accelerated(source, "_twice", "no_such_emitter"), None, "rejected emitter gives None")
    check("_twice" not in compat.ACCELERATED, "a rejected function is not listed as accelerated")
    equal(compat.native_or_bytecode(source, "_twice")(21), 42, "native_or_bytecode works")
    equal(compat.compile_function(source, "_twice")(4), 8, "bytecode compile works")
    try:
        compat.compile_function("def _broken(:\n", "_broken")
        check(False, "a syntax error in bytecode source raises")
    except SyntaxError:
        pass


def ring_buffer():
    r = RingBuffer(10)
    equal(r.write(b"abcdefg"), 7, "ring write")
    out = bytearray(5)
    equal(r.read_into(out), 5, "ring read")
    equal(bytes(out), b"abcde", "ring read bytes")
    equal(r.write(b"hijklmnopq"), 8, "ring write wraps, only what fits")
    equal(r.free(), 0, "ring full")
    equal(r.write(b"x"), 0, "ring full takes nothing")
    check(not r.write_all(b"x"), "write_all refuses when full")
    big = bytearray(20)
    equal(r.read_into(big), 10, "ring read across the wrap")
    equal(bytes(big[:10]), b"fghijklmno", "ring wrap order")
    equal(r.used(), 0, "ring empty")
    r.write(b"12345")
    equal(r.skip(3), 3, "ring skip")
    equal(r.read_into(out, 5), 2, "ring read after skip")
    equal(bytes(out[:2]), b"45", "ring skip keeps order")
    r.write(b"abc", 2)
    equal(r.used(), 2, "ring write n")
    r.clear()
    equal((r.used(), r.free()), (0, 10), "ring clear")


def credits():
    ticks_diff = lambda a, b: a - b  # noqa: E731
    c = CreditGranter(4000)
    check(c.due(4000, 0, ticks_diff), "credit due at start")
    c.granted_now(4000, 0)
    check(not c.due(4000, 10, ticks_diff), "no credit when nothing changed")
    c.took(1, 5, 20)
    check(not c.due(1000, 30, ticks_diff), "no credit while the ring fills")
    check(not c.due(1900, 40, ticks_diff), "no credit before a quarter frees")
    check(c.due(2000, 50, ticks_diff), "credit after a quarter of the buffer freed")
    c.granted_now(2000, 50)
    check(not c.due(2100, 60, ticks_diff), "no credit right after one")
    check(c.due(2100, 150, ticks_diff), "credit every 100 ms while audio flows")
    c.granted_now(2100, 150)
    check(c.due(4000, 1000, ticks_diff), "credit when the buffer drained")
    c.granted_now(4000, 1000)
    check(not c.due(4000, 1900, ticks_diff), "idle and empty: no credit within a second")
    check(c.due(4000, 2000, ticks_diff), "idle: a refresh every second (repairs frames lost on the line)")
    c.granted_now(4000, 2000)
    c.force()
    check(c.due(4000, 2001, ticks_diff), "forced credit")


def handshake():
    h = BoardHarness()
    h.run(1)
    hellos = h.take(wire.HELLO)
    equal(len(hellos), 1, "HELLO at boot")
    hello = wire.unpack_hello(hellos[0][2])
    equal(hello[2], "test-board", "HELLO board id")
    equal(hello[8], h.app.profile["speaker_buffer"], "HELLO speaker buffer")
    boot_id = hello[3]
    h.run(500, 1)
    equal(len(h.take(wire.HELLO)), 0, "no HELLO again within a second")
    h.run(600, 1)
    equal(len(h.take(wire.HELLO)), 1, "HELLO again after a second without WELCOME")
    equal(len(h.take_all()), 0, "no audio before WELCOME")
    # A WELCOME asking for what the board lacks: ERROR, and HELLO goes on.
    h.send(wire.WELCOME, wire.pack_welcome(1, wire.FMT_PCM16, 44100, wire.FMT_PCM16, 16000, 20, 5))
    h.run(1)
    errors = h.take(wire.ERROR)
    equal(len(errors), 1, "bad WELCOME -> ERROR")
    equal(wire.unpack_error(errors[0][2])[0], wire.ERR_BAD_WELCOME, "bad WELCOME error code")
    check(not h.app.handshake.active(), "bad WELCOME not applied")
    h.send(wire.WELCOME, wire.pack_welcome(1, wire.FMT_PCM16, 16000, wire.FMT_PCM16, 16000, 40, 5))
    h.run(1)
    equal(len(h.take(wire.ERROR)), 1, "PCM16 40 ms mic frames do not fit a frame -> ERROR")
    h.send(wire.WELCOME, b"\x01\x02")
    h.run(1)
    equal(wire.unpack_error(h.take(wire.ERROR)[0][2])[0], wire.ERR_BAD_PAYLOAD, "short WELCOME -> ERROR bad payload")
    h.welcome(mic_fmt=wire.FMT_MULAW, spk_fmt=wire.FMT_ADPCM, spk_rate=22050)
    h.run(100, 1)
    check(h.app.handshake.active(), "WELCOME applied")
    equal(h.speaker.rate, 22050, "speaker configured to the WELCOME rate")
    equal(h.mic.rate, 16000, "mic configured to the WELCOME rate")
    frames = h.take_all()
    credits = [f for f in frames if f[0] == wire.CREDIT]
    check(len(credits) >= 1, "CREDIT after WELCOME")
    equal(wire.unpack_credit(credits[0][2])[2], h.app.profile["speaker_buffer"], "first CREDIT grants the whole buffer")
    ups = [f for f in frames if f[0] == wire.AUDIO_UP]
    check(len(ups) >= 5, "AUDIO_UP flows after WELCOME", len(ups))
    equal(len(ups[0][2]), 4 + 320, "AUDIO_UP: 20 ms of mu-law at 16 kHz")
    t0 = struct.unpack("<I", ups[0][2][:4])[0]
    t1 = struct.unpack("<I", ups[1][2][:4])[0]
    check(t1 > t0, "AUDIO_UP board_ms increases")
    equal(len([f for f in frames if f[0] == wire.HELLO]), 0, "no HELLO while welcomed")
    # Host silence: HELLO again after silence_timeout_s, same boot id.
    h.run(5100, 1)
    hellos = h.take(wire.HELLO)
    check(len(hellos) >= 1, "HELLO again after host silence")
    equal(wire.unpack_hello(hellos[0][2])[3], boot_id, "same boot id after host silence")
    check(not h.app.handshake.active(), "silent host: back to waiting")
    # reset(): a fresh boot.
    h.welcome()
    h.run(10)
    h.take_all()
    h.app.reset()
    h.run(1)
    hellos = h.take(wire.HELLO)
    equal(len(hellos), 1, "HELLO after reset")
    # A WELCOME meant for the previous boot, already on the line when the board reset.
    h.app.reset()
    h.send(wire.WELCOME, wire.pack_welcome(77, wire.FMT_PCM16, 16000, wire.FMT_PCM16, 16000, 20, 5))
    h.run(1)
    check(not h.app.handshake.active(), "a WELCOME before this boot's HELLO is ignored")
    hellos += h.take(wire.HELLO)
    equal(len(hellos), 2, "the reset board says HELLO")
    check(wire.unpack_hello(hellos[0][2])[3] != boot_id, "new boot id after reset")
    equal(hellos[0][1], 0, "sequence numbers restart after reset")


def ping_and_commands():
    h = BoardHarness()
    h.welcome()
    h.run(2)
    h.take_all()
    h.send(wire.PING, wire.pack_ping(99, 123456))
    h.run(1)
    pongs = h.take(wire.PONG)
    equal(len(pongs), 1, "PING -> PONG")
    nonce, echo, board_ms = wire.unpack_pong(pongs[0][2])
    equal((nonce, echo), (99, 123456), "PONG echoes nonce and host ms")
    h.send(wire.COMMAND, wire.pack_command(5, wire.CMD_VOLUME, 0, 40))
    h.send(wire.COMMAND, wire.pack_command(6, wire.CMD_GPIO, 1, 1))
    h.send(wire.COMMAND, wire.pack_command(7, wire.CMD_GPIO, 9, 1))
    h.run(2)
    equal(h.speaker.volume, 40, "CMD_VOLUME applied")
    equal(h.outputs[1].level, 1, "CMD_GPIO applied")
    done = [wire.unpack_event(f[2]) for f in h.take_all() if f[0] in (wire.EVENT, wire.ERROR)]
    equal([(e[0], e[1]) for e in done if e[0] == wire.EV_COMMAND_DONE], [(wire.EV_COMMAND_DONE, 5), (wire.EV_COMMAND_DONE, 6)],
          "EV_COMMAND_DONE per applied command")


def button():
    h = BoardHarness()
    h.welcome()
    h.run(2)
    h.take_all()
    h.button.level = 1
    h.run(5, 1)
    h.button.level = 0  # a bounce shorter than the debounce time
    h.run(5, 1)
    h.button.level = 1
    h.run(50, 1)
    h.button.level = 0
    h.run(50, 1)
    kinds = [wire.unpack_event(f[2])[0] for f in h.take(wire.EVENT)]
    equal(kinds, [wire.EV_BUTTON_DOWN, wire.EV_BUTTON_UP], "one debounced press and release")
    check("listening" in h.led.phases, "LED showed listening")
    check("thinking" in h.led.phases, "LED showed thinking after release")


def send_audio(h, stream_id, pcm, fmt=wire.FMT_PCM16, chunk=512):
    enc = audiocodec.AudioEncoder(fmt)
    i = 0
    last = -1
    while i < len(pcm):
        part = bytearray(pcm[i : i + chunk])
        buf = bytearray(audiocodec.encoded_size(fmt, len(part) // 2))
        k = enc.encode_into(part, len(part), buf, 0)
        last = h.send(wire.AUDIO_DOWN, wire.pack_audio_down(stream_id, buf[:k]))
        i += chunk
    return last


def playback_and_stop():
    h = BoardHarness(speaker_room=64, speaker_queue=40)
    h.welcome()
    h.run(2)
    h.take_all()
    pcm = pcm_ramp(4096)
    last_seq = send_audio(h, 3, pcm)
    h.run(10, 1)
    frames = h.take()
    plays = [wire.unpack_playback(f[2]) for f in frames if f[0] == wire.PLAYBACK]
    equal([p[:2] for p in plays], [(wire.PLAY_STARTED, 3)], "PLAYBACK started")
    equal(bytes(h.speaker.played), bytes(pcm[: len(h.speaker.played)]), "speaker got the audio in order")
    before = len(h.speaker.played)
    h.send(wire.STOP, wire.pack_stop(3))
    h.run(1)
    frames = h.take()
    plays = [wire.unpack_playback(f[2]) for f in frames if f[0] == wire.PLAYBACK]
    equal(len(plays), 1, "one PLAYBACK after STOP")
    state, sid, played, _ms = plays[0]
    equal((state, sid), (wire.PLAY_STOPPED, 3), "PLAYBACK stopped for the stream")
    # played = what reached the speaker (one more pass ran before the STOP) minus its discarded queue.
    equal(played, len(h.speaker.played) - 40, "bytes played excludes the discarded output queue")
    check(len(h.speaker.played) <= before + 64, "at most one more write before STOP")
    equal(h.speaker.stops, 1, "speaker.stop() called")
    credits = [wire.unpack_credit(f[2]) for f in frames if f[0] == wire.CREDIT]
    check(len(credits) >= 1, "CREDIT after STOP")
    equal(credits[-1][2], h.app.profile["speaker_buffer"], "CREDIT after STOP: whole buffer free")
    equal(credits[-1][1], last_seq, "CREDIT names the last AUDIO_DOWN seq taken in")
    # Late audio of the stopped stream is dropped; a new stream plays.
    n = len(h.speaker.played)
    send_audio(h, 3, pcm_ramp(512))
    h.run(5)
    equal(len(h.speaker.played), n, "audio of a stopped stream is dropped")
    send_audio(h, 4, pcm_ramp(256))
    h.send(wire.AUDIO_DOWN, wire.pack_audio_down(4, b""))
    h.run(20)
    plays = [wire.unpack_playback(f[2])[:3] for f in h.take(wire.PLAYBACK)]
    equal(plays, [(wire.PLAY_STARTED, 4, 0), (wire.PLAY_DRAINED, 4, 256)], "new stream started and drained")
    equal(len(h.speaker.played), n + 256, "new stream fully played")


def stop_of_an_unknown_stream():
    h = BoardHarness()
    h.welcome()
    h.run(2)
    h.take_all()
    h.send(wire.STOP, wire.pack_stop(42))
    h.run(1)
    plays = [wire.unpack_playback(f[2])[:3] for f in h.take(wire.PLAYBACK)]
    equal(plays, [(wire.PLAY_STOPPED, 42, 0)], "STOP of a stream never heard: stopped, 0 bytes")


def credits_bound_what_the_ring_holds():
    h = BoardHarness(speaker_room=0, speaker_buffer=4096)
    h.welcome()
    h.run(2)
    grant = wire.unpack_credit(h.take(wire.CREDIT)[-1][2])[2]
    equal(grant, 4096, "initial grant")
    send_audio(h, 1, pcm_ramp(grant))
    h.run(20)
    equal(h.app.player.free(), 0, "granted bytes fill the ring exactly")
    equal(h.app.player.overflow, 0, "no overflow within the grant")
    send_audio(h, 1, pcm_ramp(100))
    h.run(5)
    equal(h.app.player.overflow, 100, "audio beyond the grant is counted as overflow")
    h.speaker.room = 1 << 20
    h.run(200, 1)
    credits = [wire.unpack_credit(f[2]) for f in h.take(wire.CREDIT)]
    check(credits and credits[-1][2] == 4096, "credit returns once the ring drains", credits)


def mulaw_and_adpcm_downlink():
    for fmt in (wire.FMT_MULAW, wire.FMT_ADPCM):
        h = BoardHarness(speaker_room=1 << 20)
        h.welcome(spk_fmt=fmt)
        h.run(2)
        h.take_all()
        pcm = pcm_ramp(1024)
        send_audio(h, 9, pcm, fmt)
        h.send(wire.AUDIO_DOWN, wire.pack_audio_down(9, b""))
        h.run(5)
        equal(len(h.speaker.played), 1024, "decoded downlink length " + wire.FORMAT_NAMES[fmt])
        plays = [wire.unpack_playback(f[2])[:3] for f in h.take(wire.PLAYBACK)]
        equal(plays[-1], (wire.PLAY_DRAINED, 9, 1024), "drained " + wire.FORMAT_NAMES[fmt])


def bench():
    h = BoardHarness()
    h.welcome()
    h.run(2)
    h.take_all()
    h.send(wire.COMMAND, wire.pack_command(11, wire.CMD_BENCH, 8, 1))
    h.run(1)
    for i in range(3):
        buf = bytearray(64)
        wire.bench_fill(buf, i, 64)
        h.send(wire.BENCH, buf)
    bad = bytearray(64)
    wire.bench_fill(bad, 7, 64)
    bad[10] ^= 1
    h.send(wire.BENCH, bad)
    h.run(1100, 1)
    frames = h.take_all()
    bench_frames = [f for f in frames if f[0] == wire.BENCH]
    check(len(bench_frames) > 10, "board sends BENCH frames", len(bench_frames))
    check(all(len(f[2]) == 64 and wire.bench_check(f[2]) for f in bench_frames), "BENCH frames check out")
    logs = [wire.unpack_log(f[2])[1] for f in frames if f[0] == wire.LOG]
    check(any(t.startswith("bench rx=3 bad=1 crc=0 lost=0 tx=%d" % len(bench_frames)) for t in logs), "bench LOG line", logs)
    done = [wire.unpack_event(f[2])[:2] for f in frames if f[0] == wire.EVENT]
    equal(done, [(wire.EV_COMMAND_DONE, 11)], "bench ends with EV_COMMAND_DONE")


def garbage_on_the_line():
    h = BoardHarness()
    h.port.to_board.extend(b"\x00\xff\xfe garbage \x00\x01\x02\x03\x04\x05\x06\x07\x08\x00")
    h.welcome()
    h.run(3)
    check(h.app.handshake.active(), "WELCOME after garbage is applied")
    check(h.app.stats["bad_frames"] + h.app.stats["crc_errors"] >= 1, "garbage counted")
    h.send(wire.AUDIO_UP, wire.pack_audio_up(0, b"xx"))
    h.send(wire.CREDIT, b"\x01")
    h.run(2)
    equal(h.app.stats["errors"], 0, "no loop errors")


def host_absent():
    h = BoardHarness()
    h.welcome()
    h.run(2)
    h.port.tx_room = 0  # nobody reads: the port accepts nothing
    h.run(3000, 1)
    check(h.app.stats["tx_stalls"] >= 1, "stalled TX is dropped")
    check(h.app.tx.used() <= 8192, "TX ring bounded")
    h.port.tx_room = None
    h.take_all()
    h.send(wire.PING, wire.pack_ping(1, 2))
    h.run(5)
    equal(len(h.take(wire.PONG)), 1, "link works again once the host reads")


def _host_traffic(h, fmt, frames):
    """PINGs and one stream of AUDIO_DOWN in `fmt`, queued for the board (built before
    any measurement: building them allocates)."""
    pcm = bytearray(640)
    enc = audiocodec.AudioEncoder(fmt)
    audio = bytearray(700)
    n = enc.encode_into(pcm, 640, audio, 0)
    for i in range(frames):
        h.send(wire.PING, wire.pack_ping(i, 1000 + i))
        h.send(wire.AUDIO_DOWN, wire.pack_audio_down(1, audio[:n]))


def _measure_steps(h, steps):
    import gc

    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for _ in range(steps):
        h.app.step()
        h.clock.advance(1)
    used = gc.mem_alloc() - before
    gc.enable()
    return used


def allocation_in_the_audio_loop():
    """A pass of the loop in steady state allocates nothing: mic frames out, speaker audio
    in, PINGs answered, credits granted, in each wire format; and so does a link bench."""
    try:
        import gc  # noqa: F401
        import micropython  # noqa: F401 - only measured on MicroPython
    except ImportError:
        return
    for fmt in (wire.FMT_PCM16, wire.FMT_MULAW, wire.FMT_ADPCM):
        name = wire.FORMAT_NAMES[fmt]
        h = BoardHarness(speaker_room=640)
        h.welcome(mic_fmt=fmt, spk_fmt=fmt)
        _host_traffic(h, fmt, 250)
        h.port.discard = True
        h.speaker.discard = True
        h.run(60)  # warm up: the stream starts, first credits
        h.take_all()
        c0 = dict(h.app.counters)
        used = _measure_steps(h, 300)
        c = h.app.counters
        print("INFO loop allocation, %s: %d bytes over 300 steps" % (name, used))
        equal(used, 0, "no allocation in the loop (%s)" % name)
        check(c["audio_up_frames"] - c0["audio_up_frames"] >= 20, "mic frames sent while measured (%s)" % name)
        check(c["audio_down_frames"] - c0["audio_down_frames"] >= 20, "speaker frames taken while measured (%s)" % name)
        check(c["pongs"] - c0["pongs"] >= 20, "PINGs answered while measured (%s)" % name)
        check(c["credits_granted"] - c0["credits_granted"] >= 1, "credits granted while measured (%s)" % name)
        equal(h.app.stats["errors"], 0, "no loop errors (%s)" % name)

    # The link bench: BENCH frames both ways.
    h = BoardHarness()
    h.welcome()
    h.run(3)
    h.send(wire.COMMAND, wire.pack_command(5, wire.CMD_BENCH, 16, 10))
    for i in range(300):
        p = bytearray(128)
        wire.bench_fill(p, i, 128)
        h.send(wire.BENCH, p)
    h.port.discard = True
    h.run(20)
    ok0 = h.app.counters["bench_rx_ok"]
    sent0 = h.app.counters["bench_sent"]
    used = _measure_steps(h, 200)
    print("INFO loop allocation, bench: %d bytes over 200 steps" % used)
    equal(used, 0, "no allocation in the loop (bench)")
    check(h.app.counters["bench_rx_ok"] - ok0 >= 50, "bench frames checked while measured")
    check(h.app.counters["bench_sent"] - sent0 >= 50, "bench frames sent while measured")


def loop_stats_report():
    """The board's own report: parseable text, and writing it allocates nothing."""
    try:
        import gc
        import micropython  # noqa: F401
    except ImportError:
        return
    from sotto_fw.loopstats import LoopStats, put_int

    buf = bytearray(64)
    equal(bytes(buf[: put_int(buf, 0, 0)]), b"0", "put_int 0")
    equal(bytes(buf[: put_int(buf, 0, -1205)]), b"-1205", "put_int negative")
    equal(bytes(buf[: put_int(buf, 0, 1073741823)]), b"1073741823", "put_int large")
    stats = LoopStats(period_ms=1000)
    check(stats.enabled, "heap counters on MicroPython")
    out = bytearray(200)
    ticks_diff = FakeClock().ticks_diff
    gc.collect()
    stats.start(0, 0, 0)
    stats.loop_pass(812)
    gc.disable()
    before = gc.mem_alloc()
    n = stats.report_into(out, 0, 1000, ticks_diff, 93, 2)
    used = gc.mem_alloc() - before
    gc.enable()
    equal(used, 0, "report written without allocating")
    text = bytes(out[:n]).decode()
    check(text.startswith("stats ms=1000 frames=93 alloc="), text)
    check(" gc=0 loop_us=812 mic_drop=2 heap_free=" in text, text)


def memory_error_is_survived():
    """A MemoryError in a pass is counted and reported, and the loop goes on."""
    try:
        import micropython  # noqa: F401
    except ImportError:
        return
    from sotto_fw.compat import asyncio

    h = BoardHarness()
    h.welcome()
    h.run(3)
    real_step = h.app.step
    calls = [0]

    def failing_step():
        calls[0] += 1
        if calls[0] == 2:
            raise MemoryError
        if calls[0] > 5:
            h.app.stop()
        return real_step()

    h.app.step = failing_step
    asyncio.run(h.app.run())
    h.decoder.feed(h.port.take_output())
    logs = [bytes(p[1:]) for t, _, p in h.take(wire.LOG)]
    equal(h.app.counters["memory_errors"], 1, "MemoryError counted")
    check(b"loop error: MemoryError" in logs, "and reported: %r" % (logs,))
    check(calls[0] > 5, "the loop went on")


for fn in (codec_vectors, native_codec_loops_match_bytecode, decode_across_the_ring_end, failed_acceleration_falls_back,
           ring_buffer, credits, handshake, ping_and_commands, button, playback_and_stop, stop_of_an_unknown_stream,
           credits_bound_what_the_ring_holds, mulaw_and_adpcm_downlink, bench, garbage_on_the_line, host_absent,
           allocation_in_the_audio_loop, loop_stats_report, memory_error_is_survived):
    run(fn)
sys.exit(1 if summary() else 0)
