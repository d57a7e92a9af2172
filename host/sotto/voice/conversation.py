"""The committed conversation: only finals and completed replies ever enter it."""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.engines.base import ChatMessage


@dataclass
class Conversation:
    messages: list[ChatMessage] = field(default_factory=list)
    _committed_turns: set[int] = field(default_factory=set)
    # Side effects of interrupted replies, told to the next turn and then cleared.
    _pending_side_effects: list[str] = field(default_factory=list)

    def commit_final(self, turn_id: int, text: str) -> bool:
        """Commit the user's final words once per turn id; False (and no change) for a repeat."""
        if turn_id in self._committed_turns or not text.strip():
            return False
        self._committed_turns.add(turn_id)
        self.messages.append(ChatMessage("user", text.strip()))
        return True

    def is_committed(self, turn_id: int) -> bool:
        return turn_id in self._committed_turns

    def commit_reply(self, text: str) -> None:
        """A reply that was played to the end."""
        if text.strip():
            self.messages.append(ChatMessage("assistant", text.strip()))

    def note_side_effects(self, done: list[str]) -> None:
        self._pending_side_effects.extend(done)

    def take_side_effects(self) -> tuple[str, ...]:
        taken = tuple(self._pending_side_effects)
        self._pending_side_effects.clear()
        return taken
