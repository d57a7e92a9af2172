"""`sotto models fetch` against a local HTTP server on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import hashlib
import io
import socket
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from fakes_models import FakeModelServer

from sotto.errors import ChecksumMismatch, ConfigError, DownloadError, ModelNotFound
from sotto.models.fetch import SilentProgress, UnverifiedDownloadRefused, fetch_entry
from sotto.models.manifest import load_manifest, parse_manifest


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as running:
        yield running


def _zip_with(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        for name, data in files.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def _entry(server: FakeModelServer, *, sha: str | None, size: int | None = None, path: str = "/model.zip") -> Any:
    raw = {
        "models": [
            {
                "name": "vosk-model-test",
                "kind": "vosk",
                "lang": "en",
                "files": [{"url": server.base + path, "size": size, "sha256": sha, "archive": "zip"}],
                "use": "vosk-model-test",
            }
        ]
    }
    return parse_manifest(raw, Path("test-manifest.json")).get("vosk-model-test")


@pytest.fixture
def archive() -> bytes:
    # Incompressible content so that a partial download is a real prefix of many bytes.
    payload = hashlib.sha256(b"seed").digest() * 4096
    return _zip_with({"vosk-model-test/am/final.mdl": payload, "vosk-model-test/conf/model.conf": b"--x=1\n"})


def test_fetch_unpacks_a_verified_archive(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    entry = _entry(server, sha=hashlib.sha256(archive).hexdigest(), size=len(archive))
    result = fetch_entry(entry, tmp_path)
    assert result.path == tmp_path / "vosk-model-test"
    assert (result.path / "conf" / "model.conf").read_bytes() == b"--x=1\n"
    assert result.downloaded_bytes == len(archive) and not result.already_present
    assert not (tmp_path / ".downloads").exists()


def test_fetch_resumes_a_partial_download(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    half = len(archive) // 2
    (tmp_path / ".downloads").mkdir()
    (tmp_path / ".downloads" / "model.zip.part").write_bytes(archive[:half])
    entry = _entry(server, sha=hashlib.sha256(archive).hexdigest())
    result = fetch_entry(entry, tmp_path)
    assert server.requests == [("/model.zip", f"bytes={half}-")]
    assert result.downloaded_bytes == len(archive) - half
    assert (result.path / "am" / "final.mdl").exists()


def test_interrupted_download_is_resumed_by_the_next_fetch(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    entry = _entry(server, sha=hashlib.sha256(archive).hexdigest())
    server.cut_after = 10_000
    with pytest.raises(DownloadError, match="resume"):
        fetch_entry(entry, tmp_path)
    assert (tmp_path / ".downloads" / "model.zip.part").stat().st_size == 10_000
    server.cut_after = None
    result = fetch_entry(entry, tmp_path)
    assert server.requests[-1] == ("/model.zip", "bytes=10000-")
    assert (result.path / "am" / "final.mdl").exists()


def test_server_ignoring_range_restarts_from_zero(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    server.ignore_range = True
    (tmp_path / ".downloads").mkdir()
    (tmp_path / ".downloads" / "model.zip.part").write_bytes(archive[:5000])
    result = fetch_entry(entry := _entry(server, sha=hashlib.sha256(archive).hexdigest()), tmp_path)
    assert result.downloaded_bytes == len(archive) and entry.name == "vosk-model-test"


def test_complete_part_file_is_not_downloaded_again(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    (tmp_path / ".downloads").mkdir()
    (tmp_path / ".downloads" / "model.zip.part").write_bytes(archive)
    result = fetch_entry(_entry(server, sha=hashlib.sha256(archive).hexdigest()), tmp_path)
    assert result.downloaded_bytes == 0  # the server said 416: nothing left to fetch
    assert result.path.is_dir()


def test_checksum_mismatch_deletes_the_download(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    entry = _entry(server, sha="0" * 64)
    with pytest.raises(ChecksumMismatch, match="does not match") as info:
        fetch_entry(entry, tmp_path)
    assert info.value.code == "model_checksum"
    assert not (tmp_path / ".downloads" / "model.zip.part").exists()
    assert not (tmp_path / "vosk-model-test").exists()


def test_size_mismatch_deletes_the_download(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    entry = _entry(server, sha=hashlib.sha256(archive).hexdigest(), size=len(archive) + 5)
    with pytest.raises(ChecksumMismatch, match="bytes"):
        fetch_entry(entry, tmp_path)
    assert not (tmp_path / ".downloads" / "model.zip.part").exists()


def test_server_404_is_a_clear_error(server: FakeModelServer, tmp_path: Path) -> None:
    entry = _entry(server, sha="0" * 64, path="/missing.zip")
    with pytest.raises(DownloadError, match="HTTP 404"):
        fetch_entry(entry, tmp_path)


def test_connection_refused_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    raw = {
        "models": [
            {
                "name": "m",
                "kind": "llm",
                "files": [{"url": f"http://127.0.0.1:{port}/m.gguf", "sha256": "0" * 64, "path": "m.gguf"}],
                "use": "m.gguf",
            }
        ]
    }
    entry = parse_manifest(raw, Path("t.json")).get("m")
    with pytest.raises(DownloadError, match="cannot connect"):
        fetch_entry(entry, tmp_path, timeout=5)


def test_unverified_download_needs_permission(server: FakeModelServer, archive: bytes, tmp_path: Path) -> None:
    server.files["/model.zip"] = archive
    entry = _entry(server, sha=None)
    with pytest.raises(UnverifiedDownloadRefused, match="--allow-unverified"):
        fetch_entry(entry, tmp_path)
    assert server.requests == []  # refused before any network traffic
    progress = SilentProgress()
    result = fetch_entry(entry, tmp_path, allow_unverified=True, progress=progress)
    assert result.unverified == (server.base + "/model.zip",)
    assert any("cannot be verified" in w for w in progress.warnings)


def test_plain_files_go_to_their_paths(server: FakeModelServer, tmp_path: Path) -> None:
    onnx, config = b"onnx-bytes" * 100, b'{"audio": {"sample_rate": 22050}}'
    server.files["/v.onnx"] = onnx
    server.files["/v.onnx.json"] = config
    raw = {
        "models": [
            {
                "name": "voice",
                "kind": "tts",
                "files": [
                    {"url": server.base + "/v.onnx", "sha256": hashlib.sha256(onnx).hexdigest(), "path": "voice/v.onnx"},
                    {"url": server.base + "/v.onnx.json", "sha256": hashlib.sha256(config).hexdigest(), "path": "voice/v.onnx.json"},
                ],
                "use": "voice/v.onnx",
            }
        ]
    }
    result = fetch_entry(parse_manifest(raw, Path("t.json")).get("voice"), tmp_path)
    assert result.path.read_bytes() == onnx
    assert (tmp_path / "voice" / "v.onnx.json").read_bytes() == config


def test_present_model_is_not_fetched_again(server: FakeModelServer, tmp_path: Path) -> None:
    (tmp_path / "vosk-model-test").mkdir()
    result = fetch_entry(_entry(server, sha="0" * 64), tmp_path)
    assert result.already_present and server.requests == []


def test_archive_escaping_the_folder_is_refused(server: FakeModelServer, tmp_path: Path) -> None:
    evil = _zip_with({"../evil.txt": b"x"})
    server.files["/model.zip"] = evil
    with pytest.raises(DownloadError, match="unsafe"):
        fetch_entry(_entry(server, sha=hashlib.sha256(evil).hexdigest()), tmp_path / "models")
    assert not (tmp_path / "evil.txt").exists()


def test_broken_archive_is_a_clear_error(server: FakeModelServer, tmp_path: Path) -> None:
    junk = b"this is not a zip file" * 10
    server.files["/model.zip"] = junk
    with pytest.raises(DownloadError, match="not a valid zip"):
        fetch_entry(_entry(server, sha=hashlib.sha256(junk).hexdigest()), tmp_path)


# ------------------------------------------------------------------ the manifest


def test_project_manifest_lists_the_required_models() -> None:
    manifest = load_manifest()
    kinds = {(e.kind, e.lang) for e in manifest.entries}
    assert {("vosk", "en"), ("vosk", "zh"), ("tts", "en"), ("tts", "zh")} <= kinds
    assert len(manifest.by_kind("llm")) >= 1
    for entry in manifest.entries:
        assert all(f.url.startswith("https://") for f in entry.files)
    assert manifest.get("vosk-model-small-en-us-0.15").files[0].verified


def test_unknown_model_name_lists_the_choices() -> None:
    with pytest.raises(ModelNotFound, match="choose from"):
        load_manifest().get("no-such-model")


@pytest.mark.parametrize(
    "bad",
    [
        {"models": "x"},
        {"models": [{"name": "a", "kind": "car", "files": [], "use": "a"}]},
        {"models": [{"name": "a", "kind": "llm", "files": [{"url": "ftp://x/a", "path": "a"}], "use": "a"}]},
        {"models": [{"name": "a", "kind": "llm", "files": [{"url": "https://x/a", "sha256": "12", "path": "a"}], "use": "a"}]},
        {"models": [{"name": "a", "kind": "llm", "files": [{"url": "https://x/a", "path": "../a"}], "use": "a"}]},
        {"models": [{"name": "a", "kind": "llm", "files": [{"url": "https://x/a", "path": "a"}], "use": "/etc/a"}]},
        {"models": [{"name": "a", "kind": "llm", "files": [{"url": "https://x/a", "archive": "rar"}], "use": "a"}]},
    ],
)
def test_bad_manifests_are_config_errors(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        parse_manifest(bad, Path("bad.json"))


def test_unreadable_manifest_file(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read"):
        load_manifest(path)
    with pytest.raises(ConfigError, match="does not exist"):
        load_manifest(tmp_path / "none.json")
