"""The seed-article baseline: full-state JSON rewrite, reply call, whole-reply TTS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator, Sequence

import pytest

from sotto.baseline import BaselineAgent, load_script, run_baseline
from sotto.baseline.agent import EMPTY_STATE, parse_state
from sotto.engines.base import ChatMessage, Completion, SpeechAudio
from sotto.errors import ConfigError
from sotto.metrics import percentile


class FakeBaselineLLM:
    """Answers state rewrites from a queue and replies with a fixed sentence pair."""

    name = "fake-llm"
    n_ctx = 2048

    def __init__(self, rewrites: Sequence[str]) -> None:
        self.rewrites = list(rewrites)
        self.calls: list[tuple[list[ChatMessage], str | None]] = []

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Completion:
        self.calls.append((list(messages), grammar))
        text = self.rewrites.pop(0) if grammar else "  Sure, done. Anything else?  "
        return Completion(text=text, prompt_tokens=10, completion_tokens=len(text.split()), finish_reason="stop")

    def stream(self, messages: Sequence[ChatMessage], *, max_tokens: int, temperature: float = 0.0, stop: Sequence[str] = ()) -> Iterator[str]:
        raise AssertionError("the baseline does not stream")


class FakeBaselineTTS:
    name = "fake-voice"
    sample_rate = 22050

    def __init__(self) -> None:
        self.texts: list[str] = []

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        self.texts.append(text)
        for sentence in text.split(". "):
            yield SpeechAudio(sentence, b"\x00\x01" * 2205, self.sample_rate)


def test_turn_rewrites_state_then_replies_then_speaks_whole_reply() -> None:
    llm = FakeBaselineLLM(['{"facts": ["table for four"], "last_topic": "dinner"}'])
    tts = FakeBaselineTTS()
    agent = BaselineAgent(llm=llm, tts=tts)
    turn = agent.turn("Book a table for four.")
    assert turn.json_ok and turn.state == {"facts": ["table for four"], "last_topic": "dinner"}
    assert turn.reply == "Sure, done. Anything else?"
    assert tts.texts == ["Sure, done. Anything else?"]  # one synthesis call for the whole reply
    assert turn.audio_s == pytest.approx(0.2)
    # Two LLM calls: the first constrained to JSON, the second (reply) unconstrained and given the new state.
    (state_msgs, grammar), (reply_msgs, reply_grammar) = llm.calls
    assert grammar is not None and "object" in grammar and reply_grammar is None
    assert '"table for four"' in reply_msgs[-1].content
    assert turn.first_audio_ms >= turn.state_ms + turn.reply_ms


def test_the_seed_design_loses_fields_the_model_forgets() -> None:
    llm = FakeBaselineLLM(['{"facts": ["Carla"]}', '{"last_topic": "window"}'])
    agent = BaselineAgent(llm=llm, tts=FakeBaselineTTS())
    agent.turn("My name is Carla.")
    turn = agent.turn("A table by the window.")
    assert turn.state == {"last_topic": "window"}  # the whole rewrite replaced the state


def test_invalid_json_keeps_the_previous_state() -> None:
    llm = FakeBaselineLLM(['{"facts": ["x"]}', '{"facts": ["trunc'])
    agent = BaselineAgent(llm=llm, tts=FakeBaselineTTS())
    agent.turn("one")
    turn = agent.turn("two")
    assert not turn.json_ok and turn.error and turn.state == {"facts": ["x"]}
    assert turn.reply  # the turn still gets a reply


def test_parse_state_only_accepts_objects() -> None:
    assert parse_state('{"a": 1}') == {"a": 1}
    assert parse_state("[1, 2]") is None
    assert parse_state("nope") is None


def _script(tmp_path: Path, name: str, turns: list[str]) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"name": name, "lang": "en", "turns": [{"user": t, "remember": []} for t in turns]}), encoding="utf-8")
    return path


def test_run_baseline_records_every_turn_and_summarises(tmp_path: Path) -> None:
    a = _script(tmp_path, "a", ["one", "two"])
    b = _script(tmp_path, "b", ["three"])
    llm = FakeBaselineLLM(['{"facts": ["1"]}', '{"facts": ["1", "2"]}', '{"facts": ["3"]}'])
    seen: list[dict[str, object]] = []
    result = run_baseline([a, b], llm=llm, tts=FakeBaselineTTS(), on_turn=seen.append)
    assert [(r["script"], r["turn"]) for r in result.records] == [("a", 1), ("a", 2), ("b", 1)]
    assert seen == result.records
    # Each script starts from an empty state.
    first_prompt_of_b = llm.calls[4][0][-1].content
    assert json.dumps(EMPTY_STATE) in first_prompt_of_b
    summary = result.summary
    assert summary["summary"] is True and summary["turns"] == 3 and summary["scripts"] == 2
    assert summary["first_audio_ms_p50"] == percentile([r["first_audio_ms"] for r in result.records], 50)
    assert summary["llm"] == "fake-llm" and summary["tts"] == "fake-voice" and summary["json_failures"] == 0
    json.dumps(result.records)  # records are plain JSON


def test_shared_eval_scripts_load() -> None:
    shared = Path(__file__).resolve().parents[2] / "shared" / "eval"
    if not shared.is_dir():
        pytest.skip("no shared eval scripts next to this checkout")
    script = load_script(shared / "restaurant_en.json")
    assert script.lang == "en" and len(script.turns) >= 3


@pytest.mark.parametrize(
    "content",
    ["{", json.dumps({"turns": []}), json.dumps({"turns": [{"user": ""}]}), json.dumps([1])],
)
def test_bad_scripts_are_config_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_script(path)


def test_missing_script_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_script(tmp_path / "none.json")
