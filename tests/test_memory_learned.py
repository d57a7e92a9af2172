"""The learned last word of the memory update: its weights file, its absence, and training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.memory import learned
from sotto.memory.items import Item
from sotto.memory.rules import extract
from sotto.memory.state import SessionState
from sotto.memory.statements import read_sentence


def _pair(stored: Item, sentence: str) -> learned.Pair:
    st = read_sentence(sentence, "en")
    return learned.Pair(st.values[0], stored, st, [stored], 3, lambda t: None, lambda t: "count", lambda i: "")


def test_the_shipped_weights_load_and_fit_the_features() -> None:
    model = learned.load()
    assert model is not None, "host/sotto/memory/replace_model.json is shipped with the package"
    row = learned.features(_pair(Item(key="prints", value="twenty-eight prints", kind="quantity", turn=1), "So we'll print twenty-two."))
    assert len(model.weights) == len(row) and 0.0 < model.threshold < 1.0


def test_a_missing_or_broken_weights_file_leaves_the_rules_alone(tmp_path: Path) -> None:
    assert learned.load(tmp_path / "absent.json") is None
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert learned.load(broken) is None


def test_weights_that_always_say_replace_do_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    row = learned.features(_pair(Item(key="x", value="10", kind="number", turn=1), "It is 12."))
    sure = tmp_path / "sure.json"
    sure.write_text(json.dumps({"weights": [0.0] * len(row), "bias": 10.0, "threshold": 0.5}), encoding="utf-8")
    monkeypatch.setattr(learned, "MODEL_PATH", sure)
    try:
        stored = Item(key="cake", value="forty cupcakes", kind="quantity", turn=1)
        assert learned.replaced_by_model([_pair(stored, "Make that 60.")]) is stored
        never = tmp_path / "never.json"
        never.write_text(json.dumps({"weights": [0.0] * len(row), "bias": -10.0, "threshold": 0.5}), encoding="utf-8")
        monkeypatch.setattr(learned, "MODEL_PATH", never)
        assert learned.replaced_by_model([_pair(stored, "Make that 60.")]) is None
    finally:
        learned.load.cache_clear()


def test_recording_decides_nothing() -> None:
    learned.RECORDER = []
    try:
        state = SessionState(session_id="t")
        for turn, words in enumerate(["The dentist is at 10 am.", "Around 2 pm I pick up the kids."], 1):
            result = extract(words, state, turn=turn, lang="en")
            assert result.state is not None
            state = result.state
        recorded = learned.RECORDER
    finally:
        learned.RECORDER = None
    assert [(new, old) for _, new, old in recorded] == [("2 pm", "10 am")]
    assert "10 am" in state.memory_text() and "2 pm" in state.memory_text()  # recorded, not decided


def test_training_never_reads_a_held_out_set() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train", Path(__file__).parent.parent / "tools" / "train_replace_model.py")
    assert spec and spec.loader
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    assert train.main(["--train", "eval/memory/heldout", "--validate", "eval/memory/tune12", "--out", "/dev/null"]) == 2
