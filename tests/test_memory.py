"""Working memory: schema, patch application, rules, grounding, bounds, store."""

from __future__ import annotations

import json
import re

import pytest

from sotto.errors import StateUpdateError
from sotto.memory.patch import ModelPatch, Replacement, StatePatch, apply_patch, parse_patch, replace_everywhere
from sotto.memory.rules import extract
from sotto.memory.schema import SchemaViolation, gbnf
from sotto.memory.items import Item
from sotto.memory.state import FACTS_MAX, SessionState, bounded
from sotto.memory.store import Store
from sotto.memory.validate import ground_patch


def run_rules(state: SessionState, *utterances: str) -> SessionState:
    first = max((item.turn for item in state.all_items()), default=0) + 1  # turns go on across calls, as in a session
    for turn, words in enumerate(utterances, first):
        result = extract(words, state, turn=turn)
        assert result.state is not None
        state = result.state
    return state


# ------------------------------------------------------------------ schema


def test_json_schema_and_grammar_come_from_the_same_fields() -> None:
    schema = SessionState.json_schema()
    assert set(schema["properties"]) == {
        "session_id", "user_profile", "current_task", "pending_steps", "completed_steps", "facts", "last_topic", "updated_at",
    }
    assert schema["properties"]["facts"]["maxItems"] == FACTS_MAX
    grammar = ModelPatch.grammar()
    for name in ModelPatch.__dataclass_fields__:
        assert f'\\"{name}\\":' in grammar
    assert "char{0,60}" in grammar
    assert gbnf(StatePatch).count("::=") > 5


def test_grammar_parses_in_llama_cpp() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(ModelPatch.grammar(), verbose=False)
    llama_cpp.LlamaGrammar.from_string(StatePatch.grammar(), verbose=False)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        '{"add_facts": "not a list"}',
        '{"add_facts": [1, 2]}',
        '{"last_topic": "x", "add_facts": ["a"',  # truncated
        '{"unknown_key": []}',
        "[1, 2, 3]",
        '{"add_facts": ["' + "x" * 500 + '"]}',
    ],
)
def test_parse_patch_rejects_malformed_output(text: str) -> None:
    with pytest.raises(StateUpdateError):
        parse_patch(text)


def test_parse_patch_accepts_model_and_full_patches() -> None:
    p = parse_patch('{"last_topic": "dinner", "add_facts": ["table for two"], "add_names": [], "replace": []}')
    assert p.add_facts == ["table for two"] and p.last_topic == "dinner"
    full = parse_patch('{"add_steps": ["call mom"]}')
    assert full.add_steps == ["call mom"]


def test_state_from_json_is_strict() -> None:
    with pytest.raises(SchemaViolation):
        SessionState.from_dict({"facts": "nope"})
    s = SessionState(session_id="a", facts=[Item(key="dose", value="250 mg", kind="quantity", turn=2)])
    assert SessionState.from_json(s.to_json()) == s
    with pytest.raises(SchemaViolation):
        SessionState.from_dict({"facts": [{"key": "k", "value": "v", "kind": "note", "turn": -1}]})
    # A state stored by the earlier version (plain strings) still loads, as notes.
    old = SessionState.from_dict({"facts": ["x"]})
    assert old.facts == [Item(key="", value="x", kind="note", turn=0)]
    # The turn is provenance: kept in the stored state, left out of the memory view.
    assert '"turn"' in s.to_json() and '"turn"' not in s.memory_text()


# ------------------------------------------------------------------ apply


def test_fields_left_out_keep_their_value() -> None:
    s = SessionState(session_id="s", current_task="book a table", facts=[Item(value="four people")], last_topic="dinner")
    out = apply_patch(s, StatePatch(add_facts=["on Friday"])).state
    assert out.current_task == "book a table" and out.last_topic == "dinner"
    assert [f.value for f in out.facts] == ["four people", "on Friday"]


def test_replacement_applies_everywhere_and_protects_the_new_value() -> None:
    assert replace_everywhere("Tomorrow at 3 pm", "tomorrow", "day after tomorrow") == "day after tomorrow at 3 pm"
    assert replace_everywhere("the day after tomorrow", "tomorrow", "day after tomorrow") == "the day after tomorrow"
    assert replace_everywhere("for four people", "four", "six people") == "for six people"
    assert replace_everywhere("fourteen", "four", "six") == "fourteen"
    s = SessionState(session_id="s", current_task="latte", facts=[Item(value="a large latte")], pending_steps=[Item(value="pay the latte")])
    out = apply_patch(s, StatePatch(replace=[Replacement("latte", "flat white")])).state
    assert "latte" not in out.memory_text()


def test_bounded_caps_lists_strings_and_compacts_completed_steps() -> None:
    s = SessionState(
        session_id="s",
        facts=[Item(value=f"fact {i} " + "x" * 400) for i in range(40)],
        completed_steps=[Item(value=f"step {i}") for i in range(20)],
    )
    out, notes = bounded(s)
    assert len(out.facts) == FACTS_MAX and all(len(f.value) <= 200 for f in out.facts)
    assert out.facts[-1].value.startswith("fact 39")  # the newest survive
    assert len(out.completed_steps) <= 6 and out.completed_steps[0].value.startswith("earlier:")
    assert notes


# ------------------------------------------------------------------ rules (general, not the eval scripts)


def test_rules_keep_words_verbatim_and_correct_with_not() -> None:
    s = run_rules(SessionState(session_id="s"), "Schedule the dentist on Thursday at 10:30 am with Dr. Okafor.")
    assert "Thursday" in s.memory_text() and "10:30 am" in s.memory_text() and "Okafor" in s.memory_text()
    s = run_rules(s, "Sorry, Wednesday, not Thursday.")
    text = s.memory_text()
    assert "thursday" not in text.lower() and "Wednesday" in text and "10:30 am" in text


def test_rules_change_to_and_instead_of() -> None:
    s = run_rules(SessionState(session_id="s"), "I want a small green tea.")
    s = run_rules(s, "Change the green tea to a hot chocolate.")
    assert "green tea" not in s.memory_text() and "hot chocolate" in s.memory_text()
    s = run_rules(s, "Make it medium instead of small.")
    assert "small" not in s.memory_text() and "medium" in s.memory_text()


def test_rules_retarget_by_kind_without_the_old_value() -> None:
    s = run_rules(SessionState(session_id="s"), "Book the car for Saturday at 9 am.")
    s = run_rules(s, "Actually, make it Sunday.")
    text = s.memory_text()
    assert "Saturday" not in text and "Sunday" in text and "9 am" in text


def test_rules_chinese_corrections() -> None:
    s = run_rules(SessionState(session_id="s"), "周五晚上七点在海底捞订四个人的位子。")
    assert "海底捞" in s.memory_text() and "七点" in s.memory_text()
    s = run_rules(s, "不是四个人，是六个人。")
    assert "四个人" not in s.memory_text() and "六个人" in s.memory_text()
    s = run_rules(s, "把七点改成八点。")
    assert "七点" not in s.memory_text() and "八点" in s.memory_text()
    s = run_rules(s, "提醒我带上身份证。")
    assert [p.value for p in s.pending_steps] == ["带上身份证"]


def test_rules_questions_add_nothing_and_names_go_to_the_profile() -> None:
    s = run_rules(SessionState(session_id="s"), "My name is Priya Nair.")
    assert s.user_profile.names == ["Priya Nair"]
    before = s.memory_view()
    s = run_rules(s, "What time is it?")
    after = s.memory_view()
    assert after.pop("last_topic") == "time" and before.pop("last_topic") == ""  # what was asked, for "and tomorrow?"
    assert after == before
    assert extract("我叫李雷。", s).patch.add_names == ["李雷"]


# ------------------------------------------------------------------ grounding of the model's patch


def test_ground_patch_drops_invented_and_corrected_values() -> None:
    state = SessionState(session_id="s", facts=[Item(value="a table for six people")])
    words = "Actually make it six people, not four."
    rules = extract(words, SessionState(session_id="s", facts=[Item(key="people", value="four people", kind="quantity")]))
    proposed = StatePatch(add_facts=["a table for four people", "eight people at Nico's"], add_names=["Bob"], last_topic="table")
    kept = ground_patch(proposed, words, state, rules).patch
    assert kept.add_facts == [] and kept.add_names == []
    good = ground_patch(StatePatch(add_facts=["a window table"]), "And a window table please.", state, extract("And a window table please.", state))
    assert good.patch.add_facts == ["a window table"]


# ------------------------------------------------------------------ store


def test_store_versions_diffs_and_traces(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOTTO_HOME", str(tmp_path))
    store = Store()
    s = store.ensure_session("kitchen")
    applied = apply_patch(s, StatePatch(add_facts=["tea at five"]))
    v = store.commit(applied.state, turn=1, source="rules", changes=applied.changes)
    assert v == 1
    history = store.history("kitchen")
    assert [h.source for h in history] == ["create", "rules"]
    assert history[-1].changes == [{"field": "facts", "op": "add", "old": "", "new": "tea at five"}]  # a note: its value
    store.append_trace("kitchen", {"type": "voice_timing", "first_byte_ms": 420})
    assert store.traces("kitchen", kind="voice_timing")[0]["first_byte_ms"] == 420
    mode = store._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    store.close()
    assert [f.value for f in Store().latest("kitchen").state.facts] == ["tea at five"]  # type: ignore[union-attr]


def test_store_rejects_bad_session_ids(tmp_path: object) -> None:
    from sotto.errors import StoreError

    store = Store(f"{tmp_path}/x.db")
    with pytest.raises(StoreError):
        store.ensure_session("../../etc")
    with pytest.raises(StoreError):
        store.ensure_session("x" * 100)


@pytest.mark.slow
def test_llama_reuses_the_shared_prompt_prefix() -> None:
    """Two prompts sharing the system part: the second evaluates only what differs."""
    from sotto.engines import llm
    from sotto.memory.prompts import UPDATE_INSTRUCTION, fit_messages, reply_instruction

    model = llm.load(n_ctx=1024)
    state = SessionState(session_id="p", facts=[Item(value="a table for four at Luigi's on Friday")])
    words = "And a table by the window."
    reply, _, _ = fit_messages(model, state, words, reply_instruction("en", 2), 16)  # type: ignore[misc]
    update, _, _ = fit_messages(model, state, words, UPDATE_INSTRUCTION, 16)  # type: ignore[misc]
    model.complete(reply, max_tokens=4)
    model.complete(update, max_tokens=4)
    assert model.last_call.reused_tokens >= model.last_call.prompt_tokens - 12
    model.reset_cache()
    model.complete(update, max_tokens=4)
    assert model.last_call.reused_tokens == 0


def test_rules_more_general_corrections_and_cancels() -> None:
    s = run_rules(SessionState(session_id="s"), "Schedule a call with Dr. Patel on Tuesday at 2:30 pm, keep it short.")
    s = run_rules(s, "Move it to Wednesday.")
    text = s.memory_text()
    assert "Tuesday" not in text and "Wednesday" in text and "2:30 pm" in text
    assert "keep Wednesday" not in s.memory_text()  # "it" is never a value to replace
    s = run_rules(s, "Not 2:30 pm — 4 pm.")
    assert "2:30" not in s.memory_text() and "4 pm" in s.memory_text()
    s = run_rules(s, "Also bring the slides. And a printed agenda.")
    s = run_rules(s, "We don't need the slides anymore.")
    assert "slides" not in s.memory_text() and "agenda" in s.memory_text()
    z = run_rules(SessionState(session_id="z"), "下午三点开会，带上笔记本。")
    z = run_rules(z, "时间改到下午四点。")
    assert "三点" not in z.memory_text() and "四点" in z.memory_text()
    z = run_rules(z, "算了，不要笔记本了。")
    assert "笔记本" not in z.memory_text()


def test_rules_from_to_and_instead_suffix() -> None:
    s = run_rules(SessionState(session_id="s"), "Reserve the court for Monday at 6 pm.")
    s = run_rules(s, "Can you change the reservation from 6 pm to 7 pm?")
    text = s.memory_text()
    assert "6 pm" not in text and "Monday" in text and "7 pm" in text
    s = run_rules(s, "Let's do Tuesday instead.")
    text = s.memory_text()
    assert "Monday" not in text and "Tuesday" in text and "7 pm" in text


def test_requests_phrased_as_questions_are_kept() -> None:
    s = run_rules(SessionState(session_id="s"), "能帮我订两张周六去上海的火车票吗？")
    assert "上海" in s.memory_text()
    s = run_rules(s, "Could you also book a taxi to the station at 7 am?")
    assert "taxi" in s.memory_text()
    before = s.memory_view()
    after = run_rules(s, "车票是几点的来着？").memory_view()
    before.pop("last_topic"), after.pop("last_topic")
    assert after == before
