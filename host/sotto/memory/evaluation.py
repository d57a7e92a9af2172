"""Memory scripts and their metrics, exactly as docs/DESIGN.md "Memory scripts" defines them.

- Items are a string or a list of alternatives, matched case-insensitively on the
  state serialised as JSON text without session_id and updated_at.
- remember: any alternative counts; items stay expected from their turn on until a
  forget item shares an alternative with them. entity_retention = present / checks.
- forget (a correction turn): right after the turn, with the text of every item still
  expected removed from the state text, every alternative must be absent.
  correction_accuracy = correction turns whose forgets are absent and remembers present
  / correction turns.
- reply_mentions: the reply contains one alternative of each item.
- reply_leak_rate = replies containing a state field name, a brace or "internal state".
- stale_reply_rate: over the turns with reply_mentions after at least one forget earlier in
  the script, the replies that still name a forgotten item (once the text of every item
  still expected and of the turn's reply_mentions is removed) / such turns.
- state_noise: states (after each turn, last_topic excepted) whose items hold discourse
  words or talk about the talk / states.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from sotto.errors import ConfigError, InputRefused
from sotto.memory.sanitize import leaks
from sotto.memory.state import SessionState
from sotto.untrusted import read_json_file

Item = Union[str, list[str]]
MAX_SCRIPT_BYTES = 1_000_000
MAX_TURNS = 500


@dataclass(frozen=True)
class ScriptTurn:
    user: str
    remember: list[list[str]] = field(default_factory=list)
    forget: list[list[str]] = field(default_factory=list)
    reply_mentions: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True)
class Script:
    name: str
    lang: str
    turns: list[ScriptTurn]
    path: str = ""


def _items(value: Any, where: str) -> list[list[str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfigError(f"{where}: expected a list of items")
    out: list[list[str]] = []
    for item in value:
        if isinstance(item, str):
            out.append([item])
        elif isinstance(item, list) and item and all(isinstance(a, str) for a in item):
            out.append(list(item))
        else:
            raise ConfigError(f"{where}: an item is a string or a non-empty list of strings, got {item!r}")
    return out


def load_script(path: str | Path) -> Script:
    """Read and check a memory script (the format `sotto eval`, the baseline and the demo read)."""
    p = Path(path)
    try:
        # The size limit holds before the read (`sotto eval /dev/zero` stops at it); nesting and
        # lone surrogates are refused too.
        data = read_json_file(p, what="script", max_bytes=MAX_SCRIPT_BYTES)
    except InputRefused as exc:
        raise ConfigError(exc.message) from None
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list) or not data["turns"]:
        raise ConfigError(f"script {p}: expected an object with a non-empty list of turns")
    turns: list[ScriptTurn] = []
    for i, t in enumerate(data["turns"][:MAX_TURNS]):
        if not isinstance(t, dict) or not isinstance(t.get("user"), str) or not t["user"].strip():
            raise ConfigError(f"script {p} turn {i + 1}: expected an object with a non-empty string 'user'")
        where = f"script {p} turn {i + 1}"
        turns.append(
            ScriptTurn(
                user=t["user"],
                remember=_items(t.get("remember"), where + " remember"),
                forget=_items(t.get("forget"), where + " forget"),
                reply_mentions=_items(t.get("reply_mentions"), where + " reply_mentions"),
            )
        )
    return Script(name=str(data.get("name", p.stem)), lang=str(data.get("lang", "")), turns=turns, path=str(p))


def state_text(state: SessionState | dict[str, Any]) -> str:
    data = state.public_dict() if isinstance(state, SessionState) else dict(state)
    data.pop("session_id", None)
    data.pop("updated_at", None)
    return json.dumps(data, ensure_ascii=False).lower()


# docs/DESIGN.md "Memory scripts", state_noise: discourse words and talk about the talk.
NOISE_EN = re.compile(
    r"\b(?:hmm+|um+|uh+|actually|sorry|oops|wait|i mean|i said it wrong|i read it wrong|i mixed (?:that|it) up|my mistake|scratch that)\b",
    re.I,
)
NOISE_ZH = re.compile(r"嗯|呃|哦|不好意思|抱歉|说错了|搞错了|看错了")


def noisy(state: SessionState | dict[str, Any]) -> bool:
    """The state's items (last_topic excepted) hold discourse words or talk about the talk."""
    data = state.public_dict() if isinstance(state, SessionState) else dict(state)
    for key in ("session_id", "updated_at", "last_topic"):
        data.pop(key, None)
    text = json.dumps(data, ensure_ascii=False)
    return NOISE_EN.search(text) is not None or NOISE_ZH.search(text) is not None


def present_in(text: str, item: list[str]) -> bool:
    """One alternative of `item` is in `text` (lowercase), as the metrics count an item present."""
    return any(alt.lower() in text for alt in item)


@dataclass
class ScriptScore:
    retention_checks: int = 0
    retention_present: int = 0
    correction_turns: int = 0
    corrections_ok: int = 0
    replies: int = 0
    leaks: int = 0
    mention_checks: int = 0
    mentions_ok: int = 0
    stale_checks: int = 0
    stale_replies: int = 0
    states: int = 0
    noisy_states: int = 0
    misses: list[str] = field(default_factory=list)


class ScriptScorer:
    """Feed the state and reply after each turn, in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.expected: list[list[str]] = []
        self.forgotten: list[list[str]] = []
        self.score = ScriptScore()

    def observe(self, index: int, state: SessionState | dict[str, Any], reply: str) -> None:
        turn = self.script.turns[index]
        text = state_text(state)
        s = self.score
        # A forget retires every expected item that shares an alternative with it.
        forgotten = {a.lower() for item in turn.forget for a in item}
        self.expected = [e for e in self.expected if not ({a.lower() for a in e} & forgotten)]
        self.expected += [r for r in turn.remember if r not in self.expected]
        for item in self.expected:
            s.retention_checks += 1
            if present_in(text, item):
                s.retention_present += 1
            else:
                s.misses.append(f"turn {index + 1}: lost {item}")
        if turn.forget:
            s.correction_turns += 1
            stripped = text
            for item in self.expected:
                for alt in sorted(item, key=len, reverse=True):
                    stripped = stripped.replace(alt.lower(), " ")
            gone = all(not any(alt.lower() in stripped for alt in item) for item in turn.forget)
            kept = all(present_in(text, item) for item in turn.remember)
            if gone and kept:
                s.corrections_ok += 1
            else:
                s.misses.append(f"turn {index + 1}: correction failed (forget gone={gone}, remember kept={kept})")
        s.states += 1
        if noisy(state):
            s.noisy_states += 1
            s.misses.append(f"turn {index + 1}: state holds discourse words")
        if turn.reply_mentions and self.forgotten:
            s.stale_checks += 1
            spoken = reply.lower()
            for item in self.expected + turn.reply_mentions:
                for alt in sorted(item, key=len, reverse=True):
                    spoken = spoken.replace(alt.lower(), " ")
            if any(alt.lower() in spoken for item in self.forgotten for alt in item):
                s.stale_replies += 1
                s.misses.append(f"turn {index + 1}: reply names a replaced value: {reply!r}")
        self.forgotten += turn.forget
        s.replies += 1
        if leaks(reply):
            s.leaks += 1
            s.misses.append(f"turn {index + 1}: reply leaks: {reply!r}")
        for item in turn.reply_mentions:
            s.mention_checks += 1
            if present_in(reply.lower(), item):
                s.mentions_ok += 1
            else:
                s.misses.append(f"turn {index + 1}: reply lacks {item}: {reply!r}")


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None
