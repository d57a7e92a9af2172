"""`sotto models list|fetch`: what models are found here, how fast they are, and downloads.

    sotto models list [--json] [--measure | --no-measure]
    sotto models fetch NAME [--dest DIR] [--allow-unverified] [--force]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sotto.errors import ModelNotFound
from sotto.models.resolve import ResolvedModel


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="models found (path, models/, packages), size, speed on this host")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    speed = listing.add_mutually_exclusive_group()
    speed.add_argument("--measure", action="store_true", help="measure again even when a cached figure exists")
    speed.add_argument("--no-measure", action="store_true", help="only list; show cached figures if any")
    listing.add_argument("--llm", default=None, help="also check this GGUF (path or name) as the configured LLM")
    listing.add_argument("--voice", default=None, help="also check this Piper voice (path or name) as the configured voice")
    fetch = sub.add_parser("fetch", help="download a model from models/manifest.json into models/")
    fetch.add_argument("name", help="manifest name, e.g. vosk-model-small-en-us-0.15")
    fetch.add_argument("--dest", type=Path, default=None, help="folder to unpack into (default: models/)")
    fetch.add_argument("--allow-unverified", action="store_true", help="download files that have no sha256 in the manifest")
    fetch.add_argument("--force", action="store_true", help="download again even if the model is present")
    fetch.add_argument("--manifest", type=Path, default=None, help=argparse.SUPPRESS)
    parser.set_defaults(action="list", json=False, measure=False, no_measure=False, llm=None, voice=None)


def run(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        return _fetch(args)
    return _list(args)


# ------------------------------------------------------------------ list


def _configured(llm: str | None, voice: str | None) -> dict[str, ResolvedModel]:
    """The models a run would use: the given ones (errors propagate), else the resolution defaults."""
    from sotto.models.resolve import resolve_llm, resolve_voice

    chosen: dict[str, ResolvedModel] = {}
    for kind, resolver, spec in (("llm", resolve_llm, llm), ("tts", lambda s: resolve_voice(s, lang=None if s else "en"), voice)):
        try:
            chosen[kind] = resolver(spec)
        except ModelNotFound:
            if spec is not None:
                raise  # the user named it: say it is missing
    return chosen


def collect(*, measure: bool, force: bool, llm: str | None = None, voice: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows for every model found (plus the configured ones), and the budget warnings."""
    from sotto.models.resolve import find_models, recognizers_by_language
    from sotto.engines.speed import SpeedCache, budget_warnings, estimate_first_answer_ms, speed_of

    configured = _configured(llm, voice)
    models = find_models()
    known = {m.path for m in models}
    models += [m for m in configured.values() if m.path not in known]
    cache = SpeedCache()
    chosen = {kind: model.path for kind, model in configured.items()}
    recognizers = {model.path for model in recognizers_by_language().values()}  # one per language
    reports = {}
    for model in models:
        reports[model.path] = speed_of(model, cache, force=force) if measure else cache.get(model)
    default_tts = reports.get(chosen["tts"]) if "tts" in chosen else None
    rows: list[dict[str, Any]] = []
    warnings: list[str] = []
    for model in models:
        report = reports[model.path]
        row: dict[str, Any] = {
            "kind": model.kind,
            "name": model.name,
            "lang": model.lang,
            "source": model.source,
            "size_bytes": model.size_bytes,
            "path": str(model.path),
            "default": chosen.get(model.kind) == model.path or model.path in recognizers,
            "speed": None,
        }
        if report is not None:
            row["speed"] = dict(report.metrics, load_ms=report.load_ms)
            if report.error:
                row["speed"]["error"] = report.error
            if model.kind == "llm":
                row["speed"]["est_first_answer_ms"] = estimate_first_answer_ms(report, default_tts)
            model_warnings = budget_warnings(model, report, default_tts)
            row["warnings"] = model_warnings
            warnings.extend(model_warnings)
        if model.kind == "llm":
            row["jobs"] = _jobs(model, probe=measure and row["default"], force=force)
        rows.append(row)
    return rows, warnings


def _jobs(model: ResolvedModel, *, probe: bool, force: bool) -> dict[str, str] | None:
    """Which jobs the model passed in its capability probe, and why (None: never probed;
    the configured model is probed here when measuring)."""
    from sotto.agent.capability import CapabilityCache, capabilities_for
    from sotto.engines import llm

    cache = CapabilityCache()
    cached = cache.get(llm.file_identity(model.path))
    if cached is not None and not force:
        return cached.summary()
    if not probe:
        return None
    try:
        return capabilities_for(llm.load(model.path), cache, force=force).summary()
    except Exception as exc:  # a model that cannot be probed is listed with the reason
        return {"error": f"{type(exc).__name__}: {exc}"}


def _fetchable() -> list[str]:
    from sotto.models.manifest import load_manifest
    from sotto.paths import models_dir

    try:
        manifest = load_manifest()
    except Exception:  # the listing works without a manifest
        return []
    return [e.name for e in manifest.entries if not (models_dir() / e.use).exists()]


def _list(args: argparse.Namespace) -> int:
    from sotto.models.resolve import asr_label, recognizers_by_language

    rows, warnings = collect(measure=not args.no_measure, force=args.measure, llm=args.llm, voice=args.voice)
    fetchable = _fetchable()
    # Which engine recognises each language (the resolution order: Vosk, then pocketsphinx for English).
    asr = {lang: asr_label(model) for lang, model in sorted(recognizers_by_language().items())}
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
        print(json.dumps({"summary": True, "models": len(rows), "warnings": warnings, "fetchable": fetchable,
                          "asr": asr}))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="models on this host")
    for column in ("kind", "name", "lang", "source", "size", "speed on this host"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["kind"],
            ("* " if row["default"] else "  ") + row["name"],
            row["lang"] or "",
            row["source"],
            f"{row['size_bytes'] / 1e6:.0f} MB",
            _speed_text(row),
        )
    console.print(table)
    console.print("* = used by default; `--json` shows the paths.  Speeds are measured once per file and cached (--measure to redo).")
    for row in rows:
        if row.get("jobs"):
            console.print(f"jobs {row['name']} does (start-up probe): " + "; ".join(f"{k} {v}" for k, v in row["jobs"].items()))
    console.print("speech recognition: " + (", ".join(f"{lang} -> {label}" for lang, label in asr.items()) or "none installed"))
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    if fetchable:
        console.print("fetchable with `sotto models fetch NAME`: " + ", ".join(fetchable))
    return 0


def _speed_text(row: dict[str, Any]) -> str:
    speed = row.get("speed")
    if not speed:
        return "not measured"
    if "error" in speed:
        return "error: " + str(speed["error"])[:60]
    if row["kind"] == "llm":
        text = f"prompt {speed.get('prompt_tok_s', 0):.0f} tok/s, gen {speed.get('gen_tok_s', 0):.0f} tok/s"
        if speed.get("est_first_answer_ms") is not None:
            text += f", first answer ~{speed['est_first_answer_ms']:.0f} ms"
        return text
    return f"RTF {speed.get('rtf', 0):.2f}, load {speed.get('load_ms', 0):.0f} ms"


# ------------------------------------------------------------------ fetch


class RichProgress:
    """A rich progress bar per downloaded file."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

        self._console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self._console,
        )
        self._task: Any = None

    def start(self, label: str, total: int | None, done: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(label, total=total, completed=done)

    def advance(self, nbytes: int) -> None:
        if self._task is not None:
            self._progress.advance(self._task, nbytes)

    def finish(self) -> None:
        self._progress.stop()
        self._task = None

    def warn(self, message: str) -> None:
        self._console.print(f"[yellow]warning:[/yellow] {message}")


def _fetch(args: argparse.Namespace) -> int:
    from sotto.models.fetch import fetch_entry
    from sotto.models.manifest import load_manifest
    from sotto.paths import models_dir

    entry = load_manifest(args.manifest).get(args.name)
    dest = (args.dest or models_dir()).expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    result = fetch_entry(entry, dest, allow_unverified=args.allow_unverified, force=args.force, progress=RichProgress())
    if result.already_present:
        print(f"{entry.name} is already at {result.path} (--force to download again)", file=sys.stderr)
    else:
        state = "UNVERIFIED" if result.unverified else "verified (sha256)"
        print(f"{entry.name}: {result.downloaded_bytes / 1e6:.1f} MB downloaded, {state}, at {result.path}", file=sys.stderr)
    print(str(result.path))
    return 0
