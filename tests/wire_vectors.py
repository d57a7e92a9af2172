"""Loads tests/vectors/wire_vectors.json for the host tests (helpers, not tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VECTORS_PATH = Path(__file__).with_name("vectors") / "wire_vectors.json"


def load_vectors() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(VECTORS_PATH.read_text())
    return data


def plain(value: Any) -> Any:
    """Vector argument -> Python value ({"hex": ...} -> bytes, tuples -> lists)."""
    if isinstance(value, dict) and set(value) == {"hex"}:
        return bytes.fromhex(value["hex"])
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
