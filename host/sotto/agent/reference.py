"""System knowledge for the reply: passages retrieved for the user's words.

Read-only: passages go to the reply (the model prompt, and the composed answer when
a question matches a passage well) and are never written into the working memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sotto.knowledge.base import KnowledgeBase, Passage, format_for_prompt, terms
from sotto.text.sentences import split_sentences

MIN_SCORE = 1.5  # BM25 score under which a passage is not given to the reply at all
MAX_PASSAGES = 2
MAX_CHARS = 400


@dataclass(frozen=True)
class Reference:
    passages: list[Passage] = field(default_factory=list)

    @property
    def prompt(self) -> str:
        return format_for_prompt(self.passages)

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.passages)

    def answer(self, question: str) -> str | None:
        """The passage sentence sharing the most terms with the question (the best passage first)."""
        if not self.passages:
            return None
        wanted = set(terms(question))
        best: tuple[int, str] | None = None
        for passage in self.passages[:1]:
            for sentence in split_sentences(passage.text) or [passage.text]:
                score = len(wanted & set(terms(sentence)))
                if best is None or score > best[0]:
                    best = (score, sentence.strip())
        return best[1] if best and best[1] else None


def retrieve(knowledge: KnowledgeBase | None, words: str) -> Reference:
    if knowledge is None or not words.strip():
        return Reference()
    found = knowledge.search(words, k=MAX_PASSAGES, max_chars=MAX_CHARS)
    return Reference([p for p in found if p.score >= MIN_SCORE])
