"""Where the memory loses what a script asks it to remember through speech recognition.

Runs on two `sotto eval --json` outputs of the same scripts: one with `--speech`, one on the
typed words (the reference). Each remember item lost through speech but kept with the typed
words is put in one class:

- misheard: the item's words are not in the recognised (normalised) words of the turn that
  says them, compared as the word error rate compares words;
- heard: they are, so the loss happened between recognition and memory (normalisation,
  backfill, the memory reading lowercase words without punctuation);
- "kept, later lost" is added when the item was stored and a later turn took it away.

    sotto eval SCRIPTS... --speech --json > speech.jsonl
    sotto eval SCRIPTS... --json > typed.jsonl
    python tools/speech_losses.py speech.jsonl typed.jsonl SCRIPTS...
"""

from __future__ import annotations

import json
import sys
from typing import Any

from sotto.engines.normalize import comparable_words
from sotto.memory.evaluation import Script, load_script, present_in, state_text


def _turn_lines(path: str) -> dict[str, list[dict[str, Any]]]:
    by_script: dict[str, list[dict[str, Any]]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            data = json.loads(line)
            if "turn" in data:
                by_script.setdefault(data["script"], []).append(data)
    return by_script


def _lost(script: Script, lines: list[dict[str, Any]]) -> dict[tuple[int, tuple[str, ...]], list[int]]:
    """Each remember item ever missing: (turn that says it, item) -> the turns it was missing after."""
    expected: list[tuple[list[str], int]] = []
    lost: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for index, turn in enumerate(script.turns):
        text = state_text(lines[index]["state"])
        forgotten = {a.lower() for item in turn.forget for a in item}
        expected = [(item, said) for item, said in expected if not ({a.lower() for a in item} & forgotten)]
        expected += [(item, index) for item in turn.remember if item not in [e for e, _ in expected]]
        for item, said in expected:
            if not present_in(text, item):
                lost.setdefault((said, tuple(item)), []).append(index)
    return lost


def _contains(words: list[str], part: list[str]) -> bool:
    return bool(part) and any(words[i:i + len(part)] == part for i in range(len(words) - len(part) + 1))


def main(speech_path: str, typed_path: str, script_paths: list[str]) -> int:
    speech, typed = _turn_lines(speech_path), _turn_lines(typed_path)
    counts: dict[str, int] = {}
    for script in (load_script(p) for p in script_paths):
        lang = script.lang or "en"
        lost_typed = _lost(script, typed[script.name])
        for (said, item), turns in sorted(_lost(script, speech[script.name]).items()):
            if (said, item) in lost_typed:
                continue  # lost with the typed words too: not recognition's doing
            line = speech[script.name][said]
            heard = comparable_words(line.get("final_transcript", ""), lang)
            kind = "heard" if any(_contains(heard, comparable_words(a, lang)) for a in item) else "misheard"
            if turns[0] != said:
                kind += " (kept, later lost)"
            counts[kind] = counts.get(kind, 0) + 1
            print(f"[{kind}] {script.name} turn {said + 1} {list(item)}\n  said:  {line['user']}\n"
                  f"  heard: {line.get('final_transcript')}")
            if turns[0] != said:
                later = speech[script.name][turns[0]]
                print(f"  lost at turn {turns[0] + 1}: said {later['user']!r}, heard {later.get('final_transcript')!r}")
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
