"""`sotto bench serve`: N concurrent simulated clients against a running or built-in server.

Each client has its own session and a unique name: it introduces itself, says a few
things, and finally asks for its name with `"state": true`. The session's state (and
reply) must hold its own name and no other client's: no state crosses sessions.
Figures are the server's own per-turn measurements (first answer audio ready, from the
words' arrival, queueing included), plus what the clients saw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sotto.metrics import percentile
from sotto.errors import ConfigError, InputRefused
from sotto.memory.evaluation import MAX_SCRIPT_BYTES
from sotto.untrusted import read_json_file

NAMES = ("Ada", "Grace", "Linus", "Barbara", "Dennis", "Margaret", "Alan", "Edsger", "Frances", "Ken", "Radia",
         "Guido", "Hedy", "Niklaus", "Sophie", "Tim")
MIDDLE_TURNS = ("Remind me to buy milk tomorrow.", "The meeting is at 3 pm on Friday.", "I prefer tea to coffee.",
                "My flight leaves from gate 12.")
FINAL_TURN = "What is my name?"
FIRST_ANSWER_TARGET_MS = 1500.0


@dataclass
class ClientReport:
    name: str
    session_id: str
    turns: list[dict[str, Any]] = field(default_factory=list)
    acks: int = 0
    errors: list[str] = field(default_factory=list)
    reply_ms: list[float] = field(default_factory=list)  # client-side: sent -> reply message
    leaked: list[str] = field(default_factory=list)
    remembered: bool = False


def script_for(name: str, turns: int) -> list[str]:
    middle = [MIDDLE_TURNS[i % len(MIDDLE_TURNS)] for i in range(max(0, turns - 2))]
    return [f"My name is {name}."] + middle + ([FINAL_TURN] if turns >= 2 else [])


async def run_client(url: str, name: str, session_id: str, turns: int, names: list[str], token: str | None,
                     timeout_s: float, script: list[str] | None = None) -> ClientReport:
    from websockets.asyncio.client import connect

    report = ClientReport(name, session_id)
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        async with connect(f"{url}/ws/{session_id}", additional_headers=headers, max_size=16 * 1024 * 1024) as ws:
            conversation = script is not None
            script = script if script is not None else script_for(name, turns)
            for index, text in enumerate(script):
                last = index == len(script) - 1 and not conversation
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "text", "text": text, "state": last or conversation}))
                message: dict[str, Any] = {}
                for _ in range(10):  # an ack or two, then the reply (bounded)
                    message = json.loads(await asyncio.wait_for(ws.recv(), timeout_s))
                    if message.get("type") == "ack":
                        report.acks += 1
                        continue
                    break
                if message.get("type") != "reply":
                    report.errors.append(f"turn {index + 1}: {message.get('code')}: {message.get('message')}")
                    continue
                report.reply_ms.append((time.monotonic() - sent) * 1000.0)
                audio_s = _audio_seconds(message.get("audio"))
                report.turns.append({**message, "user": text, "audio_s": audio_s})
                if conversation and audio_s:
                    # A person hears the reply out before speaking again (as in the demo).
                    await asyncio.sleep(min(audio_s, 10.0))
                if last:
                    seen = json.dumps(message.get("state") or {}) + " " + str(message.get("reply") or "")
                    report.remembered = name in seen
                    report.leaked = [other for other in names if other != name and other in seen]
    except Exception as exc:  # noqa: BLE001 - a failed client is a counted error, the bench goes on
        report.errors.append(f"{type(exc).__name__}: {exc}")
    return report


def _audio_seconds(audio: Any) -> float | None:
    if not isinstance(audio, str):
        return None
    import base64
    import io
    import wave

    with wave.open(io.BytesIO(base64.b64decode(audio)), "rb") as wav:
        return round(wav.getnframes() / wav.getframerate(), 2)


def summarize(reports: list[ClientReport], turns: int, wall_s: float) -> dict[str, Any]:
    replies = [t for r in reports for t in r.turns]
    first = [float(t["first_answer_ms"]) for t in replies if t.get("first_answer_ms") is not None]
    over = [t for t in replies if t.get("first_answer_ms") is None or float(t["first_answer_ms"]) > FIRST_ANSWER_TARGET_MS]
    over_not_degraded = [t for t in over if not t.get("degraded")]
    actions: dict[str, int] = {}
    for t in replies:
        for action in t.get("degrade_actions") or []:
            actions[action] = actions.get(action, 0) + 1
    return {
        "clients": len(reports),
        "turns": len(replies),
        "errors": sum(len(r.errors) for r in reports),
        "first_answer_ms_p50": percentile(first, 50),
        "first_answer_ms_p95": percentile(first, 95),
        "degraded_turns": sum(1 for t in replies if t.get("degraded")),
        "over_budget_turns": len(over),
        "over_budget_not_degraded": len(over_not_degraded),
        "cross_session_leaks": sum(len(r.leaked) for r in reports),
        "names_remembered": sum(1 for r in reports if r.remembered),
        "acks_sent": sum(r.acks for r in reports),
        "degrade_actions": actions,
        "queued_ms_p95": percentile([float(t["queued_ms"]) for t in replies if t.get("queued_ms") is not None], 95),
        "reply_ms_p50": percentile([ms for r in reports for ms in r.reply_ms], 50),
        "reply_ms_p95": percentile([ms for r in reports for ms in r.reply_ms], 95),
        "turns_per_client": turns,
        "wall_s": round(wall_s, 1),
        "error_details": [e for r in reports for e in r.errors][:10],
    }


async def bench(url: str, clients: int, turns: int, token: str | None = None, timeout_s: float = 120.0,
                script: list[str] | None = None) -> tuple[dict[str, Any], list[ClientReport]]:
    tag = uuid.uuid4().hex[:6]
    names = [NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else chr(ord("A") + i // len(NAMES))) for i in range(clients)]
    started = time.monotonic()
    reports = await asyncio.gather(*(run_client(url, name, f"bench-{tag}-{i}", turns, names, token, timeout_s, script)
                                     for i, name in enumerate(names)))
    summary = summarize(list(reports), len(script) if script else turns, time.monotonic() - started)
    if script is not None:
        summary["names_remembered"] = None  # a fixed conversation: no per-client names to check
    return summary, list(reports)


def load_conversation(path: Path) -> list[str]:
    """The user turns of a demo conversation / memory script ({"turns": [{"user": ...}, ...]})."""
    try:
        data = read_json_file(path, what="conversation", max_bytes=MAX_SCRIPT_BYTES)
        turns = [str(t["user"]) for t in data["turns"]]
    except (InputRefused, KeyError, TypeError) as exc:
        raise ConfigError(f"cannot read a conversation from {path}: {exc}") from exc
    if not turns:
        raise ConfigError(f"{path} has no turns")
    return turns


# ---------------------------------------------------------------------- command line


def add_arguments(p: argparse.ArgumentParser) -> None:
    from sotto.engines.config import add_engine_arguments

    p.add_argument("--clients", type=int, default=8, help="concurrent simulated clients (default 8)")
    p.add_argument("--turns", type=int, default=3, help="turns per client (default 3: name, a fact, 'what is my name?')")
    p.add_argument("--url", help="a running server, e.g. ws://127.0.0.1:8765 (default: start one on loopback)")
    p.add_argument("--token", help="access token for --url")
    p.add_argument("--conversation", type=Path, metavar="FILE",
                   help="every client speaks this conversation's user turns (e.g. host/sotto/demo/conversation_en.json); "
                        "prints one JSON line per turn of the first client, then the summary")
    p.add_argument("--json", action="store_true",
                   help="one JSON object: clients, turns, errors, first_answer_ms_p50, first_answer_ms_p95, "
                        "degraded_turns, plus over_budget_not_degraded, cross_session_leaks and details")
    add_engine_arguments(p)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.clients <= 64:
        raise ConfigError("--clients must be 1..64")
    if not 1 <= args.turns <= 20:
        raise ConfigError("--turns must be 1..20")
    script = load_conversation(args.conversation) if args.conversation else None
    result, reports = asyncio.run(_run(args, script))
    if script is not None and reports:
        for index, turn in enumerate(reports[0].turns, 1):
            line = {"turn": index, "user": turn.get("user"), "reply": turn.get("reply"), "state": turn.get("state"),
                    "first_answer_ms": turn.get("first_answer_ms"), "total_ms": turn.get("total_ms"),
                    "audio_s": turn.get("audio_s"), "degraded": turn.get("degraded"),
                    "degrade_actions": turn.get("degrade_actions"), "reply_source": turn.get("reply_source"),
                    "errors": turn.get("errors", [])}
            print(json.dumps(line) if args.json else f"{index}. {line['user']!r} -> {line['reply']!r} "
                  f"({line['first_answer_ms']} ms, {line['reply_source']}, degraded={line['degraded']})")
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>26}: {value}")
    return 0 if result["errors"] == 0 and result["cross_session_leaks"] == 0 else 1


async def _run(args: argparse.Namespace, script: list[str] | None) -> tuple[dict[str, Any], list[ClientReport]]:
    if args.url:
        return await bench(args.url.rstrip("/"), args.clients, args.turns, args.token, script=script)
    from sotto.engines.config import EngineConfig
    from sotto.memory.store import Store
    from sotto.runtime import EngineOptions, Runtime, RuntimeOptions, load_engines
    from sotto.server.app import ServeOptions, SottoServer
    from sotto.server.limits import ServeLimits

    engines = await asyncio.to_thread(load_engines, EngineOptions(engine_config=EngineConfig.from_args(args)))
    with tempfile.TemporaryDirectory(prefix="sotto-bench-serve-") as folder:
        # The simulated clients all come from loopback: one client address, so its limits are the server's.
        slots = max(32, args.clients)
        options = ServeOptions(port=0, limits=ServeLimits(max_sessions=slots, max_sessions_per_client=slots,
                                                          max_connections_per_client=2 * slots))
        store = Store(Path(folder) / "bench.db")
        runtime = Runtime(engines, store, RuntimeOptions(answer_from_memory=True))
        server = SottoServer.from_runtime(runtime, options)
        await server.start()
        print(f"sotto bench serve: built-in server on {server.url} ({engines.labels()})", file=sys.stderr)
        try:
            result, reports = await bench(server.url, args.clients, args.turns, script=script)
        finally:
            await server.close()
            await asyncio.to_thread(runtime.close)
            store.close()
    result.update({"server": "built-in", **engines.labels()})
    return result, reports
