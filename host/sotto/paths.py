"""Where sotto keeps its files.

Runtime data (the SQLite store, traces, cached demo audio) lives under SOTTO_HOME,
default `~/.local/share/sotto`. Downloaded models live in the checkout's `models/`
folder, or SOTTO_MODELS when set.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path:
    env = os.environ.get("SOTTO_HOME")
    base = Path(env) if env else Path.home() / ".local" / "share" / "sotto"
    base.mkdir(parents=True, exist_ok=True)
    return base


def database_path() -> Path:
    return data_dir() / "sotto.db"


def traces_dir() -> Path:
    path = data_dir() / "traces"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    path = data_dir() / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    env = os.environ.get("SOTTO_MODELS")
    return Path(env) if env else REPO_ROOT / "models"


def device_dir() -> Path:
    """The firmware folder copied to boards."""
    return REPO_ROOT / "device"
