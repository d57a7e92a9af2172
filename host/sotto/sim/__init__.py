"""A simulated board: the real firmware on a paced virtual serial port, for tests, demos and benches."""

from sotto.sim.board import SimEvent, SimulatedBoard, SimError

__all__ = ["SimEvent", "SimError", "SimulatedBoard"]
