"""The agent: a session's turns (rules, board actions, the reply, the model's patch),
reply writing and composed answers, over the working memory (sotto.memory)."""

from sotto.agent.core import Agent, AgentConfig
from sotto.agent.turn import Turn, TurnResult

__all__ = ["Agent", "AgentConfig", "Turn", "TurnResult"]
