"""System knowledge: passages from a local file, BM25 retrieval within a budget, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sotto.errors import ConfigError
from sotto.knowledge import example_path, format_for_prompt, knowledge_path, load_knowledge
from sotto.knowledge.base import terms


def test_terms_english_words_and_chinese_bigrams() -> None:
    assert terms("What are the opening hours?") == ["opening", "hour"]
    assert terms("失物招领") == ["失物", "物招", "招领"]
    assert terms("GPIO 48 站") == ["gpio", "48", "站"]


def test_example_file_splits_at_headings() -> None:
    kb = load_knowledge(example_path())
    titles = {p.title for p in kb.passages}
    assert {"Opening hours", "Wiring notes (maintenance)", "中文服务"} <= titles


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("when does the kiosk open on public holidays", "Opening hours"),
        ("which GPIO is the speaker amplifier on", "Wiring notes (maintenance)"),
        ("can I pay with banknotes", "Tickets and payment"),
        ("I lost my umbrella on the train, where are found items kept", "Lost and found"),
        ("失物招领在哪里", "中文服务"),
        ("is the lift to platform 3 working", "Accessibility"),
    ],
)
def test_search_finds_the_relevant_passage_first(query: str, title: str) -> None:
    found = load_knowledge(example_path()).search(query)
    assert found and found[0].title == title
    assert [p.score for p in found] == sorted((p.score for p in found), reverse=True)


def test_search_respects_k_and_the_character_budget() -> None:
    kb = load_knowledge(example_path())
    assert len(kb.search("kiosk ticket platform", k=1)) == 1
    for budget in (50, 200, 600):
        found = kb.search("kiosk ticket office platform hours", k=5, max_chars=budget)
        assert found and sum(len(p.text) for p in found) <= budget + 1  # +1: the clipping ellipsis
    assert kb.search("kiosk", k=0) == [] and kb.search("kiosk", max_chars=0) == []


def test_nothing_relevant_returns_nothing() -> None:
    assert load_knowledge(example_path()).search("the the of and") == []
    assert load_knowledge(example_path()).search("zebra quantum") == []


def test_jsonl_and_plain_text(tmp_path: Path) -> None:
    jsonl = tmp_path / "k.jsonl"
    jsonl.write_text(json.dumps({"title": "Hours", "text": "Open 9 to 5."}) + "\n\n" + json.dumps("Parking is free.") + "\n", encoding="utf-8")
    kb = load_knowledge(jsonl)
    assert [p.title for p in kb.passages] == ["Hours", ""]
    assert kb.search("parking")[0].text == "Parking is free."
    txt = tmp_path / "k.txt"
    txt.write_text("First paragraph about coffee.\n\nSecond about tea.", encoding="utf-8")
    assert load_knowledge(txt).search("tea")[0].text == "Second about tea."


def test_long_sections_are_split_into_bounded_passages(tmp_path: Path) -> None:
    md = tmp_path / "long.md"
    md.write_text("# Big\n" + " ".join(f"Sentence number {i} about the pump." for i in range(200)), encoding="utf-8")
    kb = load_knowledge(md)
    assert len(kb) > 1 and all(len(p.text) <= 500 for p in kb.passages)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (None, "missing.md", "does not exist"),
        (b"\xff\xfe\x00bad", "bad.md", "not UTF-8"),
        (b"   \n\n", "empty.md", "no text"),
        (b"{oops\n", "bad.jsonl", "not valid JSON"),
        (b"[1, 2]\n", "list.jsonl", "expected a string"),
    ],
)
def test_clear_errors(tmp_path: Path, content: bytes | None, name: str, message: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        load_knowledge(path)


def test_a_folder_is_not_a_knowledge_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="folder"):
        load_knowledge(tmp_path)


def test_path_from_flag_then_environment() -> None:
    assert knowledge_path("a.md", {"SOTTO_KNOWLEDGE": "b.md"}) == Path("a.md")
    assert knowledge_path(None, {"SOTTO_KNOWLEDGE": "b.md"}) == Path("b.md")
    assert knowledge_path(None, {}) is None


def test_format_for_prompt() -> None:
    found = load_knowledge(example_path()).search("opening hours", k=1)
    block = format_for_prompt(found)
    assert block.splitlines()[1].startswith("- Opening hours: The kiosk is open")
    assert format_for_prompt([]) == ""


def test_knowledge_command(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from sotto.cli import main

    assert main(["knowledge", str(example_path()), "speaker", "amplifier", "pins", "--json", "--k", "2"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["title"] == "Wiring notes (maintenance)" and lines[-1]["summary"] is True
    monkeypatch.setenv("SOTTO_KNOWLEDGE", str(example_path()))
    assert main(["knowledge", "banknotes"]) == 0
    assert "Tickets and payment" in capsys.readouterr().out
    monkeypatch.delenv("SOTTO_KNOWLEDGE")
    assert main(["knowledge", "banknotes"]) == 2
    assert main(["knowledge", str(tmp_path / "none.md"), "x"]) == 2
    assert "does not exist" in capsys.readouterr().err
