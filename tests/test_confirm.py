"""Confirming unsure values (sotto.agent.confirm): the question, the answer turn and its
correction, the counts, and the simulated user of `sotto eval --speech`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

import pytest

from sotto.agent import Agent, AgentConfig, TurnResult
from sotto.agent.confirm import CORRECTED, Answer, LAPSED, NO, YES, PendingConfirmation, read_answer, spelled_out
from sotto.cli import main
from sotto.engines.base import Transcript, WordConfidence
from sotto.memory.store import Store

SURE, UNSURE = 0.95, 0.2


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def agent_on(store: Store, below: float = 0.5) -> Agent:
    return Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed", confirm_below=below))


def heard(text: str, *unsure: str) -> list[WordConfidence]:
    """The words of `text` as a recognizer gives them: the `unsure` ones with a low confidence."""
    return [WordConfidence(w, UNSURE if w.strip(".,?!").lower() in unsure else SURE) for w in text.split()]


def say(agent: Agent, words: str, *unsure: str, session: str = "s") -> TurnResult:
    return agent.run_turn(session, words, heard=heard(words, *unsure))


def test_a_low_confidence_name_is_asked_back_spelled(store: Store) -> None:
    result = say(agent_on(store), "My name is Wen.", "wen")
    assert result.reply == "Was that Wen, W-E-N?"
    assert result.route == "confirm" and "unsure name" in result.route_reason
    assert result.confirm_asked is not None and result.confirm_asked["value"] == "Wen" and result.confirm_asked["confidence"] == UNSURE
    assert result.state.user_profile.names == ["Wen"]  # stored meanwhile
    (asked,) = store.traces("s", kind="confirm_asked")
    assert asked["kind"] == "name" and asked["value"] == "Wen" and asked["confidence"] == UNSURE


def test_a_redacted_trace_keeps_no_value_asked_back(tmp_path: Path) -> None:
    redacted = Store(tmp_path / "r.db", redact=True)
    try:
        say(agent_on(redacted), "My ID is 88421.", "88421")
        say(agent_on(redacted), "No, it's 88412.")
        events = redacted.traces("s", kind="confirm_asked") + redacted.traces("s", kind="confirm_answered")
        assert len(events) == 2 and "8842" not in json.dumps(events) and "8841" not in json.dumps(events)
        assert events[0]["kind"] == "number" and events[1]["answer"] == "corrected"  # the counts survive
    finally:
        redacted.close()


def test_no_question_for_a_sure_value_a_known_entity_or_typed_words(store: Store) -> None:
    agent = agent_on(store)
    assert say(agent, "My name is Wen.").reply == "Nice to meet you, Wen."
    # "Wen" is known now (the backfill's entity vocabulary): said again unsure, nothing to ask.
    assert "Was that" not in say(agent, "Please tell Wen the code is 4471.", "wen").reply
    assert store.traces("s", kind="confirm_asked") == []
    typed = agent.run_turn("t", "My ID is 88421.")  # no word confidences: never asked
    assert typed.confirm_asked is None and "Was that" not in typed.reply
    assert say(agent_on(store, below=0.0), "My ID is 88421.", "88421", session="u").confirm_asked is None


def test_yes_keeps_the_value(store: Store) -> None:
    agent = agent_on(store)
    assert say(agent, "Pick me up at 3 pm.", "3").reply == "Was that 3 pm?"
    result = say(agent, "Yes.")
    assert result.reply == "Okay, 3 pm it is." and result.confirm_answer == YES
    assert "3 pm" in result.state.memory_text()
    assert store.pending_confirmation("s") is None
    # The next "yes" answers nothing: an ordinary turn.
    assert say(agent, "Yes.").confirm_answer == ""


def test_no_its_x_replaces_the_value_everywhere(store: Store) -> None:
    agent = agent_on(store)
    first = say(agent, "My ID is 88421.", "88421")
    assert first.reply == "Was that 8 8 4 2 1?"
    result = say(agent, "No, it's 88412.")
    assert result.confirm_answer == CORRECTED and result.reply == "Okay, 88412 then."
    text = result.state.memory_text()
    assert "88412" in text and "88421" not in text
    assert result.changes  # committed with its diff
    assert "88421" not in store.latest("s").state.memory_text()  # type: ignore[union-attr]
    (answered,) = store.traces("s", kind="confirm_answered")
    assert answered["answer"] == "corrected" and answered["corrected_to"] == "88412"


def test_a_name_corrected_by_spelling_keeps_its_title(store: Store) -> None:
    agent = agent_on(store)
    asked = say(agent, "Pick up Mr. Wen at the airport at 3 pm.", "wen")
    assert asked.reply == "Was that Wen, W-E-N?"  # only the unsure word
    result = say(agent, "no w. a. n. g.")  # how pocketsphinx writes spelled letters
    assert result.reply == "Okay, Wang then."
    text = result.state.memory_text()
    assert "Mr. Wang" in text and "Wen" not in text


@pytest.mark.parametrize("said, spelled", [
    ("W A N G", "WANG"), ("w. a. n. g.", "wang"), ("W-A-N-G", "WANG"), ("it's W, A, N, G", "WANG"),
    ("8 8 4 1 2", "88412"), ("Wang", None), ("a bunch of flowers", None), ("I said a b", "ab"),
])
def test_spelled_characters_are_joined(said: str, spelled: str | None) -> None:
    assert spelled_out(said) == spelled


def test_reading_answers() -> None:
    name = PendingConfirmation("Mr. Wen", "Wen", "wen", "name", 0.2, 1, "en")
    assert read_answer("Yeah, that's right.", name) == Answer(YES)
    assert read_answer("Yes, Wen.", name).rest == "" and read_answer("Yes, and call him.", name).rest == "and call him"
    assert read_answer("Wen.", name).outcome == YES  # said back
    assert read_answer("W E N", name).outcome == YES
    assert read_answer("No.", name).outcome == NO
    assert read_answer("No, not Wen, Wang.", name).value == "Wang"
    assert read_answer("nope it's wang", name).value == "Wang"  # a name as recognised, capitalised
    assert read_answer("What time is it?", name).outcome == LAPSED
    code = PendingConfirmation("700", "700", "700", "number", 0.2, 1, "en")
    assert read_answer("nope it's tires", code).outcome == NO  # no number given: the unsure one goes
    assert read_answer("no it's 7 0 1", code).value == "701"
    assert read_answer("no it's your 4 want to 556781", code).outcome == NO  # a misheard number is no value
    assert read_answer("No, I want to change the whole booking to another day next week please", name).outcome == LAPSED
    zh = PendingConfirmation("王方", "王方", "王方", "name", 0.2, 1, "zh")
    assert read_answer("对", zh).outcome == YES and read_answer("是王方", zh).outcome == YES
    assert read_answer("不是，是王芳", zh).value == "王芳"
    assert read_answer("不是", zh).outcome == NO
    assert read_answer("不要了", zh).outcome == LAPSED  # 不 of 不要 is no answer
    assert PendingConfirmation.from_dict(name.to_dict()) == name
    assert PendingConfirmation.from_dict({"value": "x", "kind": "note"}) is None


def test_chinese_question_and_correction(store: Store) -> None:
    agent = agent_on(store)
    asked = agent.run_turn("z", "我叫王方", heard=[WordConfidence("我", SURE), WordConfidence("叫", SURE), WordConfidence("王方", UNSURE)])
    assert asked.reply == "是王方吗？"
    # The backfill would map 王芳 back onto the known 王方: the answer is read as recognised.
    result = agent.run_turn("z", "不是，是王芳", heard=[WordConfidence(w, SURE) for w in ("不是", "是", "王芳")])
    assert result.confirm_answer == CORRECTED and result.reply == "好的，改成王芳了。"
    assert result.state.user_profile.names == ["王芳"]


def test_a_bare_no_removes_the_value_and_asks_again(store: Store) -> None:
    agent = agent_on(store)
    say(agent, "Book a table at Nico's.")
    say(agent, "The code is 4471.", "4471")
    result = say(agent, "No.")
    assert result.confirm_answer == NO and result.reply == "Sorry, I misheard. What was it?"
    text = result.state.memory_text()
    assert "4471" not in text and "Nico" in text  # only the unsure value went


def test_anything_else_lapses_the_question_and_is_handled_normally(store: Store) -> None:
    agent = agent_on(store)
    say(agent, "The code is 4471.", "4471")
    result = say(agent, "Also bring a bunch of flowers.")
    assert result.confirm_answer == LAPSED and "flowers" in result.reply
    assert "4471" in result.state.memory_text()
    assert store.pending_confirmation("s") is None


def test_a_question_left_unanswered_for_long_lapses(store: Store) -> None:
    from datetime import datetime, timedelta, timezone

    clock = [datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)]
    agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed", confirm_below=0.5),
                  now=lambda: clock[0])
    agent.run_turn("s", "The code is 4471.", heard=heard("The code is 4471.", "4471"))
    clock[0] += timedelta(minutes=11)
    result = agent.run_turn("s", "No.", heard=heard("No."))
    assert result.confirm_answer == LAPSED and "4471" in result.state.memory_text()


def test_the_question_survives_a_restart(tmp_path: Path, store: Store) -> None:
    say(agent_on(store), "The code is 4471.", "4471")
    store.close()
    again = Store()
    try:
        result = agent_on(again).run_turn("s", "No, it's 4417.", heard=heard("No, it's 4417."))
        assert result.confirm_answer == CORRECTED and "4417" in result.state.memory_text()
    finally:
        again.close()


def test_stats_count_the_confirmations(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    agent = agent_on(store)
    say(agent, "The code is 4471.", "4471")
    say(agent, "Yes.")
    say(agent, "My ID is 88421.", "88421")
    say(agent, "No, it's 88412.")
    say(agent, "Pick me up at 3 pm.", "3")
    say(agent, "Also bring flowers.")
    store.close()
    assert main(["stats", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["confirmations"] == {"asked": 3, "confirmed": 1, "corrected": 1, "denied": 0, "lapsed": 1}
    assert main(["stats"]) == 0
    assert "confirmations: asked 3, confirmed 1, corrected 1, denied 0, lapsed 1" in capsys.readouterr().out


# ------------------------------------------------------------------ the voice session hands the words on


def test_the_voice_session_gives_the_agent_the_final_words_confidences(tmp_path: Path) -> None:
    from test_voice_harness import clock_of, make_session, run_scenario, user_says  # noqa: F401

    session, port, recognizer, agent = make_session(tmp_path)
    words = (WordConfidence("call", 0.9), WordConfidence("wen", 0.2))

    async def scenario(port, recognizer, session) -> None:  # type: ignore[no-untyped-def]
        from fakes_voice import silence, tone

        port.mic(tone(40))
        recognizer.next(Transcript(1, "call wen", final=True, words=words))
        port.mic(silence(20))
        await clock_of(session).run_until(lambda: len(session.usage.turns) == 1)

    run_scenario(session, port, recognizer, scenario)
    assert agent.heard == [words]


# ------------------------------------------------------------------ sotto eval --speech


def test_the_simulated_user_answers_from_the_script() -> None:
    from sotto.commands.eval import simulated_answer

    assert simulated_answer("Pick up Mr. Wang at 3.", "pick up mr wen at 3", "wen", "en") == "No, it's wang."
    assert simulated_answer("Pick me up at 3 pm.", "pick me up at 3 pm", "3 pm", "en") == "Yes."
    assert simulated_answer("My number is 0412 556 781.", "my number is your 412 556 781", "412556781", "en") == \
        "No, it's 0 4 1 2 5 5 6 7 8 1."  # read digit by digit
    assert simulated_answer("Pick me up.", "pick me up at 3", "3", "en") == "No."  # nothing said there
    assert simulated_answer("Every Saturday.", "every saturdays", "saturdays", "en") == "Yes."  # a plural s is no error
    assert simulated_answer("我叫王芳", "我叫王方", "王方", "zh") == "不是，是王芳。"


def test_eval_speech_answers_a_confirmation_and_the_next_turn_sees_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_eval import FakeSynthesizer, MishearingRecognizer

    from sotto.commands.eval import SpeechInput, run_scripts, summary
    from sotto.memory.evaluation import Script, ScriptTurn

    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))
    script = Script("t", "en", [
        ScriptTurn("My ID is 88412.", remember=[["88412"]]),
        ScriptTurn("Also bring flowers.", remember=[["88412"], ["flowers"]]),
    ])
    voice = FakeSynthesizer()
    recognizer = MishearingRecognizer(["my id is 88421", "no it's 88412", "also bring flowers"],
                                      lambda text: tuple(heard(text, "88421")))
    speech = SpeechInput(lambda lang: voice, lambda lang: (recognizer, "fake-asr"))
    lines: list[dict[str, object]] = []
    agent = Agent(None, Store(tmp_path / "s.db"), config=AgentConfig(model_update="off", reply_mode="composed", confirm_below=0.5))
    totals = run_scripts([script], agent, None, lines.append, speech=speech)
    result = summary(totals, 1, "fake", asr="fake-asr")
    assert voice.texts == ["My ID is 88412.", "No, it's 8 8 4 1 2.", "Also bring flowers."]
    first, second = lines
    assert first["reply"] == "Was that 8 8 4 2 1?"
    assert first["confirm"]["answer"] == "corrected" and first["confirm"]["said"] == "No, it's 8 8 4 1 2."  # type: ignore[index]
    assert "88421" in json.dumps(first["state"])  # the asking turn is scored as it stood
    assert "88412" in json.dumps(second["state"]) and "88421" not in json.dumps(second["state"])
    assert result["turns"] == 2 and result["confirmations"] == {"asked": 1, "corrected": 1}  # named as in sotto stats
    assert result["entity_retention"] == round(2 / 3, 4)  # lost at the asking turn, back after the answer


@pytest.mark.slow
def test_real_speech_asks_back_and_the_spoken_answer_is_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Piper speaks, pocketsphinx recognises, the agent asks (every value, at 1.01), the
    simulated user's answer is spoken and recognised too."""
    from sotto.commands.eval import SpeechInput, run_scripts, summary
    from sotto.engines import sphinx_asr, tts
    from sotto.engines.normalize import NormalizingRecognizer
    from sotto.memory.evaluation import Script, ScriptTurn

    monkeypatch.setenv("SOTTO_HOME", str(tmp_path / "home"))
    voice = tts.load()
    recognizer = NormalizingRecognizer(sphinx_asr.load(), "en")
    speech = SpeechInput(lambda lang: voice, lambda lang: (recognizer, "pocketsphinx"))
    script = Script("t", "en", [ScriptTurn("Please call me tomorrow at three.", remember=[["3"]])])
    agent = Agent(None, Store(tmp_path / "s.db"), config=AgentConfig(model_update="off", reply_mode="composed", confirm_below=1.01))
    lines: list[dict[str, object]] = []
    result = summary(run_scripts([script], agent, None, lines.append, speech=speech), 1, "none", asr="pocketsphinx")
    (line,) = lines
    assert str(line["reply"]).startswith("Was that ")
    confirm = line["confirm"]
    assert isinstance(confirm, dict)
    assert confirm["said"] in ("Yes.", "No.") or str(confirm["said"]).startswith("No, it's")
    assert confirm["answer"] in ("yes", "no", "corrected", "lapsed", "unheard") and confirm["heard"] != ""
    assert result["turns"] == 1 and result["confirmations"]["asked"] == 1
