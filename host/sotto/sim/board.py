"""SimulatedBoard: the real firmware (sotto_fw.app.BoardApp) on a virtual serial port.

    with SimulatedBoard(baud=921600, echo_gain=0.3, speaker_formats=wire.FMT_ADPCM, speaker_buffer=262144) as board:
        link = BoardLink(board.port_path, LinkOptions(baud=921600))
        board.play_utterance("hello.wav")
        ...
        board.unplug(); board.replug(); board.reset()
    board.speaker_wav   # the WAV written on close (if speaker_out was given)

Two runtimes for the firmware. `runtime="cpython"` (fast, for unit tests) imports it
into this process: a hardware thread (line pacing, microphone and speaker clocks, every
~1 ms) and a board thread (BoardApp.run() in its own asyncio loop), so the host and the
board never share an event loop, as on real hardware. `runtime="micropython"` runs the
whole firmware in MicroPython's unix interpreter, its heap limited to the board
profile's (sotto/sim/micropython.py); the hardware thread then paces the line and
carries the mic and speaker to and from that process.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sotto.errors import SottoError
from sotto.sim.audio import Int16Array, SimMicrophone, SimSpeaker, read_wav, write_wav
from sotto.sim.line import BoardEnd, VirtualSerialLine
from sotto.sim.micropython import MicroPythonFirmware

log = logging.getLogger("sotto.sim")

TICK_S = 0.001
SWITCH_INTERVAL_S = 0.0005
_TICKS_MASK = (1 << 30) - 1
_board_numbers = itertools.count(1)
RUNTIMES = ("cpython", "micropython")


class SimError(SottoError):
    code = "sim"


@dataclass(frozen=True)
class SimEvent:
    board_ms: int
    kind: str  # utterance_start, utterance_end, unplug, replug, reset, led, gpio, cut
    detail: str = ""


class SimClock:
    """Board ticks: ms since the sim started, wrapping at 2**30 like MicroPython's."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0

    def ticks_ms(self) -> int:
        return int((time.monotonic() - self.t0) * 1000) & _TICKS_MASK

    def ticks_diff(self, a: int, b: int) -> int:
        return ((a - b + (1 << 29)) & _TICKS_MASK) - (1 << 29)


class MonotonicClock(SimClock):
    """Board ticks of MicroPython's unix port: CLOCK_MONOTONIC ms, as time.monotonic()."""

    def __init__(self) -> None:
        super().__init__(0.0)


class SimButton:
    def __init__(self) -> None:
        self.pressed = False

    def value(self) -> int:
        return 1 if self.pressed else 0


class SimLed:
    def __init__(self, board: "SimulatedBoard") -> None:
        self._board = board
        self.phase = ""

    def show(self, phase: str) -> None:
        if phase != self.phase:
            self.phase = phase
            self._board._log_event("led", phase)


class SimPin:
    def __init__(self, board: "SimulatedBoard", index: int) -> None:
        self._board = board
        self.index = index
        self.state = 0

    def value(self, v: int | None = None) -> int:
        if v is not None and (1 if v else 0) != self.state:
            self.state = 1 if v else 0
            self._board._log_event("gpio", f"{self.index}={self.state}")
        return self.state


def sim_profile(baud: int, profile_name: str = "esp32s3") -> dict[str, Any]:
    from sotto_fw import config

    profile = config.get_profile(profile_name)
    profile["baud"] = baud
    profile["transport"] = "pty"
    profile["board"] = f"sim-{profile_name}"
    return profile


class SimulatedBoard:
    """See the module docstring. Use as a context manager (or start()/close())."""

    def __init__(self, *, baud: int = 921600, profile: str = "esp32s3", echo_gain: float = 0.0,
                 echo_delay_s: float = 0.03, speaker_out: str | Path | None = None, record_speaker: bool = False,
                 gap_s: float = 0.6, board_id: str | None = None, seed: int | None = None,
                 speaker_buffer: int | None = None, speaker_formats: int | None = None,
                 runtime: str = "cpython", heap_bytes: int | None = None) -> None:
        """`speaker_buffer`: the speaker ring in PCM16 bytes (default: the profile's; an
        ESP32-S3 with PSRAM can hold a whole reply). `speaker_formats`: the wire formats the
        board offers for its speaker, a mask of `wire.FMT_*` (default: the profile's, all three).
        `runtime`: "cpython" or "micropython" (see the module docstring); `heap_bytes`: the
        MicroPython heap (default: the profile's heap_free)."""
        if runtime not in RUNTIMES:
            raise SimError(f"unknown runtime {runtime!r}; choose from {', '.join(RUNTIMES)}")
        self.runtime = runtime
        self.baud = baud
        self.profile = sim_profile(baud, profile)
        if speaker_buffer is not None:
            if speaker_buffer < 1024:
                raise SimError(f"speaker_buffer {speaker_buffer} is too small (at least 1024 bytes)")
            self.profile["speaker_buffer"] = int(speaker_buffer)
        if speaker_formats is not None:
            offered = int(self.profile["speaker_formats"])
            if speaker_formats & offered == 0 or speaker_formats & ~offered:
                raise SimError(f"speaker_formats 0x{speaker_formats:x} is not a subset of the board's 0x{offered:x}")
            self.profile["speaker_formats"] = int(speaker_formats)
        self.board_id = board_id or f"sim-{os.getpid()}-{next(_board_numbers)}"
        self.events: list[SimEvent] = []
        self._t0 = time.monotonic()
        self.clock = SimClock(self._t0) if runtime == "cpython" else MonotonicClock()
        self.mic = SimMicrophone(self.profile["mic_rates"][0], gap_s=gap_s, on_event=self._mic_event)
        self.mic.set_echo(echo_gain, echo_delay_s)
        self.speaker_out = Path(speaker_out) if speaker_out else None
        record_rate = 22050 if (self.speaker_out or record_speaker) else None
        self.speaker = SimSpeaker(self.profile["speaker_i2s"].get("ibuf", 8192), record_rate=record_rate, mic=self.mic)
        self.firmware: MicroPythonFirmware | None = None
        self.heap_bytes: int | None = None
        board_end: BoardEnd | None = None
        if runtime == "micropython":
            heap = int(heap_bytes or self.profile["heap_free"])
            self.heap_bytes = heap
            if heap < 32 * 1024:
                raise SimError(f"heap of {heap} bytes is too small for the firmware (at least 32 KB)")
            self.firmware = MicroPythonFirmware(self.profile, self.board_id, heap_bytes=heap, mic=self.mic,
                                                speaker=self.speaker, notice=self._log_event)
            board_end = self.firmware.uart
        self.line = VirtualSerialLine(baud, seed=seed, board_end=board_end)
        self.button = SimButton()
        self.led = SimLed(self)
        self.outputs = [SimPin(self, i) for i in range(len(self.profile.get("outputs", ())))]
        self.app: Any = None
        self._board_loop: asyncio.AbstractEventLoop | None = None
        self._board_thread: threading.Thread | None = None
        self._hw_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._started = threading.Event()
        self._board_error: BaseException | None = None
        self.speaker_wav: Path | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def port_path(self) -> str:
        """Path the host opens: a symlink to the current pty, stable across unplug/replug."""
        return self.line.port_path

    @property
    def pty_path(self) -> str:
        return self.line.pty_path

    def __enter__(self) -> "SimulatedBoard":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.speaker.start_clock(self._t0)
        # Busy threads share the GIL here (host, hardware, and the board on CPython);
        # CPython's default 5 ms switch interval would add whole milliseconds to every hop.
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        if self.firmware is not None:
            self.firmware.start()
            self._hw_thread = threading.Thread(target=self._hardware_forever, name="sotto-sim-hw", daemon=True)
            self._hw_thread.start()
            return
        from sotto_fw.app import BoardApp

        self.app = BoardApp(self.profile, self.line.port, self.mic, self.speaker, self.button, self.led,
                            self.outputs, clock=self.clock, board_id=self.board_id)
        self._hw_thread = threading.Thread(target=self._hardware_forever, name="sotto-sim-hw", daemon=True)
        self._board_thread = threading.Thread(target=self._board_forever, name="sotto-sim-board", daemon=True)
        self._hw_thread.start()
        self._board_thread.start()
        if not self._started.wait(5.0):
            raise SimError("the simulated board did not start")

    def close(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        loop = self._board_loop
        if loop is not None and self.app is not None:
            try:
                loop.call_soon_threadsafe(self.app.stop)
            except RuntimeError:
                pass
        for t in (self._board_thread, self._hw_thread):
            if t is not None:
                t.join(timeout=3.0)
        if self.firmware is not None:
            self.firmware.close()
        self.line.close()
        if self.speaker_out is not None:
            write_wav(self.speaker_out, self.speaker.recording(), self.speaker.record_rate or 22050)
            self.speaker_wav = self.speaker_out

    def _hardware_forever(self) -> None:
        try:
            while not self._stopping.is_set():
                now = time.monotonic()
                self.line.pump(now)
                if self.firmware is None:
                    self.speaker.play(now)  # first: its echo reaches the mic in the same tick
                    self.mic.produce(now, self.clock.ticks_ms())
                else:
                    self.mic.produce(now, self.clock.ticks_ms())
                    self.firmware.tick(now)
                time.sleep(TICK_S)
        except Exception as exc:  # noqa: BLE001 - report, do not die silently
            log.exception("simulated hardware failed")
            self._board_error = exc

    def _board_forever(self) -> None:
        loop = asyncio.new_event_loop()
        self._board_loop = loop
        asyncio.set_event_loop(loop)
        self._started.set()
        try:
            loop.run_until_complete(self.app.run())
        except Exception as exc:  # noqa: BLE001
            log.exception("simulated board firmware stopped")
            self._board_error = exc
        finally:
            loop.close()

    def _call_on_board(self, fn: Any, *args: Any) -> None:
        loop = self._board_loop
        if loop is None or loop.is_closed():
            raise SimError("the simulated board is not running")
        loop.call_soon_threadsafe(fn, *args)

    # ------------------------------------------------------------------ events

    def board_ms(self) -> int:
        return self.clock.ticks_ms()

    def _log_event(self, kind: str, detail: str = "") -> None:
        self.events.append(SimEvent(self.board_ms(), kind, detail))

    def _mic_event(self, board_ms: int, kind: str, detail: str) -> None:
        self.events.append(SimEvent(board_ms, kind, detail))

    @property
    def welcomed(self) -> bool:
        if self.firmware is not None:
            return self.firmware.welcomed
        return bool(self.app is not None and self.app.handshake.active())

    def wait_welcomed(self, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while not self.welcomed:
            if time.monotonic() > end:
                raise SimError(f"no host WELCOMEd the simulated board within {timeout:g} s")
            time.sleep(0.01)

    # ------------------------------------------------------------------ microphone

    def play_utterance(self, audio: str | Path | bytes | Int16Array, rate: int | None = None, label: str = "") -> None:
        """Queue speech for the microphone: a WAV path, or PCM16 (bytes or int16 array) at `rate`."""
        if isinstance(audio, (str, Path)):
            pcm, src_rate = read_wav(audio)
            label = label or Path(audio).name
        else:
            if rate is None:
                raise SimError("raw PCM needs its sample rate")
            pcm = np.frombuffer(audio, dtype="<i2").astype(np.int16) if isinstance(audio, (bytes, bytearray)) \
                else np.asarray(audio, dtype=np.int16)
            src_rate = rate
        self.mic.queue_utterance(pcm, src_rate, label)

    def set_echo(self, gain: float, delay_s: float = 0.03) -> None:
        self.mic.set_echo(gain, delay_s)

    def press_button(self) -> None:
        self.button.pressed = True
        if self.firmware is not None:
            self.firmware.set_button(True)

    def release_button(self) -> None:
        self.button.pressed = False
        if self.firmware is not None:
            self.firmware.set_button(False)

    # ------------------------------------------------------------------ faults

    def set_corruption(self, flip_probability: float = 0.0, drop_probability: float = 0.0,
                       direction: str = "both") -> None:
        self.line.set_corruption(flip_probability, drop_probability, direction)

    def unplug(self) -> None:
        self.line.unplug()
        self._log_event("unplug")

    def replug(self) -> None:
        self.line.replug()
        self._log_event("replug", self.line.pty_path)

    def reset(self) -> None:
        """Reboot the board mid-whatever: new boot id, empty buffers, HELLO again. On
        MicroPython the interpreter is killed and started again: its RAM is gone."""
        if self.firmware is not None:
            self.line.board_reset()
            self.firmware.reset()
        else:
            self._call_on_board(self.app.reset)
        self._log_event("reset")

    def silence_host(self, seconds: float) -> None:
        """The board hears nothing from the host for a while (its bytes are lost)."""
        self.line.cut(seconds, "down")
        self._log_event("cut", f"down {seconds:g} s")

    def cut_line(self, seconds: float) -> None:
        """Nothing passes either way for a while, but the port stays open."""
        self.line.cut(seconds, "both")
        self._log_event("cut", f"both {seconds:g} s")

    # ------------------------------------------------------------------ results

    @property
    def stats(self) -> dict[str, Any]:
        """The firmware's counters (asked of the MicroPython process) and the line's."""
        if self.firmware is not None:
            s = self.firmware.stats()
            s.update({"boots": self.firmware.boots, "memory_errors_printed": self.firmware.memory_errors})
            mic_overrun = self.firmware.mic_overrun_bytes
        else:
            s = dict(self.app.stats) if self.app is not None else {}
            mic_overrun = self.mic.overrun_bytes
        c = self.line.counters
        s.update({"line_bytes_down": c.bytes_down, "line_bytes_up": c.bytes_up, "line_flipped": c.flipped,
                  "line_dropped": c.dropped, "unplugs": c.unplugs, "replugs": c.replugs,
                  "mic_overrun_bytes": mic_overrun, "speaker_bytes_played": self.speaker.bytes_played})
        return s

    def speaker_pcm(self) -> tuple[Int16Array, int]:
        """The speaker timeline so far (needs speaker_out or record_speaker)."""
        if self.speaker.record_rate is None:
            raise SimError("speaker recording is off: pass speaker_out= or record_speaker=True")
        return self.speaker.recording(), self.speaker.record_rate

    def check_alive(self) -> None:
        if self._board_error is not None:
            raise SimError(f"the simulated board failed: {self._board_error!r}")
        if self.firmware is not None:
            self.firmware.check_alive()
