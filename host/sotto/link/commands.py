"""The board link's command channel: side-effecting board commands (speaker volume, a GPIO
output) as round trips, confirmed by the board's EV_COMMAND_DONE or refused by its ERROR."""

from __future__ import annotations

import asyncio
import itertools
from typing import Callable

from sotto_fw import wire

from sotto.clock import Clock
from sotto.errors import LinkClosed, LinkError
from sotto.link import messages as m
from sotto.link.sender import resolve
from sotto.untrusted import ascii_int, clean_text


class CommandChannel:
    def __init__(self, url: str, timeout_s: float, clock: Clock,
                 send_control: Callable[[m.Message], object], attached: Callable[[], bool]) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.clock = clock
        self._send_control = send_control
        self._attached = attached
        self._action_ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[None]] = {}

    async def send_command(self, name: str, value: int) -> None:
        """"volume" (0..100) or "gpio:N" / "gpioN" (0/1); waits for the board's EV_COMMAND_DONE."""
        lowered = name.strip().lower()
        if lowered == "volume":
            cmd, index = wire.CMD_VOLUME, 0
        elif lowered.startswith("gpio"):
            pin = ascii_int(lowered[4:].lstrip(":_ "), max_digits=3)
            if pin is None or pin > 255:
                raise LinkError(f"bad GPIO command name {name!r}", hint="use gpio:0, gpio:1, ...")
            cmd, index = wire.CMD_GPIO, pin
        else:
            raise LinkError(f"unknown board command {name!r}", hint="known: volume, gpio:N")
        await self.command(cmd, index, value, wait=True)

    async def command(self, cmd: int, index: int, value: int, *, wait: bool) -> int:
        """Send a COMMAND; with wait, until the board confirms (LinkError on timeout). Returns the action id."""
        if not self._attached():
            raise LinkClosed(f"{self.url}: board not attached")
        action_id = next(self._action_ids) & 0xFFFF
        fut: asyncio.Future[None] | None = None
        if wait:
            fut = asyncio.get_running_loop().create_future()
            self._waiting[action_id] = fut
        self._send_control(m.Command(action_id, cmd, index & 0xFF, max(-32768, min(32767, value))))
        if fut is not None:
            try:
                await self.clock.wait_for(fut, self.timeout_s)
            except asyncio.TimeoutError:
                raise LinkError(f"the board did not confirm command {cmd} (action {action_id}) within "
                                f"{self.timeout_s:g} s") from None
            finally:
                self._waiting.pop(action_id, None)
        return action_id

    def on_done(self, action_id: int) -> None:
        resolve(self._waiting.get(action_id & 0xFFFF))

    def on_error(self, message: m.Error) -> None:
        # The board names the action in command errors: "action N: ...".
        text = message.text
        if not text.startswith("action "):
            return
        action_id = ascii_int(text[7:].split(":", 1)[0], max_digits=5)
        if action_id is not None:
            resolve(self._waiting.get(action_id), LinkError(f"the board refused the command: {clean_text(text)}"))

    def close(self, closed: BaseException) -> None:
        for fut in self._waiting.values():
            resolve(fut, closed)
        self._waiting.clear()
