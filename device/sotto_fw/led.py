# Phase LED: tells the board's LED the current phase only when it changes.

PHASES = ("idle", "listening", "thinking", "speaking", "error")


class PhaseLed:
    def __init__(self, led):
        self.led = led
        self.phase = ""

    def show(self, phase):
        if phase == self.phase:
            return
        self.phase = phase
        if self.led is not None:
            self.led.show(phase)
