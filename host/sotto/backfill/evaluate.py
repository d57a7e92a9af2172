"""Measure the entity corrector on transcript sets (the figures `sotto backfill` prints).

A set is a JSON file `{"name", "description", "items": [{"id", "lang", "entities", "heard",
"expected"?}]}`; an item without `expected` must come out unchanged. Texts are compared as
tokens: English words (case and punctuation ignored, "Mr." = "mr") and single Chinese
characters.

- An injected error is one differing region between `heard` and `expected`; it counts as
  corrected when the output has exactly the expected tokens there.
- A correct word changed is a token that was already right in `heard` and is not in the
  output (on either set).

Public API:
- `load_items(path_or_name) -> list[Item]` (a file path, or the name of a shipped set:
  "homophone_errors", "near_misses").
- `evaluate(items) -> SetResult` with `errors_injected`, `errors_corrected`,
  `correct_words_changed`, `items`, and per-item `ItemResult`s.
- `BackfillReport` / `run_backfill(errors_path=None, near_path=None) -> BackfillReport`.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from sotto.backfill.corrector import EntityCorrector, Lang
from sotto.errors import ConfigError

SHIPPED_SETS = ("homophone_errors", "near_misses")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|[\u3400-\u4dbf\u4e00-\u9fff]")
_MAX_ITEMS = 10_000


@dataclass(frozen=True)
class Item:
    id: str
    lang: Lang
    entities: list[str]
    heard: str
    expected: str


@dataclass(frozen=True)
class ItemResult:
    id: str
    heard: str
    expected: str
    output: str
    errors_injected: int
    errors_corrected: int
    correct_words_changed: int


@dataclass
class SetResult:
    items: int = 0
    errors_injected: int = 0
    errors_corrected: int = 0
    correct_words_changed: int = 0
    results: list[ItemResult] = field(default_factory=list)

    @property
    def correction_rate(self) -> float:
        return self.errors_corrected / self.errors_injected if self.errors_injected else 1.0


@dataclass(frozen=True)
class BackfillReport:
    errors: SetResult
    near_misses: SetResult

    def summary(self) -> dict[str, Any]:
        return {
            "error_items": self.errors.items,
            "errors_injected": self.errors.errors_injected,
            "errors_corrected": self.errors.errors_corrected,
            "correction_rate": round(self.errors.correction_rate, 4),
            "near_miss_items": self.near_misses.items,
            "near_miss_words_changed": self.near_misses.correct_words_changed,
            "error_set_words_changed": self.errors.correct_words_changed,
        }


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text.replace("Mr.", "mr").replace("Dr.", "dr"))]


def _shipped_text(name: str) -> str:
    return resources.files("sotto.backfill").joinpath("data").joinpath(f"{name}.json").read_text(encoding="utf-8")


def load_items(source: str | Path) -> list[Item]:
    if str(source) in SHIPPED_SETS:
        text = _shipped_text(str(source))
        where = f"shipped set {source}"
    else:
        path = Path(source)
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise ConfigError(f"transcript set {path} does not exist") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read transcript set {path}: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where} is not valid JSON: {exc}") from exc
    raw_items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(raw_items, list):
        raise ConfigError(f"{where}: expected an object with an \"items\" list")
    items: list[Item] = []
    for index, raw in enumerate(raw_items[:_MAX_ITEMS]):
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: item {index} is not an object")
        heard, entities, lang = raw.get("heard"), raw.get("entities"), raw.get("lang", "auto")
        expected = raw.get("expected", heard)
        if not isinstance(heard, str) or not isinstance(expected, str):
            raise ConfigError(f"{where}: item {index} needs \"heard\" (and optional \"expected\") strings")
        if not isinstance(entities, list) or not all(isinstance(e, str) for e in entities):
            raise ConfigError(f"{where}: item {index} needs an \"entities\" list of strings")
        if lang not in ("en", "zh", "auto"):
            raise ConfigError(f"{where}: item {index} has unknown lang {lang!r}")
        items.append(Item(str(raw.get("id", index)), lang, list(entities), heard, expected))
    return items


def _score_item(item: Item, output: str) -> ItemResult:
    heard, expected, got = tokens(item.heard), tokens(item.expected), tokens(output)
    # Expected-token indices that were wrong in `heard` (grouped per injected error), and
    # the ones the output gets wrong.
    injected: list[range] = []
    insert_points: list[int] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=heard, b=expected, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if j1 == j2:
            insert_points.append(j1)  # a deletion is expected: the error is extra words
        injected.append(range(j1, j2) if j2 > j1 else range(j1, j1))
    wrong: set[int] = set()
    extra_at: set[int] = set()
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(a=got, b=expected, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            wrong.update(range(j1, j2))
        if tag == "delete":
            extra_at.add(j1)
    corrected = 0
    for region in injected:
        if len(region):
            corrected += not any(j in wrong for j in region)
        else:
            corrected += region.start not in extra_at
    in_errors = {j for region in injected for j in region}
    changed = sum(1 for j in wrong if j not in in_errors)
    changed += sum(1 for j in extra_at if j not in insert_points and j not in in_errors)
    return ItemResult(item.id, item.heard, item.expected, output, len(injected), corrected, changed)


def evaluate(items: list[Item]) -> SetResult:
    result = SetResult()
    for item in items:
        output, _ = EntityCorrector(item.entities, item.lang).correct(item.heard)
        scored = _score_item(item, output)
        result.items += 1
        result.errors_injected += scored.errors_injected
        result.errors_corrected += scored.errors_corrected
        result.correct_words_changed += scored.correct_words_changed
        result.results.append(scored)
    return result


def run_backfill(errors_path: str | Path | None = None, near_path: str | Path | None = None) -> BackfillReport:
    return BackfillReport(
        evaluate(load_items(errors_path or "homophone_errors")),
        evaluate(load_items(near_path or "near_misses")),
    )
