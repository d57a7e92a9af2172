"""An item of the working memory: what it is about, its value as said, its kind, its turn.

The state's fields (facts, steps, profile) hold items, not sentences. The value is kept
verbatim (names, numbers and times exactly as said); the key says what the value is
about ("dose", "party size", "garage"), so a later value with the same key replaces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.memory.schema import limit

KIND_TIME = "time"
KIND_DATE = "date"
KIND_QUANTITY = "quantity"  # a number with its unit: "eight people", "250 milligrams"
KIND_NUMBER = "number"  # a number or an ID: "88421", "0412 556 781"
KIND_NAME = "name"
KIND_PLACE = "place"
KIND_ITEM = "item"  # a choice from a closed set: a colour ("navy", 米色), a size ("medium", 大号)
KIND_NOTE = "note"  # anything else the user said, without its discourse words
KINDS = (KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_NAME, KIND_PLACE, KIND_ITEM, KIND_NOTE)
VALUE_KINDS = frozenset((KIND_TIME, KIND_DATE, KIND_QUANTITY, KIND_NUMBER, KIND_NAME, KIND_PLACE, KIND_ITEM))

KEY_LEN = 60
VALUE_LEN = 200


@dataclass
class Item:
    key: str = field(default="", metadata=limit(max_len=KEY_LEN))
    value: str = field(default="", metadata=limit(max_len=VALUE_LEN))
    kind: str = field(default=KIND_NOTE, metadata=limit(max_len=10))
    # The turn the value was said in. Provenance: kept in the store, left out of the
    # memory view (a turn number is not something the user said).
    turn: int = 0

    def text(self) -> str:
        return self.value

    def same_value(self, other: str) -> bool:
        return " ".join(self.value.lower().split()) == " ".join(other.lower().split())


def note(value: str, *, key: str = "", turn: int = 0, kind: str = KIND_NOTE) -> Item:
    return Item(key=key, value=value, kind=kind, turn=turn)
