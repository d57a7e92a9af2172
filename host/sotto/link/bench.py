"""Link benchmark: saturate both directions with checkable BENCH frames.

The host sends COMMAND(CMD_BENCH, payload/8, seconds); the board then sends BENCH
frames as fast as its line allows and checks every BENCH frame it receives, ending
with a LOG line `bench rx= bad= crc= lost= tx= resync=`. Meanwhile the host sends its
own BENCH frames (paced to the line, behind PINGs, so RTT measures the line and not a
queue) and checks every frame it receives.

Counts are summed over both directions:
  frames_sent       BENCH frames sent (host's + board's)
  frames_received   BENCH frames delivered (passed CRC), checked or not
  frames_lost       sent - received (CRC-rejected, dropped on the line, lost while unplugged)
  crc_rejected      frames dropped by a failed CRC, both receivers
  corrupt_delivered delivered BENCH frames whose payload is not what was sent (must be 0)
  resyncs           times a receiver resynchronised on a delimiter after a bad frame
  payload_kbps      {"up": board->host, "down": host->board}, BENCH payload kbit/s delivered
  rtt_ms_p50/p95    PING -> PONG round trips during the run

When the board reboots mid-run its counters for the running segment are lost with its
RAM; the host restarts the board's side for the remaining time and reports the
unconfirmed segment's host frames as lost.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from sotto_fw import wire

from sotto.metrics import percentile
from sotto.errors import LinkError
from sotto.link import messages as m
from sotto.link.board_link import BoardLink
from sotto.link.formats import frame_line_bytes, line_bytes_per_s
from sotto.link.events import LinkStatus

log = logging.getLogger("sotto.bench")

HOST_STOP_EARLY_S = 0.15  # the host stops before the board does, so its last frames are counted
START_RETRY_S = 0.6  # no BENCH frame this long after the command: send it again (it may have been lost)
_LOG_RE = re.compile(r"(\w+)=(-?\d+)")


class BenchFaults(Protocol):
    """What the bench needs from a simulated board to inject faults."""

    def set_corruption(self, flip_probability: float = 0.0, drop_probability: float = 0.0,
                       direction: str = "both") -> None: ...

    def unplug(self) -> None: ...

    def replug(self) -> None: ...

    def reset(self) -> None: ...


@dataclass
class BenchOptions:
    seconds: float = 10.0
    payload: int = 128
    corrupt: float = 0.0
    unplug_at: float | None = None
    unplug_for: float = 0.5
    reset_at: float | None = None
    ping_interval_s: float = 0.02
    audio_seconds: float = 2.0  # uplink audio measured before the bench (0: skip)
    report_timeout_s: float = 8.0


@dataclass
class _Segment:
    action_id: int
    started: float
    host_sent: int = 0
    report: dict[str, int] | None = None
    up_received: int = 0
    killed: bool = False


@dataclass
class _UpCounters:
    ok: int = 0
    bad: int = 0
    first_t: float = 0.0
    last_t: float = 0.0


@dataclass
class _AudioUpMeter:
    frames: int = 0
    payload_bytes: int = 0
    line_bytes: int = 0
    pcm_bytes: int = 0
    first_t: float = 0.0
    last_t: float = 0.0


@dataclass
class BenchResult:
    data: dict[str, Any] = field(default_factory=dict)


class LinkBench:
    def __init__(self, link: BoardLink, options: BenchOptions, faults: BenchFaults | None = None) -> None:
        if options.payload % 8 or not 8 <= options.payload <= wire.MAX_PAYLOAD:
            raise LinkError(f"bench payload must be a multiple of 8 in 8..{wire.MAX_PAYLOAD}, got {options.payload}")
        if (options.corrupt or options.unplug_at is not None or options.reset_at is not None) and faults is None:
            raise LinkError("fault injection (--corrupt, --unplug-at, --reset-at) needs the simulated board (--sim)")
        self.link = link
        self.options = options
        self.faults = faults
        self.segments: list[_Segment] = []
        self.up = _UpCounters()
        self.audio = _AudioUpMeter()
        self.link_events: list[dict[str, Any]] = []
        self._measuring_audio = False
        self._t0 = 0.0
        self._reset_seen = asyncio.Event()
        self._report_seen = asyncio.Event()

    # ------------------------------------------------------------------ listening

    def _on_message(self, message: m.Message, t: float) -> None:
        if isinstance(message, m.Bench):
            if not self.up.first_t:
                self.up.first_t = t
            self.up.last_t = t
            if message.valid:
                self.up.ok += 1
            else:
                self.up.bad += 1
            if self.segments:
                self.segments[-1].up_received += 1
        elif isinstance(message, m.Log) and message.text.startswith("bench "):
            report = {k: int(v) for k, v in _LOG_RE.findall(message.text)}
            for seg in self.segments:
                if seg.report is None and not seg.killed:
                    seg.report = report
                    break
            self._report_seen.set()
        elif isinstance(message, m.AudioUp) and self._measuring_audio:
            if not self.audio.first_t:
                self.audio.first_t = t
            self.audio.last_t = t
            self.audio.frames += 1
            payload = wire.AUDIO_UP_HEAD + len(message.audio)
            self.audio.payload_bytes += payload
            self.audio.line_bytes += frame_line_bytes(payload)

    async def _watch_status(self) -> None:
        async for event in self.link.events():
            if isinstance(event, LinkStatus):
                self.link_events.append({"t": round(time.monotonic() - self._t0, 3), "state": event.state,
                                         "detail": event.detail})
                if event.state == "reset":
                    self._reset_seen.set()

    # ------------------------------------------------------------------ running

    async def run(self) -> dict[str, Any]:
        link, opts = self.link, self.options
        remove = link.add_listener(self._on_message)
        self._t0 = time.monotonic()
        watcher = asyncio.create_task(self._watch_status())
        saved_ping = link.options.ping_interval_s
        rtt_start = len(link.clock.rtts_ms)
        try:
            if opts.audio_seconds > 0:
                self._measuring_audio = True
                await asyncio.sleep(opts.audio_seconds)
                self._measuring_audio = False
            link.options.ping_interval_s = opts.ping_interval_s
            rtt_start = len(link.clock.rtts_ms)
            dec = link.decoder
            crc0, resync0 = dec.crc_errors, dec.resyncs
            await self._run_bench()
            crc_up, resync_up = dec.crc_errors - crc0, dec.resyncs - resync0
        finally:
            link.options.ping_interval_s = saved_ping
            if self.faults is not None:
                self.faults.set_corruption(0.0)
            remove()
            watcher.cancel()
        rtts = link.clock.rtts_ms[rtt_start:]
        return self._result(crc_up, resync_up, rtts)

    async def _start_segment(self, seconds: float) -> _Segment:
        action = await self.link.command(wire.CMD_BENCH, self.options.payload // 8, max(1, round(seconds)), wait=False)
        seg = _Segment(action, time.monotonic())
        self.segments.append(seg)
        return seg

    async def _run_bench(self) -> None:
        link, opts = self.link, self.options
        payload = opts.payload
        start = time.monotonic()
        end = start + opts.seconds
        seg = await self._start_segment(opts.seconds)
        # Wait for the board's first BENCH frame (resend the command if it got lost).
        while self.up.ok + self.up.bad == 0:
            try:
                await asyncio.wait_for(self._wait_up(), START_RETRY_S)
            except asyncio.TimeoutError:
                self.segments.pop()
                seg = await self._start_segment(end - time.monotonic())
        if self.faults is not None and opts.corrupt:
            self.faults.set_corruption(opts.corrupt)
        fault_task = asyncio.create_task(self._inject_faults(start))
        counter = 0
        host_end = seg.started + opts.seconds - HOST_STOP_EARLY_S
        try:
            while True:
                now = time.monotonic()
                if self._reset_seen.is_set():
                    # The board rebooted: its half of the segment is gone. Restart it for the time left.
                    self._reset_seen.clear()
                    seg.killed = True
                    left = end - now
                    if left < 1.0:
                        break
                    while not link.attached:
                        await asyncio.sleep(0.01)
                    seg = await self._start_segment(left)
                    host_end = seg.started + round(left) - HOST_STOP_EARLY_S
                if now >= host_end:
                    break
                await link.send_bulk(m.Bench.make(counter, payload))
                counter += 1
                seg.host_sent += 1
        finally:
            fault_task.cancel()
        self.host_send_span = time.monotonic() - start
        # The line goes clean for the reports: the measured traffic is over.
        if self.faults is not None:
            self.faults.set_corruption(0.0)
        deadline = time.monotonic() + max(opts.seconds, 1.0) + opts.report_timeout_s
        while any(s.report is None and not s.killed for s in self.segments):
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkError("the board did not report its bench counts (LOG 'bench rx=...') in time")
            self._report_seen.clear()
            try:
                await asyncio.wait_for(self._report_seen.wait(), left)
            except asyncio.TimeoutError:
                continue
            if self._reset_seen.is_set():
                self._reset_seen.clear()
                for s in self.segments:
                    if s.report is None:
                        s.killed = True

    async def _wait_up(self) -> None:
        while self.up.ok + self.up.bad == 0:
            await asyncio.sleep(0.005)

    async def _inject_faults(self, start: float) -> None:
        assert self.faults is not None or (self.options.unplug_at is None and self.options.reset_at is None)
        plan: list[tuple[float, str]] = []
        if self.options.unplug_at is not None:
            plan.append((self.options.unplug_at, "unplug"))
            plan.append((self.options.unplug_at + self.options.unplug_for, "replug"))
        if self.options.reset_at is not None:
            plan.append((self.options.reset_at, "reset"))
        for at, action in sorted(plan):
            await asyncio.sleep(max(0.0, start + at - time.monotonic()))
            assert self.faults is not None
            log.info("bench: %s at %.2f s", action, time.monotonic() - start)
            self.link_events.append({"t": round(time.monotonic() - self._t0, 3), "state": f"injected {action}",
                                     "detail": ""})
            getattr(self.faults, action)()

    # ------------------------------------------------------------------ result

    def _result(self, crc_up: int, resync_up: int, rtts: list[float]) -> dict[str, Any]:
        opts, link = self.options, self.link
        down_sent = down_rx = down_bad = down_crc = down_resync = 0
        up_sent = 0
        killed = 0
        for seg in self.segments:
            down_sent += seg.host_sent
            if seg.report is None:
                killed += 1
                up_sent += seg.up_received  # the board's own count died with it: count what arrived
                continue
            r = seg.report
            down_rx += r.get("rx", 0) + r.get("bad", 0)
            down_bad += r.get("bad", 0)
            down_crc += r.get("crc", 0)
            down_resync += r.get("resync", r.get("crc", 0))
            up_sent += r.get("tx", r.get("sent", 0))
        up_rx = self.up.ok + self.up.bad
        up_sent = max(up_sent, up_rx)
        frames_sent = down_sent + up_sent
        frames_received = down_rx + up_rx
        up_span = max(1e-3, self.up.last_t - self.up.first_t)
        up_kbps = (self.up.ok - 1) * opts.payload * 8 / 1000 / up_span if self.up.ok > 1 else 0.0
        down_span = max(1e-3, getattr(self, "host_send_span", opts.seconds))
        down_kbps = (down_rx - down_bad) * opts.payload * 8 / 1000 / down_span
        line_kbps = line_bytes_per_s(link.options.baud) * 8 / 1000
        choice = link.choice
        result: dict[str, Any] = {
            "frames_sent": frames_sent,
            "frames_received": frames_received,
            "frames_lost": max(0, frames_sent - frames_received),
            "crc_rejected": crc_up + down_crc,
            "corrupt_delivered": self.up.bad + down_bad,
            "resyncs": resync_up + down_resync,
            "payload_kbps": {"up": round(up_kbps, 1), "down": round(down_kbps, 1)},
            "rtt_ms_p50": percentile(rtts, 50, digits=3),
            "rtt_ms_p95": percentile(rtts, 95, digits=3),
            "baud": link.options.baud,
            "line_kbps": round(line_kbps, 1),
            "seconds": opts.seconds,
            "payload_bytes": opts.payload,
            "corrupt": opts.corrupt,
            "directions": {
                "up": {"sent": up_sent, "received": up_rx, "corrupt": self.up.bad, "crc_rejected": crc_up},
                "down": {"sent": down_sent, "received": down_rx, "corrupt": down_bad, "crc_rejected": down_crc},
            },
            "rtt_samples": len(rtts),
            "unconfirmed_segments": killed,
            "link_events": self.link_events,
        }
        if choice is not None:
            result["formats"] = {
                "mic": f"{wire.FORMAT_NAMES[choice.mic_format]}@{choice.mic_rate}",
                "speaker": f"{wire.FORMAT_NAMES[choice.speaker_format]}@{choice.speaker_rate}",
                "frame_ms": choice.frame_ms,
            }
        a = self.audio
        if a.frames > 1 and choice is not None:
            span = max(1e-3, a.last_t - a.first_t)
            per_frame_pcm = 2 * choice.mic_rate * choice.frame_ms / 1000
            result["uplink_audio"] = {
                "format": f"{wire.FORMAT_NAMES[choice.mic_format]}@{choice.mic_rate}",
                "frames": a.frames,
                "payload_bytes_per_s": round((a.payload_bytes * (a.frames - 1) / a.frames) / span),
                "line_bytes_per_s": round((a.line_bytes * (a.frames - 1) / a.frames) / span),
                "line_share": round((a.line_bytes * (a.frames - 1) / a.frames) / span / line_bytes_per_s(link.options.baud), 3),
                "audio_seconds_per_second": round((a.frames - 1) * per_frame_pcm / 2 / choice.mic_rate / span, 3),
            }
        return result


def summarize(result: dict[str, Any]) -> str:
    """Human-readable form of a bench result."""
    lines = []
    fm = result.get("formats")
    lines.append(f"link bench: {result['baud']} baud (line {result['line_kbps']} kbit/s each way), "
                 f"{result['seconds']:g} s, {result['payload_bytes']}-byte BENCH payloads"
                 + (f", corrupt {result['corrupt']}" if result.get("corrupt") else ""))
    if fm:
        lines.append(f"  negotiated audio: mic {fm['mic']}, speaker {fm['speaker']}, {fm['frame_ms']} ms frames")
    ua = result.get("uplink_audio")
    if ua:
        lines.append(f"  uplink audio measured: {ua['format']} {ua['payload_bytes_per_s']} B/s payload, "
                     f"{ua['line_bytes_per_s']} B/s on the line ({100 * ua['line_share']:.0f}% of it), "
                     f"{ua['audio_seconds_per_second']} s of audio per second")
    k = result["payload_kbps"]
    lines.append(f"  payload: up {k['up']} kbit/s ({100 * k['up'] / result['line_kbps']:.0f}% of line), "
                 f"down {k['down']} kbit/s ({100 * k['down'] / result['line_kbps']:.0f}%)")
    lines.append(f"  frames: sent {result['frames_sent']}, received {result['frames_received']}, "
                 f"lost {result['frames_lost']}, CRC-rejected {result['crc_rejected']}, "
                 f"corrupt delivered {result['corrupt_delivered']}, resyncs {result['resyncs']}")
    lines.append(f"  RTT: p50 {result['rtt_ms_p50']} ms, p95 {result['rtt_ms_p95']} ms ({result['rtt_samples']} PINGs)")
    for ev in result.get("link_events", []):
        lines.append(f"  t={ev['t']:.2f}s {ev['state']}: {ev['detail']}")
    if result.get("unconfirmed_segments"):
        lines.append(f"  {result['unconfirmed_segments']} segment(s) unconfirmed: the board rebooted before reporting")
    return "\n".join(lines)
