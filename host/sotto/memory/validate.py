"""Validation of the model's patch against what the user actually said.

The grammar guarantees the shape; this guarantees the content: every value the model
proposes must be grounded in the user's words (its content words and numbers appear
there), so a tiny model cannot invent a name, paraphrase a time or write a corrected
value back. Anything ungrounded is dropped from the patch, with a note saying why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sotto.memory.patch import Replacement, StatePatch
from sotto.memory.rules import RuleResult
from sotto.memory.state import STATE_FIELD_NAMES, SessionState
from sotto.memory.text import content_keys, contains_ci, numbers_in

_CORRECTION_CUE = re.compile(r"\b(?:not|instead|change|actually|sorry|wrong|meant|make it|replace)\b|不是|改|换|不对|错", re.I)
_CANCEL_CUE = re.compile(r"\b(?:never mind|forget|cancel|drop|skip|remove)\b|取消|不要|算了|删", re.I)
_DONE_CUE = re.compile(r"\b(?:done|finished|completed|did it|did that|sent|booked|bought)\b|已经|完成|搞定|做好|办好", re.I)
_LEAKY = re.compile(r"[{}\[\]<>|\\]")


@dataclass
class Grounded:
    patch: StatePatch
    rejected: list[str] = field(default_factory=list)


def _retired_in(value: str, retired: list[str]) -> bool:
    for old in retired:
        if re.fullmatch(r"[\w' .:-]+", old, flags=re.ASCII):
            if re.search(rf"(?<!\w){re.escape(old)}(?!\w)", value, re.IGNORECASE):
                return True
        elif old and old in value:
            return True
    return False


def grounded(value: str, words: str) -> bool:
    """Every content word and number of `value` occurs in `words`."""
    keys = content_keys(value)
    if not keys:
        return False
    if not keys <= content_keys(words):
        return False
    return numbers_in(value) <= numbers_in(words)


def ground_patch(patch: StatePatch, words: str, state: SessionState, rules: RuleResult) -> Grounded:
    """Keep only what the words support; `state` is the state the patch will apply to."""
    out = StatePatch()
    rejected: list[str] = []
    known = "\n".join(state.all_strings()).lower()

    def ok(value: str, what: str, *, allow_known: bool = False) -> bool:
        value = value.strip()
        if not value:
            return False
        if _LEAKY.search(value) or any(name in value.lower() for name in STATE_FIELD_NAMES if "_" in name):
            rejected.append(f"{what}: markup in {value!r}")
            return False
        if not grounded(value, words):
            rejected.append(f"{what}: not in the user's words: {value!r}")
            return False
        if _retired_in(value, rules.retired):
            rejected.append(f"{what}: brings back a corrected value: {value!r}")
            return False
        if not allow_known and value.lower() in known:
            return False  # already known: silently nothing to add
        return True

    statement = not rules.question
    if statement and ok(patch.current_task, "current_task"):
        out.current_task = patch.current_task.strip()
    if ok(patch.last_topic, "last_topic", allow_known=True):
        out.last_topic = patch.last_topic.strip()
    if statement:
        out.add_facts = [v.strip() for v in patch.add_facts if ok(v, "add_facts")]
        out.add_steps = [v.strip() for v in patch.add_steps if ok(v, "add_steps")]
        out.add_preferences = [v.strip() for v in patch.add_preferences if ok(v, "add_preferences")]
        out.add_constraints = [v.strip() for v in patch.add_constraints if ok(v, "add_constraints")]
        out.add_names = [
            v.strip() for v in patch.add_names
            if ok(v, "add_names") and (v.strip()[:1].isupper() or not v.strip().isascii()) and len(v.split()) <= 3
        ]
    if patch.complete_steps and _DONE_CUE.search(words):
        out.complete_steps = [v for v in patch.complete_steps if any(contains_ci(s.value, v) or contains_ci(v, s.value) for s in state.pending_steps)]
    if patch.drop_items:
        if _CANCEL_CUE.search(words):
            out.drop_items = [v for v in patch.drop_items if v.strip() and contains_ci(words, v.strip()) and len(v.strip()) >= 3]
        else:
            rejected.append("drop_items: the user did not cancel anything")
    if patch.replace:
        if rules.corrections:
            pass  # the rules already applied this turn's correction verbatim
        elif not _CORRECTION_CUE.search(words):
            rejected.append("replace: the user made no correction")
        else:
            for r in patch.replace:
                if contains_ci(known, r.old.strip()) and len(r.old.strip()) >= 2 and grounded(r.new, words):
                    out.replace.append(Replacement(old=r.old.strip(), new=r.new.strip()))
                else:
                    rejected.append(f"replace: {r.old!r} -> {r.new!r} not supported by the words or the state")
    return Grounded(out, rejected)
