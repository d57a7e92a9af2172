"""The voice session: phases, turns, barge-in, latency budgets and the trace."""
