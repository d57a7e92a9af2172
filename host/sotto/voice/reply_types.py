"""What one turn's reply is made of and where it goes: the request, the one control shared by
the event loop and the model worker, the segments of speech, the output, the outcome."""

from __future__ import annotations

import concurrent.futures
import threading
from dataclasses import dataclass, field
from typing import Protocol

from sotto.agent import Turn, TurnResult
from sotto.agent.actions import RequestedAction
from sotto.engines.base import WordConfidence

ANSWER = "answer"
ACKNOWLEDGEMENT = "acknowledgement"
DEFERRAL = "deferral"


class ReplyControl:
    """Shared by the event loop (ladder, barge-in) and the model worker (the agent's turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._turn: Turn | None = None
        self.max_sentences: int | None = None  # None: no limit beyond the agent's own
        self.defer = False  # skip the deep work (the model's state patch) of this turn
        self.cancelled = False
        self.cancel_reason = ""  # why the turn was cancelled from outside (barge-in, session end)

    def attach(self, turn: Turn) -> None:
        with self._lock:
            self._turn = turn
            if self.max_sentences is not None:
                turn.shorten(self.max_sentences)
            if self.cancelled:
                turn.cancel()

    def shorten(self, max_sentences: int = 1) -> None:
        with self._lock:
            self.max_sentences = max_sentences if self.max_sentences is None else min(self.max_sentences, max_sentences)
            if self._turn is not None:
                self._turn.shorten(self.max_sentences)

    def cancel(self, reason: str = "") -> None:
        """Stop the agent's turn (its model stream stops within one token). `reason`: a
        cancellation from outside the reply (a barge-in, the session's end); the first given counts."""
        with self._lock:
            self.cancelled = True
            self.cancel_reason = self.cancel_reason or reason
            if self._turn is not None:
                self._turn.cancel()


@dataclass(frozen=True)
class TurnRequest:
    session_id: str
    words: str  # the committed final transcript (or typed text)
    received_t: float  # clock time the words were final: every budget runs from here
    turn_id: int | None = None
    lang: str | None = None
    # Side effects that already ran in interrupted turns; the agent notes and says them.
    prior_side_effects: tuple[str, ...] = ()
    # The final transcript's words with their confidences (a voice turn; typed text: none).
    heard: tuple[WordConfidence, ...] = ()


@dataclass(frozen=True)
class Segment:
    """One piece of speech for the output: an answer sentence or a cached phrase."""

    text: str
    pcm: bytes  # PCM16 at the output's sample rate (empty: text only)
    kind: str = ANSWER  # ANSWER | ACKNOWLEDGEMENT | DEFERRAL


class ReplyOutput(Protocol):
    """Where one turn's reply goes: a board's speaker, or a WebSocket client."""

    @property
    def sample_rate(self) -> int: ...

    @property
    def has_played(self) -> bool:
        """Any audio went out already (an acknowledgement then comes too late)."""
        ...

    async def run_action(self, action: RequestedAction) -> None:
        """Run a decided board action (it records done / failed / cancelled itself)."""
        ...

    def action_not_sent(self, action: RequestedAction, reason: str) -> None:
        """A decided board action will not be run (the turn was cancelled first): record why."""
        ...

    async def play(self, segment: Segment) -> None: ...


@dataclass
class ReplyOutcome:
    """What the engine knows of one turn once its reply is over."""

    stop_reason: str = ""  # COMPLETED | DEFERRED | FAILED (the caller sets interrupted / cancelled)
    answers: list[str] = field(default_factory=list)  # answer sentences handed to the output
    degrade_actions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    turn: int | None = None
    reply_source: str = ""
    queued_ms: float | None = None  # final words -> the agent's turn started on the worker
    patch_skipped: bool = False  # the model's state patch was deferred or skipped
    route: str = ""  # which route answered (sotto.agent.router) and why
    route_reason: str = ""
    predicted_first_answer_ms: float | None = None  # what the ladder acted on
    # The agent's committed outcome (state after the model's patch), set when the job ends.
    result: "concurrent.futures.Future[TurnResult]" = field(default_factory=concurrent.futures.Future)

    @property
    def reply(self) -> str:
        return " ".join(self.answers)

    def degrade(self, action: str) -> None:
        if action not in self.degrade_actions:
            self.degrade_actions.append(action)
