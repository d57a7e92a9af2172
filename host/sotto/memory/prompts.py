"""Prompts for the two model calls of a turn, built so llama.cpp can reuse its KV cache.

Both calls share one static system message and then the same memory view and user
words; only the last line (the instruction) differs. llama-cpp-python keeps the tokens
of the previous call and evaluates only what follows the longest common prefix, so the
second call of a turn pays for a few instruction tokens, and the first call of the next
turn re-evaluates only from the first memory line that changed. The memory view lists
items oldest first so new items land at the end.

`fit_messages` is the token-budget check made before every model call: it drops the
oldest memory lines until prompt plus output fit the context window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from sotto.engines.base import ChatMessage, LanguageModel
from sotto.memory.items import Item
from sotto.memory.state import SessionState

SYSTEM_PROMPT = """You are a friendly voice assistant. Answer in one or two short spoken sentences, in plain words.
When asked for an UPDATE, write only one JSON object with what the user just said, copying their exact words; use "" or [] for nothing.
Example: for "Book a table for two at Nico's on Friday." the UPDATE is {"last_topic": "restaurant", "add_facts": ["a table for two at Nico's on Friday"], "add_names": [], "replace": []}
Example: for "Not Friday, Saturday." the UPDATE is {"last_topic": "restaurant", "add_facts": [], "add_names": [], "replace": [{"old": "Friday", "new": "Saturday"}]}
Your notes about this conversation:"""

PROMPT_MARGIN_TOKENS = 16  # chat-template tokens per message and rounding
MESSAGE_OVERHEAD_TOKENS = 6


@dataclass(frozen=True)
class Budget:
    n_ctx: int
    max_tokens: int


def memory_lines(state: SessionState) -> list[str]:
    """The notes as short labelled lines, oldest first (no JSON: the reply must not copy any)."""
    lines: list[str] = []
    p = state.user_profile
    if p.names:
        lines.append("Name: " + "; ".join(p.names))
    lines += [f"Likes: {v.value}" for v in p.preferences]
    lines += [f"Must: {v.value}" for v in p.constraints]
    if state.current_task:
        lines.append(f"Plan: {state.current_task}")
    lines += [f"Note: {_line(v)}" for v in state.facts]
    lines += [f"To do: {v.value}" for v in state.pending_steps]
    lines += [f"Done: {v.value}" for v in state.completed_steps]
    return lines


def _line(item: Item) -> str:
    """An item as the model reads it: its value, with what it is about when that is known."""
    if item.kind == "note" or not item.key:
        return item.value
    return f"{item.key} - {item.value}"


def _messages(lines: Sequence[str], words: str, instruction: str, reference: str = "") -> list[ChatMessage]:
    notes = "\n".join(f"- {line}" for line in lines) if lines else "- (nothing yet)"
    user = f"{words}\n\n{instruction}" if instruction else words
    if reference:
        # After the notes (the cached prefix stays the same) and only in the reply call.
        notes = f"{notes}\n{reference}"
    return [ChatMessage("system", f"{SYSTEM_PROMPT}\n{notes}"), ChatMessage("user", user)]


UPDATE_INSTRUCTION = "UPDATE"


def reply_instruction(lang: str, max_sentences: int) -> str:
    """Empty for English: the user's own words are the whole user message, as in chat
    training data (the tiny model follows that far better than an instruction)."""
    if lang == "zh":
        return "（请用中文回答，一两句话。）" if max_sentences > 1 else "（请用中文回答，一句话。）"
    return "" if max_sentences > 1 else "(Answer in one short sentence.)"


def estimate_tokens(model: LanguageModel, messages: Sequence[ChatMessage]) -> int:
    return sum(model.count_tokens(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages) + PROMPT_MARGIN_TOKENS


def fit_messages(
    model: LanguageModel, state: SessionState, words: str, instruction: str, max_tokens: int, *, reference: str = ""
) -> tuple[list[ChatMessage], int, int] | None:
    """Messages within the context window: (messages, prompt tokens, memory lines dropped).

    None when even the system prompt, the words and the instruction alone do not fit.
    """
    lines = memory_lines(state)
    dropped = 0
    limit = model.n_ctx - max_tokens
    while True:
        messages = _messages(lines, words, instruction, reference)
        tokens = estimate_tokens(model, messages)
        if tokens <= limit:
            return messages, tokens, dropped
        if not lines:
            if reference:
                reference = ""  # the reference goes before the words do
                continue
            return None
        # Drop the oldest note first; names and the plan are dropped last.
        drop_at = next((i for i, line in enumerate(lines) if line.startswith(("Note:", "Done:", "Likes:"))), 0)
        lines.pop(drop_at)
        dropped += 1
