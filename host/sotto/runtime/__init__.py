"""The composition root: engines -> store, agent, knowledge and profiles -> sessions.

Every command that serves a conversation builds it here (run, demo, serve and its Wi-Fi
boards, chat, eval); nothing below this package wires parts together.
"""

from sotto.runtime.engines import EngineOptions, LoadedEngines, load_engines, make_recognizer
from sotto.runtime.root import Runtime, RuntimeOptions

__all__ = ["EngineOptions", "LoadedEngines", "Runtime", "RuntimeOptions", "load_engines", "make_recognizer"]
