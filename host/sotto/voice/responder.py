"""What the voice harness asks of whatever writes the reply (the agent).

The harness hands a `ReplyRequest` for each committed final and reads the reply back
as an async iterator of `ReplySentence`s and `BoardAction`s, in the order they should
happen. The harness may, while the reply runs:
- shorten it (`control.max_sentences`): keep to that many answer sentences;
- defer it (`control.defer`): skip deep work, answer briefly and keep the rest for later;
- cancel it (barge-in, session end): the iterator is closed / its task cancelled, and a
  responder must let `asyncio.CancelledError` propagate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol, Union


@dataclass
class ReplyControl:
    """Live hints from the harness's degradation ladder, read by the responder between sentences."""

    max_sentences: int | None = None  # None: no limit beyond the responder's own
    defer: bool = False  # skip deep work, say briefly that it will come later

    def shorten(self, max_sentences: int = 1) -> None:
        self.max_sentences = max_sentences if self.max_sentences is None else min(self.max_sentences, max_sentences)


@dataclass(frozen=True)
class ReplyRequest:
    turn_id: int
    words: str  # the committed final transcript
    control: ReplyControl = field(default_factory=ReplyControl)
    # Side effects that already ran in interrupted turns; the reply should take them into account.
    prior_side_effects: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplySentence:
    """One sentence to speak. `acknowledgement` marks a filler ("One moment.") rather than the answer."""

    text: str
    acknowledgement: bool = False


@dataclass(frozen=True)
class BoardAction:
    """A side-effecting board command (speaker volume, a GPIO output) requested by the reply."""

    name: str
    value: int
    description: str = ""

    def describe(self) -> str:
        return self.description or f"{self.name}={self.value}"


ReplyItem = Union[ReplySentence, BoardAction]


class Responder(Protocol):
    def reply(self, request: ReplyRequest) -> AsyncIterator[ReplyItem]:
        """The reply for one committed final, item by item, as each is ready."""
        ...
