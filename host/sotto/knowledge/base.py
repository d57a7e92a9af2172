"""System knowledge: a local file about the kiosk or product, retrieved by relevance.

The third memory layer. The file is read-only reference (opening hours, prices, wiring
notes); passages relevant to the user's words are given to the reply prompt and are never
written into the working-memory state.

Public API:
- `load_knowledge(path) -> KnowledgeBase`: Markdown (split at headings, then paragraphs;
  each passage keeps its heading as `title`), JSON lines (`{"text": ..., "title": ...}` or a
  bare string per line) or plain text (paragraphs). Raises `ConfigError` with a clear
  message for a missing, unreadable, oversized, non-UTF-8 or empty file.
- `KnowledgeBase.search(query, k=3, max_chars=600) -> list[Passage]`: BM25 over English
  word tokens and Chinese character bigrams, best first, at most k passages and at most
  max_chars characters of passage text in all (the first passage is clipped to the
  budget rather than dropped).
- `knowledge_path(flag=None, environ=os.environ) -> Path | None`: `--knowledge FILE` wins,
  then `SOTTO_KNOWLEDGE`; None when neither is set.
- `load_configured_knowledge(flag=None) -> KnowledgeBase | None`.
- `format_for_prompt(passages) -> str`: the block to put in the reply prompt ("" for none).
- `example_path() -> Path`: the example kiosk file shipped in the package.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Mapping

from sotto.errors import ConfigError, InputRefused
from sotto.untrusted import clean_lines, load_json, read_bounded

ENV_VAR = "SOTTO_KNOWLEDGE"
MAX_FILE_BYTES = 2_000_000
MAX_PASSAGE_CHARS = 500
MAX_QUERY_CHARS = 500
BM25_K1 = 1.5
BM25_B = 0.75

_WORD = re.compile(r"[a-z0-9]+(?:[.:'][a-z0-9]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
# Words that carry no topic: left out so "what are the opening hours" ranks by "opening hours".
_STOPWORDS = frozenset(
    "a an and are as at be but by can do does for from has have how i in is it its me my of on or "
    "our please should so than that the their them then there these they this to was we what when "
    "where which who why will with you your".split()
)


@dataclass(frozen=True)
class Passage:
    text: str
    title: str = ""
    index: int = 0
    score: float = 0.0


def _singular(word: str) -> str:
    """Light plural folding so "hours" finds "hour" and "passes" finds "pass"."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def terms(text: str) -> list[str]:
    """English word tokens (lowercase, simple plural folding) and Chinese character bigrams."""
    lowered = text.lower()
    out: list[str] = []
    for word in _WORD.findall(_CJK_RUN.sub(" ", lowered)):
        if word in _STOPWORDS:
            continue
        out.append(_singular(word))
    for run in _CJK_RUN.findall(lowered):
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def _clip(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > max_chars // 2 else cut).rstrip() + "…"


def _split_long(text: str) -> list[str]:
    """Paragraph text cut into pieces of at most MAX_PASSAGE_CHARS, at sentence ends if possible."""
    if len(text) <= MAX_PASSAGE_CHARS:
        return [text]
    sentences = re.split(r"(?<=[.!?。！？])\s*", text)
    pieces: list[str] = []
    current = ""
    for sentence in sentences:
        if not sentence:
            continue
        if current and len(current) + 1 + len(sentence) > MAX_PASSAGE_CHARS:
            pieces.append(current)
            current = ""
        current = f"{current} {sentence}".strip() if current else sentence
        while len(current) > MAX_PASSAGE_CHARS:
            pieces.append(current[:MAX_PASSAGE_CHARS])
            current = current[MAX_PASSAGE_CHARS:]
    if current:
        pieces.append(current)
    return pieces


def _markdown_passages(text: str) -> list[tuple[str, str]]:
    """(title, text) per section; a long section is split at blank lines."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            sections.append((heading.group(2), []))
        else:
            sections[-1][1].append(line)
    out: list[tuple[str, str]] = []
    for title, lines in sections:
        body = "\n".join(lines).strip()
        if not body:
            continue
        joined = " ".join(body.split())
        if len(joined) <= MAX_PASSAGE_CHARS:
            out.append((title, joined))
            continue
        for paragraph in re.split(r"\n\s*\n", body):
            paragraph = " ".join(paragraph.split())
            out.extend((title, piece) for piece in _split_long(paragraph) if piece)
    return out


def _jsonl_passages(text: str, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = load_json(line, what=f"{where} line {number}", max_bytes=MAX_FILE_BYTES)
        except InputRefused as exc:
            raise ConfigError(exc.message) from None
        if isinstance(item, str):
            title, body = "", item
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            title, body = str(item.get("title", "")), item["text"]
        else:
            raise ConfigError(f"{where} line {number}: expected a string or an object with a \"text\" string")
        body = " ".join(body.split())
        out.extend((title, piece) for piece in _split_long(body) if piece)
    return out


def _text_passages(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        out.extend(("", piece) for piece in _split_long(paragraph) if piece)
    return out


class KnowledgeBase:
    def __init__(self, passages: list[Passage], source: str = "") -> None:
        self.passages = passages
        self.source = source
        self._docs = [Counter(terms(f"{p.title} {p.text}")) for p in passages]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg_length = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(passages)
        self._idf = {t: math.log(1.0 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def __len__(self) -> int:
        return len(self.passages)

    def scores(self, query: str) -> list[float]:
        query_terms = terms(query[:MAX_QUERY_CHARS])
        out: list[float] = []
        for doc, length in zip(self._docs, self._lengths):
            score = 0.0
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length / self._avg_length) if self._avg_length else BM25_K1
            for term in query_terms:
                tf = doc.get(term, 0)
                if tf:
                    score += self._idf[term] * tf * (BM25_K1 + 1) / (tf + norm)
            out.append(score)
        return out

    def search(self, query: str, k: int = 3, max_chars: int = 600) -> list[Passage]:
        if k <= 0 or max_chars <= 0:
            return []
        ranked = sorted(
            ((score, i) for i, score in enumerate(self.scores(query)) if score > 0.0),
            key=lambda pair: (-pair[0], pair[1]),
        )
        chosen: list[Passage] = []
        used = 0
        for score, i in ranked[:k]:
            passage = self.passages[i]
            if used + len(passage.text) > max_chars:
                if chosen:
                    break
                passage = Passage(_clip(passage.text, max_chars), passage.title, passage.index)
            chosen.append(Passage(passage.text, passage.title, passage.index, round(score, 4)))
            used += len(passage.text)
        return chosen


def load_knowledge(path: str | Path) -> KnowledgeBase:
    file = Path(path)
    where = str(file)
    if not file.exists():
        raise ConfigError(f"knowledge file {where} does not exist", hint=f"check --knowledge or {ENV_VAR}")
    try:
        # Bounded before the read: a device or a pipe (whose size says 0) is never read without end.
        raw = read_bounded(file, what="knowledge file", max_bytes=MAX_FILE_BYTES)
    except InputRefused as exc:
        raise ConfigError(exc.message, hint="split it or keep what the kiosk needs") from None
    try:
        text = clean_lines(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"knowledge file {where} is not UTF-8 text") from exc
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        pieces = _jsonl_passages(text, where)
    elif suffix in (".md", ".markdown"):
        pieces = _markdown_passages(text)
    else:
        pieces = _text_passages(text)
    if not pieces:
        raise ConfigError(f"knowledge file {where} has no text")
    return KnowledgeBase([Passage(body, title, i) for i, (title, body) in enumerate(pieces)], where)


def knowledge_path(flag: str | None = None, environ: Mapping[str, str] = os.environ) -> Path | None:
    value = flag or environ.get(ENV_VAR, "").strip()
    return Path(value).expanduser() if value else None


def load_configured_knowledge(flag: str | None = None) -> KnowledgeBase | None:
    path = knowledge_path(flag)
    return load_knowledge(path) if path is not None else None


def format_for_prompt(passages: list[Passage]) -> str:
    if not passages:
        return ""
    lines = ["Reference notes about this place (use them if they answer the user; do not read them out):"]
    for p in passages:
        lines.append(f"- {p.title}: {p.text}" if p.title else f"- {p.text}")
    return "\n".join(lines)


def example_path() -> Path:
    return Path(str(resources.files("sotto.knowledge").joinpath("example_kiosk.md")))
