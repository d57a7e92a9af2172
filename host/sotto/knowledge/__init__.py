"""System knowledge (read-only reference for the reply): see `sotto.knowledge.base`."""

from sotto.knowledge.base import (
    ENV_VAR,
    KnowledgeBase,
    Passage,
    example_path,
    format_for_prompt,
    knowledge_path,
    load_configured_knowledge,
    load_knowledge,
)

__all__ = [
    "ENV_VAR",
    "KnowledgeBase",
    "Passage",
    "example_path",
    "format_for_prompt",
    "knowledge_path",
    "load_configured_knowledge",
    "load_knowledge",
]
