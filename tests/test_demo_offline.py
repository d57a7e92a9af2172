"""docs/DESIGN.md "Offline": a whole `sotto demo` run on the real models makes no network
attempt outside loopback, DNS included. Also the real-engine smoke test of the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

AUDIT = r'''
import ipaddress, json, socket, sys, time
attempts = []
def _outside(host):
    if host is None: return False
    if isinstance(host, bytes): host = host.decode("ascii", "replace")
    host = str(host)
    if host in ("localhost", ""): return False
    try:
        return not ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return True  # a name to resolve is a DNS lookup
def hook(event, args):
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        addr = args[1] if len(args) > 1 else None
        if isinstance(addr, tuple) and addr and _outside(addr[0]):
            attempts.append([event, repr(addr)])
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr"):
        if args and _outside(args[0]):
            attempts.append([event, repr(args[0])])
sys.addaudithook(hook)
from sotto.cli import main
started = time.monotonic()
code = main(["demo", "--json", "--script", sys.argv[1]])
# onnxruntime's telemetry lookup came ~9 s after import: stay past that window.
while time.monotonic() - started < 12: time.sleep(0.5)
with open(sys.argv[2], "w") as fh: json.dump({"code": code, "attempts": attempts}, fh)
'''


@pytest.mark.slow
@pytest.mark.realtime
def test_a_whole_demo_run_stays_offline_and_completes(tmp_path: Path) -> None:
    script = tmp_path / "two_turns.json"
    script.write_text(json.dumps({"name": "smoke", "lang": "en", "turns": [
        {"user": "My name is Maya."},
        {"user": "Sorry, not Maya, call me Mia."},
    ]}), encoding="utf-8")
    report = tmp_path / "report.json"
    env = {**os.environ, "SOTTO_HOME": str(tmp_path / "home")}
    env.pop("ORT_DISABLE_TELEMETRY", None)  # sotto must set it itself
    done = subprocess.run([sys.executable, "-c", AUDIT, str(script), str(report)], env=env,
                          capture_output=True, text=True, timeout=240)
    assert report.exists(), done.stderr[-2000:]
    outcome = json.loads(report.read_text())
    assert outcome["attempts"] == []
    assert outcome["code"] == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert [line.get("turn") for line in lines[:-1]] == [1, 2]
    summary = lines[-1]
    assert summary["summary"] is True and summary["llm"].startswith("SmolLM2") and "joe" in summary["tts"]
    # Recognised from the audio by pocketsphinx, offline too: the words may differ from the script's.
    assert summary["asr"] == "pocketsphinx en-us"
    assert all(line["final_transcript"] for line in lines[:-1])
    assert [line["user"] for line in lines[:-1]] == ["My name is Maya.", "Sorry, not Maya, call me Mia."]


def test_the_audit_hook_sees_a_dns_lookup(tmp_path: Path) -> None:
    """The detector itself works: a lookup of a public name is recorded (nothing is sent:
    the hook records before resolution, and a failure to resolve is fine)."""
    code = AUDIT.split("from sotto.cli import main")[0] + r'''
try:
    socket.getaddrinfo("example.invalid", 443)
except OSError:
    pass
try:
    socket.socket().connect(("127.0.0.1", 9))
except OSError:
    pass
print(json.dumps(attempts))
'''
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert json.loads(done.stdout) == [["socket.getaddrinfo", "'example.invalid'"]]
