"""What may reach text-to-speech: plain speech, never the machinery.

`sanitize()` strips braces, brackets, markup and internal words from a sentence;
`leaks()` says whether a text would count as a leak (a state field name, a brace or
talk of internal state). A sentence that needed more than cosmetic cleaning is
rejected by the reply writer rather than spoken half-repaired.
"""

from __future__ import annotations

import re

from sotto.memory.patch import ModelPatch, StatePatch
from sotto.memory.schema import field_names
from sotto.memory.state import STATE_FIELD_NAMES

# Every schema word a reply must not say: state fields and patch keys, with spaces too.
_FIELDS = sorted(STATE_FIELD_NAMES | field_names(StatePatch) | field_names(ModelPatch), key=len, reverse=True)
_FIELD_RE = re.compile("|".join(re.escape(f) for f in _FIELDS) + "|" + "|".join(re.escape(f.replace("_", " ")) for f in _FIELDS if "_" in f), re.I)
# Talk of the machinery. "Six sessions" and "the software update" are the user's words, so only
# the machinery's own phrases count ("session state", "updated your memory").
_INTERNAL_RE = re.compile(
    r"internal state|json|my notes|the notes|\bnotes?:|working memory|schema"
    r"|\bsession(?: id| state| data| store)\b|\bthis session\b"
    r"|\b(?:state|memory|patch) update\b|\bupdat(?:e|ed|ing) (?:the |my |your )?(?:state|memory|notes|facts|records?)\b",
    re.I,
)
_BRACES = re.compile(r"[{}\[\]<>]")
# Plain words for field names that are also ordinary words, so the user's own words survive.
_SOFT = {"names": "name list", "preferences": "likes", "constraints": "limits", "facts": "details", "replace": "swap", "old": "old", "new": "new"}


def leaks(text: str) -> bool:
    lowered = text.lower()
    if _BRACES.search(text) or "internal state" in lowered:
        return True
    return any(name.lower() in lowered for name in STATE_FIELD_NAMES)


def soften(text: str) -> str:
    """Replace field names that are ordinary words (the user said "preferences")."""
    def repl(m: re.Match[str]) -> str:
        word = m.group(0)
        return _SOFT.get(word.lower(), word.replace("_", " ") if "_" not in word else "")

    out = re.sub("|".join(sorted((re.escape(n) for n in STATE_FIELD_NAMES), key=len, reverse=True)), repl, text, flags=re.I)
    out = _BRACES.sub("", out)
    return re.sub(r"\s{2,}", " ", out).strip()


def sanitize(sentence: str) -> str | None:
    """The sentence made safe to speak, or None when it talks about the machinery."""
    text = sentence.replace("*", "").replace("#", "").replace("`", "").replace("\"", "").strip()
    if not text:
        return None
    if _BRACES.search(text) or _INTERNAL_RE.search(text):
        return None
    if re.search(r"\b\w+_\w+\b", text):  # snake_case identifiers are never speech
        return None
    if _FIELD_RE.search(text) and any(f in text.lower() for f in STATE_FIELD_NAMES if "_" in f or f == "facts"):
        return None
    out = soften(text)
    return out if any(c.isalnum() for c in out) and not leaks(out) else None
