# Push button, polled and debounced: a level must hold DEBOUNCE_MS before it counts.

from sotto_fw.compat import const

DEBOUNCE_MS = const(30)
NO_EDGE = const(0)
PRESSED = const(1)
RELEASED = const(2)


class Debouncer:
    def __init__(self, button, debounce_ms=DEBOUNCE_MS):
        self.button = button
        self.debounce_ms = debounce_ms
        self.reset()

    def reset(self):
        self.stable = 0
        self.candidate = 0
        self.since = 0

    def poll(self, now, ticks_diff):
        """Returns PRESSED or RELEASED on a debounced edge, else NO_EDGE."""
        if self.button is None:
            return NO_EDGE
        level = 1 if self.button.value() else 0
        if level != self.candidate:
            self.candidate = level
            self.since = now
            return NO_EDGE
        if level != self.stable and ticks_diff(now, self.since) >= self.debounce_ms:
            self.stable = level
            return PRESSED if level else RELEASED
        return NO_EDGE
