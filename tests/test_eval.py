"""`sotto eval`: metrics exactly as docs/DESIGN.md defines them, and the line format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterator

import pytest

from fakes_llm import FakeLanguageModel
from sotto.agent import Agent
from sotto.commands.eval import run_scripts, summary
from sotto.engines.base import SpeechAudio, WordConfidence
from sotto.errors import ConfigError
from sotto.memory.evaluation import Script, ScriptScorer, ScriptTurn, load_script
from sotto.memory.state import SessionState
from sotto.memory.store import Store

EXAMPLES = sorted(Path("/work/shared/eval").glob("*.json"))


def scripted(*turns: ScriptTurn) -> Script:
    return Script(name="t", lang="en", turns=list(turns))


def test_remember_items_carry_forward_until_a_forget_shares_an_alternative() -> None:
    script = scripted(
        ScriptTurn("a", remember=[["four", "4"], ["Friday"]]),
        ScriptTurn("b", remember=[["six", "6"]], forget=[["four", "4"]]),
        ScriptTurn("c"),
    )
    scorer = ScriptScorer(script)
    scorer.observe(0, SessionState(session_id="four", facts=["4 people on friday"]), "ok")
    scorer.observe(1, SessionState(facts=["six people on Friday"]), "ok")
    scorer.observe(2, SessionState(facts=["six people"]), "ok")  # Friday lost here
    s = scorer.score
    # checks: turn1 two, turn2 two (Friday, six), turn3 two (Friday, six) = 6; present 5
    assert (s.retention_checks, s.retention_present) == (6, 5)
    assert (s.correction_turns, s.corrections_ok) == (1, 1)


def test_forget_check_removes_still_expected_text_first() -> None:
    script = scripted(ScriptTurn("x", remember=[["day after tomorrow"]], forget=[["tomorrow"]]))
    ok = ScriptScorer(script)
    ok.observe(0, SessionState(facts=["the day after tomorrow at 3 pm"]), "fine")
    assert ok.score.corrections_ok == 1
    bad = ScriptScorer(script)
    bad.observe(0, SessionState(facts=["the day after tomorrow, not tomorrow"]), "fine")
    assert bad.score.corrections_ok == 0


def test_session_id_and_updated_at_are_not_matched_and_leaks_are_counted() -> None:
    scorer = ScriptScorer(scripted(ScriptTurn("x", remember=[["kyoto"]])))
    scorer.observe(0, SessionState(session_id="kyoto", updated_at="kyoto"), "Your facts are {here}.")
    assert scorer.score.retention_present == 0 and scorer.score.leaks == 1


def test_load_script_rejects_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": [{"user": 3}]}')
    with pytest.raises(ConfigError):
        load_script(bad)
    bad.write_text("not json")
    with pytest.raises(ConfigError):
        load_script(bad)


class FakeSynthesizer:
    name = "fake-tts"
    sample_rate = 16000

    def __init__(self) -> None:
        self.texts: list[str] = []

    def synthesize(self, text: str) -> Iterator[SpeechAudio]:
        self.texts.append(text)
        yield SpeechAudio(text=text, pcm=b"\0\0" * 160, sample_rate=16000)


@pytest.mark.skipif(not EXAMPLES, reason="example scripts not present")
def test_eval_lines_follow_the_contract(tmp_path: Path) -> None:
    scripts = [load_script(p) for p in EXAMPLES]
    garbage = FakeLanguageModel(patches=['{"last_topic": 1}'], replies=['{"facts": ["internal state"]}'])
    agent = Agent(garbage, Store(tmp_path / "e.db"))
    tts = FakeSynthesizer()
    lines: list[dict[str, object]] = []
    totals = run_scripts(scripts, agent, tts, lines.append)
    result = summary(totals, len(scripts), garbage.name)
    assert list(result) == [
        "scripts", "turns", "entity_retention", "correction_accuracy", "reply_leak_rate",
        "stale_reply_rate", "state_noise", "context_overflows", "json_failures", "first_answer_ms_p50", "llm",
        "reply_mentions_rate", "routes", "llm_jobs",
    ]
    assert {"script", "turn", "user", "state", "reply", "first_answer_ms"} <= set(lines[0])
    json.dumps(lines[0], ensure_ascii=False)
    assert result["turns"] == sum(len(s.turns) for s in scripts) == len(tts.texts)
    # A model that returns garbage every time: every turn records a failure, yet the
    # rules keep the memory and the composed replies never leak.
    assert result["json_failures"] == result["turns"]
    assert result["reply_leak_rate"] == 0.0
    assert result["entity_retention"] >= 0.9 and result["correction_accuracy"] >= 0.8


@pytest.mark.slow
def test_real_model_short_session(tmp_path: Path) -> None:
    """The embedded model end to end on a few turns: valid under the grammar, bounded prompts."""
    from sotto.engines import llm

    model = llm.load(n_ctx=1024)
    agent = Agent(model, Store(tmp_path / "r.db"))
    words = [
        "Book a table at Luigi's for four people on Friday at seven.",
        "Actually make it six people, not four.",
        "How many people did I say?",
    ]
    results = [agent.run_turn("real", w) for w in words]
    assert all(r.context_overflows == 0 for r in results)
    assert "six" in results[-1].state.memory_text() and "four" not in results[-1].state.memory_text()
    assert all(r.reply for r in results)


class MishearingRecognizer:
    """Recognizer fake: each turn's final is the next scripted mishearing (numbers spelled out);
    `words` gives a final's words with their confidences (default: none)."""

    name = "fake-asr"
    sample_rate = 16000

    def __init__(self, heard: list[str], words: Callable[[str], tuple[WordConfidence, ...]] = lambda text: ()) -> None:
        self.heard = list(heard)
        self.words = words
        self.done: set[int] = set()

    def accept(self, chunk: object) -> list[object]:
        return []

    def flush(self, turn_id: int) -> list[object]:
        from sotto.engines.base import Transcript

        if turn_id in self.done or not self.heard:
            return []
        self.done.add(turn_id)
        text = self.heard.pop(0)
        return [Transcript(turn_id, text, final=True, words=self.words(text))]


def test_speech_turns_give_the_memory_the_recognised_words_and_report_wer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sotto.commands.eval import SpeechInput
    from sotto.engines.normalize import NormalizingRecognizer

    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))  # the synthesis cache
    script = scripted(
        ScriptTurn("Book a table for four people at 7 pm.", remember=[["4", "four"]]),
        ScriptTurn("My name is Carla.", remember=["Carla"]),
        ScriptTurn("Hello?"),
    )
    recognizer = NormalizingRecognizer(MishearingRecognizer(
        ["book a table for four people at seven p m", "my name is carl a", ""]), "en")
    voice = FakeSynthesizer()
    speech = SpeechInput(lambda lang: voice, lambda lang: (recognizer, "fake-asr"))
    lines: list[dict[str, object]] = []
    totals = run_scripts([script], Agent(FakeLanguageModel(), Store(tmp_path / "s.db")), None, lines.append, speech=speech)
    result = summary(totals, 1, "fake", asr=", ".join(speech.labels))
    assert voice.texts == [t.user for t in script.turns]  # each user turn was synthesised
    first, second, third = lines
    assert first["heard"] == "book a table for four people at seven p m"
    assert first["final_transcript"] == "book a table for four people at 7 pm" and first["wer"] == 0.0
    assert "7 pm" in json.dumps(first["state"])  # the memory got the normalised words
    assert second["wer"] == 0.5  # "carl a" for "carla": one substitution, one insertion
    assert third["reply"] == "" and third["first_answer_ms"] is None  # nothing heard: no turn
    assert result["wer"] == round(3 / 14, 4) and result["wer_per_script"] == {"t": round(3 / 14, 4)}  # 9 + 4 + 1 words
    assert result["asr"] == "fake-asr" and result["turns"] == 3
