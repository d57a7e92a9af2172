"""The phase machine of a voice session."""

from __future__ import annotations

import enum


class Phase(str, enum.Enum):
    IDLE = "idle"
    LISTENING = "listening"
    THINKING = "thinking"
    SPEAKING = "speaking"
    INTERRUPTED = "interrupted"


# Allowed moves. Anything else is a harness bug, raised loudly in tests.
TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.IDLE: frozenset({Phase.LISTENING}),
    Phase.LISTENING: frozenset({Phase.THINKING, Phase.IDLE}),
    Phase.THINKING: frozenset({Phase.SPEAKING, Phase.LISTENING, Phase.INTERRUPTED, Phase.IDLE}),
    Phase.SPEAKING: frozenset({Phase.LISTENING, Phase.INTERRUPTED, Phase.IDLE}),
    Phase.INTERRUPTED: frozenset({Phase.LISTENING, Phase.IDLE}),
}


class PhaseError(RuntimeError):
    """An illegal phase transition: a bug in the harness, never user input."""


class PhaseMachine:
    def __init__(self) -> None:
        self.phase = Phase.IDLE
        self.history: list[Phase] = [Phase.IDLE]

    def move(self, new: Phase) -> None:
        if new == self.phase:
            return
        if new not in TRANSITIONS[self.phase]:
            raise PhaseError(f"illegal phase change {self.phase.value} -> {new.value}")
        self.phase = new
        self.history.append(new)
