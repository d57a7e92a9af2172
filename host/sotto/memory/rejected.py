"""Things a turn turns down: open-class words said again as the one that no longer holds.

The update step's rules replace typed values and the explicit swaps of words ("change the latte to
a flat white"). Most of what they still miss is a thing of no typed kind that the user turns down
in words no rule reads: "Callum says make his prawn, he's gone off duck", "skip the lava rock and
use kiryu", 茅台太贵，就五粮液得了. What those turns share is not a phrasing but a shape: a word of
an earlier note is said again, beside signals (a negator next to it, a new thing elsewhere in the
turn, no word that keeps it). A logistic model over those signals (`features`) scores each stored
word the turn says again; its weights are fitted on the tuning scripts by
`tools/fit_reject_model.py` into `reject_weights.json`, so a refit on more conversations changes
no code. A word scored over the threshold is retired: the clauses that said it go, in the earlier
notes and in this turn's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sotto.memory import language as L
from sotto.memory.items import KIND_NOTE, Item
from sotto.memory.read_en import EN_NEGATED_AFTER
from sotto.memory.read_zh import ZH_NEGATED_AFTER, ZH_NO_KEY_FLAGS, zh_words
from sotto.memory.replace_model import NO_MODEL, ReplaceModel, load_weights
from sotto.memory.statements import content_stems
from sotto.memory.text import EN_STOPWORDS, ZH_FUNCTION_CHARS, stem
from sotto.memory.update import STEADY_CLAUSE
from sotto.memory.values import clause_starts

WEIGHTS_FILE = Path(__file__).with_name("reject_weights.json")

# The kinds a thing can be stored as; times, dates and amounts are the update rules' own. A stored
# name holds a mention only by a part of it (爷爷 in 刘爷爷): the name itself is a person's.
_THING_KINDS = frozenset(("name", "place", "item", KIND_NOTE))
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_END = re.compile(r"[.!?](?!\d)|[。！？]")
# Closed-class words the shared stopword list leaves in (prepositions, determiners, pronouns).
_EN_FUNCTION_WORDS = frozenset(
    """under above below behind beside between through across along around any some every each either neither both
    all none ours yours theirs hers his mine myself ourselves itself anything something nothing everything""".split()
)
_ZH_SKIP_FLAGS = ZH_NO_KEY_FLAGS + ("m",)  # numerals too: amounts are the update rules' own


@dataclass(frozen=True)
class Mention:
    """A stored word the turn says again: where, and what it is stored in."""

    said: str  # as said in the turn ("sausage rolls", 胶装)
    keys: frozenset[str]  # its stems (English) or itself (Chinese)
    start: int
    end: int
    stored_in: tuple[Item, ...]  # the earlier items whose value says it


@lru_cache(maxsize=1)
def model() -> ReplaceModel:
    return load_weights(WEIGHTS_FILE, NO_MODEL, "stored things said again are kept")


def _tokens(text: str, lang: str) -> list[tuple[str, int, int, str]]:
    """(word, start, end, key) of the words that can name a thing."""
    out: list[tuple[str, int, int, str]] = []
    if lang == "zh":
        at = 0
        for word, flag in zh_words(text):
            start = text.find(word, at)
            at = start + len(word) if start >= 0 else at
            if start < 0 or not re.fullmatch(r"[\u3400-\u9fff]+", word) or word in L.ZH_EMPTY_WORDS:
                continue
            if all(c in ZH_FUNCTION_CHARS for c in word) or len(word) < 2 or flag[:1] in _ZH_SKIP_FLAGS:
                continue
            out.append((word, start, start + len(word), word))
        return out
    for m in _EN_WORD.finditer(text):
        word = m.group().strip("'’-").lower()
        if word.endswith(("'s", "’s")):
            word = word[:-2]
        if len(word) < 3 or word in EN_STOPWORDS or word in L.EN_EMPTY_WORDS or word in _EN_FUNCTION_WORDS:
            continue
        out.append((m.group(), m.start(), m.start() + len(m.group().rstrip("'’-")), stem(word)))
    return out


def _stored_keys(item: Item, lang: str) -> str | set[str]:
    return item.value if lang == "zh" else {stem(w.lower().removesuffix("'s")) for w in _EN_WORD.findall(item.value)}


def mentions(text: str, earlier: list[Item], lang: str) -> list[Mention]:
    """The stored things (values of earlier notes, names, places, items) the turn says again.
    Neighbouring words said together in one stored value are one mention ("ball machine")."""
    things = [i for i in earlier if i.kind in _THING_KINDS]
    people = {k for i in earlier if i.kind == "name" for k in (_stored_keys(i, lang) if lang != "zh" else {i.value})}
    if not things:
        return []
    stored = [(i, _stored_keys(i, lang)) for i in things]
    found: list[Mention] = []
    for word, start, end, key in _tokens(text, lang):
        holders = tuple(i for i, keys in stored if key in keys)
        # People and names are the update rules' (a person is replaced by a person): not said-again things.
        proper = lang != "zh" and word[:1].isupper() and (
            text[:start].rstrip()[-1:] not in ("", ".", "!", "?") or re.match(r"\s+[A-Z]", text[end:]) is not None  # "Green Leaf's"
        )
        if not holders or key in people or proper:
            continue
        last = found[-1] if found else None
        between = text[last.end:start] if last is not None else ""
        joined = tuple(i for i in holders if last is not None and i in last.stored_in)
        if last is not None and joined and re.fullmatch(r"[\s-]?", between):
            found[-1] = Mention(text[last.start:end], last.keys | {key}, last.start, end, joined)
        else:
            found.append(Mention(word, frozenset((key,)), start, end, holders))
    return found


def _clauses(text: str, lang: str) -> list[tuple[int, int]]:
    """The spans of the turn's clauses: its sentences, each cut by `values.clause_starts`."""
    spans: list[tuple[int, int]] = []
    at = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        sentence = text[at:end]
        starts = clause_starts(sentence, lang) + [len(sentence)]
        spans += [(at + a, at + b) for a, b in zip(starts, starts[1:]) if sentence[a:b].strip(" ,，;；.。!！?？")]
        at = end
    return spans


def _near(text: str, start: int, end: int, lang: str) -> str:
    if lang == "zh":
        return text[max(0, start - 4): start] + " " + text[end: end + 3]
    before = text[:start].split()[-3:]
    after = text[end:].split()[:2]
    return " ".join(before + ["_"] + after)


def stored_words(stored: list[Item]) -> frozenset[str]:
    """The content words of what is stored (values and keys): a word not among them is new."""
    return frozenset(content_stems(" ".join(f"{i.value} {i.key}" for i in stored)))


def _new_keys(text: str, known: frozenset[str]) -> set[str]:
    return content_stems(text) - known


def _sibling_said(m: Mention, text: str, known: frozenset[str], lang: str) -> bool:
    """The turn names a new thing of the mention's sort: in Chinese a new word with its head (last
    character: 梨木 beside 椴木, 工行 beside 建行); in English a new word before the same head
    ("the thigh-length ones" beside "the knee-high ones", "the evening one" beside "the sunrise one")."""
    if lang == "zh":
        head = m.said[-1]
        return any(word[-1] == head and m.said not in word and word not in m.said and word not in known
                   for word, _, _, _ in _tokens(text, lang))
    after = re.match(r"[\s-]*([A-Za-z]+)", text[m.end:])
    if after is None:
        return False
    head = after.group(1).lower()
    return any(
        key not in known and key not in m.keys and re.match(rf"[\s-]*{re.escape(head)}\b", text[end:], re.I) is not None
        for _, start, end, key in _tokens(text, lang) if start != m.start
    )


def features(m: Mention, text: str, known: frozenset[str], lang: str, *, rules_changed: bool) -> dict[str, float]:
    """What the turn says around a stored thing it names again (each feature in [0, 1])."""
    spans = _clauses(text, lang)
    left, right = next(((a, b) for a, b in spans if a <= m.start < b), (0, len(text)))
    clause = text[left:right]
    other_clauses = [text[a:b] for a, b in spans if (a, b) != (left, right)]
    others = " ".join(other_clauses)
    new_here = _new_keys(clause.replace(m.said, " "), known)
    new_elsewhere = _new_keys(others, known)
    near = _near(clause, m.start - left, m.end - left, lang)
    head = clause[: m.start - left].strip(" ,，")
    zh = lang == "zh"
    before = text[max(0, m.start - 12): m.start] if not zh else text[max(0, m.start - 1): m.start]
    after = text[m.end: m.end + 14] if not zh else text[m.end: m.end + 4]
    stored_size = min((len(content_stems(i.value)) for i in m.stored_in), default=0)
    alone = not new_here and bool(new_elsewhere)
    # Another clause that gives something new with a cue of change: "so the pizza package", 让他报双摇吧.
    chosen_elsewhere = any(
        _new_keys(part, known) and L.has_change_cue(part, lang) for part in other_clauses
    )
    # The words said with the thing when it was stored, said again beside something new: the same slot
    # ("chocolate sponge", then "vanilla for the sponge").
    context = set().union(*(content_stems(i.value) | content_stems(i.key) for i in m.stored_in)) - m.keys - content_stems(m.said)
    new_parts = [part for part in other_clauses if _new_keys(part, known)]
    slot_elsewhere = any(content_stems(part) & context for part in new_parts)
    opens = len(head.split()) <= 1 if not zh else len(head) <= 1
    ruled_out_before = (re.search(r"(?:\b(?:not|no|off|skip|without|than|instead of)\s+(?:(?:in|at|on|from|for|with|to|by) )?(?:the |a |an |any |his |her |my |our |their )?|n't\s+(?:\w+\s+)?(?:the |a |any )?)$", before, re.I) is not None
                        if not zh else re.search(r"[不没别]$", before) is not None)
    ruled_out_after = (re.match(r"(?:'s|’s| is| are| was| were)?\s*(?:off|out|gone|not|too|no\b|n't)|\s*(?:can't|won't|doesn't|don't|isn't|aren't|wasn't|didn't)", after, re.I) is not None
                       if not zh else re.match(r"(?:的|那[个家班边种款位])?(?:[不没太别]|来不了|卖完|用完)", after) is not None)
    # What the reader takes as a value ruled out when said after it ("'s fully booked", 排满了, 改成).
    ruled_out_after = ruled_out_after or (ZH_NEGATED_AFTER if zh else EN_NEGATED_AFTER).match(text[m.end:]) is not None
    ruled_out_clause = L.rules_out(clause.replace(m.said, " "), lang)
    asks = re.match(r"[^.!?。！？]*[?？]", text[m.end:]) is not None  # the sentence that says it asks
    kept = STEADY_CLAUSE.search(clause) is not None
    additive = L.has_additive(clause, lang)
    # The whole shape at once: ruled out where it is said, something new said, not asked, not kept.
    shape = (ruled_out_before or ruled_out_after or ruled_out_clause) and bool(new_here or new_elsewhere) and not asks and not kept and not additive
    return {
        "turned_down_shape": float(shape),
        "sibling_said": float(_sibling_said(m, text, known, lang)),
        "slot_elsewhere": float(slot_elsewhere),
        "topic_alone": float(opens and alone),
        "ruled_out_before": float(ruled_out_before),
        "ruled_out_after": float(ruled_out_after),
        "alone_new_elsewhere": float(alone),
        "short_stored": float(stored_size <= 3),
        "chosen_elsewhere": float(chosen_elsewhere),
        "zh": float(zh),
        "ruled_out_near": float(L.rules_out(near, lang)),
        "ruled_out_clause": float(ruled_out_clause),
        "kept_clause": float(kept),
        "additive_clause": float(additive),
        "cue_turn": float(L.has_change_cue(text, lang)),
        "strong_cue_turn": float(L.has_strong_cue(text, lang)),
        "cue_clause": float(L.has_change_cue(clause.replace(m.said, " "), lang)),
        "admission_turn": float(L.has_admission(text, lang)),
        "question_clause": float(asks),
        "new_in_clause": min(len(new_here), 3) / 3,
        "new_elsewhere": min(len(new_elsewhere), 4) / 4,
        "opens_clause": float(opens),
        "a_place": float(any(i.kind == "place" for i in m.stored_in)),
        "an_item": float(any(i.kind == "item" for i in m.stored_in)),
        "in_note_only": float(all(i.kind == KIND_NOTE for i in m.stored_in)),
        "stored_often": min(len(m.stored_in), 3) / 3,
        "words": min(len(m.keys), 3) / 3,
        "said_twice": float(text.lower().count(m.said.lower()) > 1),
        "rules_changed": float(rules_changed),
        "one_sentence": float(len(re.findall(r"[.!?。！？]", text.rstrip(" .!?。！？"))) == 0),
    }


def turned_down(found: list[Mention], rows: list[dict[str, float]]) -> list[bool]:
    """Which of the mentions the turn turns down (their scores, `rows` their features, pass the fitted threshold)."""
    m = model()
    return [m.score(r) >= m.threshold for r in rows]
