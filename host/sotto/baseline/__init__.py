"""The seed article's design (full-state JSON rewrite, reply call, whole-reply TTS) as a baseline.

`run_baseline(script_paths, llm=..., tts=...)` -> BaselineResult(records, summary); the
summary's `first_audio_ms_p50` is what sotto's `first_answer_ms_p50` is compared with.
"""

from sotto.baseline.agent import BaselineAgent, BaselineTurn
from sotto.baseline.bench import BaselineResult, run_baseline, summarize
from sotto.memory.evaluation import Script, load_script

__all__ = ["BaselineAgent", "BaselineResult", "BaselineTurn", "Script", "load_script", "run_baseline", "summarize"]
