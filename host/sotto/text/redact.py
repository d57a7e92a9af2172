"""Write-time redaction: transcripts and replies become their length and a short hash.

On when `SOTTO_REDACT=1` (or a caller passes `enabled=True`). The hash lets two traces
be compared (same words, same hash) without keeping the words; timings, types and
counts stay, so `sotto stats` works on redacted traces.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

ENV_VAR = "SOTTO_REDACT"
# Keys whose string values (or lists of strings) are what the user said or was told.
TEXT_KEYS = frozenset(
    {
        "user", "reply", "final_transcript", "spoken_prefix", "text", "words", "asr_text", "transcript",
        "partial", "preview", "raw", "old", "new", "heard", "entity", "reply_rejected", "rejected",
        "prior_side_effects", "actions", "action", "failures",
        "value", "asked", "corrected_to",  # a confirmation: the value asked back and its correction
    }
)


def redaction_enabled(environ: "os._Environ[str] | dict[str, str] | None" = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes", "on")


def redact_text(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"[redacted {len(text)} chars sha256:{digest}]"


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value) if value else value
    if isinstance(value, list):
        return [_redact_value(v) for v in value]
    if isinstance(value, dict):
        return redact_event(value, all_strings=True)
    return value


def redact_event(event: dict[str, Any], *, all_strings: bool = False) -> dict[str, Any]:
    """A copy of the event with its text fields redacted (nested changes included)."""
    out: dict[str, Any] = {}
    for key, value in event.items():
        if key in ("type", "session", "session_id", "metric", "reply_source", "stop_reason", "source", "status", "field", "op", "reason"):
            out[key] = value
        elif key in TEXT_KEYS or (all_strings and isinstance(value, (str, list))):
            out[key] = _redact_value(value)
        elif key in ("changes", "corrections", "turns") and isinstance(value, list):
            out[key] = [redact_event(v, all_strings=True) if isinstance(v, dict) else _redact_value(v) for v in value]
        else:
            out[key] = value
    return out
