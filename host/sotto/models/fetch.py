"""Download a model from the manifest: resumable, verified, unpacked into the models folder.

Only the `sotto models fetch` command calls this; nothing in sotto downloads at run
time. A download goes to `<dest>/.downloads/<file>.part`, resumes with an HTTP Range
request when a partial file exists, is checked against its sha256 (a mismatch deletes
it), and is then unpacked or moved into place. Files without a published checksum
are refused unless the caller allows unverified downloads.
"""

from __future__ import annotations

import hashlib
import shutil
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from sotto.errors import ChecksumMismatch, DownloadError
from sotto.untrusted import ascii_int
from sotto.models.manifest import ManifestEntry, ManifestFile

CHUNK_BYTES = 256 * 1024
USER_AGENT = "sotto-models-fetch/1"


class ProgressReporter(Protocol):
    def start(self, label: str, total: int | None, done: int) -> None: ...

    def advance(self, nbytes: int) -> None: ...

    def finish(self) -> None: ...

    def warn(self, message: str) -> None: ...


class SilentProgress:
    """A ProgressReporter that reports nothing (library use, tests)."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def start(self, label: str, total: int | None, done: int) -> None:
        pass

    def advance(self, nbytes: int) -> None:
        pass

    def finish(self) -> None:
        pass

    def warn(self, message: str) -> None:
        self.warnings.append(message)


@dataclass(frozen=True)
class FetchResult:
    entry: ManifestEntry
    path: Path  # the file or folder to use
    downloaded_bytes: int
    already_present: bool
    unverified: tuple[str, ...]  # URLs that had no checksum


class UnverifiedDownloadRefused(DownloadError):
    code = "model_unverified"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(CHUNK_BYTES), b""):
            digest.update(block)
    return digest.hexdigest()


def _open(url: str, offset: int, timeout: float) -> urllib.request.HTTPResponse:  # type: ignore[name-defined]
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if offset:
        request.add_header("Range", f"bytes={offset}-")
    try:
        return urllib.request.urlopen(request, timeout=timeout)  # type: ignore[no-any-return]
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and offset:
            raise  # the caller decides: the partial file may already be complete
        raise DownloadError(f"{url}: the server answered HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise DownloadError(f"{url}: cannot connect ({exc.reason})", hint="check the network or the URL") from exc
    except (TimeoutError, OSError) as exc:
        raise DownloadError(f"{url}: {exc}") from exc


def download_file(
    url: str,
    part: Path,
    *,
    expected_size: int | None,
    progress: ProgressReporter,
    timeout: float = 30.0,
) -> int:
    """Download `url` into `part`, resuming from its current size. Returns bytes fetched now."""
    part.parent.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if part.exists() else 0
    if expected_size is not None and offset > expected_size:
        part.unlink()  # longer than the real file: it is not a prefix of it
        offset = 0
    if expected_size is not None and offset == expected_size:
        return 0
    try:
        response = _open(url, offset, timeout)
    except urllib.error.HTTPError:
        return 0  # 416 on a resume: nothing more to fetch, the checksum decides
    fetched = 0
    with response:
        status = getattr(response, "status", 200)
        if offset and status != 206:
            offset = 0  # the server ignored the Range header: start over
        length = response.headers.get("Content-Length")
        size = ascii_int(length, max_digits=15) if length else None  # a header from the network
        total = offset + size if size is not None else expected_size
        progress.start(part.name.removesuffix(".part"), total, offset)
        mode = "ab" if offset else "wb"
        try:
            with part.open(mode) as handle:
                while True:
                    try:
                        block = response.read(CHUNK_BYTES)
                    except (TimeoutError, OSError) as exc:
                        raise DownloadError(
                            f"{url}: connection lost after {offset + fetched} bytes ({exc})",
                            hint="run the same command again to resume",
                        ) from exc
                    if not block:
                        break
                    handle.write(block)
                    fetched += len(block)
                    progress.advance(len(block))
        finally:
            progress.finish()
    if total is not None and offset + fetched < total:
        raise DownloadError(
            f"{url}: download ended early at {offset + fetched} of {total} bytes",
            hint="run the same command again to resume",
        )
    return fetched


def verify(path: Path, file: ManifestFile) -> None:
    """Check size and sha256; a file that fails is deleted."""
    if file.size is not None and path.stat().st_size != file.size:
        actual = path.stat().st_size
        path.unlink()
        raise ChecksumMismatch(f"{file.url}: expected {file.size} bytes, got {actual}; the download was deleted")
    if file.sha256 is not None:
        actual_sha = sha256_file(path)
        if actual_sha != file.sha256:
            path.unlink()
            raise ChecksumMismatch(
                f"{file.url}: sha256 {actual_sha} does not match the manifest's {file.sha256}; the download was deleted",
                hint="the file changed upstream or was corrupted in transit; try again or update the manifest",
            )


def _safe_member(name: str) -> bool:
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts


def unpack(archive: Path, kind: str, target: Path) -> None:
    """Unpack an archive into `target` (members may not escape it)."""
    target.mkdir(parents=True, exist_ok=True)
    try:
        if kind == "zip":
            with zipfile.ZipFile(archive) as zipped:
                bad = [n for n in zipped.namelist() if not _safe_member(n)]
                if bad:
                    raise DownloadError(f"{archive.name}: refusing unsafe paths in archive: {bad[:3]}")
                zipped.extractall(target)
        else:
            with tarfile.open(archive, "r:*") as tarred:  # detects gzip itself
                members = tarred.getmembers()
                bad = [m.name for m in members if not _safe_member(m.name) or m.issym() or m.islnk()]
                if bad:
                    raise DownloadError(f"{archive.name}: refusing unsafe paths or links in archive: {bad[:3]}")
                tarred.extractall(target, members=members)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError) as exc:
        raise DownloadError(f"{archive.name} is not a valid {kind} archive: {exc}") from exc


def fetch_entry(
    entry: ManifestEntry,
    dest: Path,
    *,
    allow_unverified: bool = False,
    force: bool = False,
    progress: ProgressReporter | None = None,
    timeout: float = 30.0,
) -> FetchResult:
    """Download, verify and unpack one manifest entry into `dest` (the models folder)."""
    reporter = progress or SilentProgress()
    use_path = dest / entry.use
    unverified = tuple(f.url for f in entry.unverified_files)
    if use_path.exists() and not force:
        return FetchResult(entry, use_path, 0, True, ())
    if unverified:
        listing = ", ".join(f.download_name for f in entry.unverified_files)
        if not allow_unverified:
            raise UnverifiedDownloadRefused(
                f"{entry.name}: no published sha256 for {listing}, so the download cannot be verified",
                hint="pass --allow-unverified to download it anyway",
            )
        reporter.warn(f"{entry.name}: {listing} cannot be verified (no sha256 in the manifest); downloading anyway")

    downloads = dest / ".downloads"
    total_fetched = 0
    for file in entry.files:
        part = downloads / (file.download_name + ".part")
        total_fetched += download_file(file.url, part, expected_size=file.size, progress=reporter, timeout=timeout)
        verify(part, file)
        if file.archive is None:
            assert file.path is not None  # the manifest parser guarantees it
            final = dest / file.path
            final.parent.mkdir(parents=True, exist_ok=True)
            part.replace(final)
        else:
            staging = downloads / (file.download_name + ".unpack")
            shutil.rmtree(staging, ignore_errors=True)
            try:
                unpack(part, file.archive, staging)
                for item in staging.iterdir():
                    target = dest / item.name
                    if target.exists():
                        if not force:
                            continue
                        shutil.rmtree(target) if target.is_dir() else target.unlink()
                    item.replace(target)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            part.unlink()
    if not use_path.exists():
        raise DownloadError(f"{entry.name}: downloaded, but {entry.use} is not where the manifest says it would be")
    try:
        downloads.rmdir()
    except OSError:
        pass  # other partial downloads are still there
    return FetchResult(entry, use_path, total_fetched, False, unverified)
