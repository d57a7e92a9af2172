# BoardApp: the firmware core. Peripherals are injected, so the same code runs on the
# board (sotto_fw.hw builds real ones) and in the host's simulated board (CPython).
#
# One cooperative loop does everything in a fixed order each pass (receive and
# dispatch, speaker, microphone, button, housekeeping, transmit); on a microcontroller
# that costs less than several tasks and keeps latency predictable. Every buffer is
# allocated here, once.

import struct

from sotto_fw import audiocodec, wire
from sotto_fw.button import PRESSED, RELEASED, Debouncer
from sotto_fw.capture import MicCapture
from sotto_fw.compat import SystemClock, asyncio, const, sleep_ms
from sotto_fw.credits import CreditGranter
from sotto_fw.led import PhaseLed
from sotto_fw.protocol import Handshake
from sotto_fw.ring import RingBuffer
from sotto_fw.speaker import SpeakerPlayer
from sotto_fw.vad import VAD_END, VAD_START, EnergyVad

RX_CHUNK = const(512)
TX_BUFFER = const(8192)
CONTROL_RESERVE = const(512)  # TX room audio may not take: control frames still get out
AUDIO_BACKLOG = const(2400)  # most TX bytes queued when a mic frame joins (~200 ms at 115200 baud)
TX_STALL_MS = const(1000)  # TX that made no progress this long is stale: dropped
THINKING_MS = const(8000)  # LED shows "thinking" this long after the user stopped
FRAME_OVERHEAD = const(16)  # header + CRC + delimiters + COBS for a small frame


def _line_len(n):
    """Most line bytes a frame of n payload bytes can take."""
    return n + FRAME_OVERHEAD + n // 254


class BoardApp:
    def __init__(self, profile, port, mic, speaker, button=None, led=None, outputs=(), clock=None, board_id=None):
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
            "resets": 0,
        }
        # Buffers: allocated once for the life of the app.
        self.rx_buf = bytearray(RX_CHUNK)
        self.rx_mv = memoryview(self.rx_buf)
        self.pcm_down = bytearray(audiocodec.decoded_bytes(wire.FMT_ADPCM, wire.MAX_PAYLOAD))
        self.tx = RingBuffer(TX_BUFFER)
        self.enc = wire.FrameEncoder()
        self.dec = wire.FrameDecoder(self._on_frame)
        self.handshake = Handshake(profile, board_id)
        self.player = SpeakerPlayer(speaker, profile["speaker_buffer"], self._report_playback)
        self.credits = CreditGranter(profile["speaker_buffer"])
        self.capture = MicCapture(mic)
        self.down_decoder = audiocodec.AudioDecoder(wire.FMT_PCM16)
        self.button = Debouncer(button)
        self.led = PhaseLed(led)
        self.vad = EnergyVad() if profile.get("vad") else None
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
        while self._running:
            try:
                busy = self.step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the board must keep running whatever a frame did
                self.counters["errors"] += 1
                self._log(wire.LOG_ERROR, "loop error: %r" % (exc,))
                busy = False
            await sleep_ms(0 if busy else 1)

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
                if self._send(wire.CREDIT, wire.pack_credit(cr.stream_id, cr.last_seq, free)):
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

    def _send_prepared(self, mtype, n):
        """Frame n payload bytes already written into enc.payload (audio, bench)."""
        if self.tx.free() < _line_len(n) + CONTROL_RESERVE:
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
            k = self.port.write(tx.peek_view()) or 0
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

    def _error(self, code, text):
        self.error_until = self.clock.ticks_ms() + 2000
        self._send(wire.ERROR, wire.pack_error(code, text))

    def _report_playback(self, state, stream_id, played):
        self._send(wire.PLAYBACK, wire.pack_playback(state, stream_id, played, self.clock.ticks_ms()))

    def _event(self, kind, value):
        self._send(wire.EVENT, wire.pack_event(kind, value, self.clock.ticks_ms()))

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
        if self.tx.count + _line_len(size + wire.AUDIO_UP_HEAD) > AUDIO_BACKLOG:
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

    def _on_frame(self, mtype, seq, payload):
        self.counters["frames_in"] += 1
        now = self.clock.ticks_ms()
        self.handshake.heard_host(now)
        try:
            if mtype == wire.AUDIO_DOWN:
                self._on_audio_down(seq, payload, now)
            elif mtype == wire.PING:
                nonce, host_ms = wire.unpack_ping(payload)
                if self._send(wire.PONG, wire.pack_pong(nonce, host_ms, now)):
                    self.counters["pongs"] += 1
            elif mtype == wire.BENCH:
                if wire.bench_check(payload):
                    self.counters["bench_rx_ok"] += 1
                else:
                    self.counters["bench_rx_bad"] += 1
            elif mtype == wire.WELCOME:
                self._on_welcome(wire.unpack_welcome(payload), now)
            elif mtype == wire.STOP:
                (stream_id,) = wire.unpack_stop(payload)
                self.player.stop(stream_id)
                self.credits.force()
            elif mtype == wire.COMMAND:
                self._on_command(wire.unpack_command(payload), now)
            elif mtype in (wire.PONG, wire.LOG, wire.ERROR, wire.CREDIT):
                pass  # nothing to do on the board side
            else:
                self.counters["unexpected"] += 1
                self._error(wire.ERR_UNEXPECTED, "unexpected message type %d" % mtype)
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

    def _on_audio_down(self, seq, payload, now):
        if not self.handshake.active():
            self.counters["audio_down_ignored"] += 1
            return
        if len(payload) < wire.AUDIO_DOWN_HEAD:
            raise ValueError("payload too short")
        stream_id = payload[0] | (payload[1] << 8)
        self.counters["audio_down_frames"] += 1
        n = len(payload) - wire.AUDIO_DOWN_HEAD
        pcm_n = 0
        if n:
            pcm_n = self.down_decoder.decode_into(payload, wire.AUDIO_DOWN_HEAD, n, self.pcm_down)
            if pcm_n == 0:
                self.counters["bad_payloads"] += 1
                return
        self.player.push(stream_id, self.pcm_down, pcm_n)
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


def main():
    """Board entry point: real peripherals from the active profile, then run forever."""
    from sotto_fw import config, hw

    profile = config.active_profile()
    if hw.button_held_at_boot(profile):
        print("sotto: button held at boot: firmware not started, REPL left free for mpremote")
        return
    parts = hw.build(profile)
    app = BoardApp(
        profile, parts["port"], parts["mic"], parts["speaker"], parts["button"], parts["led"],
        parts["outputs"], board_id=parts["board_id"],
    )
    asyncio.run(app.run())
