"""The inner monologue: one final transcript in, one validated state update out.

Order of work for a turn:
1. rules: the deterministic extractor's patch is applied at once (instant, verbatim);
2. model: the model proposes a patch under the GBNF grammar (bounded max_tokens); it is
   parsed strictly, retried once with the error, then grounded against the user's
   words and merged on top of the rules' state. A model that fails twice leaves the
   state as the rules left it and the failure is recorded; the turn goes on.

The two steps are separate calls so the agent can start the reply from the rules'
state while the model's patch is still to come (see agent.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sotto.engines.base import ChatMessage, LanguageModel
from sotto.errors import ModelError, StateUpdateError
from sotto.memory.diff import Change, diff_states
from sotto.memory.patch import ModelPatch, StatePatch, apply_patch, parse_patch
from sotto.memory.prompts import UPDATE_INSTRUCTION, fit_messages
from sotto.memory.rules import RuleResult, extract
from sotto.memory.state import SessionState
from sotto.memory.validate import ground_patch

UPDATE_MAX_TOKENS = 72
GRAMMAR_STRING_CAP = 60


@dataclass
class RulesUpdate:
    rules: RuleResult
    state: SessionState
    changes: list[Change]
    notes: list[str]


@dataclass
class ModelUpdate:
    state: SessionState  # unchanged input state when the model failed
    changes: list[Change] = field(default_factory=list)
    patch: StatePatch | None = None
    failures: list[str] = field(default_factory=list)  # one per invalid attempt
    rejected: list[str] = field(default_factory=list)  # values dropped by grounding
    attempts: int = 0
    context_overflow: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_ms: float = 0.0
    raw: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.patch is None and self.attempts > 0


class Monologue:
    def __init__(self, model: LanguageModel | None, *, max_tokens: int = UPDATE_MAX_TOKENS, retries: int = 1) -> None:
        self.model = model
        self.max_tokens = max_tokens
        self.retries = retries
        self.grammar = ModelPatch.grammar(string_cap=GRAMMAR_STRING_CAP)

    def rules_update(self, state: SessionState, words: str, *, lang: str | None = None, turn: int = 0) -> RulesUpdate:
        rules = extract(words, state, lang=lang, turn=turn)
        assert rules.state is not None
        new = rules.state
        new.updated_at = state.updated_at
        return RulesUpdate(rules, new, diff_states(state, new), [])

    def model_update(self, state: SessionState, words: str, rules: RuleResult) -> ModelUpdate:
        """The model's patch on top of `state` (the rules' state). Never raises for bad output."""
        result = ModelUpdate(state=state)
        if self.model is None:
            return result
        started = time.perf_counter()
        fitted = fit_messages(self.model, state, words, UPDATE_INSTRUCTION, self.max_tokens)
        if fitted is None:
            result.context_overflow = True
            result.failures.append("context: the prompt cannot fit the context window")
            result.attempts = 0
            return result
        messages, _, _ = fitted
        error: str | None = None
        for attempt in range(1 + self.retries):
            if error is not None:
                retry = messages + [
                    ChatMessage("assistant", result.raw[-1][:200]),
                    ChatMessage("user", f"That was invalid: {error}. Write only the JSON object."),
                ]
                if self._over_budget(retry):
                    result.context_overflow = True
                    break
                call = retry
            else:
                call = messages
            result.attempts = attempt + 1
            try:
                completion = self.model.complete(call, max_tokens=self.max_tokens, grammar=self.grammar, temperature=0.0)
            except ModelError as exc:
                if exc.code == "model_context_overflow":
                    result.context_overflow = True
                result.failures.append(f"model call failed: {exc}")
                break
            result.raw.append(completion.text)
            result.prompt_tokens += completion.prompt_tokens
            result.completion_tokens += completion.completion_tokens
            try:
                if completion.finish_reason == "length":
                    raise StateUpdateError(f"output cut at {self.max_tokens} tokens (too long)")
                patch = parse_patch(completion.text)
            except StateUpdateError as exc:
                error = exc.message
                result.failures.append(error)
                continue
            checked = ground_patch(patch, words, state, rules)
            result.rejected = checked.rejected
            result.patch = checked.patch
            applied = apply_patch(state, checked.patch)
            result.state, result.changes = applied.state, applied.changes
            break
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _over_budget(self, messages: list[ChatMessage]) -> bool:
        assert self.model is not None
        from sotto.memory.prompts import estimate_tokens

        return estimate_tokens(self.model, messages) + self.max_tokens > self.model.n_ctx
