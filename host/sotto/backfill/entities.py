"""The entities a working-memory state knows, for recognition bias and correction.

Public API:
- `entities_from_state(state) -> list[str]`: `state` is a SessionState or its dict
  (`to_dict()`). Names in the user profile come first; then capitalised word runs
  ("Mr. Wang", "Heathrow", "Business Car") and Chinese names marked by a title
  (王总, 黄经理; 李明先生 -> 李明) are taken from the other text fields.
  Lowercase English words are never taken: a corrector fed ordinary words would "fix"
  ordinary speech.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

MAX_ENTITIES = 64

_CAPITALISED_RUN = re.compile(r"\b(?:(?:Mr|Mrs|Ms|Dr|Prof)\.?\s+)?[A-Z][a-zA-Z'-]+(?:\s+[A-Z][a-zA-Z'-]+)*")
_SENTENCE_OPENERS = frozenset({"The", "A", "An", "I", "It", "This", "That", "We", "You", "He", "She", "They", "Please", "Tomorrow", "Today", "Sorry", "What", "When", "Where", "Who", "Why", "How", "Book", "Call", "Pick", "Remind", "Tell", "Ask", "User", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})
# A surname and a title is how a person is addressed (王总, 黄经理); before 先生 and the
# like stands a full two-character name (李明先生 -> 李明).
_CHINESE_SURNAME_TITLE = re.compile(r"[\u4e00-\u9fff](?:总|经理)")
_CHINESE_NAME_BEFORE_TITLE = re.compile(r"([\u4e00-\u9fff]{2})(?:先生|女士|小姐|老师)")


def _as_dict(state: Any) -> Mapping[str, Any]:
    if isinstance(state, Mapping):
        return state
    to_dict = getattr(state, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, Mapping):
            return data
    raise TypeError("entities_from_state needs a SessionState or its dict")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        # A list of strings, or of items ({"key", "value", "kind"}): their values.
        return [v if isinstance(v, str) else v["value"] for v in value if isinstance(v, str) or (isinstance(v, Mapping) and isinstance(v.get("value"), str))]
    return []


def entities_from_state(state: Any) -> list[str]:
    data = _as_dict(state)
    found: list[str] = []

    def add(entity: str) -> None:
        entity = " ".join(entity.split())
        if entity and entity not in found and len(found) < MAX_ENTITIES:
            found.append(entity)

    profile = data.get("user_profile")
    if isinstance(profile, Mapping):
        for name in _strings(profile.get("names")):
            add(name)
    texts: list[str] = []
    for key in ("current_task", "pending_steps", "completed_steps", "facts", "last_topic"):
        texts.extend(_strings(data.get(key)))
    if isinstance(profile, Mapping):
        for key in ("preferences", "constraints"):
            texts.extend(_strings(profile.get(key)))
    for text in texts:
        for match in _CAPITALISED_RUN.finditer(text):
            words = match.group().split()
            while words and words[0] in _SENTENCE_OPENERS:
                words = words[1:]
            if words:
                add(" ".join(words))
        for match in _CHINESE_SURNAME_TITLE.finditer(text):
            add(match.group(0))
        for match in _CHINESE_NAME_BEFORE_TITLE.finditer(text):
            add(match.group(1))
    return found
