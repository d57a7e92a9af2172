"""One typed schema, three views: Python dataclasses, JSON Schema and a llama.cpp GBNF grammar.

The dataclasses in `state.py` and `patch.py` declare their bounds once, with `limit()`
in each field's metadata; `json_schema()` and `gbnf()` read the same declarations, so
the grammar the model is held to can never drift from the code that validates it.
Supported field types: str, int, list[str], a nested dataclass, list[dataclass].
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Mapping

_LIMIT_KEY = "sotto_limit"


@dataclasses.dataclass(frozen=True)
class Limit:
    max_len: int | None = None  # characters, for a string or each string in a list
    max_items: int | None = None  # for a list
    description: str = ""


def limit(*, max_len: int | None = None, max_items: int | None = None, description: str = "") -> Mapping[str, Any]:
    """Field metadata declaring a bound: `field(default=..., metadata=limit(max_len=80))`."""
    return {_LIMIT_KEY: Limit(max_len=max_len, max_items=max_items, description=description)}


def field_limit(field: dataclasses.Field[Any]) -> Limit:
    found = field.metadata.get(_LIMIT_KEY)
    return found if isinstance(found, Limit) else Limit()


def field_types(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def list_item_type(tp: Any) -> Any | None:
    """The item type of `list[X]`, or None when `tp` is not a list type."""
    if typing.get_origin(tp) is list:
        (item,) = typing.get_args(tp)
        return item
    return None


def field_names(cls: type) -> set[str]:
    """Every field name of a dataclass, nested dataclasses included."""
    names: set[str] = set()
    hints = field_types(cls)
    for f in dataclasses.fields(cls):
        names.add(f.name)
        tp = hints[f.name]
        inner = list_item_type(tp) or tp
        if dataclasses.is_dataclass(inner) and isinstance(inner, type):
            names |= field_names(inner)
    return names


# ------------------------------------------------------------------ JSON Schema


def json_schema(cls: type) -> dict[str, Any]:
    """JSON Schema (draft 2020-12 subset) for a schema dataclass."""
    hints = field_types(cls)
    properties: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        properties[f.name] = _json_schema_for(hints[f.name], field_limit(f))
    return {
        "type": "object",
        "title": cls.__name__,
        "properties": properties,
        "required": [f.name for f in dataclasses.fields(cls)],
        "additionalProperties": False,
    }


def _json_schema_for(tp: Any, lim: Limit) -> dict[str, Any]:
    item = list_item_type(tp)
    if item is not None:
        out: dict[str, Any] = {"type": "array", "items": _json_schema_for(item, Limit(max_len=lim.max_len))}
        if lim.max_items is not None:
            out["maxItems"] = lim.max_items
    elif tp is str:
        out = {"type": "string"}
        if lim.max_len is not None:
            out["maxLength"] = lim.max_len
    elif tp is int:
        out = {"type": "integer", "minimum": 0}
    elif dataclasses.is_dataclass(tp) and isinstance(tp, type):
        out = json_schema(tp)
    else:
        raise TypeError(f"unsupported schema type {tp!r}")
    if lim.description:
        out["description"] = lim.description
    return out


# ------------------------------------------------------------------ GBNF


def gbnf(cls: type, *, string_cap: int | None = None) -> str:
    """A llama.cpp GBNF grammar accepting exactly the JSON objects of `cls`.

    Keys are required and in declaration order (the model writes them all, possibly
    empty: fewer choices for a tiny model). String lengths and list sizes are bounded by
    the declared limits, tightened to `string_cap` characters when given, so the output
    is bounded whatever the model does. Whitespace is at most one space: an unbounded
    whitespace rule lets small models loop on newlines.
    """
    rules: dict[str, str] = {}
    root = _gbnf_object(cls, rules, string_cap)
    lines = [f"root ::= {root}"]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    lines += [
        'ws ::= " "?',
        'char ::= [^"\\\\\\x00-\\x1f] | "\\\\" ["\\\\/bfnrt]',
    ]
    return "\n".join(lines) + "\n"


def _gbnf_object(cls: type, rules: dict[str, str], string_cap: int | None) -> str:
    name = f"{cls.__name__.lower()}-obj"
    if name in rules:
        return name
    rules[name] = ""  # reserve (recursion guard)
    hints = field_types(cls)
    parts: list[str] = []
    for i, f in enumerate(dataclasses.fields(cls)):
        value = _gbnf_value(hints[f.name], field_limit(f), rules, string_cap, f"{name}-{f.name.replace('_', '-')}")
        sep = '"," ws ' if i else ""
        parts.append(f'{sep}"\\"{f.name}\\":" ws {value}')
    rules[name] = '"{" ws ' + " ".join(parts) + ' ws "}"'
    return name


def _gbnf_value(tp: Any, lim: Limit, rules: dict[str, str], string_cap: int | None, rule_name: str) -> str:
    item = list_item_type(tp)
    if item is not None:
        item_rule = _gbnf_value(item, Limit(max_len=lim.max_len), rules, string_cap, rule_name + "-item")
        more = max((lim.max_items or 8) - 1, 0)
        rules[rule_name] = f'"[" ws ( {item_rule} ( "," ws {item_rule} ){{0,{more}}} )? ws "]"'
        return rule_name
    if tp is str:
        cap = lim.max_len or 200
        if string_cap is not None:
            cap = min(cap, string_cap)
        rules[rule_name] = f'"\\"" char{{0,{cap}}} "\\""'
        return rule_name
    if tp is int:
        rules[rule_name] = '[0-9]{1,6}'
        return rule_name
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _gbnf_object(tp, rules, string_cap)
    raise TypeError(f"unsupported schema type {tp!r}")


# ------------------------------------------------------------------ strict parsing


class SchemaViolation(ValueError):
    """A value does not fit the schema; the message says where and why."""


def parse_strict(cls: type, data: Any, *, path: str = "", require_all: bool = False) -> Any:
    """Build `cls` from decoded JSON, rejecting wrong types, unknown keys and over-long values.

    Missing keys take the field's default unless `require_all`.
    """
    if not isinstance(data, dict):
        raise SchemaViolation(f"{path or cls.__name__}: expected an object, got {type(data).__name__}")
    hints = field_types(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SchemaViolation(f"{path or cls.__name__}: unknown key(s) {', '.join(map(repr, unknown))}")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        where = f"{path}.{f.name}" if path else f.name
        if f.name not in data:
            if require_all:
                raise SchemaViolation(f"{where}: missing")
            continue
        kwargs[f.name] = _parse_value(hints[f.name], field_limit(f), data[f.name], where)
    return cls(**kwargs)


def _parse_value(tp: Any, lim: Limit, value: Any, where: str) -> Any:
    item = list_item_type(tp)
    if item is not None:
        if not isinstance(value, list):
            raise SchemaViolation(f"{where}: expected a list, got {type(value).__name__}")
        if lim.max_items is not None and len(value) > lim.max_items:
            raise SchemaViolation(f"{where}: {len(value)} items, at most {lim.max_items}")
        return [_parse_value(item, Limit(max_len=lim.max_len), v, f"{where}[{i}]") for i, v in enumerate(value)]
    if tp is str:
        if not isinstance(value, str):
            raise SchemaViolation(f"{where}: expected a string, got {type(value).__name__}")
        if lim.max_len is not None and len(value) > lim.max_len:
            raise SchemaViolation(f"{where}: {len(value)} characters, at most {lim.max_len}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**9:
            raise SchemaViolation(f"{where}: expected a non-negative integer, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return parse_strict(tp, value, path=where)
    raise TypeError(f"unsupported schema type {tp!r}")
