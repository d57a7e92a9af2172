"""Answer first: the router (each route, EN and ZH), open answers from the model with
their checks, the capability gate, and fillers by prediction (no filler before a ready
answer, a filler when the model is predicted slow) on an injected clock."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any, Awaitable, TypeVar

import pytest

from fakes_llm import PROBE_ANSWERS, FakeAnsweringModel, FakeLanguageModel
from fakes_voice import FakeTTS, run_turn
from sotto.agent import Agent, AgentConfig
from sotto.agent.capability import (
    OPEN_ANSWER, PATCH, TIE_BREAK, CapabilityCache, ModelCapabilities, capabilities_for, probe,
)
from sotto.agent.reference import retrieve
from sotto.agent.reply import check_open_sentence
from sotto.agent.router import (
    ACTION, CONFIRM, HOST_FACT, KNOWLEDGE, LIVE_DATA, MEMORY, MODEL, NO_ANSWER, route_turn,
)
from sotto.knowledge import load_knowledge
from sotto.knowledge.base import example_path
from sotto.memory.rules import extract
from sotto.memory.state import SessionState
from sotto.memory.store import Store
from sotto.voice.budgets import BudgetConfig
from sotto.voice.ladder import ACKNOWLEDGE, DEFER, DegradationLadder
from sotto.voice.turn_runner import TurnRunner

T = TypeVar("T")
NOON = datetime(2026, 11, 30, 14, 5)  # a Monday


@pytest.fixture()
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    s = Store()
    yield s
    s.close()


def _route(words: str, state: SessionState | None = None, *, model: bool = True, actions: bool = False,
           knowledge: Any = None) -> Any:
    state = state or SessionState(session_id="r")
    rules = extract(words, state)
    assert rules.state is not None
    return route_turn(words, rules, rules.state, has_actions=actions, reference=retrieve(knowledge, words),
                      model_does=lambda lang: model)


def _state_after(*said: str) -> SessionState:
    state = SessionState(session_id="r")
    for turn, words in enumerate(said, 1):
        result = extract(words, state, turn=turn)
        assert result.state is not None
        state = result.state
    return state


# ------------------------------------------------------------------ the router


@pytest.mark.parametrize("words", [
    "My name is Maya.", "Please remind me to water the basil tomorrow at 6 pm.", "Thanks, that is all for now.",
    "我叫王芳。", "明天下午三点提醒我去取快递。",
])
def test_statements_reminders_and_closings_get_a_composed_confirmation(words: str) -> None:
    route = _route(words)
    assert route.name == CONFIRM and route.composed and route.reason


def test_a_correction_is_confirmed() -> None:
    state = _state_after("Please remind me to water the basil tomorrow at 6 pm.")
    assert _route("Sorry, not 6 pm, make it 7 pm.", state).name == CONFIRM


@pytest.mark.parametrize("said, question", [
    ("Please remind me to water the basil tomorrow at 6 pm.", "What time is the reminder again?"),
    ("The gate code is 4471.", "What's the gate code?"),
    ("明天下午三点去机场接王先生。", "几点去机场来着？"),
])
def test_memory_questions_are_answered_from_the_items(said: str, question: str) -> None:
    assert _route(question, _state_after(said)).name == MEMORY


@pytest.mark.parametrize("question, topic", [
    ("What time is it?", "time"), ("What day is it today?", "date"), ("现在几点了？", "time"), ("今天星期几？", "date"),
])
def test_the_hosts_own_facts_come_from_the_host_clock(store: Store, question: str, topic: str) -> None:
    route = _route(question)
    assert route.name == HOST_FACT and route.topic == topic
    agent = Agent(None, store, now=lambda: NOON)
    reply = agent.run_turn("s", question).reply
    expected = {"time": ("2:05 pm", "14点05分"), "date": ("Monday, November 30", "11月30日，星期一")}[topic]
    assert any(e in reply for e in expected), reply


@pytest.mark.parametrize("question, said", [
    ("What's the weather like tomorrow?", "I have no weather data offline."),
    ("Any news today?", "I have no news data offline."),
    ("今天天气怎么样？", "我是离线的，没有天气数据。"),
])
def test_live_data_the_host_lacks_is_said_honestly(store: Store, question: str, said: str) -> None:
    assert _route(question).name == LIVE_DATA
    model = FakeLanguageModel(replies=["It will be sunny and 25 degrees."])
    result = Agent(model, store).run_turn("s", question)
    assert result.reply == said and not model.stream_calls


def test_a_board_action_alone_is_confirmed() -> None:
    assert _route("", actions=True).name == ACTION


def test_a_knowledge_passage_answers_what_it_covers(store: Store) -> None:
    kb = load_knowledge(example_path())
    route = _route("What payment methods do you accept?", knowledge=kb)
    assert route.name == KNOWLEDGE


@pytest.mark.parametrize("question", [
    "Can you tell me a few tips about growing basil indoors?", "How are you?", "Tell me a joke.", "天空为什么是蓝色的？",
])
def test_open_questions_and_small_talk_go_to_the_model_only_when_it_passed(question: str) -> None:
    assert _route(question).name == MODEL
    assert _route(question, model=False).name == NO_ANSWER


def test_an_open_question_is_not_noted_in_memory() -> None:
    rules = extract("Can you tell me a few tips about growing basil indoors?", SessionState(session_id="r"))
    assert rules.question and rules.state is not None and not any(rules.state.all_strings())


# ------------------------------------------------------------------ open answers


def test_the_first_sentence_that_passes_is_spoken(store: Store) -> None:
    model = FakeAnsweringModel({"Can you tell me": "Sure, here are a few tips:\n1. Basil grows best in bright light and warm air."})
    result = Agent(model, store).run_turn("s", "Can you tell me a few tips about growing basil indoors?")
    assert result.reply == "Basil grows best in bright light and warm air."
    assert result.reply_source == "model" and result.route == MODEL
    assert any("preamble" in r for r in result.rejected)


@pytest.mark.parametrize("sentence, reason", [
    ("As an AI, I cannot grow plants.", "filler or confusion"),
    ("The weather is nice.", "off-topic"),
    ("植物需要阳光。", "not English"),
    ("Which basil do you mean?", "asks instead of answering"),
    ("Your notes say {basil}.", "leaks"),
])
def test_open_answer_checks(sentence: str, reason: str) -> None:
    assert check_open_sentence(sentence, question="How do I grow basil indoors?", lang="en", first=True) == reason


def test_faithfulness_checks_only_for_questions_about_the_users_data() -> None:
    sentence = "Water it at 8 am, Maya."
    assert check_open_sentence(sentence, question="How often should I water basil?", lang="en", first=True) is None
    state = _state_after("Please remind me to water the basil tomorrow at 6 pm.")
    assert check_open_sentence(sentence, question="How often should I water basil?", lang="en", first=True,
                               state=state) == "invented number"


def test_nothing_passes_so_the_reply_says_it_does_not_know(store: Store) -> None:
    model = FakeAnsweringModel({}, default="As an AI language model, I cannot say.")
    assert Agent(model, store).run_turn("s", "What is the tallest tree in the world?").reply == "I don't know that one."
    zh = Agent(model, store).run_turn("z", "世界上最高的树是什么树？", lang="zh")
    assert zh.reply == "这个我不知道。"


def test_composed_routes_never_call_the_model(store: Store) -> None:
    model = FakeLanguageModel(replies=["Something from the model."])
    agent = Agent(model, store, config=AgentConfig(model_update="off"))
    for words in ("My name is Maya.", "Please remind me to water the basil tomorrow at 6 pm.", "What time is the reminder again?"):
        assert agent.run_turn("s", words).reply_source == "composed"
    assert model.stream_calls == []


# ------------------------------------------------------------------ the capability gate


def test_the_gate_gives_only_the_jobs_the_probe_passed_and_no_patch_calls_are_made(store: Store, tmp_path: Path) -> None:
    model = FakeAnsweringModel(PROBE_ANSWERS, patches=["this is not JSON"])
    cache = CapabilityCache(tmp_path / "caps.json")
    caps = capabilities_for(model, cache)
    assert caps.measured and caps.does(OPEN_ANSWER, "en") and caps.does(OPEN_ANSWER, "zh")
    assert not caps.does(PATCH) and "no valid patch" in caps.jobs[PATCH].reason
    assert not caps.does(TIE_BREAK)
    probe_calls = len(model.complete_calls)
    agent = Agent(model, store, capabilities=caps)
    for words in ("My name is Maya.", "Book a table for two at Nico's on Friday.", "Sorry, make it Saturday."):
        agent.run_turn("s", words)
    assert len(model.complete_calls) == probe_calls  # a model that failed the patch probe is never run for patches
    # Cached per model: a second start-up does not probe again.
    again = capabilities_for(model, CapabilityCache(tmp_path / "caps.json"))
    assert again.summary() == caps.summary() and len(model.complete_calls) == probe_calls


def test_a_model_that_passes_the_patch_probe_is_given_patches(store: Store, tmp_path: Path) -> None:
    patch = ('{"last_topic": "", "add_facts": ["The parcel locker code is 4417", "call the plumber at 5 pm"], '
             '"add_names": ["Priya"], "replace": []}')
    model = FakeAnsweringModel(PROBE_ANSWERS, patches=[patch])
    caps = probe(model)
    assert caps.does(PATCH), caps.jobs[PATCH]
    before = len(model.complete_calls)
    Agent(model, store, capabilities=caps).run_turn("s", "My name is Priya.")
    assert len(model.complete_calls) > before


def test_a_model_wrong_on_open_questions_answers_none(store: Store, tmp_path: Path) -> None:
    model = FakeAnsweringModel({}, default="Bananas are yellow.")
    caps = probe(model)
    assert not caps.does(OPEN_ANSWER, "en") and "0 of 5" in caps.jobs[f"{OPEN_ANSWER}:en"].reason
    result = Agent(model, store, capabilities=caps).run_turn("s", "What is the capital of Peru?")
    assert result.route == NO_ANSWER and result.reply == "I don't know that one."
    assert not any(call[-1].content.startswith("What is the capital of Peru") for call in model.stream_calls)


# ------------------------------------------------------------------ fillers by prediction


class ManualClock:
    """Time moves only when told (`advance`); a timeout fires only when it is already due."""

    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        self.t += seconds
        await asyncio.sleep(0)

    async def wait_for(self, awaitable: Awaitable[T], timeout: float | None) -> T:
        task = asyncio.ensure_future(awaitable)
        await asyncio.sleep(0)
        if not task.done() and timeout is not None and timeout <= 0:
            task.cancel()
            raise asyncio.TimeoutError
        return await task


def test_the_ladder_acts_on_the_prediction() -> None:
    budgets = BudgetConfig()
    ready = DegradationLadder(budgets)
    ready.on_prediction(300.0)  # within the first-byte budget: no acknowledgement, nothing to defer
    assert [a for _, a in ready._steps] == ["shorten"]
    slow = DegradationLadder(budgets)
    slow.on_prediction(1400.0, deep_work="the model's check of my notes")
    assert slow.next_step() == (0.0, ACKNOWLEDGE)  # at once, not at the 450 ms timer
    assert DEFER in [a for _, a in slow._steps]
    late_but_composed = DegradationLadder(budgets)
    late_but_composed.on_prediction(900.0, composed=True)  # e.g. slow speech synthesis: still no filler
    assert ACKNOWLEDGE not in [a for _, a in late_but_composed._steps]


def _slow_model_caps(clock: ManualClock) -> tuple[FakeAnsweringModel, ModelCapabilities]:
    answers = dict(PROBE_ANSWERS, **{"Can you tell me": "Basil grows best in bright light and warm air."})
    model = FakeAnsweringModel(answers, patches=["not JSON"], clock=clock, piece_s=0.2)  # 200 ms a piece
    return model, probe(model, clock=clock.now)


def test_no_filler_before_a_ready_answer(store: Store) -> None:
    clock = ManualClock()
    model, caps = _slow_model_caps(clock)
    runner = TurnRunner(Agent(model, store, capabilities=caps), FakeTTS(), clock=clock)
    try:
        for number, words in enumerate(("My name is Maya.", "Please remind me to water the basil at 6 pm.",
                                        "What time is the reminder again?"), 1):
            outcome, output = asyncio.run(run_turn(runner, "s", words, number))
            assert output.texts(ACKNOWLEDGE + "ment") == [] and outcome.degrade_actions == []
            assert outcome.route in (CONFIRM, MEMORY) and output.texts()
    finally:
        runner.close()


def test_a_filler_when_the_model_is_predicted_slow(store: Store) -> None:
    clock = ManualClock()
    model, caps = _slow_model_caps(clock)
    assert caps.gen_ms_per_token > 100  # measured on the injected clock, not assumed
    runner = TurnRunner(Agent(model, store, capabilities=caps), FakeTTS(), clock=clock)
    try:
        outcome, output = asyncio.run(run_turn(runner, "s", "Can you tell me a few tips about growing basil indoors?", 1))
    finally:
        runner.close()
    assert outcome.route == MODEL and outcome.predicted_first_answer_ms > 700
    assert output.items[0][0] == "acknowledgement"
    assert outcome.degrade_actions[0] == ACKNOWLEDGE and DEFER not in outcome.degrade_actions  # nothing to defer
    assert output.texts() == ["Basil grows best in bright light and warm air."]


# ------------------------------------------------------------------ the trace and `sotto stats`


def test_stats_report_the_route_of_each_turn_and_the_jobs_of_each_model(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from sotto.cli import main

    model = FakeAnsweringModel(PROBE_ANSWERS, patches=["not JSON"])
    caps = capabilities_for(model)  # cached under SOTTO_HOME, where `sotto stats` reads it
    agent = Agent(model, store, capabilities=caps, now=lambda: NOON)
    for words in ("My name is Maya.", "What time is it?", "Tell me a joke."):
        agent.run_turn("s", words)
    traced = [e["route"] for e in store.traces("s", kind="agent_turn")]
    assert traced == [CONFIRM, HOST_FACT, MODEL]
    assert main(["stats", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["routes"] == {CONFIRM: 1, HOST_FACT: 1, MODEL: 1}
    assert any(why.startswith("host_fact: the time now") for why in out["route_reasons"])
    jobs = out["model_jobs"]["fake-llm"]
    assert jobs["patch"].startswith("no (0/3") and jobs["open_answer:en"].startswith("yes (5/5")


@pytest.mark.slow
def test_the_embedded_model_is_probed_and_answers_what_it_passed(store: Store, tmp_path: Path) -> None:
    from sotto.engines import llm

    model = llm.load()
    caps = capabilities_for(model, CapabilityCache(tmp_path / "caps.json"))
    assert caps.measured and caps.reachable and set(caps.jobs) == {"open_answer:en", "open_answer:zh", PATCH, TIE_BREAK}
    assert caps.prompt_ms_per_token > 0 and caps.gen_ms_per_token > 0  # measured, not assumed
    predicted = caps.predict_first_sentence_ms(12)
    assert predicted is not None and predicted > 0
    result = Agent(model, store, capabilities=caps).run_turn("s", "What is the capital of Japan?")
    if caps.does(OPEN_ANSWER, "en"):
        assert result.route == MODEL and (result.reply_source == "model" or result.reply == "I don't know that one.")
    else:
        assert result.route == NO_ANSWER
    patch_calls = caps.does(PATCH)
    assert (result.model_update_ms > 0) == patch_calls  # no CPU on patches for a model that failed the probe
