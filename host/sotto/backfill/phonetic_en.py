"""English sound keys for matching a heard word to a known name.

Public API:
- `phonetic_key(word) -> str`: a Metaphone-style consonant skeleton ("Wang" and "Wong" ->
  "WNK", "Cathy" and "Kathy" -> "K0"). Written here rather than pulled from a package: it
  is small, and its rules are the ones the corrector's thresholds were chosen for.
- `edit_distance(a, b) -> int` and `spelling_similarity(a, b) -> float` (1 - distance /
  longer length).
- `same_name_variant(a, b) -> bool`: spellings of one given name whose letters do not
  show it (Sean / Shaun / Shawn); a short table, as name-matching systems keep.
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")
_FRONT = frozenset("eiy")

# Spellings of one name that no letter rule can join (the sound is not in the letters).
_NAME_VARIANT_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"sean", "shaun", "shawn", "shon"}),
    frozenset({"li", "lee", "leigh"}),
    frozenset({"niamh", "neve", "neave"}),
    frozenset({"siobhan", "shivaun", "shevaun"}),
    frozenset({"zhou", "joe", "jo"}),
    frozenset({"xu", "shoe", "shu"}),
)
_VARIANT_OF: dict[str, frozenset[str]] = {name: group for group in _NAME_VARIANT_GROUPS for name in group}


def letters(word: str) -> str:
    return "".join(ch for ch in word.lower() if "a" <= ch <= "z")


def phonetic_key(word: str) -> str:
    """The consonant skeleton of `word` as it sounds; "" for a word with no letters."""
    w = letters(word)
    if not w:
        return ""
    # Silent or merged openings.
    for prefix, repl in (("kn", "n"), ("gn", "n"), ("pn", "n"), ("wr", "r"), ("ps", "s"), ("wh", "w"), ("x", "s")):
        if w.startswith(prefix):
            w = repl + w[len(prefix):]
            break
    if w.startswith("zh"):  # pinyin zh sounds like English j
        w = "j" + w[2:]
    if w.endswith("mb"):
        w = w[:-1]
    out: list[str] = []
    n = len(w)
    i = 0
    while i < n:
        c = w[i]
        nxt = w[i + 1] if i + 1 < n else ""
        nxt2 = w[i + 2] if i + 2 < n else ""
        prev = w[i - 1] if i > 0 else ""
        code = ""
        skip = 0
        if c in _VOWELS or (c == "y" and i > 0):
            code = "A" if i == 0 else ""
        elif c == "y":
            code = "Y" if nxt in _VOWELS else ""
        elif c == "b":
            code = "B"
        elif c == "c":
            if nxt == "h":
                code, skip = ("K", 1) if prev == "s" else ("X", 1)
            elif nxt == "i" and nxt2 == "a":
                code = "X"
            elif nxt in _FRONT:
                code = "S" if prev != "s" else ""
            elif nxt == "k":
                code, skip = "K", 1
            else:
                code = "K"
        elif c == "d":
            code, skip = ("J", 2) if nxt == "g" and nxt2 in _FRONT else ("T", 0)
        elif c == "g":
            if nxt == "h":
                # "gh" before a vowel is a hard g (Ghana); elsewhere silent (night, Hugh).
                code, skip = ("K", 1) if (i == 0 or nxt2 in _VOWELS) and prev not in _VOWELS else ("", 1)
            elif nxt == "n" and (i + 2 == n or w[i + 2 :] == "ed"):
                code = ""
            elif nxt in _FRONT and prev != "g":
                code = "J"
            else:
                code = "K"
        elif c == "h":
            # Sounded only between a consonant-free start or vowel and a following vowel.
            code = "H" if nxt in _VOWELS and prev not in set("cgpst") else ""
        elif c == "k":
            code = "" if prev == "c" else "K"
        elif c == "p":
            code, skip = ("F", 1) if nxt == "h" else ("P", 0)
        elif c == "q":
            code = "K"
        elif c == "s":
            if nxt == "h":
                code, skip = "X", 1
            elif nxt == "i" and nxt2 in ("o", "a"):
                code = "X"
            elif nxt == "c" and nxt2 == "h":
                code, skip = "SK", 2
            else:
                code = "S"
        elif c == "t":
            if nxt == "i" and nxt2 in ("o", "a"):
                code = "X"
            elif nxt == "h":
                code, skip = "0", 1
            elif nxt == "c" and nxt2 == "h":
                code = ""
            else:
                code = "T"
        elif c == "v":
            code = "F"
        elif c == "w":
            code = "W" if nxt in _VOWELS else ""
        elif c == "x":
            code = "KS"
        elif c == "z":
            code = "S"
        else:  # f j l m n r
            code = c.upper()
        out.append(code)
        i += 1 + skip
    key = "".join(out)
    # Collapse repeats produced by neighbouring letters (ss, ll, "ck" after "c").
    collapsed: list[str] = []
    for ch in key:
        if not collapsed or collapsed[-1] != ch:
            collapsed.append(ch)
    return "".join(collapsed)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance (insert, delete, substitute each cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def spelling_similarity(a: str, b: str) -> float:
    """1.0 for the same letters, 0.0 for nothing in common (case and punctuation ignored)."""
    la, lb = letters(a), letters(b)
    longest = max(len(la), len(lb))
    if longest == 0:
        return 0.0
    return 1.0 - edit_distance(la, lb) / longest


def same_name_variant(a: str, b: str) -> bool:
    group = _VARIANT_OF.get(letters(a))
    return group is not None and letters(b) in group
