"""Session ids: one type, one alphabet, checked in one place.

A session id keys the store's rows and names the session's trace file, and it arrives
from outside: the command line, a WebSocket path, a board's HELLO (its name, through
`SessionId.derive`), an eval script. Every one of those entries builds a `SessionId`,
so an id is either accepted end to end or refused everywhere with the same error.

Valid: 1 to 64 ASCII letters, digits, `_`, `-` and `.`, starting with a letter or a
digit. So `kiosk-1`, `kiosk_1.b` and `demo-20261130-101500-ab12` are ids; `kiosk:1`
is not (the colon separates a profile key's kind, `board:kiosk-1`, and is a stream
separator in Windows file names), nor are `..`, `.hidden`, `-x`, `a/b`, `²` or "".

This module imports nothing of sotto but the errors, so every layer may use it.
"""

from __future__ import annotations

import re
from pathlib import Path

from sotto.errors import InvalidSessionId

MAX_SESSION_ID = 64
RULE = "1-64 ASCII letters, digits, '_', '-' or '.', starting with a letter or digit (e.g. kiosk-1)"
_VALID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", re.ASCII)
_OUTSIDE = re.compile(r"[^A-Za-z0-9_.-]+", re.ASCII)


class SessionId(str):
    """A checked session id. A `str`, so it goes wherever an id went before (SQL, JSON, logs)."""

    __slots__ = ()

    def __new__(cls, value: object) -> "SessionId":
        if isinstance(value, SessionId):
            return value
        if not isinstance(value, str) or not _VALID.fullmatch(value):
            shown = value[:80] if isinstance(value, str) else type(value).__name__
            raise InvalidSessionId(f"invalid session id {shown!r}", hint=RULE)
        return super().__new__(cls, value)

    @classmethod
    def derive(cls, text: str, *, fallback: str = "session") -> "SessionId":
        """An id made from untrusted text (a board's name in its HELLO): every run of other
        characters becomes `_`, the ends are trimmed to a letter or digit, at most 64."""
        cleaned = _OUTSIDE.sub("_", text)[:MAX_SESSION_ID].strip("_.-")
        return cls(cleaned if cleaned else fallback)

    def file_in(self, folder: Path, suffix: str) -> Path:
        """`folder/<id><suffix>`, refused unless it resolves to a file directly inside `folder`.

        The alphabet has no separator, so this cannot fail for a checked id and a plain
        suffix; it is checked anyway because the path is about to be written or unlinked."""
        path = folder / f"{self}{suffix}"
        if path.resolve().parent != folder.resolve() or path.name != f"{self}{suffix}":
            raise InvalidSessionId(f"session file {path} would resolve outside {folder}", hint=RULE)
        return path
