"""StatePatch: the bounded update a turn may make, and the code that applies it.

The model (and the rule extractor) never rewrites the state: it proposes a patch, and
`apply_patch` applies it. An empty string or list means "no change", so a field the
model leaves out keeps its value. A replacement swaps the old text for the new one
everywhere in the state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sotto.errors import StateUpdateError
from sotto.memory.diff import Change, diff_states
from sotto.memory.schema import SchemaViolation, gbnf, json_schema, limit, parse_strict
from sotto.memory.state import SessionState, bounded, clip
from sotto.memory.items import KIND_NOTE, Item
from sotto.memory.text import EN_STOPWORDS, contains_ci, norm_key

PATCH_ITEM_LEN = 160


@dataclass
class Replacement:
    old: str = field(default="", metadata=limit(max_len=80))
    new: str = field(default="", metadata=limit(max_len=80))


@dataclass
class StatePatch:
    current_task: str = field(default="", metadata=limit(max_len=PATCH_ITEM_LEN))
    last_topic: str = field(default="", metadata=limit(max_len=80))
    add_facts: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=3))
    add_steps: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=2))
    complete_steps: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=2))
    replace: list[Replacement] = field(default_factory=list, metadata=limit(max_items=2))
    add_names: list[str] = field(default_factory=list, metadata=limit(max_len=60, max_items=2))
    add_preferences: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=2))
    add_constraints: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=2))
    drop_items: list[str] = field(default_factory=list, metadata=limit(max_len=80, max_items=2))

    def is_empty(self) -> bool:
        return not any(
            (self.current_task, self.last_topic, self.add_facts, self.add_steps, self.complete_steps,
             self.replace, self.add_names, self.add_preferences, self.add_constraints, self.drop_items)
        )

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)

    @staticmethod
    def json_schema() -> dict[str, Any]:
        return json_schema(StatePatch)

    @staticmethod
    def grammar(string_cap: int = 60) -> str:
        return gbnf(StatePatch, string_cap=string_cap)


@dataclass
class ModelPatch:
    """The part of a StatePatch the model writes: few keys, short values, so the
    grammar-constrained output stays around 30-60 tokens. The rules do the rest."""

    last_topic: str = field(default="", metadata=limit(max_len=60))
    add_facts: list[str] = field(default_factory=list, metadata=limit(max_len=PATCH_ITEM_LEN, max_items=2))
    add_names: list[str] = field(default_factory=list, metadata=limit(max_len=60, max_items=1))
    replace: list[Replacement] = field(default_factory=list, metadata=limit(max_items=1))

    def to_state_patch(self) -> StatePatch:
        return StatePatch(last_topic=self.last_topic, add_facts=list(self.add_facts), add_names=list(self.add_names), replace=list(self.replace))

    @staticmethod
    def grammar(string_cap: int = 60) -> str:
        return gbnf(ModelPatch, string_cap=string_cap)


def parse_patch(text: str) -> StatePatch:
    """Decode and validate the model's output. Raises StateUpdateError saying what is wrong."""
    stripped = text.strip()
    if not stripped:
        raise StateUpdateError("empty output, expected one JSON object")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise StateUpdateError(f"not valid JSON ({exc.msg} at character {exc.pos})") from exc
    try:
        if isinstance(data, dict) and set(data) <= {f for f in ModelPatch.__dataclass_fields__}:
            model_patch = parse_strict(ModelPatch, data)
            assert isinstance(model_patch, ModelPatch)
            return model_patch.to_state_patch()
        patch = parse_strict(StatePatch, data)
    except SchemaViolation as exc:
        raise StateUpdateError(f"JSON does not fit the update schema: {exc}") from exc
    assert isinstance(patch, StatePatch)
    return patch


# ------------------------------------------------------------------ replacement


def replace_everywhere(text: str, old: str, new: str) -> str:
    """Replace `old` by `new`, case-insensitively, leaving occurrences inside `new` alone.

    "tomorrow" -> "day after tomorrow" must not turn an existing "day after tomorrow"
    into "day after day after tomorrow". Latin words match on word boundaries; CJK
    text has none, so it matches as a substring.
    """
    if not old or not text:
        return text
    ascii_word = re.fullmatch(r"[\w' .:-]+", old, flags=re.ASCII) is not None
    pattern = re.escape(old)
    if ascii_word:
        # "找Tony老师": Chinese is no part of a Latin word; "30" is no part of "4:30" or "1.30".
        pattern = rf"(?<![A-Za-z0-9_])(?<!\d[:.,/-]){pattern}(?![A-Za-z0-9_])(?![:.,/-]\d)"
    else:
        # 一百 is no part of 一百五, nor 十 of 二十: a numeral is no part of a longer number.
        numeral = "零〇一二两三四五六七八九十百千万亿\\d"
        if re.match(f"[{numeral}]", old):
            pattern = f"(?<![{numeral}])" + pattern
        if re.search(f"[{numeral}]$", old):
            pattern += f"(?![{numeral}])"
    old_re = re.compile(pattern, re.IGNORECASE)
    protect = re.compile(re.escape(new), re.IGNORECASE) if new and contains_ci(new, old) else None
    pieces: list[str] = []
    last = 0
    spans = [m.span() for m in protect.finditer(text)] if protect else []
    for start, end in spans:
        pieces.append(old_re.sub(new, text[last:start]))
        pieces.append(text[start:end])
        last = end
    pieces.append(old_re.sub(new, text[last:]))
    return _dedupe_words("".join(pieces))


def _dedupe_words(text: str) -> str:
    """Collapse a word sequence repeated back to back ("six people people" -> "six people")."""
    return re.sub(r"\b((?:\w+ ){0,2}\w+) \1\b", r"\1", text)


def _replace_in_state(state: SessionState, old: str, new: str) -> bool:
    from sotto.memory.update import replace_in_items

    before = state.to_json()
    p = state.user_profile
    p.names = [replace_everywhere(v, old, new) for v in p.names]
    p.preferences = replace_in_items(p.preferences, old, new)
    p.constraints = replace_in_items(p.constraints, old, new)
    state.current_task = replace_everywhere(state.current_task, old, new)
    state.pending_steps = replace_in_items(state.pending_steps, old, new)
    state.completed_steps = replace_in_items(state.completed_steps, old, new)
    state.facts = replace_in_items(state.facts, old, new)
    state.last_topic = replace_everywhere(state.last_topic, old, new)
    return state.to_json() != before


def _drop_in_state(state: SessionState, text: str) -> None:
    """Remove every item that mentions `text` (the user cancelled it)."""
    key = text.strip().lower()
    if len(key) < 2:
        return

    def keep(items: list[Item]) -> list[Item]:
        return [v for v in items if key not in v.value.lower() and key not in v.key.lower()]

    p = state.user_profile
    p.preferences, p.constraints = keep(p.preferences), keep(p.constraints)
    state.pending_steps, state.facts = keep(state.pending_steps), keep(state.facts)
    if key in state.current_task.lower():
        state.current_task = ""


# ------------------------------------------------------------------ apply


def _add_unique(items: list[Item], new: str, max_len: int, *, turn: int = 0) -> list[Item]:
    """Append a note unless already known; a new note that contains an old one supersedes it."""
    new = clip(new, max_len)
    key = norm_key(new)
    if not key:
        return items
    for existing in items:
        if key in norm_key(existing.value):
            return items
    words = [w for w in new.split() if w.lower() not in EN_STOPWORDS][:4]
    return [v for v in items if norm_key(v.value) not in key] + [Item(key=" ".join(words), value=new, kind=KIND_NOTE, turn=turn)]


def _match_step(steps: list[Item], wanted: str) -> Item | None:
    key = norm_key(wanted)
    if not key:
        return None
    for step in steps:
        sk = norm_key(step.value)
        if key in sk or sk in key:
            return step
    return None


@dataclass
class Applied:
    state: SessionState
    changes: list[Change]
    notes: list[str]


def apply_patch(state: SessionState, patch: StatePatch, *, turn: int = 0) -> Applied:
    """Apply a validated patch (the model's) by code; the input state is not modified."""
    new = state.copy()
    for r in patch.replace:
        if r.old.strip() and r.new.strip() and norm_key(r.old) != norm_key(r.new):
            _replace_in_state(new, r.old.strip(), r.new.strip())
    for gone in patch.drop_items:
        _drop_in_state(new, gone)
    if patch.current_task.strip() and norm_key(patch.current_task) != norm_key(new.current_task):
        if new.current_task:  # the old task stays known as a note
            new.facts = _add_unique(new.facts, new.current_task, 200, turn=turn)
        new.current_task = clip(patch.current_task, 200)
    if patch.last_topic.strip():
        new.last_topic = clip(patch.last_topic, 80)
    for fact in patch.add_facts:
        new.facts = _add_unique(new.facts, fact, 200, turn=turn)
    for step in patch.add_steps:
        new.pending_steps = _add_unique(new.pending_steps, step, 200, turn=turn)
    for done in patch.complete_steps:
        finished = _match_step(new.pending_steps, done)
        if finished is not None:
            new.pending_steps = [s for s in new.pending_steps if s is not finished]
            new.completed_steps = new.completed_steps + [finished]
    p = new.user_profile
    for name in patch.add_names:
        name = clip(name, 60)
        if name and not any(norm_key(name) == norm_key(n) for n in p.names):
            p.names = p.names + [name]
    for pref in patch.add_preferences:
        p.preferences = _add_unique(p.preferences, pref, 200, turn=turn)
    for con in patch.add_constraints:
        p.constraints = _add_unique(p.constraints, con, 200, turn=turn)
    capped, notes = bounded(new)
    capped.updated_at = state.updated_at
    return Applied(capped, diff_states(state, capped), notes)
