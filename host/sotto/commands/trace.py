"""`sotto trace SESSION [--json]`: show a voice session's trace.

SESSION is a session id (the trace under the traces folder) or a path to a .jsonl
trace; `latest` picks the most recent one. --json prints the stored events, one JSON
object per line; otherwise one readable line per event and the run's summary.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from sotto import paths
from sotto.errors import SessionNotFound
from sotto.voice import events as ev
from sotto.voice.events import TraceEvent
from sotto.voice.trace import read_trace


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", help="session id, path to a .jsonl trace, or 'latest'")
    parser.add_argument("--json", action="store_true", help="one JSON object per event on stdout")
    parser.add_argument("--type", action="append", default=None, help="only events of this type (repeatable)")
    parser.add_argument("--redact", action="store_true", help="hide what was said (transcripts and replies)")


_TEXT_FIELDS = ("text", "user", "final_transcript", "reply", "spoken_prefix")


def _latest() -> str:
    traces = sorted(paths.traces_dir().glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not traces:
        raise SessionNotFound("no traces yet", hint=f"traces are written to {paths.traces_dir()}")
    return str(traces[-1])


def _redacted(event: TraceEvent) -> TraceEvent:
    data = {k: ("[redacted]" if k in _TEXT_FIELDS and v else v) for k, v in event.data.items()}
    return TraceEvent(event.type, event.session_id, event.turn_id, event.t_ms, data)


def _describe_or_raw(event: TraceEvent) -> str:
    """The readable line; an event whose fields have unexpected types (a hand-edited or foreign
    file) is shown field by field instead of failing the whole listing."""
    try:
        return _describe(event)
    except (TypeError, ValueError, AttributeError, KeyError):
        head = f"{event.t_ms / 1000:9.3f}s  {'session' if event.turn_id is None else f'turn {event.turn_id}':<8} {event.type:<20}"
        return f"{head} " + ", ".join(f"{k}={v!r}" for k, v in event.data.items())


def _describe(event: TraceEvent) -> str:
    d: dict[str, Any] = event.data
    turn = f"turn {event.turn_id}" if event.turn_id is not None else "session"
    head = f"{event.t_ms / 1000:9.3f}s  {turn:<8} {event.type:<20}"
    if event.type in (ev.PARTIAL_TRANSCRIPT, ev.FINAL_TRANSCRIPT):
        return f"{head} {d.get('text', '')!r}"
    if event.type == ev.AGENT_SPEECH_STARTED:
        return f"{head} {d.get('kind', '')}: {d.get('text', '')!r}"
    if event.type == ev.AGENT_SPEECH_CHUNK:
        return f"{head} {d.get('bytes', 0)} bytes at {d.get('offset', 0)} ({d.get('kind', '')})"
    if event.type == ev.BARGE_IN:
        return f"{head} by {d.get('source')} after {d.get('barge_in_ms')} ms; played {d.get('spoken_prefix', '')!r}"
    if event.type == ev.VOICE_TIMING:
        flag = f"  {d['code']}" if d.get("code") else ("  over target" if d.get("over_target") else "")
        return f"{head} {d.get('metric')} = {d.get('value_ms')} ms (target {d.get('target_ms')}){flag}"
    if event.type == ev.DEGRADE:
        return f"{head} {d.get('action')} at {d.get('after_ms')} ms"
    if event.type == ev.TURN_COMPLETED:
        extra = f", degraded by {', '.join(d.get('degrade_actions') or [])}" if d.get("degraded") else ""
        return f"{head} {d.get('stop_reason')}{extra}"
    if event.type == ev.SESSION_CLOSED:
        return f"{head} {d.get('status')} ({d.get('reason')})"
    rest = ", ".join(f"{k}={v}" for k, v in d.items())
    return f"{head} {rest}"


def run(args: argparse.Namespace) -> int:
    session = _latest() if args.session == "latest" else args.session
    shown = 0
    summary: dict[str, Any] | None = None
    for event in read_trace(session):
        if args.redact:
            event = _redacted(event)
        if event.type == ev.SESSION_CLOSED and isinstance(event.data.get("usage"), dict):
            summary = event.data["usage"]
        if args.type and event.type not in args.type:
            continue
        shown += 1
        if args.json:
            print(json.dumps(event.to_json_dict(), ensure_ascii=False))
        else:
            print(_describe_or_raw(event))
    if not args.json and summary and not args.type:
        keys = ("turns", "interrupted_turns", "degraded_turns", "failed_attempts", "first_byte_ms_p50",
                "first_answer_ms_p50", "total_turn_ms_p50", "barge_in_ms_p95")
        print("summary: " + ", ".join(f"{k}={summary[k]}" for k in keys if k in summary))
    if not args.json and shown == 0:
        print("(no events)")
    return 0
