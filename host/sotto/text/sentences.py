"""Incremental sentence splitting for streaming speech out.

Reply tokens arrive one piece at a time; speech should start as soon as the first
sentence is complete. `SentenceSplitter.feed()` takes any piece of text and returns
the sentences that became complete with it; `flush()` returns the rest at the end.

A sentence ends at . ! ? ; … (English, followed by a space) or 。！？；(Chinese, no
space needed), or at a line break. A period does not end a sentence after a title
("Mr.", "Dr."), an initial ("J."), inside a number ("3.5"), or after a dotted
abbreviation ("a.m.", "e.g.") unless the next word starts with a capital letter.
With `first_clause_min_chars` the first sentence is cut early at a comma once it is
that long, so the first audio can be synthesised sooner.
"""

from __future__ import annotations

import re
from typing import Iterable

# Enders that need no space after them (CJK full-width punctuation).
CJK_ENDERS = frozenset("。！？；")
# Enders that end a sentence only before whitespace, a CJK character or the end of text.
LATIN_ENDERS = frozenset(".!?;…")
ENDERS = CJK_ENDERS | LATIN_ENDERS
# Closing marks that belong to the sentence they follow: `"Yes." He left.`
CLOSERS = frozenset("\"')]}’”」』）】》")
LATIN_COMMAS = frozenset(",:")
CJK_COMMAS = frozenset("，、：")

# A period after these words never ends a sentence (lower case, without the period).
TITLES = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt", "vs", "fig", "approx", "ca", "gen", "col", "lt", "sgt", "rev", "hon"}
)
# A period after these words does not end a sentence when a number follows: "No. 5".
NUMBER_PREFIXES = frozenset({"no", "nos", "vol", "pp", "p", "ch", "art", "tel"})
# Dotted abbreviations (a.m., U.S.) and these end a sentence only before a capital letter.
CAPITAL_ONLY = frozenset({"etc", "am", "pm"})

_DOTTED_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_SINGLE_LETTER = re.compile(r"^[A-Za-z]$")
_WORD_EDGE_PUNCT = "\"'([{‘“"


def is_cjk(char: str) -> bool:
    """Chinese, Japanese and Korean characters and full-width forms."""
    code = ord(char)
    return (
        0x3000 <= code <= 0x30FF
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF
    )


def _has_speakable(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


class SentenceSplitter:
    """Feed text pieces, get complete sentences back as soon as they end.

    `first_clause_min_chars`: when set, the first chunk is cut at a comma once at
    least this many characters precede it (lower first-audio latency).
    `max_chars`: a sentence with no end in sight is cut at the last space before
    this length, so the synthesiser never waits for an endless run-on.
    """

    def __init__(self, *, first_clause_min_chars: int | None = None, max_chars: int = 240) -> None:
        if max_chars < 20:
            raise ValueError("max_chars must be at least 20")
        self._first_clause_min_chars = first_clause_min_chars
        self._max_chars = max_chars
        self._buffer = ""
        self._resume = 0  # index in _buffer where the undecided text starts
        self._emitted = 0

    def feed(self, piece: str) -> list[str]:
        """Add a piece of text; return the sentences it completed (possibly none)."""
        self._buffer += piece
        return self._drain(final=False)

    def flush(self) -> list[str]:
        """End of text: return whatever is left as the last sentence(s)."""
        sentences = self._drain(final=True)
        rest = self._buffer.strip()
        self._buffer = ""
        self._resume = 0
        if _has_speakable(rest):
            sentences.append(rest)
            self._emitted += 1
        return sentences

    def reset(self) -> None:
        """Drop pending text (a cancelled reply) and start again with a first chunk."""
        self._buffer = ""
        self._resume = 0
        self._emitted = 0

    @property
    def pending(self) -> str:
        """Text fed but not yet returned as a sentence."""
        return self._buffer

    # ------------------------------------------------------------------ scanning

    def _drain(self, *, final: bool) -> list[str]:
        out: list[str] = []
        while True:
            end = self._find_boundary(final=final)
            if end is None:
                return out
            sentence = self._buffer[:end].strip()
            self._buffer = self._buffer[end:].lstrip()
            self._resume = 0
            if _has_speakable(sentence):
                out.append(sentence)
                self._emitted += 1

    def _find_boundary(self, *, final: bool) -> int | None:
        """End index (exclusive) of the first complete sentence, or None if undecided."""
        text = self._buffer
        n = len(text)
        i = self._resume
        while i < n:
            ch = text[i]
            if ch == "\n":
                return i + 1
            if ch in ENDERS:
                j = i
                while j < n and text[j] in ENDERS:
                    j += 1
                while j < n and text[j] in CLOSERS:
                    j += 1
                run = text[i:j].rstrip("".join(CLOSERS))
                if any(c in CJK_ENDERS for c in run):
                    if j < n or final:
                        return j
                    self._resume = i  # a closer may still follow: wait for one more piece
                    return None
                if j >= n:
                    if final:
                        return j
                    self._resume = i
                    return None
                decision = self._ends_sentence(text, i, run, j)
                if decision is None:
                    if final:
                        return j
                    self._resume = i  # the next word decides: wait for it
                    return None
                if decision:
                    return j
                i = j
                continue
            if self._first_clause_min_chars is not None and self._emitted == 0:
                cut = self._comma_cut(text, i, final=final)
                if cut == -1:
                    self._resume = i
                    return None
                if cut is not None:
                    return cut
            if i + 1 >= self._max_chars:
                return self._forced_cut(text, i + 1)
            i += 1
        self._resume = n
        return None

    def _ends_sentence(self, text: str, i: int, run: str, j: int) -> bool | None:
        """Decide for a Latin ender run text[i:j] followed by text[j] (known to exist).

        None means the next word decides and it has not arrived yet.
        """
        nxt = text[j]
        if not (nxt.isspace() or is_cjk(nxt)):
            return False  # "3.5", "example.com", "Yahoo!Inc"
        if run != ".":
            if run.endswith(("..", "…")):
                # An ellipsis ends the sentence only if the next word starts one.
                return self._next_word_is_capital(text, j)
            return True
        word = self._word_before(text, i)
        bare = word.lower()
        if bare in TITLES or _SINGLE_LETTER.match(word):
            return False
        if bare in NUMBER_PREFIXES:
            first = self._next_word_start(text, j)
            return None if first is None else not first.isdigit()
        if _DOTTED_ABBREVIATION.match(word) or bare in CAPITAL_ONLY:
            return self._next_word_is_capital(text, j)
        return True

    def _comma_cut(self, text: str, i: int, *, final: bool) -> int | None:
        """First-chunk cut at a comma: end index, None (no cut here), -1 (need more text)."""
        ch = text[i]
        if ch in CJK_COMMAS:
            return i + 1 if len(text[: i + 1].strip()) >= self._first_clause_min_chars_value else None
        if ch in LATIN_COMMAS:
            if i + 1 >= len(text):
                return None if final else -1
            if not text[i + 1].isspace():
                return None  # "1,000" or "3:00"
            return i + 1 if len(text[: i + 1].strip()) >= self._first_clause_min_chars_value else None
        return None

    @property
    def _first_clause_min_chars_value(self) -> int:
        return self._first_clause_min_chars or 0

    def _forced_cut(self, text: str, limit: int) -> int:
        space = text.rfind(" ", 0, limit)
        return space + 1 if space > limit // 2 else limit

    @staticmethod
    def _word_before(text: str, i: int) -> str:
        start = i
        while start > 0 and not text[start - 1].isspace() and not is_cjk(text[start - 1]):
            start -= 1
        return text[start:i].lstrip(_WORD_EDGE_PUNCT)

    @staticmethod
    def _next_word_start(text: str, j: int) -> str | None:
        """First character of the next word (after spaces and opening quotes), None if not there yet."""
        k = j
        while k < len(text) and (text[k].isspace() or text[k] in _WORD_EDGE_PUNCT):
            k += 1
        return text[k] if k < len(text) else None

    def _next_word_is_capital(self, text: str, j: int) -> bool | None:
        first = self._next_word_start(text, j)
        if first is None:
            return None
        return first.isupper() or is_cjk(first)


def split_sentences(text: str, *, first_clause_min_chars: int | None = None, max_chars: int = 240) -> list[str]:
    """All sentences of a whole text, with the same rules as the incremental splitter."""
    splitter = SentenceSplitter(first_clause_min_chars=first_clause_min_chars, max_chars=max_chars)
    return splitter.feed(text) + splitter.flush()


def split_stream(pieces: Iterable[str], *, first_clause_min_chars: int | None = None) -> Iterable[str]:
    """Sentences from a stream of text pieces (e.g. LLM tokens), each as soon as it ends."""
    splitter = SentenceSplitter(first_clause_min_chars=first_clause_min_chars)
    for piece in pieces:
        yield from splitter.feed(piece)
    yield from splitter.flush()
