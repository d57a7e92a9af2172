"""`sotto models list|fetch` through the command line (local server, fake speed cache)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from fakes_models import FakeModelServer

import sotto.engines.speed as speed_module
from sotto.cli import main
from sotto.models.resolve import ResolvedModel
from sotto.engines.speed import (
    SpeedCache,
    SpeedReport,
    budget_warnings,
    estimate_first_answer_ms,
    speed_of,
)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SOTTO_MODELS", str(tmp_path / "models"))
    (tmp_path / "models").mkdir()
    return tmp_path


def _llm_report(prompt_tps: float, gen_tps: float) -> SpeedReport:
    return SpeedReport("llm", "x.gguf", 0.0, 10.0, {"prompt_tok_s": prompt_tps, "gen_tok_s": gen_tps})


def test_first_answer_estimate_and_budget_warning() -> None:
    fast, slow = _llm_report(600.0, 80.0), _llm_report(50.0, 10.0)
    tts = SpeedReport("tts", "v.onnx", 0.0, 10.0, {"rtf": 0.2})
    assert estimate_first_answer_ms(fast, tts) == pytest.approx(80 / 600 * 1000 + 15 / 80 * 1000 + 0.2 * 1500, abs=0.1)
    model = ResolvedModel("llm", "x", Path("x.gguf"), "path")
    assert budget_warnings(model, fast, tts) == []
    [warning] = budget_warnings(model, slow, tts)
    assert "over the hard limit" in warning and "x:" in warning
    [middling] = budget_warnings(model, _llm_report(100.0, 20.0), tts)  # 800 + 750 + 300 ms
    assert "over the target" in middling


def test_slow_voice_and_recognizer_are_warned() -> None:
    voice = ResolvedModel("tts", "v", Path("v.onnx"), "path")
    vosk = ResolvedModel("vosk", "k", Path("k"), "path")
    assert budget_warnings(voice, SpeedReport("tts", "v", 0, 0, {"rtf": 0.9}))
    assert budget_warnings(vosk, SpeedReport("vosk", "k", 0, 0, {"rtf": 1.2}))
    assert not budget_warnings(vosk, SpeedReport("vosk", "k", 0, 0, {"rtf": 0.3}))


def test_speed_cache_is_keyed_by_file_size_and_mtime(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model_file = isolated / "models" / "m.gguf"
    model_file.write_bytes(b"GGUF1")
    model = ResolvedModel("llm", "m", model_file, "models")
    calls: list[Path] = []

    def fake_measure(path: Path) -> SpeedReport:
        calls.append(path)
        return _llm_report(500.0, 70.0)

    monkeypatch.setitem(speed_module.MEASURERS, "llm", fake_measure)
    speed_of(model, SpeedCache())
    speed_of(model, SpeedCache())  # a new cache object reads the file written by the first
    assert len(calls) == 1
    model_file.write_bytes(b"GGUF12")  # a different file: measured again
    speed_of(model, SpeedCache())
    assert len(calls) == 2
    speed_of(model, SpeedCache(), force=True)
    assert len(calls) == 3


def test_measurement_failure_is_reported_not_raised(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model_file = isolated / "models" / "bad.gguf"
    model_file.write_bytes(b"nope")
    report = speed_of(ResolvedModel("llm", "bad", model_file, "models"), SpeedCache())
    assert report.error and "not a GGUF file" in report.error


def test_corrupt_cache_file_is_ignored(isolated: Path) -> None:
    path = isolated / "cache.json"
    path.write_text("{broken", encoding="utf-8")
    model_file = isolated / "models" / "m.gguf"
    model_file.write_bytes(b"x")
    assert SpeedCache(path).get(ResolvedModel("llm", "m", model_file, "models")) is None


def test_list_json_without_measuring(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (isolated / "models" / "extra.gguf").write_bytes(b"GGUF")
    assert main(["models", "list", "--json", "--no-measure"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows, summary = lines[:-1], lines[-1]
    assert summary["summary"] is True and summary["models"] == len(rows)
    extra = next(r for r in rows if r["name"] == "extra")
    assert extra["source"] == "models" and extra["default"] is True and extra["speed"] is None
    assert {"kind", "name", "lang", "source", "size_bytes", "path"} <= set(extra)
    assert "vosk-model-small-en-us-0.15" in summary["fetchable"]


def _manifest(tmp: Path, server: FakeModelServer, body: bytes, sha: str | None) -> Path:
    path = tmp / "manifest.json"
    entry = {"name": "tiny-llm", "kind": "llm", "files": [{"url": server.base + "/tiny.gguf", "sha256": sha, "path": "tiny.gguf"}], "use": "tiny.gguf"}
    path.write_text(json.dumps({"models": [entry]}), encoding="utf-8")
    return path


def test_fetch_command_downloads_into_dest(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = b"GGUF" + b"\x00" * 5000
    with FakeModelServer() as server:
        server.files["/tiny.gguf"] = body
        manifest = _manifest(isolated, server, body, hashlib.sha256(body).hexdigest())
        dest = isolated / "elsewhere"
        assert main(["models", "fetch", "tiny-llm", "--dest", str(dest), "--manifest", str(manifest)]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == str(dest / "tiny.gguf")
    assert "verified" in out.err
    assert (dest / "tiny.gguf").read_bytes() == body


def test_fetch_command_errors_are_clear(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = b"GGUF" + b"\x01" * 100
    with FakeModelServer() as server:
        server.files["/tiny.gguf"] = body
        manifest = _manifest(isolated, server, body, "f" * 64)
        assert main(["models", "fetch", "tiny-llm", "--manifest", str(manifest)]) == 1
        assert "error[model_checksum]" in capsys.readouterr().err
        unverified = _manifest(isolated, server, body, None)
        assert main(["models", "fetch", "tiny-llm", "--manifest", str(unverified)]) == 1
        assert "--allow-unverified" in capsys.readouterr().err
        assert main(["models", "fetch", "tiny-llm", "--manifest", str(unverified), "--allow-unverified"]) == 0
        assert "UNVERIFIED" in capsys.readouterr().err
    assert main(["models", "fetch", "no-such", "--manifest", str(manifest)]) == 1
    assert "error[model_not_found]" in capsys.readouterr().err


def test_list_includes_a_configured_model(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = isolated / "mine.gguf"
    mine.write_bytes(b"GGUF")
    assert main(["models", "list", "--json", "--no-measure", "--llm", str(mine)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()][:-1]
    chosen = [r for r in rows if r["kind"] == "llm" and r["default"]]
    assert [r["path"] for r in chosen] == [str(mine)] and chosen[0]["source"] == "path"


def test_list_with_a_missing_configured_model_fails_clearly(isolated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--no-measure", "--llm", str(isolated / "none.gguf")]) == 1
    assert "error[model_not_found]" in capsys.readouterr().err
