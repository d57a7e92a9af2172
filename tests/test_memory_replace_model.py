"""The fitted step of the update: which stored value a new one replaces when no rule placed it.

The rules are tried first; a value they leave unplaced is scored against each stored value of
a compatible kind by `replace_model` (weights fitted by tools/fit_replace_model.py on the tuning
sets). The sentences here are our own. The plumbing is tested with fake models injected through
`replace_model.load`; the shipped weights are checked against the features the code computes
(what they gain is measured by `sotto eval` on the evaluation sets, eval/README.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_memory_update import say

from sotto.memory import replace_model
from sotto.memory.replace_model import NO_MODEL, ReplaceModel, Tree
from sotto.memory.statements import read_sentence
from sotto.memory.items import Item
from sotto.memory.update import replace_features

ROOT = Path(__file__).resolve().parents[1]

# A fake that replaces a stored value of the same shape (an amount, a code, a decimal) whenever it may.
FAKE_SAME_SHAPE = ReplaceModel(weights={"same_shape": 2.0}, bias=-1.0, threshold=0.5)


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch):
    def use(model: ReplaceModel) -> None:
        monkeypatch.setattr(replace_model, "load", lambda: model)
    return use


def test_choose_takes_the_best_row_only_above_the_threshold() -> None:
    model = ReplaceModel(weights={"a": 1.0}, bias=0.0, threshold=0.7)
    assert model.choose([{"a": 0.0}, {"a": 2.0}, {"a": 1.0}]) == 1
    assert model.choose([{"a": 0.0}, {"a": 0.5}]) is None  # best scores 0.62
    assert model.choose([]) is None
    assert NO_MODEL.choose([{"a": 30.0}]) is None


def test_two_stored_values_nearly_as_likely_are_a_guess_and_nothing_is_replaced() -> None:
    model = ReplaceModel(weights={"a": 1.0}, bias=0.0, threshold=0.5, margin=0.2)
    assert model.choose([{"a": 3.0}, {"a": 2.5}]) is None  # 0.95 and 0.92
    assert model.choose([{"a": 3.0}, {"a": 0.0}]) == 0  # 0.95 and 0.5
    assert model.choose([{"a": 3.0}]) == 0  # alone: only the threshold


def test_a_model_survives_its_json() -> None:
    model = ReplaceModel(weights={"same_kind": 1.25, "near": -0.5}, bias=0.125, threshold=0.55, margin=0.2)
    assert ReplaceModel.from_json(model.to_json()) == model


# A fake stump: +3 to the log-odds when "a" is above 0.5, else -3.
STUMP = Tree(feature=("a", "", ""), threshold=(0.5, 0.0, 0.0), left=(1, 0, 0), right=(2, 0, 0), value=(0.0, -3.0, 3.0))


def test_trees_add_to_the_weighted_sum() -> None:
    model = ReplaceModel(weights={"b": 1.0}, bias=0.0, threshold=0.5, trees=(STUMP,))
    assert round(model.score({"a": 1.0, "b": 0.0}), 3) == round(1 / (1 + 2.718281828 ** -3), 3)
    assert model.score({"a": 0.0, "b": 0.0}) < 0.05
    assert model.score({"b": 3.0}) == 0.5  # a feature not given counts as 0: the stump's left side, -3 + 3
    # The trees weigh features together: "a" counts only with "b", which no sum of weights can say.
    both = Tree(feature=("a", "", "b", "", ""), threshold=(0.5, 0.0, 0.5, 0.0, 0.0), left=(1, 0, 3, 0, 0), right=(2, 0, 4, 0, 0),
                value=(0.0, -2.0, 0.0, -2.0, 2.0))
    paired = ReplaceModel(weights={}, bias=0.0, threshold=0.5, trees=(both,))
    assert [paired.choose([row]) for row in ({"a": 1, "b": 1}, {"a": 1, "b": 0}, {"a": 0, "b": 1})] == [0, None, None]


def test_a_model_with_trees_survives_its_json() -> None:
    model = ReplaceModel(weights={"a": 0.5}, bias=-0.25, threshold=0.6, margin=0.1, trees=(STUMP, STUMP))
    assert ReplaceModel.from_json(model.to_json()) == model


@pytest.mark.parametrize("tree", [
    {"feature": ["a", ""], "threshold": [0.5, 0.0], "left": [1, 0], "right": [5, 0], "value": [0.0, 1.0]},  # a child outside the tree
    {"feature": ["a", "", ""], "threshold": [0.5], "left": [1, 0, 0], "right": [2, 0, 0], "value": [0.0, 1.0, 2.0]},  # columns differ
    {"feature": [], "threshold": [], "left": [], "right": [], "value": []},
    {"feature": ["a", "", ""], "threshold": [0.5, 0.0, 0.0], "left": [1.5, 0, 0], "right": [2, 0, 0], "value": [0.0, 1.0, 2.0]},  # no whole index
    {"feature": ["a", "", ""], "threshold": [0.5, 0.0, 0.0], "left": [1, 0, 0], "right": [2, 0, 0], "value": [0.0, "x", 2.0]},  # no number
])
def test_a_malformed_tree_is_refused_when_read(tree: dict[str, list[object]]) -> None:
    text = json.dumps({"bias": 0.0, "threshold": 0.5, "weights": {}, "trees": [tree]})
    with pytest.raises(ValueError):
        ReplaceModel.from_json(text)


def test_a_tree_that_cycles_raises_instead_of_hanging() -> None:
    loop = Tree(feature=("a", "a"), threshold=(0.5, 0.5), left=(1, 1), right=(1, 1), value=(0.0, 0.0))
    with pytest.raises(ValueError):
        loop({"a": 0.0})


def test_the_boosted_fit_learns_what_features_say_together() -> None:
    """On rows where a replacement is marked by a or b but not both (a feature that counts only
    without the other), a sum of weights cannot separate them; trees can."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from fit_replace_model import Boosting, fit_model
    finally:
        sys.path.remove(str(ROOT / "tools"))
    grid = np.array([[a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)] * 50)
    y = (grid[:, 0] != grid[:, 1]).astype(float)
    plain = fit_model(grid, y, 1.0, Boosting(trees=0)).scores(grid[:4])
    boosted = fit_model(grid, y, 1.0, Boosting(trees=60, depth=2, rate=0.2, min_leaf=5))
    assert all(0.4 < p < 0.6 for p in plain), plain  # the regression can only say "either way"
    scores = boosted.scores(grid[:4])  # rows (0,0) (0,1) (1,0) (1,1)
    assert min(scores[1], scores[2]) > 0.9 and max(scores[0], scores[3]) < 0.1, scores
    # Written out, the model scores rows as the fit did.
    model = boosted.model(["a", "b"], threshold=0.5)
    assert [round(model.score({"a": a, "b": b}), 6) for a, b in grid[:4]] == [round(float(v), 6) for v in scores]


def test_without_a_weights_file_nothing_is_replaced_by_the_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(replace_model, "WEIGHTS_FILE", tmp_path / "absent.json")
    replace_model.load.cache_clear()
    try:
        assert replace_model.load() is NO_MODEL  # and a warning: see the broken-file test
    finally:
        replace_model.load.cache_clear()


@pytest.mark.parametrize("content", ["{not json", '{"bias": 0.1}', '{"bias": "x", "threshold": 0.5, "weights": {}}', "[]"])
def test_a_broken_weights_file_leaves_the_rules_working_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str,
) -> None:
    broken = tmp_path / "replace_weights.json"
    broken.write_text(content, encoding="utf-8")
    monkeypatch.setattr(replace_model, "WEIGHTS_FILE", broken)
    replace_model.load.cache_clear()
    try:
        with caplog.at_level("WARNING"):
            assert replace_model.load() is NO_MODEL
            state = say("Order me 12 bags of compost.", "Make it 14 bags.")
        assert "no usable weights" in caplog.text
        assert "14 bags" in state.memory_text() and "12 bags" not in state.memory_text()
    finally:
        replace_model.load.cache_clear()


def test_an_unplaced_value_replaces_the_one_the_model_picks(fake_model) -> None:
    turns = ("Order me 12 bags of compost.", "Is the delivery free?", "The bed is smaller than I thought, 9 will do.")
    fake_model(NO_MODEL)
    added = say(*turns).memory_text()
    assert "12 bags" in added and "9" in added  # the rules alone keep both
    fake_model(FAKE_SAME_SHAPE)
    state = say(*turns)
    values = [i.value for i in state.all_items() if i.kind != "note"]
    assert "12 bags" not in " ".join(values), values
    assert any(v.startswith("9") for v in values), values


def test_the_model_waits_for_a_later_value_of_the_same_kind_in_the_turn(fake_model) -> None:
    fake_model(FAKE_SAME_SHAPE)
    state = say("The hygienist appointment is on the 14th at 9:40.", "Is it going to hurt?",
                "Oh no, the 14th is a Sunday, isn't it. I meant Monday the 15th.")
    dates = [i.value for i in state.all_items() if i.kind == "date"]
    assert "Monday the 15th" in dates and "the 14th" not in dates, dates


def test_the_model_leaves_a_value_the_rules_placed(fake_model) -> None:
    fake_model(ReplaceModel(weights={}, bias=10.0, threshold=0.5))  # would replace anything it is asked about
    state = say("Kick-off is at 10:30 and the minibus leaves at 9:15.", "The minibus leaves at 9:30 now, kick-off stays.")
    times = [i.value for i in state.all_items() if i.kind == "time"]
    assert "10:30" in times and "9:30" in times and "9:15" not in times, times


def test_the_shipped_weights_name_the_features_the_code_computes() -> None:
    shipped = json.loads(replace_model.WEIGHTS_FILE.read_text(encoding="utf-8"))
    statement = read_sentence("So the party is on the 9th now.", "en", frozenset())
    stored = Item(key="party", value="the 7th", kind="date", turn=1)
    features = replace_features(statement.values[0], stored, statement, 3, [stored], [stored], [])
    assert set(shipped["weights"]) == set(features)
    assert 0.0 < shipped["threshold"] < 1.0 and 0.0 <= shipped["margin"] < 1.0


def test_the_fit_tool_labels_rows_by_what_the_script_forgets(tmp_path: Path) -> None:
    script = {"name": "fake nursery order", "lang": "en", "turns": [
        {"user": "Order 30 tulip bulbs and 12 bags of bark.", "remember": [["30"], ["12 bags"]]},
        {"user": "Do they come with planting instructions?", "remember": []},
        {"user": "The border is shorter than I measured, 24 will do.", "remember": [["24"]], "forget": [["30"]]},
    ]}
    (tmp_path / "fake_en.json").write_text(json.dumps(script), encoding="utf-8")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import fit_replace_model
    finally:
        sys.path.remove(str(ROOT / "tools"))
    from sotto.memory.evaluation import load_script

    rows = fit_replace_model.collect(load_script(tmp_path / "fake_en.json"))
    labels = {r.said.split(" [")[0]: r.label for r in rows}
    assert labels.get("24 <- 30 tulip bulbs") == 1, labels
    assert labels.get("24 <- 12 bags") == 0, labels


def test_the_fit_tool_runs_from_the_command_line(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "fit_replace_model.py"), str(ROOT.parent / "shared" / "eval"), "--folds", "2", "--repeats", "2", "--trees", "3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "held-out folds" in out.stdout


def test_the_shipped_setting_is_the_middle_of_the_plateau_with_the_smallest_margin() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from fit_replace_model import near_best

    gains = {(0.70, 0.0): 90.0, (0.72, 0.0): 99.5, (0.74, 0.0): 99.8, (0.76, 0.0): 99.6, (0.78, 0.0): 95.0,
             (0.78, 0.3): 100.0, (0.74, 0.1): 99.9}
    # 100 at 0.78/0.3 is the best by a hair; within 1% the plainest margin is 0.0, whose near-best
    # thresholds are 0.72, 0.74, 0.76: the middle one.
    assert near_best(gains) == (0.74, 0.0)
    assert near_best({(0.5, 0.2): 10.0, (0.6, 0.2): 5.0}) == (0.5, 0.2)
