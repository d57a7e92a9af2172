"""Memory scripts as a perfect recogniser would hand them to the memory: what is lost on them is
lost between recognition and memory, never misheard.

Each user turn is written as pocketsphinx writes what Piper says (lowercase, no punctuation,
numbers as the voice reads them: "2:40" -> "two forty", "8:00" -> "eight zero zero", "0161" ->
"zero one six one", "496" -> "four hundred ninety six", "£14" -> "fourteen pounds", "14th" ->
"fourteenth"; an apostrophe only where the recogniser's dictionary has the word with it), then
normalised as a recognised final is (sotto.engines.normalize). The scripts keep their items.

    python tools/perfect_transcripts.py OUT_DIR SCRIPT.json...
    sotto eval OUT_DIR/*.json --json --no-tts
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from sotto.engines.normalize import normalize_en
from sotto.models.embedded import sphinx_model_folder

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_ORDINALS = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
             "nine": "ninth", "twelve": "twelfth"}


def said(n: int) -> str:
    """`n` as Piper reads it ("four hundred ninety six": no "and")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + said(n % 100))
    return said(n // 1000) + " thousand" + ("" if n % 1000 == 0 else " " + said(n % 1000))


def _ordinal(n: int) -> str:
    words = said(n).split()
    last = words[-1]
    words[-1] = _ORDINALS.get(last, last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return " ".join(words)


def _number(digits: str) -> str:
    if digits.startswith("0") and len(digits) > 1:
        return " ".join(_ONES[int(d)] for d in digits)  # a leading zero: read digit by digit
    return said(int(digits))


def _clock(m: re.Match[str]) -> str:
    minutes = m.group(2)
    spoken = "zero zero" if minutes == "00" else ("oh " + _ONES[int(minutes)]) if minutes[0] == "0" else said(int(minutes))
    return said(int(m.group(1))) + " " + spoken


def spoken(text: str, vocabulary: set[str]) -> str:
    out = re.sub(r"£(\d+)", r"\1 pounds", text)
    out = re.sub(r"€(\d+)", r"\1 euros", out)
    out = re.sub(r"\b(\d{1,2}):(\d\d)\b", _clock, out)
    out = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", lambda m: _ordinal(int(m.group(1))), out)
    out = re.sub(r"\b\d+\b", lambda m: _number(m.group(0)), out)
    words = re.findall(r"[a-z]+(?:'[a-z]+)?", out.lower().replace("’", "'"))
    return " ".join(w if "'" not in w or w in vocabulary else w.replace("'", "") for w in words)


def main(out_dir: str, paths: list[str]) -> int:
    folder = sphinx_model_folder("en")
    with open(folder / "cmudict-en-us.dict", encoding="utf-8") as handle:
        vocabulary = {line.split()[0] for line in handle if line.strip()}
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        for turn in data["turns"]:
            turn["user"] = normalize_en(spoken(turn["user"], vocabulary)) or "hmm"
        with open(Path(out_dir) / Path(path).name, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
