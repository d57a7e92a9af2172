"""Board actions the user asks for: speaker volume and named GPIO outputs (en, zh).

Deterministic: a small set of patterns per language, so "set the volume to 30",
"louder", "turn it down", 音量调到30, "turn on the light", 关灯 become `RequestedAction`s
with bounded values (volume 0..100, GPIO 0/1). Output names map to GPIO indexes through
a configurable table (`DEFAULT_OUTPUTS`). Anything else is not an action: the words go to
the working memory as usual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from sotto.text.sentences import split_sentences

VOLUME_MIN = 0
VOLUME_MAX = 100
VOLUME_STEP = 10  # "louder" / "turn it down" without a number
DEFAULT_VOLUME = 50  # assumed level when stepping and no level is known yet
DEFAULT_OUTPUTS: Mapping[str, int] = {"light": 0, "lamp": 0, "fan": 1, "relay": 1}
ZH_OUTPUT_NAMES: Mapping[str, str] = {"灯": "light", "台灯": "lamp", "风扇": "fan", "电扇": "fan", "继电器": "relay"}
MAX_GPIO_INDEX = 63


@dataclass(frozen=True)
class RequestedAction:
    name: str  # "volume" | "gpio:N"
    value: int
    description: str  # spoken and stored: "volume set to 30", "light turned on"
    span: str  # the words that asked for it


def _clamp_volume(value: int) -> int:
    return max(VOLUME_MIN, min(VOLUME_MAX, value))


_EN_VOLUME_SET = re.compile(
    r"\b(?:set|put|change|turn|make)\b.*?\bvolume\b.*?\b(?:to|at)\s+(?P<n>\d{1,4})\b|"
    r"\bvolume\b\s*(?:to|at|=)?\s*(?P<m>\d{1,4})\b",
    re.I,
)
_EN_VOLUME_UP = re.compile(r"\b(?:louder|turn (?:it|the volume|the sound) up|volume up|increase the volume|raise the volume)\b", re.I)
_EN_VOLUME_DOWN = re.compile(
    r"\b(?:quieter|softer|turn (?:it|the volume|the sound) down|volume down|lower the volume|decrease the volume|reduce the volume)\b",
    re.I,
)
_EN_MUTE = re.compile(r"\b(?:mute|silence)\b(?: (?:the )?(?:speaker|sound|volume|it))?", re.I)
_EN_SWITCH = re.compile(
    r"\b(?:turn|switch|power|put)\s+(?P<state1>on|off)\s+(?:the\s+|my\s+)?(?P<name1>[a-z]+)\b|"
    r"\b(?:turn|switch|power|put)\s+(?:the\s+|my\s+)?(?P<name2>[a-z]+)\s+(?P<state2>on|off)\b",
    re.I,
)
_ZH_VOLUME_SET = re.compile(r"音量.{0,3}?(?:调到|调成|设为|设成|设置为|改成|到|为)\s*(?P<n>\d{1,4})")
_ZH_VOLUME_UP = re.compile(r"大声一?点|声音大一?点|音量调?大一?点|调大音量|音量加大|提高音量")
_ZH_VOLUME_DOWN = re.compile(r"小声一?点|声音小一?点|音量调?小一?点|调小音量|音量减小|降低音量")
_ZH_MUTE = re.compile(r"静音")
_ZH_SWITCH = re.compile(r"(?P<verb>打开|开|关掉|关闭|关上|关)(?P<name>台灯|灯|风扇|电扇|继电器)")


def _outputs(table: Mapping[str, int] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, index in (table if table is not None else DEFAULT_OUTPUTS).items():
        if 0 <= int(index) <= MAX_GPIO_INDEX and name.strip():
            out[name.strip().lower()] = int(index)
    return out


def _gpio(name: str, on: bool, table: dict[str, int], span: str, zh: bool) -> RequestedAction | None:
    index = table.get(name)
    if index is None and name.endswith("s"):
        index = table.get(name[:-1])
    if index is None:
        return None
    if zh:
        label = next((k for k, v in ZH_OUTPUT_NAMES.items() if v == name), name)
        description = f"{label}已{'打开' if on else '关闭'}"
    else:
        description = f"{name} turned {'on' if on else 'off'}"
    return RequestedAction(f"gpio:{index}", 1 if on else 0, description, span)


def _volume(value: int, span: str, zh: bool) -> RequestedAction:
    value = _clamp_volume(value)
    return RequestedAction("volume", value, f"音量调到{value}" if zh else f"volume set to {value}", span)


def _one(sentence: str, lang: str, table: dict[str, int], volume_now: int | None) -> RequestedAction | None:
    level = volume_now if volume_now is not None else DEFAULT_VOLUME
    if lang == "zh":
        m = _ZH_VOLUME_SET.search(sentence)
        if m:
            return _volume(int(m.group("n")), m.group(0), True)
        for pattern, target in ((_ZH_MUTE, 0), (_ZH_VOLUME_UP, level + VOLUME_STEP), (_ZH_VOLUME_DOWN, level - VOLUME_STEP)):
            found = pattern.search(sentence)
            if found:
                return _volume(target, found.group(0), True)
        s = _ZH_SWITCH.search(sentence)
        if s:
            return _gpio(ZH_OUTPUT_NAMES[s.group("name")], s.group("verb") in ("打开", "开"), table, s.group(0), True)
        return None
    m = _EN_VOLUME_SET.search(sentence)
    if m:
        return _volume(int(m.group("n") or m.group("m")), m.group(0), False)
    for pattern, target in ((_EN_VOLUME_UP, level + VOLUME_STEP), (_EN_VOLUME_DOWN, level - VOLUME_STEP)):
        found = pattern.search(sentence)
        if found:
            return _volume(target, found.group(0), False)
    mute = _EN_MUTE.search(sentence)
    if mute and not re.search(r"\b(?:un)?mute (?:the )?(?:mic|microphone)\b", sentence, re.I):
        return _volume(0, mute.group(0), False)
    s = _EN_SWITCH.search(sentence)
    if s:
        name = (s.group("name1") or s.group("name2") or "").lower()
        state = (s.group("state1") or s.group("state2") or "").lower()
        return _gpio(name, state == "on", table, s.group(0), False)
    return None


def extract_actions(
    words: str, lang: str, *, outputs: Mapping[str, int] | None = None, volume_now: int | None = None
) -> list[RequestedAction]:
    """The board actions asked for in the words, one per sentence at most, in order."""
    table = _outputs(outputs)
    found: list[RequestedAction] = []
    level = volume_now
    for sentence in split_sentences(words) or ([words] if words.strip() else []):
        action = _one(sentence, lang, table, level)
        if action is not None:
            found.append(action)
            if action.name == "volume":
                level = action.value
    return found


_LEFTOVER = re.compile(r"^[\s,，.。!！?？;；]*(?:(?:(?:and|then|also|please)\b|然后|和|再)[\s,，]*)*|[\s,，;；]*(?:(?:and|then|please)[\s,，]*)*$", re.I)


def words_without_actions(words: str, actions: list[RequestedAction]) -> str:
    """The words with each action request taken out (the rest goes to the working memory)."""
    kept: list[str] = []
    spans = [a.span for a in actions]
    for sentence in split_sentences(words) or ([words] if words.strip() else []):
        for span in list(spans):
            if span and span in sentence:
                sentence = sentence.replace(span, " ", 1)
                spans.remove(span)
        sentence = " ".join(_LEFTOVER.sub("", sentence).split())
        if len(sentence.strip(" ,，.。!！?？")) >= 2:
            kept.append(sentence)
    return " ".join(kept).strip()


_VOLUME_FACT = re.compile(r"^(?:volume set to|音量调到)\s*(\d{1,3})$")


def volume_from_facts(facts: list[str]) -> int | None:
    """The last volume level recorded in the state's facts, if any."""
    for fact in reversed(facts):
        m = _VOLUME_FACT.match(fact)
        if m:
            return _clamp_volume(int(m.group(1)))
    return None
