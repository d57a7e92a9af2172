"""`sotto knowledge [FILE] QUERY [--k N] [--max-chars N] [--json]`: what the reply would be given.

FILE may be left out when SOTTO_KNOWLEDGE names the file. With --json: one object per
passage (`{"rank", "title", "score", "text"}`), then `{"summary": true, "file", "passages",
"retrieved", "chars"}`.
"""

from __future__ import annotations

import argparse
import json

from sotto.errors import ConfigError
from sotto.knowledge.base import ENV_VAR, knowledge_path, load_knowledge


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("args", nargs="+", metavar="[FILE] QUERY", help=f"knowledge file (or set {ENV_VAR}) and the query")
    parser.add_argument("--k", type=int, default=3, help="at most this many passages (default 3)")
    parser.add_argument("--max-chars", type=int, default=600, help="character budget for all passages (default 600)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")


def run(args: argparse.Namespace) -> int:
    words: list[str] = list(args.args)
    if len(words) >= 2:
        file_arg: str | None = words[0]
        query = " ".join(words[1:])
    else:
        file_arg, query = None, words[0]
    path = knowledge_path(file_arg)
    if path is None:
        raise ConfigError("no knowledge file given", hint=f"sotto knowledge FILE QUERY, or set {ENV_VAR}")
    kb = load_knowledge(path)
    found = kb.search(query, k=args.k, max_chars=args.max_chars)
    if args.json:
        for rank, p in enumerate(found, 1):
            print(json.dumps({"rank": rank, "title": p.title, "score": p.score, "text": p.text}, ensure_ascii=False))
        print(json.dumps({"summary": True, "file": str(path), "passages": len(kb), "retrieved": len(found),
                          "chars": sum(len(p.text) for p in found)}, ensure_ascii=False))
        return 0
    if not found:
        print(f"nothing in {path} matches {query!r} ({len(kb)} passages)")
        return 0
    for rank, p in enumerate(found, 1):
        print(f"{rank}. [{p.title or 'untitled'}] score {p.score:.2f}\n   {p.text}")
    return 0
