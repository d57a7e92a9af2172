"""Hygiene for input from outside: text, numbers and JSON, checked at the boundary.

- `clean_text`: what a user, a client or a board sends may hold NUL and other control
  characters (Piper refuses an "embedded null character"; a terminal obeys escape
  sequences) and lone surrogates (invalid UTF-8 from a terminal or a script decodes to
  them, and they cannot be encoded back to store or print). They are removed before
  anything is stored, logged or spoken; line breaks and tabs become spaces.
- `ascii_int`: `"²".isdigit()` is True but `int("²")` raises; `int()` of 5000 digits
  raises too. Decimal digits 0-9 only, a bounded number of them.
- `load_json` / `read_json_file`: a size limit checked before reading (a file like
  /dev/zero is never read past it), a nesting limit (`[` x 1000 is refused with an
  error, not a RecursionError deep in a handler), and no lone surrogate in any string
  (a `\ud800` escape parses, but the text could never be stored or printed).

This module imports nothing of sotto but the errors, so every layer may use it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sotto.errors import InputRefused

MAX_JSON_DEPTH = 32
# C0 and C1 controls and DEL, except tab/newline/carriage return (those become spaces);
# lone surrogates (U+D800-U+DFFF never stand alone in valid text).
_DROP = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_SPACE = re.compile(r"[\t\n\r]")
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` without control characters and lone surrogates (tabs and line breaks become spaces)."""
    return _DROP.sub("", _SPACE.sub(" ", text))


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate: invalid UTF-8 decoded with surrogateescape."""
    return _SURROGATE.search(text) is not None


def clean_lines(text: str) -> str:
    """Like `clean_text`, but a text of several lines (a file) keeps its line breaks and tabs."""
    return _DROP.sub("", text)


def ascii_int(text: str, *, max_digits: int = 9) -> int | None:
    """The value of `text` if it is 1..max_digits ASCII digits, else None."""
    if len(text) > max_digits or not _DIGITS.fullmatch(text):
        return None
    return int(text)


def _shape_problem(value: Any, max_depth: int) -> str | None:
    """What is wrong with a parsed JSON value from outside, if anything (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)) and depth > max_depth:
            return f"nests deeper than {max_depth} levels"
        if isinstance(item, dict):
            stack.extend((k, depth) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            return "holds a lone surrogate (a \\ud800-\\udfff escape): not text"
    return None


def load_json(text: str | bytes, *, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON from outside; InputRefused (saying what and why) when too large, too deep or invalid."""
    if len(text) > max_bytes:
        raise InputRefused(f"{what} is larger than {max_bytes} bytes")
    try:
        value = json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)  # UTF-8 only, no guessing
    except RecursionError:
        raise InputRefused(f"{what} nests deeper than {max_depth} levels") from None
    except UnicodeDecodeError as exc:
        raise InputRefused(f"{what} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except ValueError as exc:
        raise InputRefused(f"{what} is not valid JSON: {exc}") from None
    problem = _shape_problem(value, max_depth)
    if problem is not None:
        raise InputRefused(f"{what} {problem}")
    return value


def read_bounded(path: Path, *, what: str, max_bytes: int) -> bytes:
    """At most `max_bytes` of a file, refused when there is more: the limit holds before
    the read, so a device or an endless pipe is never read without bound."""
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise InputRefused(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise InputRefused(f"{what} {path} is a folder, not a file") from None
    except OSError as exc:
        raise InputRefused(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputRefused(f"{what} {path} is larger than {max_bytes} bytes")
    return data


def read_json_file(path: Path, *, what: str, max_bytes: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    return load_json(read_bounded(path, what=what, max_bytes=max_bytes), what=f"{what} {path}", max_bytes=max_bytes,
                     max_depth=max_depth)
