"""The real clock's waits: a cancellation is never swallowed."""

from __future__ import annotations

import asyncio

from sotto.clock import MONOTONIC


def test_a_cancellation_that_arrives_as_the_wait_completes_is_not_swallowed() -> None:
    # asyncio.wait_for before Python 3.12 returned the item here and dropped the cancel: a
    # barge-in on a reply whose next segment had just come in was lost.
    async def main() -> tuple[bool, int]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        waiter = asyncio.create_task(MONOTONIC.wait_for(queue.get(), 10.0))
        await asyncio.sleep(0)  # the waiter waits
        queue.put_nowait(1)  # the item arrives ...
        waiter.cancel()  # ... in the same pass as the cancellation
        await asyncio.wait({waiter})
        return waiter.cancelled(), queue.qsize()

    cancelled, _left = asyncio.run(main())
    assert cancelled


def test_a_wait_times_out_and_returns_in_time() -> None:
    async def main() -> tuple[bool, int]:
        queue: asyncio.Queue[int] = asyncio.Queue()
        try:
            await MONOTONIC.wait_for(queue.get(), 0.01)
            timed_out = False
        except asyncio.TimeoutError:
            timed_out = True
        queue.put_nowait(7)
        return timed_out, await MONOTONIC.wait_for(queue.get(), 1.0)

    assert asyncio.run(main()) == (True, 7)
