"""The seed article's voice agent, kept as a baseline to measure sotto against.

Per user turn: one LLM call rewrites the whole state as JSON (constrained only to be
JSON), then a second call writes the reply, then Piper synthesises the whole reply
at once. Nothing is streamed or overlapped, so the first audio is ready only after
all three steps. It runs on the same engines as sotto (any LanguageModel and
SpeechSynthesizer), so differences come from the design, not the models.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from sotto.engines.base import ChatMessage, LanguageModel, SpeechSynthesizer

# The same top-level fields as sotto's SessionState, so the two are scored alike.
EMPTY_STATE: dict[str, Any] = {
    "user_profile": {},
    "current_task": "",
    "pending_steps": [],
    "completed_steps": [],
    "facts": [],
    "last_topic": "",
}

STATE_SYSTEM_PROMPT = (
    "You keep the working memory of a voice assistant. You get the current state as JSON and the "
    "user's new message. Answer with the complete updated state as one JSON object with the same keys: "
    "user_profile (names, preferences, constraints), current_task, pending_steps, completed_steps, facts, "
    "last_topic. Keep everything that is still true, replace anything the user corrects, add new details."
)
REPLY_SYSTEM_PROMPT = (
    "You are a helpful voice assistant. Using the memory state, reply to the user in at most two short, "
    "natural spoken sentences. Never mention the state, JSON or field names."
)

# llama.cpp's generic JSON grammar: "no grammar beyond JSON" (no schema).
JSON_GRAMMAR = r"""
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws     ::= | " " | "\n" [ \t]{0,20}
"""


@dataclass
class BaselineTurn:
    """What one baseline turn did and how long each step took (ms from the final words)."""

    user: str
    state: dict[str, Any]
    reply: str
    json_ok: bool
    state_ms: float
    reply_ms: float
    tts_ms: float
    first_audio_ms: float
    state_tokens: int
    reply_tokens: int
    audio_s: float
    error: str | None = None

    def record(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "state": self.state,
            "reply": self.reply,
            "json_ok": self.json_ok,
            "state_ms": round(self.state_ms, 1),
            "reply_ms": round(self.reply_ms, 1),
            "tts_ms": round(self.tts_ms, 1),
            "first_audio_ms": round(self.first_audio_ms, 1),
            "state_tokens": self.state_tokens,
            "reply_tokens": self.reply_tokens,
            "audio_s": round(self.audio_s, 2),
            "error": self.error,
        }


def parse_state(text: str) -> dict[str, Any] | None:
    """The model's rewritten state, or None if it is not a JSON object."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@dataclass
class BaselineAgent:
    llm: LanguageModel
    tts: SpeechSynthesizer
    state_max_tokens: int = 256  # caps a rambling rewrite; a full state here fits in ~150 tokens
    reply_max_tokens: int = 80
    state: dict[str, Any] = field(default_factory=lambda: json.loads(json.dumps(EMPTY_STATE)))

    def reset(self) -> None:
        self.state = json.loads(json.dumps(EMPTY_STATE))

    def turn(self, user_text: str) -> BaselineTurn:
        """Run one turn from the user's final words; returns its timings."""
        start = time.perf_counter()
        state_json = json.dumps(self.state, ensure_ascii=False)
        rewrite = self.llm.complete(
            [
                ChatMessage("system", STATE_SYSTEM_PROMPT),
                ChatMessage("user", f"State:\n{state_json}\n\nUser: {user_text}"),
            ],
            max_tokens=self.state_max_tokens,
            grammar=JSON_GRAMMAR,
            temperature=0.0,
        )
        state_done = time.perf_counter()
        new_state = parse_state(rewrite.text)
        json_ok = new_state is not None
        if new_state is not None:
            self.state = new_state  # the seed design trusts the whole rewrite: forgotten fields are lost
        reply = self.llm.complete(
            [
                ChatMessage("system", REPLY_SYSTEM_PROMPT),
                ChatMessage("user", f"State:\n{json.dumps(self.state, ensure_ascii=False)}\n\nUser: {user_text}"),
            ],
            max_tokens=self.reply_max_tokens,
            temperature=0.0,
        )
        reply_done = time.perf_counter()
        reply_text = reply.text.strip()
        pcm = b""
        sample_rate = self.tts.sample_rate
        if reply_text:
            pcm = b"".join(chunk.pcm for chunk in self.tts.synthesize(reply_text))  # whole reply, then play
        audio_ready = time.perf_counter()
        return BaselineTurn(
            user=user_text,
            state=self.state,
            reply=reply_text,
            json_ok=json_ok,
            state_ms=(state_done - start) * 1000,
            reply_ms=(reply_done - state_done) * 1000,
            tts_ms=(audio_ready - reply_done) * 1000,
            first_audio_ms=(audio_ready - start) * 1000,
            state_tokens=rewrite.completion_tokens,
            reply_tokens=reply.completion_tokens,
            audio_s=len(pcm) / 2 / sample_rate if sample_rate else 0.0,
            error=None if json_ok else "state rewrite was not a JSON object; previous state kept",
        )
