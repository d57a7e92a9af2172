"""Confirming what matters when recognition was unsure (issue 13, item 5).

After the memory update of a spoken turn, the values it just added or changed that
matter most when wrong (a name, a number, a time, a date, a quantity) are looked up in
the final transcript's words. One whose words were recognised under `confirm_below`, and
that no known entity explains (the backfill's entity vocabulary, a value already in
memory, a correction the backfill made), is asked back instead of the usual
confirmation: "Was that Wang, W-A-N-G?", "Was that 8 8 4 2 1?", 是王芳吗？ One question a
turn: the least confident value. The question waits in the store for the next turn:

- "yes" / "right" / 对 / 是的: the value stays; the words are handled as any turn;
- "no, it's X", "no, W A N G", spelled letters, 不是，是X: the memory replaces the value
  with X (its own replacement: `apply_patch` with a `Replacement`, as any correction);
- a bare "no": the value is removed and the agent asks for it again;
- anything else: the question lapses and the turn is handled normally.

Typed turns (no word confidences) are never asked about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

from sotto.backfill.corrector import Correction
from sotto.engines.base import WordConfidence
from sotto.engines.normalize import comparable_words
from sotto.memory.items import KIND_DATE, KIND_NAME, KIND_NUMBER, KIND_QUANTITY, KIND_TIME, VALUE_LEN
from sotto.memory.rules import RuleResult
from sotto.memory.state import SessionState
from sotto.memory.update import ADD, UPDATE, number_of

# Kinds worth a question when unsure: a wrong one sends someone to the wrong place at the wrong time.
CONFIRM_KINDS = (KIND_NAME, KIND_NUMBER, KIND_TIME, KIND_DATE, KIND_QUANTITY)
YES, NO, CORRECTED, LAPSED = "yes", "no", "corrected", "lapsed"
_COUNTED = (KIND_NUMBER, KIND_QUANTITY, KIND_TIME)  # values that hold a number: so must their correction
MAX_CORRECTION_WORDS = 6  # a longer answer after "no" is a new statement, not the value


@dataclass(frozen=True)
class PendingConfirmation:
    """A question asked about a stored value, waiting for the next turn's answer."""

    value: str  # the stored value (an item's value, or a name)
    asked: str  # the part of it asked about, as stored ("Wen" of "Mr. Wen")
    heard: str  # the recognised words of that part, as the word error rate compares them ("3 pm", "88421")
    kind: str
    confidence: float  # the lowest word confidence of the asked part
    turn: int
    lang: str
    asked_at: float = 0.0  # host clock, epoch seconds: an old question is no longer answered

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "asked": self.asked, "heard": self.heard, "kind": self.kind,
                "confidence": round(self.confidence, 4), "turn": self.turn, "lang": self.lang, "asked_at": self.asked_at}

    @classmethod
    def from_dict(cls, data: Any) -> "PendingConfirmation | None":
        """From the store (untrusted as any stored text): None when it is not a valid record."""
        if not isinstance(data, dict):
            return None
        texts = [data.get(k) for k in ("value", "asked", "heard", "kind", "lang")]
        confidence, turn, asked_at = data.get("confidence"), data.get("turn"), data.get("asked_at", 0.0)
        if not all(isinstance(t, str) and len(t) <= VALUE_LEN for t in texts) or not texts[0] or not texts[1]:
            return None
        if not isinstance(confidence, (int, float)) or not isinstance(asked_at, (int, float)):
            return None
        if not isinstance(turn, int) or data["kind"] not in CONFIRM_KINDS:
            return None
        return cls(data["value"], data["asked"], data["heard"], data["kind"], float(confidence), turn, data["lang"], float(asked_at))


@dataclass(frozen=True)
class Answer:
    outcome: str  # YES | NO | CORRECTED | LAPSED
    value: str = ""  # CORRECTED: the value as the user gave it
    rest: str = ""  # YES: what the words say after the yes ("yes, and bring flowers"), handled as any turn


# ------------------------------------------------------------------ which value to ask about


@dataclass(frozen=True)
class _Token:
    text: str  # as the word error rate compares words (lowercase, no punctuation, digit groups joined)
    confidence: float | None


def _heard_tokens(words: Sequence[WordConfidence], lang: str) -> list[_Token]:
    """The transcript's words as comparable tokens, each with its word's confidence; digit
    groups join as `comparable_words` joins them ("412 556 781" is one number)."""
    out: list[_Token] = []
    for word in words:
        for token in comparable_words(word.word, lang):
            if out and token.isdigit() and out[-1].text.isdigit():
                known = [c for c in (out[-1].confidence, word.confidence) if c is not None]
                out[-1] = _Token(out[-1].text + token, min(known) if known else None)
            else:
                out.append(_Token(token, word.confidence))
    return out


def _find_run(tokens: list[_Token], wanted: list[str]) -> list[_Token] | None:
    """The last run of `tokens` spelling `wanted` (the value was said last where said twice)."""
    n = len(wanted)
    for start in range(len(tokens) - n, -1, -1):
        if [t.text for t in tokens[start:start + n]] == wanted:
            return tokens[start:start + n]
    return None


def _explained(value: str, before: SessionState, known: Sequence[str], corrections: Sequence[Correction]) -> bool:
    """A known entity, a value already in memory, or a backfill correction accounts for the value."""
    low = " ".join(value.lower().split())

    def within(part: str, whole: str) -> bool:  # as whole words: "Al" does not explain "walnut"
        return re.search(rf"(?<!\w){re.escape(part.lower())}(?!\w)", whole.lower()) is not None

    if any(within(c.entity, low) for c in corrections):
        return True
    if any(within(low, e) or within(e, low) for e in known if e.strip()):
        return True
    stored = [i for i in before.all_items() if i.same_value(value)]
    return bool(stored) or any(n.lower() == low for n in before.user_profile.names)


def _asked_part(value: str, unsure: list[str], kind: str) -> str:
    """What to ask about: for a name, its unsure words as stored ("Wen" of "Mr. Wen"); any
    other value whole (a time or a number is one thing)."""
    if kind != KIND_NAME:
        return value
    spans = [m.span() for t in unsure for m in [re.search(rf"(?<!\w){re.escape(t)}(?!\w)", value, re.I)] if m]
    if not spans:
        return value
    return value[min(s for s, _ in spans):max(e for _, e in spans)]


def unsure_value(rules: RuleResult, before: SessionState, heard: Sequence[WordConfidence], *, below: float,
                 known: Sequence[str] = (), corrections: Sequence[Correction] = (), turn: int = 0,
                 asked_at: float = 0.0) -> PendingConfirmation | None:
    """The value of this turn's update most worth asking about, or None.

    Candidates: the values the update added or changed of a kind in CONFIRM_KINDS (and a
    name the user gave). Each is found in the transcript's words; its confidence is the
    lowest of its words'. Under `below`, not explained by a known entity: the least
    confident one is asked about. Words without a confidence (typed text) never are.
    """
    if below <= 0 or not heard:
        return None
    lang = rules.lang
    values: list[tuple[str, str]] = [(d.item.value, d.item.kind) for d in rules.decisions
                                      if d.op in (ADD, UPDATE) and d.item is not None and d.item.kind in CONFIRM_KINDS]
    values += [(name, KIND_NAME) for name in rules.patch.add_names]
    tokens = _heard_tokens(heard, lang)
    best: PendingConfirmation | None = None
    for value, kind in values:
        wanted = comparable_words(value, lang)
        run = _find_run(tokens, wanted) if wanted else None
        if run is None:
            continue  # not said in these words (the backfill or the update made it): nothing to ask
        confidences = [t.confidence for t in run if t.confidence is not None]
        if not confidences or min(confidences) >= below:
            continue
        if _explained(value, before, known, corrections):
            continue
        unsure = [t for t in run if t.confidence is not None and t.confidence < below]
        asked = _asked_part(value, [t.text for t in unsure], kind)
        asked_run = unsure if asked != value else run
        candidate = PendingConfirmation(value[:VALUE_LEN], asked[:VALUE_LEN], " ".join(t.text for t in asked_run)[:VALUE_LEN],
                                        kind, min(confidences), turn, lang, asked_at)
        if best is None or candidate.confidence < best.confidence:
            best = candidate
    return best


def without_value(state: SessionState, value: str) -> SessionState:
    """The state without the items (and names) that hold exactly `value` (a bare "no")."""
    out = state.copy()
    p = out.user_profile
    keep = lambda items: [i for i in items if not i.same_value(value)]  # noqa: E731
    out.facts, out.pending_steps, p.preferences, p.constraints = keep(out.facts), keep(out.pending_steps), keep(p.preferences), keep(p.constraints)
    p.names = [n for n in p.names if " ".join(n.lower().split()) != " ".join(value.lower().split())]
    return out


# ------------------------------------------------------------------ reading the answer

_EN_YES = re.compile(r"^(?:yes|yeah|yep|yup|right|correct|exactly|affirmative|that'?s (?:right|correct|it)|that is (?:right|correct))\b", re.I)
_EN_NO = re.compile(r"^(?:no|nope|nah|wrong|not quite|that'?s (?:wrong|not right)|that is (?:wrong|not right))\b", re.I)
_EN_LEAD_IN = re.compile(r"^(?:(?:it|that|the name|the number)(?:'s| is| was)|i said|i meant|actually|sorry)\b\s*", re.I)
_ZH_YES = re.compile(r"^(?:对的?|是的|是|没错|正确|嗯|好的?)(?![^，,。.！!？?\s])")
_ZH_NO = re.compile(r"^(?:不是|不对|错了|不(?=[，,。.！!\s]|$))")
_ZH_LEAD_IN = re.compile(r"^(?:应该是|而是|是|叫)")
_PUNCT = " ,，.。!！?？;；:：、"
# One spelled character: a letter or a digit, as said ("W", "w.", "8"); hyphens join them ("W-A-N-G").
_SPELLED = re.compile(r"^[A-Za-z0-9]\.?$")


def spelled_out(text: str) -> str | None:
    """Characters spelled one by one joined into a word: "W A N G", "w. a. n. g.", "W-A-N-G"
    -> "WANG"; "8 8 4 2 1" -> "88421". None unless the text is (after any lead-in words) only
    such a run of two characters or more."""
    tokens = re.split(r"[\s,]+|(?<=\w)-(?=\w)", text.strip(_PUNCT))
    tokens = [t for t in tokens if t]
    run: list[str] = []
    for token in reversed(tokens):  # the run ends the answer: "it's W A N G"
        if not _SPELLED.match(token):
            break
        run.append(token.rstrip("."))
    if len(run) < 2 or len(run) < len(tokens) - 3:
        return None
    return "".join(reversed(run))


def _as_value(text: str, kind: str, lang: str) -> str:
    """The correction as a value of the asked kind: spelled letters joined, a name capitalised."""
    text = text.strip(_PUNCT)
    spelled = spelled_out(text)
    if spelled is not None:
        text = spelled
    if kind == KIND_NAME and lang != "zh" and (text.islower() or text.isupper()):
        text = " ".join(w.capitalize() for w in text.split())
    return text


def read_answer(words: str, pending: PendingConfirmation) -> Answer:
    """What the user's words say to the pending question."""
    text = words.strip(_PUNCT)
    zh = pending.lang == "zh"
    same = lambda x: comparable_words(x, pending.lang) == comparable_words(pending.asked, pending.lang)  # noqa: E731
    yes, no, lead = (_ZH_YES, _ZH_NO, _ZH_LEAD_IN) if zh else (_EN_YES, _EN_NO, _EN_LEAD_IN)
    if no.match(text):
        rest = no.sub("", text, count=1).strip(_PUNCT)
        if spelled_out(rest) is None:
            # "no, not Wen, Wang", 不是王芳，是王方: the value is the last clause of the first sentence.
            rest = re.split(r"[。!！?？;；]|\.(?!\d)", rest)[0].strip(_PUNCT)
            rest = re.split(r"[,，]", rest)[-1].strip(_PUNCT)
        for _ in range(2):
            rest = lead.sub("", rest, count=1).strip(_PUNCT)
        if not rest:
            return Answer(NO)
        value = _as_value(rest, pending.kind, pending.lang)
        if len(value.split()) > MAX_CORRECTION_WORDS or len(value) > VALUE_LEN:
            return Answer(LAPSED)  # more than a value: a new statement
        if pending.kind in _COUNTED and number_of(value) is None and not re.search(r"\d", value):
            return Answer(NO)  # "no, it's tires" for a number: the number was wrong, and no other was given
        if pending.kind == KIND_NUMBER and any(not re.search(r"\d", w) and len(w) > 2 for w in value.split()):
            return Answer(NO)  # "your 4 want to 556781": words in an ID or number are a misheard answer
        return Answer(YES) if same(value) else Answer(CORRECTED, value)
    if same(lead.sub("", text, count=1)):
        return Answer(YES)  # the value said back (是王芳)
    if yes.match(text):
        rest = text
        while yes.match(rest):  # "yeah, that's right"
            rest = yes.sub("", rest, count=1).strip(_PUNCT)
        return Answer(YES, rest="" if same(lead.sub("", rest, count=1)) else rest)  # "yes, 3 pm": a plain yes
    spelled = spelled_out(lead.sub("", text, count=1))
    if spelled is not None:
        value = _as_value(spelled, pending.kind, pending.lang)
        return Answer(YES) if same(value) else Answer(CORRECTED, value)
    return Answer(LAPSED)
