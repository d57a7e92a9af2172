"""The model download manifest (`models/manifest.json`): what `sotto models fetch` can get.

Each entry names a model (kind llm, tts or vosk, and a language), the files to
download (url, size and sha256 when known, archive type) and the file or folder to
use once unpacked, relative to the models folder.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sotto.errors import ConfigError, ModelNotFound
from sotto.paths import REPO_ROOT

MODEL_KINDS = ("llm", "tts", "vosk")
ARCHIVE_TYPES = ("zip", "tar.gz", "tar")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_SAFE_RELATIVE = re.compile(r"^[A-Za-z0-9._\-/]+$")


def default_manifest_path() -> Path:
    return REPO_ROOT / "models" / "manifest.json"


@dataclass(frozen=True)
class ManifestFile:
    url: str
    size: int | None
    sha256: str | None
    archive: str | None  # None: a plain file saved at `path`
    path: str | None  # where a plain file goes, relative to the models folder

    @property
    def verified(self) -> bool:
        return self.sha256 is not None

    @property
    def download_name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]


@dataclass(frozen=True)
class ManifestEntry:
    name: str
    kind: str
    lang: str
    description: str
    files: tuple[ManifestFile, ...]
    use: str  # file or folder to use after download, relative to the models folder

    @property
    def unverified_files(self) -> list[ManifestFile]:
        return [f for f in self.files if not f.verified]

    @property
    def total_size(self) -> int | None:
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)


@dataclass(frozen=True)
class Manifest:
    entries: tuple[ManifestEntry, ...]
    source: Path

    def get(self, name: str) -> ManifestEntry:
        for entry in self.entries:
            if entry.name == name:
                return entry
        names = ", ".join(e.name for e in self.entries)
        raise ModelNotFound(f"no model named {name!r} in {self.source}", hint=f"choose from: {names}")

    def by_kind(self, kind: str) -> list[ManifestEntry]:
        return [e for e in self.entries if e.kind == kind]


def _relative_path(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or not _SAFE_RELATIVE.match(value):
        raise ConfigError(f"{where}: expected a relative path of letters, digits, . _ - /, got {value!r}")
    parts = value.split("/")
    if value.startswith("/") or ".." in parts or "" in parts:
        raise ConfigError(f"{where}: path {value!r} must stay inside the models folder")
    return value


def _parse_file(raw: Any, where: str) -> ManifestFile:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object")
    url = raw.get("url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ConfigError(f"{where}: url must be an http(s) URL, got {url!r}")
    size = raw.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size <= 0):
        raise ConfigError(f"{where}: size must be a positive integer or null")
    sha256 = raw.get("sha256")
    if sha256 is not None:
        if not isinstance(sha256, str) or not _SHA256.match(sha256.lower()):
            raise ConfigError(f"{where}: sha256 must be 64 hex digits or null")
        sha256 = sha256.lower()
    archive = raw.get("archive")
    if archive is not None and archive not in ARCHIVE_TYPES:
        raise ConfigError(f"{where}: archive must be one of {ARCHIVE_TYPES} or null, got {archive!r}")
    path = raw.get("path")
    if archive is None:
        path = _relative_path(path, f"{where}.path")
    elif path is not None:
        raise ConfigError(f"{where}: an archive unpacks into the models folder; drop its path")
    return ManifestFile(url=url, size=size, sha256=sha256, archive=archive, path=path)


def parse_manifest(data: Any, source: Path) -> Manifest:
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ConfigError(f"{source}: expected an object with a `models` list")
    entries: list[ManifestEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["models"]):
        where = f"{source}: models[{index}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected an object")
        name = raw.get("name")
        if not isinstance(name, str) or not _SAFE_RELATIVE.match(name) or "/" in name:
            raise ConfigError(f"{where}: name must be a simple file name, got {name!r}")
        if name in seen:
            raise ConfigError(f"{where}: duplicate name {name!r}")
        seen.add(name)
        kind = raw.get("kind")
        if kind not in MODEL_KINDS:
            raise ConfigError(f"{where}: kind must be one of {MODEL_KINDS}, got {kind!r}")
        files_raw = raw.get("files")
        if not isinstance(files_raw, list) or not files_raw:
            raise ConfigError(f"{where}: files must be a non-empty list")
        files = tuple(_parse_file(f, f"{where}.files[{i}]") for i, f in enumerate(files_raw))
        entries.append(
            ManifestEntry(
                name=name,
                kind=str(kind),
                lang=str(raw.get("lang") or "und"),
                description=str(raw.get("description") or ""),
                files=files,
                use=_relative_path(raw.get("use"), f"{where}.use"),
            )
        )
    return Manifest(entries=tuple(entries), source=source)


def load_manifest(path: Path | None = None) -> Manifest:
    source = path or default_manifest_path()
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"model manifest {source} does not exist") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read model manifest {source}: {exc}") from exc
    return parse_manifest(data, source)
