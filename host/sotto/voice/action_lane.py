"""A turn's board actions on their own lane, apart from its spoken reply.

The spoken reply can end in many ways: completed, shortened, deferred and given up by
the ladder, cut when it stalls, failed. None of these may lose a board action the agent
decided, because the working memory already records it ("volume set to 30"). So, much as
pipecat keeps its control frames out of the queue that an interruption flushes, the
actions do not travel with the sentences: the model worker hands them to this lane the
moment they are decided, and the lane runs them on the output whatever became of the
reply; the turn engine waits for the lane before the turn ends.

When an action counts as decided: when the agent's `start_turn` has returned (the rules'
update, with the action noted, is committed; the actions are extracted). A turn
cancelled (barge-in, session end) while its job is still queued decides nothing: the job
never starts, and neither the memory nor the board sees the action. Otherwise the
cancellation follows the design's one cancellation path: the action in flight is
cancelled (the output records it as cancelled) and every decided action not yet started
(also one that a running `start_turn` decides just after the cancellation) is reported
through `ReplyOutput.action_not_sent` with the reason, so the trace says what happened
to each decided action: done, failed, cancelled or not sent.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Sequence

from sotto.agent.actions import RequestedAction
from sotto.voice.reply_types import ReplyOutput


class ActionLane:
    """Create on the event loop, hand `decide` / `undecided` to the worker (thread-safely),
    `start()`, and at the end either `finished()` or, on cancellation, `stop(reason)`."""

    def __init__(self, output: ReplyOutput, *, on_not_sent: Callable[[list[RequestedAction]], None] | None = None) -> None:
        """`on_not_sent`: told the decided actions that were never sent (the memory withdraws them)."""
        self.output = output
        self._on_not_sent = on_not_sent
        self._decision: asyncio.Future[list[RequestedAction]] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._started = 0  # actions handed to the output so far (done, failed or cancelled there)
        self._stop_reason: str | None = None
        self.not_sent: list[tuple[RequestedAction, str]] = []

    # -- from the worker, through the loop

    def decide(self, actions: Sequence[RequestedAction]) -> None:
        """The agent decided the turn's actions (possibly none). The first decision counts."""
        if self._decision.done():
            return
        self._decision.set_result(list(actions))
        if self._stop_reason is not None:  # cancelled before the decision came: nothing of it runs
            self._report_unsent()

    def undecided(self) -> None:
        """The turn's job ended without deciding (cancelled while queued, or it failed first)."""
        self.decide(())

    # -- the turn engine

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        # Shielded: cancelling the lane must not cancel the decision, which is still reported.
        for action in await asyncio.shield(self._decision):
            self._started += 1
            await self.output.run_action(action)

    async def finished(self) -> None:
        """Until every decided action has run (or the job ended deciding nothing)."""
        if self._task is not None:
            await asyncio.wait({self._task})

    async def stop(self, reason: str) -> None:
        """The turn is cancelled: the action in flight is cancelled, the rest reported not sent."""
        if self._stop_reason is not None:
            return
        self._stop_reason = reason
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})
        if self._decision.done():
            self._report_unsent()

    def _report_unsent(self) -> None:
        actions = self._decision.result()
        unsent = actions[self._started:]
        for action in unsent:
            self.not_sent.append((action, self._stop_reason or "cancelled"))
            self.output.action_not_sent(action, self._stop_reason or "cancelled")
        self._started = len(actions)
        if unsent and self._on_not_sent is not None:
            self._on_not_sent(list(unsent))
