# BoardApp: the firmware core. Peripherals are injected, so the same code runs on the
# board (sotto_fw.hw builds real ones) and in the host's simulated board (CPython).
#
# One cooperative loop does everything in a fixed order each pass (receive and
# dispatch, speaker, microphone, button, housekeeping, transmit); on a microcontroller
# that costs less than several tasks and keeps latency predictable. Every buffer is
# allocated here, once, and a pass in steady state allocates nothing: frames are read
# and written at offsets in those buffers (no slices, no packed bytes, no tuples), so
# the garbage collector never has to pause the audio. The board measures that itself
# (sotto_fw.loopstats) and reports it to the host.

import struct

from sotto_fw import audiocodec, wire
from sotto_fw.button import PRESSED, RELEASED, Debouncer
from sotto_fw.capture import MicCapture
from sotto_fw.compat import SystemClock, asyncio, collect, const, forget_loop_sources, sleep_ms, ticks_diff, ticks_us
from sotto_fw.loopstats import LoopStats, put_text
from sotto_fw.credits import CreditGranter
from sotto_fw.led import PhaseLed
from sotto_fw.protocol import Handshake
from sotto_fw.ring import RingBuffer
from sotto_fw.speaker import SpeakerPlayer
from sotto_fw.vad import VAD_END, VAD_START, EnergyVad

RX_CHUNK = const(512)
TX_BUFFER = const(8192)  # default; a profile's "tx_buffer" sets it
CONTROL_RESERVE = const(512)  # TX room audio may not take: control frames still get out
AUDIO_BACKLOG_MS = const(200)  # most line time queued in TX when a mic frame joins
AUDIO_BACKLOG_MIN = const(2400)
TX_STALL_MS = const(1000)  # TX that made no progress this long is stale: dropped
THINKING_MS = const(8000)  # LED shows "thinking" this long after the user stopped
FRAME_OVERHEAD = const(16)  # header + CRC + delimiters + COBS for a small frame


def _line_len(n):
    """Most line bytes a frame of n payload bytes can take."""
    return n + FRAME_OVERHEAD + n // 254


class BoardApp:
    def __init__(self, profile, port, mic, speaker, button=None, led=None, outputs=(), clock=None, board_id=None,
                 speaker_ring=None):
        self.profile = profile
        self.port = port
        self.mic = mic
        self.speaker = speaker
        self.outputs = outputs
        self.clock = clock if clock is not None else SystemClock()
        self.ticks_diff = self.clock.ticks_diff
        if board_id is None:
            board_id = profile.get("board_id") or profile["board"]
        self.counters = {
            "frames_in": 0,
            "frames_out": 0,
            "tx_dropped": 0,
            "tx_stalls": 0,
            "hello_sent": 0,
            "welcomes": 0,
            "welcome_rejected": 0,
            "welcome_ignored": 0,
            "host_lost": 0,
            "credits_granted": 0,
            "audio_up_frames": 0,
            "audio_down_frames": 0,
            "audio_down_ignored": 0,
            "bad_payloads": 0,
            "unexpected": 0,
            "commands": 0,
            "pongs": 0,
            "bench_sent": 0,
            "bench_rx_ok": 0,
            "bench_rx_bad": 0,
            "errors": 0,
            "memory_errors": 0,
            "resets": 0,
        }
        # Buffers: allocated once for the life of the app.
        self.rx_buf = bytearray(RX_CHUNK)
        self.rx_mv = memoryview(self.rx_buf)
        self.tx = RingBuffer(profile.get("tx_buffer", TX_BUFFER))
        # A mic frame is dropped rather than queued behind this much (line time, within the
        # ring): at 921600 baud a fixed 2400 bytes was 26 ms, less than one slow pass
        # plus a scheduling pause on the simulated board.
        backlog = profile["baud"] // 10 * AUDIO_BACKLOG_MS // 1000
        if backlog < AUDIO_BACKLOG_MIN:
            backlog = AUDIO_BACKLOG_MIN
        room = self.tx.size - CONTROL_RESERVE - _line_len(wire.MAX_PAYLOAD)
        self.audio_backlog = backlog if backlog < room else room
        self.enc = wire.FrameEncoder()
        self.dec = wire.FrameDecoder(self._on_frame, False)
        self.rx_frame = self.dec.dec  # where a received frame's payload is, at wire.PAYLOAD_AT
        self.handshake = Handshake(profile, board_id)
        self.player = SpeakerPlayer(speaker, profile["speaker_buffer"], self._report_playback, ring=speaker_ring)
        self.credits = CreditGranter(profile["speaker_buffer"])
        self.capture = MicCapture(mic)
        self.down_decoder = audiocodec.AudioDecoder(wire.FMT_PCM16)
        self.button = Debouncer(button)
        self.led = PhaseLed(led)
        self.vad = EnergyVad() if profile.get("vad") else None
        self.loop_stats = LoopStats()
        self._running = False
        self._reset_state()

    # ------------------------------------------------------------------ lifecycle

    def _reset_state(self):
        now = self.clock.ticks_ms()
        self.tx.clear()
        self.enc.seq = 0
        self.dec.reset()
        self.handshake.new_boot()
        self.player.reset()
        self.credits.reset()
        self.capture.frame_bytes = 0
        self.capture.fill = 0
        self.button.reset()
        if self.vad is not None:
            self.vad.reset()
        self.tx_last_progress = now
        self.user_active = False  # button held or voice detected
        self.user_done_ms = now
        self.user_done = False
        self.error_until = now
        self.bench_until = 0
        self.bench_action = -1
        self.bench_size = 0
        self.bench_counter = 0
        self.bench_crc_base = 0
        self.bench_lost_base = 0
        self.bench_resync_base = 0

    def reset(self):
        """Behave like a fresh boot: new boot id, empty buffers, HELLO again."""
        self.counters["resets"] += 1
        if self.speaker is not None:
            self.speaker.stop()
        self._reset_state()

    def stop(self):
        self._running = False

    async def run(self):
        """Run the firmware loop until stop()."""
        self._running = True
        meter = self.loop_stats
        meter.start(self.clock.ticks_ms(), self._frames_total(), self.mic_dropped())
        while self._running:
            started = ticks_us()
            try:
                busy = self.step()
            except asyncio.CancelledError:
                raise
            except MemoryError:
                # Reported without formatting anything: there may be no heap for it.
                self.counters["memory_errors"] += 1
                if collect is not None:
                    collect()
                self._log_text(wire.LOG_ERROR, b"loop error: MemoryError")
                busy = False
            except Exception as exc:  # the board must keep running whatever a frame did
                self.counters["errors"] += 1
                self._log(wire.LOG_ERROR, "loop error: %r" % (exc,))
                busy = False
            meter.loop_pass(ticks_diff(ticks_us(), started))
            now = self.clock.ticks_ms()
            if meter.due(now, self.ticks_diff):
                self._report_loop_stats(now)
            await sleep_ms(0 if busy else 1)

    def _frames_total(self):
        return self.counters["frames_in"] + self.counters["frames_out"]

    def mic_dropped(self):
        """Mic frames lost so far: dropped for a line that was behind, or overrun in the driver."""
        dropped = self.capture.dropped_frames
        lost = getattr(self.mic, "lost_bytes", 0)
        if lost:
            frame = self.capture.frame_bytes or 640
            dropped += (lost + frame - 1) // frame
        return dropped

    def _report_loop_stats(self, now):
        payload = self.enc.payload
        payload[0] = wire.LOG_DEBUG
        n = self.loop_stats.report_into(payload, 1, now, self.ticks_diff, self._frames_total(), self.mic_dropped())
        self._send_prepared(wire.LOG, n, 0)

    @property
    def stats(self):
        s = dict(self.counters)
        d = self.dec
        s["frames_in_ok"] = d.frames_ok
        s["crc_errors"] = d.crc_errors
        s["bad_frames"] = d.bad_frames
        s["version_mismatch"] = d.version_mismatch
        s["lost_in"] = d.lost
        s["resyncs"] = d.resyncs
        s["bytes_in"] = d.bytes_in
        s["bytes_played"] = self.player.bytes_played
        s["speaker_overflow"] = self.player.overflow
        s["dropped_stopped"] = self.player.dropped_stopped
        s["dropped_stale"] = self.player.dropped_stale
        s["mic_frames"] = self.capture.frames
        s["mic_discarded"] = self.capture.discarded
        s["boot_id"] = self.handshake.boot_id
        s["welcomed"] = self.handshake.active()
        s["speaker_free"] = self.player.free()
        s["mic_dropped"] = self.mic_dropped()
        s["loop_stats_periods"] = self.loop_stats.periods
        return s

    # ------------------------------------------------------------------ the loop

    def step(self):
        """One pass of the firmware loop. Returns True if it did any work."""
        clock = self.clock
        busy = False
        n = self.port.readinto(self.rx_buf) or 0
        if n > 0:
            self.dec.feed(self.rx_buf, n)
            busy = True
        now = clock.ticks_ms()
        hs = self.handshake
        if hs.check_silence(now, self.ticks_diff):
            self.counters["host_lost"] += 1
            self._log(wire.LOG_WARNING, "host silent: HELLO again")
        if self.player.pump():
            busy = True
        self._capture(now)
        self._poll_button(now)
        if hs.hello_due(now, self.ticks_diff):
            if self._send(wire.HELLO, hs.hello_payload()):
                hs.hello_sent_at(now)
                self.counters["hello_sent"] += 1
        if hs.active():
            free = self.player.free()
            if self.credits.due(free, now, self.ticks_diff):
                cr = self.credits
                k = wire.pack_credit_into(self.enc.payload, cr.stream_id, cr.last_seq, free)
                if self._send_prepared(wire.CREDIT, k, 0):
                    cr.granted_now(free, now)
                    self.counters["credits_granted"] += 1
            if self.bench_action >= 0:
                self._bench_step(now)
        self._update_led(now)
        if self._pump_tx(now):
            busy = True
        return busy

    # ------------------------------------------------------------------ transmit

    def _send(self, mtype, payload, reserve=0):
        """Frame a control message into the TX ring. False (and counted) if no room."""
        n = len(payload)
        if self.tx.free() < _line_len(n) + reserve:
            self.counters["tx_dropped"] += 1
            return False
        self.enc.payload[:n] = payload
        k = self.enc.finish(mtype, n)
        self.tx.write(self.enc.out_mv, k)
        self.counters["frames_out"] += 1
        return True

    def _send_prepared(self, mtype, n, reserve=CONTROL_RESERVE):
        """Frame n payload bytes already written into enc.payload (audio and bench keep
        CONTROL_RESERVE free for control messages; those pass reserve=0)."""
        if self.tx.free() < _line_len(n) + reserve:
            self.counters["tx_dropped"] += 1
            return False
        k = self.enc.finish(mtype, n)
        self.tx.write(self.enc.out_mv, k)
        self.counters["frames_out"] += 1
        return True

    def _pump_tx(self, now):
        tx = self.tx
        moved = 0
        while tx.count:
            chunk = tx.contiguous()
            k = self.port.write(tx.buf, tx.head, chunk) or 0
            if k <= 0:
                break
            tx.skip(k)
            moved += k
            if k < chunk:
                break
        if moved or tx.count == 0:
            self.tx_last_progress = now
        elif self.ticks_diff(now, self.tx_last_progress) > TX_STALL_MS:
            # Nobody is reading: what is queued is stale. The receiver resyncs on the
            # delimiter that starts the next frame.
            self.counters["tx_stalls"] += 1
            self.counters["tx_dropped"] += 1
            tx.clear()
            self.tx_last_progress = now
        return moved > 0

    def _log(self, level, text):
        self._send(wire.LOG, wire.pack_log(level, text))

    def _log_text(self, level, text):
        """LOG a bytes constant without allocating."""
        payload = self.enc.payload
        payload[0] = level
        self._send_prepared(wire.LOG, put_text(payload, 1, text), 0)

    def _error(self, code, text):
        self.error_until = self.clock.ticks_ms() + 2000
        self._send(wire.ERROR, wire.pack_error(code, text))

    def _report_playback(self, state, stream_id, played):
        k = wire.pack_playback_into(self.enc.payload, state, stream_id, played, self.clock.ticks_ms())
        self._send_prepared(wire.PLAYBACK, k, 0)

    def _event(self, kind, value):
        k = wire.pack_event_into(self.enc.payload, kind, value, self.clock.ticks_ms())
        self._send_prepared(wire.EVENT, k, 0)

    # ------------------------------------------------------------------ microphone

    def _capture(self, now):
        cap = self.capture
        if not self.handshake.active() or self.bench_action >= 0:
            cap.drain()
            return
        if not cap.poll(now):
            return
        if self.vad is not None:
            change = self.vad.feed(cap.pcm, cap.frame_bytes)
            if change == VAD_START:
                self._user_started(now)
                self._event(wire.EV_VAD_START, 0)
            elif change == VAD_END:
                self._user_stopped(now)
                self._event(wire.EV_VAD_END, 0)
        payload = self.enc.payload
        size = audiocodec.encoded_size(cap.encoder.fmt, cap.frame_bytes // 2)
        if self.tx.count + _line_len(size + wire.AUDIO_UP_HEAD) > self.audio_backlog:
            # The line is behind: drop this frame now rather than send stale audio later.
            cap.drop_frame()
            self.counters["tx_dropped"] += 1
            return
        struct.pack_into("<I", payload, 0, cap.first_ms & 0xFFFFFFFF)
        n = cap.encode_into(payload, wire.AUDIO_UP_HEAD)
        if self._send_prepared(wire.AUDIO_UP, wire.AUDIO_UP_HEAD + n):
            self.counters["audio_up_frames"] += 1

    # ------------------------------------------------------------------ button, LED

    def _user_started(self, now):
        self.user_active = True
        self.user_done = False

    def _user_stopped(self, now):
        self.user_active = False
        self.user_done = True
        self.user_done_ms = now

    def _poll_button(self, now):
        edge = self.button.poll(now, self.ticks_diff)
        if edge == PRESSED:
            self._user_started(now)
            self._event(wire.EV_BUTTON_DOWN, 0)
        elif edge == RELEASED:
            self._user_stopped(now)
            self._event(wire.EV_BUTTON_UP, 0)

    def _update_led(self, now):
        if self.ticks_diff(self.error_until, now) > 0:
            phase = "error"
        elif self.player.active():
            phase = "speaking"
            self.user_done = False
        elif self.user_active:
            phase = "listening"
        elif self.user_done and self.ticks_diff(now, self.user_done_ms) < THINKING_MS:
            phase = "thinking"
        else:
            phase = "idle"
        self.led.show(phase)

    # ------------------------------------------------------------------ receive

    def _payload(self, n):
        """The received payload as a view: allocates, so only for rare messages."""
        return self.dec.dec_mv[wire.PAYLOAD_AT : wire.PAYLOAD_AT + n]

    def _on_frame(self, mtype, seq, n):
        # The payload is self.rx_frame[wire.PAYLOAD_AT:wire.PAYLOAD_AT + n]. The frequent
        # messages (audio, PING, BENCH) are read in place; the rare ones through a view.
        self.counters["frames_in"] += 1
        now = self.clock.ticks_ms()
        self.handshake.heard_host(now)
        try:
            if mtype == wire.AUDIO_DOWN:
                self._on_audio_down(seq, n, now)
            elif mtype == wire.PING:
                if n < 8:
                    raise ValueError("payload too short")
                k = wire.pong_from_ping_into(self.enc.payload, self.rx_frame, wire.PAYLOAD_AT, now)
                if self._send_prepared(wire.PONG, k, 0):
                    self.counters["pongs"] += 1
            elif mtype == wire.BENCH:
                if wire.bench_check_at(self.rx_frame, wire.PAYLOAD_AT, n):
                    self.counters["bench_rx_ok"] += 1
                else:
                    self.counters["bench_rx_bad"] += 1
            elif mtype == wire.WELCOME:
                self._on_welcome(wire.unpack_welcome(self._payload(n)), now)
            elif mtype == wire.STOP:
                (stream_id,) = wire.unpack_stop(self._payload(n))
                self.player.stop(stream_id)
                self.credits.force()
            elif mtype == wire.COMMAND:
                self._on_command(wire.unpack_command(self._payload(n)), now)
            elif mtype == wire.PONG or mtype == wire.LOG or mtype == wire.ERROR or mtype == wire.CREDIT:
                pass  # nothing to do on the board side
            else:
                self.counters["unexpected"] += 1
                self._error(wire.ERR_UNEXPECTED, "unexpected message type %d" % mtype)
        except MemoryError:
            raise  # the loop reports it (formatting it here could need the heap that ran out)
        except ValueError as exc:
            self.counters["bad_payloads"] += 1
            self._error(wire.ERR_BAD_PAYLOAD, "bad %s payload: %s" % (wire.TYPE_NAMES.get(mtype, "?"), exc))
        except Exception as exc:  # a frame must never stop the frames after it
            self.counters["errors"] += 1
            self._log(wire.LOG_ERROR, "%s handling failed: %r" % (wire.TYPE_NAMES.get(mtype, "?"), exc))

    def _on_welcome(self, welcome, now):
        hs = self.handshake
        if hs.hellos_this_boot == 0:
            # A WELCOME can only answer a HELLO of this boot; one that arrives first was
            # meant for the boot before a reset. Ignoring it makes the host see our HELLO.
            self.counters["welcome_ignored"] += 1
            return
        problem = hs.check_welcome(welcome)
        if problem is None:
            _token, mic_fmt, mic_rate, spk_fmt, spk_rate, frame_ms, _silence = welcome
            if not self.capture.configure(mic_fmt, mic_rate, frame_ms):
                problem = "mic frame of %d ms does not fit a frame" % frame_ms
        if problem is not None:
            self.counters["welcome_rejected"] += 1
            self._error(wire.ERR_BAD_WELCOME, "WELCOME rejected: " + problem)
            return
        hs.apply_welcome(welcome, now)
        self.player.new_session()
        self.counters["welcomes"] += 1
        if self.down_decoder.fmt != hs.speaker_format:
            self.down_decoder = audiocodec.AudioDecoder(hs.speaker_format)
        self.down_decoder.reset()
        if hasattr(self.speaker, "configure"):
            self.speaker.configure(hs.speaker_rate)
        if self.vad is not None:
            self.vad.reset()
        self.credits.force()

    def _on_audio_down(self, seq, size, now):
        if not self.handshake.active():
            self.counters["audio_down_ignored"] += 1
            return
        if size < wire.AUDIO_DOWN_HEAD:
            raise ValueError("payload too short")
        frame = self.rx_frame
        stream_id = frame[wire.PAYLOAD_AT] | (frame[wire.PAYLOAD_AT + 1] << 8)
        self.counters["audio_down_frames"] += 1
        n = size - wire.AUDIO_DOWN_HEAD
        if n:
            dec = self.down_decoder
            pcm_n = audiocodec.decoded_bytes(dec.fmt, n)
            if pcm_n == 0 or self.player.push_encoded(stream_id, dec, frame, wire.PAYLOAD_AT + wire.AUDIO_DOWN_HEAD, n, pcm_n) < 0:
                self.counters["bad_payloads"] += 1
                return
        else:
            self.player.push(stream_id, frame, 0)  # the host ended the stream
        self.credits.took(stream_id, seq, now)

    def _on_command(self, command, now):
        action_id, cmd, index, value = command
        self.counters["commands"] += 1
        if cmd == wire.CMD_VOLUME:
            if self.speaker is not None and hasattr(self.speaker, "set_volume"):
                self.speaker.set_volume(0 if value < 0 else 100 if value > 100 else value)
        elif cmd == wire.CMD_GPIO:
            if index >= len(self.outputs):
                self._error(wire.ERR_BAD_COMMAND, "action %d: no output %d" % (action_id, index))
                return
            self.outputs[index].value(1 if value else 0)
        elif cmd == wire.CMD_BENCH:
            self._bench_start(action_id, index, value, now)
            return  # EV_COMMAND_DONE when the bench ends
        else:
            self._error(wire.ERR_BAD_COMMAND, "action %d: unknown command %d" % (action_id, cmd))
            return
        self._event(wire.EV_COMMAND_DONE, action_id)

    # ------------------------------------------------------------------ link benchmark

    def _bench_start(self, action_id, size8, seconds, now):
        size = size8 * 8
        if size < 8:
            size = 8
        if size > wire.MAX_PAYLOAD:
            size = wire.MAX_PAYLOAD
        self.bench_action = action_id
        self.bench_size = size
        self.bench_until = now + (seconds if seconds > 0 else 1) * 1000
        self.bench_counter = 0
        self.counters["bench_sent"] = 0
        self.counters["bench_rx_ok"] = 0
        self.counters["bench_rx_bad"] = 0
        self.bench_crc_base = self.dec.crc_errors
        self.bench_lost_base = self.dec.lost
        self.bench_resync_base = self.dec.resyncs

    def _bench_step(self, now):
        if self.ticks_diff(now, self.bench_until) >= 0:
            self._bench_finish()
            return
        size = self.bench_size
        # At most one BENCH frame waits in the TX ring: the line stays busy (the port
        # buffers what it accepted) and a PONG or CREDIT never queues behind a deep backlog.
        while self.tx.count < _line_len(size):
            wire.bench_fill(self.enc.payload, self.bench_counter, size)
            if not self._send_prepared(wire.BENCH, size):
                break
            self.bench_counter += 1
            self.counters["bench_sent"] += 1

    def _bench_finish(self):
        c = self.counters
        text = "bench rx=%d bad=%d crc=%d lost=%d tx=%d resync=%d" % (
            c["bench_rx_ok"], c["bench_rx_bad"], self.dec.crc_errors - self.bench_crc_base,
            self.dec.lost - self.bench_lost_base, c["bench_sent"], self.dec.resyncs - self.bench_resync_base,
        )
        action = self.bench_action
        self.bench_action = -1
        self._log(wire.LOG_INFO, text)
        self._event(wire.EV_COMMAND_DONE, action)


def _hardware():
    """The peripherals' module: the board's, or on MicroPython's unix port (the simulated
    board, `sotto sim --runtime micropython`) one that talks to the simulator."""
    import sys

    if sys.platform in ("linux", "darwin"):
        from sotto_fw import hw_unix

        return hw_unix
    from sotto_fw import hw

    return hw


async def _run(app, tasks):
    for task in tasks:
        asyncio.create_task(task(app))
    await app.run()


def main():
    """Board entry point: real peripherals from the active profile, then run forever."""
    from sotto_fw import config

    hw = _hardware()
    profile = hw.board_profile(config.active_profile())
    # Needed once, and worth several KB of heap each: the profile table and the source
    # text of the loops (compiled by now).
    config = None
    sys_modules = __import__("sys").modules
    if "sotto_fw.config" in sys_modules:
        del sys_modules["sotto_fw.config"]
    forget_loop_sources()
    if hw.button_held_at_boot(profile):
        print("sotto: button held at boot: firmware not started, REPL left free for mpremote")
        return
    if collect is not None:
        collect()
    # The speaker ring first: the biggest buffer, while the free heap is in one piece.
    ring = RingBuffer(profile["speaker_buffer"])
    parts = hw.build(profile)
    app = BoardApp(
        profile, parts["port"], parts["mic"], parts["speaker"], parts["button"], parts["led"],
        parts["outputs"], board_id=parts["board_id"], speaker_ring=ring,
    )
    # Tasks beside the loop: the unix port's stand-ins for DMA and interrupts; none on a board.
    asyncio.run(_run(app, parts.get("tasks", ())))
