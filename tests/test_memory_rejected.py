"""Things a turn turns down: a stored thing of no typed kind, said again as the one that no longer holds.

`memory.rejected` finds the stored things a turn says again and scores each with a logistic model
(weights fitted by tools/fit_reject_model.py on the tuning sets); `rules.extract` drops the clauses
that said a thing scored over the threshold. The sentences here are our own. The plumbing is tested
with fake models injected through `rejected.model`; the shipped weights are checked against the
features the code computes and on a few clear cases (what they gain is measured by `sotto eval`,
eval/README.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_memory_update import say

from sotto.memory import rejected
from sotto.memory.items import Item
from sotto.memory.replace_model import NO_MODEL, ReplaceModel

ROOT = Path(__file__).resolve().parents[1]

# A fake that turns down every stored thing said in the whole shape of a refusal, and nothing else.
FAKE_SHAPE_ONLY = ReplaceModel(weights={"turned_down_shape": 6.0}, bias=-3.0, threshold=0.5)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch):
    def use(model: ReplaceModel) -> None:
        monkeypatch.setattr(rejected, "model", lambda: model)
    return use


def test_a_thing_turned_down_goes_and_what_replaces_it_stays(fake_model) -> None:
    turns = ("Grill the salmon for Dad and a veggie burger for me.", "Dad's gone off the salmon, so grill him a steak.")
    fake_model(NO_MODEL)
    assert "salmon" in say(*turns).memory_text()  # the rules alone keep both
    fake_model(FAKE_SHAPE_ONLY)
    text = say(*turns).memory_text()
    assert "salmon" not in text and "steak" in text and "veggie burger" in text, text


def test_a_chinese_thing_turned_down_goes(fake_model) -> None:
    fake_model(FAKE_SHAPE_ONLY)
    text = say("周末去爬香山，带上三明治。", "香山人太多了，去百望山吧。", lang="zh").memory_text()
    assert "香山" not in text.replace("百望山", "") and "百望山" in text and "三明治" in text, text


def test_a_thing_asked_about_kept_or_added_to_stays_whatever_the_model(fake_model) -> None:
    fake_model(FAKE_SHAPE_ONLY)
    assert "pottery" in say("Book the pottery class for Saturday and bring an apron.", "Isn't the pottery class indoors?").memory_text()
    assert "bunting" in say("We'll hang the blue bunting along the fence.", "The bunting is still going up on Friday, and I'll add fairy lights.").memory_text()


def test_a_person_is_no_said_again_thing() -> None:
    stored = [Item(key="driver", value="Priya", kind="name", turn=1), Item(key="salad", value="Priya brings the salad", kind="note", turn=1)]
    found = rejected.mentions("Priya can't do the salad now.", stored, "en")
    assert [m.said for m in found] == ["salad"]


def test_words_said_together_in_one_stored_thing_are_one_mention() -> None:
    stored = [Item(key="nets", value="book the ball machine for the nets", kind="note", turn=1)]
    assert [m.said for m in rejected.mentions("The ball machine is broken.", stored, "en")] == ["ball machine"]
    stored_zh = [Item(key="客厅", value="客厅铺橡木地板", kind="note", turn=1)]
    assert [m.said for m in rejected.mentions("橡木地板怕水。", stored_zh, "zh")] == ["橡木地板"]


def test_what_is_said_around_the_thing_is_read() -> None:
    stored = [Item(key="walls", value="the walls get the sage paint", kind="note", turn=1)]
    (m,) = rejected.mentions("Not the sage, let's do a warm cream.", stored, "en")
    row = rejected.features(m, "Not the sage, let's do a warm cream.", rejected.stored_words(stored), "en", rules_changed=False)
    assert row["ruled_out_before"] == 1.0 and row["turned_down_shape"] == 1.0 and row["question_clause"] == 0.0
    (m,) = rejected.mentions("Is the sage still fine?", stored, "en")
    row = rejected.features(m, "Is the sage still fine?", rejected.stored_words(stored), "en", rules_changed=False)
    assert row["question_clause"] == 1.0 and row["kept_clause"] == 1.0 and row["turned_down_shape"] == 0.0


def test_a_new_thing_of_the_same_sort_is_read_beside_the_one_said_again() -> None:
    def sibling(stored_value: str, words: str, lang: str) -> float:
        stored = [Item(key="", value=stored_value, kind="note", turn=1)]
        (m,) = rejected.mentions(words, stored, lang)
        return rejected.features(m, words, rejected.stored_words(stored), lang, rules_changed=False)["sibling_said"]

    # Chinese: a new word with the same head (木 of 桦木 and 松木); English: a new word before the same head.
    assert sibling("书架用桦木做", "桦木太贵了，换松木的。", "zh") == 1.0
    assert sibling("书架用桦木做", "桦木挺好，再加两块隔板。", "zh") == 0.0
    assert sibling("bring the short gaiters", "The short ones leak, I'll take the tall ones.", "en") == 1.0
    assert sibling("bring the short gaiters", "The short ones are fine, and pack a flask.", "en") == 0.0


def test_the_shipped_weights_name_the_features_the_code_computes() -> None:
    shipped = json.loads(rejected.WEIGHTS_FILE.read_text(encoding="utf-8"))
    stored = [Item(key="dessert", value="a lemon tart", kind="note", turn=1)]
    m = rejected.mentions("No lemon, make it a pear tart.", stored, "en")[0]
    assert set(shipped["weights"]) == set(rejected.features(m, "No lemon, make it a pear tart.", rejected.stored_words(stored), "en", rules_changed=False))
    assert 0.0 < shipped["threshold"] < 1.0


def test_the_shipped_weights_turn_down_a_plain_refusal_and_keep_a_question() -> None:
    # Clear cases, our own words: a refit that fails them is worse, whatever its fold figures say.
    rejected.model.cache_clear()
    text = say("The banner goes above the stage, and the balloons by the door.", "No balloons after all, the venue bans them. Streamers by the door.").memory_text()
    assert "balloons" not in text and "Streamers" in text and "banner" in text, text
    text = say("Grill the salmon for Dad and a veggie burger for me.", "Dad's gone off the salmon, so grill him a steak.").memory_text()
    assert "salmon" not in text and "steak" in text, text
    assert "pottery" in say("Book the pottery class for Saturday and bring an apron.", "Is the pottery class indoors?").memory_text()


def test_without_a_weights_file_nothing_is_turned_down(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(rejected, "WEIGHTS_FILE", tmp_path / "absent.json")
    rejected.model.cache_clear()
    try:
        with caplog.at_level("WARNING"):
            assert rejected.model() is NO_MODEL
            text = say("Grill the salmon for Dad and a veggie burger for me.", "Dad's gone off the salmon, so grill him a steak.").memory_text()
        assert "no usable weights" in caplog.text and "salmon" in text
    finally:
        rejected.model.cache_clear()


def test_the_fit_tool_labels_rows_by_what_the_script_forgets(tmp_path: Path) -> None:
    script = {"name": "fake quiz night", "lang": "en", "turns": [
        {"user": "For the quiz prizes we have a hamper and a bottle of whisky.", "remember": ["hamper", "whisky"]},
        {"user": "The landlord says no whisky as a prize, make it a box of chocolates.", "remember": ["chocolates"], "forget": ["whisky"]},
        {"user": "And the hamper needs a ribbon.", "remember": []},
    ]}
    (tmp_path / "fake_en.json").write_text(json.dumps(script), encoding="utf-8")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import fit_reject_model
    finally:
        sys.path.remove(str(ROOT / "tools"))
    from sotto.memory.evaluation import load_script

    rows = fit_reject_model.collect(load_script(tmp_path / "fake_en.json"))
    labels = {r.said: r.label for r in rows}
    assert labels.get("'whisky' in " + script["turns"][1]["user"]) == 1, labels
    assert labels.get("'hamper' in " + script["turns"][2]["user"]) == 0, labels


def test_the_fit_tool_runs_from_the_command_line() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fit_reject_model.py"), str(ROOT.parent / "shared" / "eval"), "--folds", "2", "--repeats", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "held-out folds" in out.stdout
