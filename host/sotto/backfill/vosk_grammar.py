"""Recognition-time bias: give Vosk the known entities as a runtime phrase list.

Vosk's grammar mode (`KaldiRecognizer(model, rate, grammar_json)`, or `SetGrammar`) only
works with models whose graph is built at run time (`graph/HCLr.fst` + `graph/Gr.fst`, as
the small models ship). A model with a static `HCLG.fst` ignores the grammar, so sotto
passes none. Words outside the model's vocabulary cannot be recognised at all; Vosk drops
them with a warning, so they are reported here instead.

Public API:
- `supports_runtime_grammar(model_dir) -> bool`
- `model_vocabulary(model_dir) -> frozenset[str]`: the words the model can output, read
  from `graph/words.txt` or, when absent, from the symbol table inside `graph/Gr.fst`.
- `vocabulary_for_vosk(entities, base_phrases, vocabulary=None) -> VoskVocabulary`: the
  phrase list (base phrases, then entity phrases, then "[unk]" so speech outside the list
  still maps somewhere), and which entities were left out because a word is not in the
  vocabulary. `.grammar_json()` is what KaldiRecognizer takes.
- `recognizer_grammar(model_dir, entities, base_phrases) -> str | None`: the grammar JSON,
  or None when the model cannot take one (or no phrase is usable).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Iterable

from sotto.backfill.phrases import phrase_list
from sotto.errors import ModelError, ModelNotFound

UNKNOWN = "[unk]"

_FST_MAGIC = 2125659606
_SYMBOL_TABLE_MAGIC = 2125658996
_HAS_ISYMBOLS = 1
_HAS_OSYMBOLS = 2
_NON_WORDS = frozenset({"<eps>", "<s>", "</s>", "#0", "<unk>", "[unk]"})


@dataclass(frozen=True)
class VoskVocabulary:
    phrases: list[str]
    out_of_vocabulary: list[str] = field(default_factory=list)

    def grammar_json(self) -> str:
        return json.dumps(self.phrases, ensure_ascii=False)


def _graph_dir(model_dir: str | Path) -> Path:
    model = Path(model_dir)
    if not model.is_dir():
        raise ModelNotFound(f"Vosk model folder {model} does not exist")
    return model / "graph"


def supports_runtime_grammar(model_dir: str | Path) -> bool:
    """True for a model with a dynamic graph (HCLr.fst + Gr.fst), which takes a grammar."""
    graph = _graph_dir(model_dir)
    return (graph / "HCLr.fst").is_file() and (graph / "Gr.fst").is_file()


def _read_exact(handle: BinaryIO, size: int, what: str) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise ModelError(f"truncated FST while reading {what}")
    return data


def _read_string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<i", _read_exact(handle, 4, "string length"))
    if not 0 <= length <= 1 << 20:
        raise ModelError(f"implausible string length {length} in FST header")
    return _read_exact(handle, length, "string").decode("utf-8", errors="replace")


def _read_fst_symbols(path: Path) -> list[str]:
    """The input symbol table of an OpenFst binary file (header and table only)."""
    with path.open("rb") as handle:
        (magic,) = struct.unpack("<i", _read_exact(handle, 4, "magic"))
        if magic != _FST_MAGIC:
            raise ModelError(f"{path} is not an OpenFst file")
        _read_string(handle)  # fst type
        _read_string(handle)  # arc type
        _version, flags = struct.unpack("<ii", _read_exact(handle, 8, "version"))
        _read_exact(handle, 8 + 8 + 8 + 8, "properties, start, states, arcs")
        if not flags & (_HAS_ISYMBOLS | _HAS_OSYMBOLS):
            raise ModelError(f"{path} carries no symbol table and the model has no words.txt")
        (table_magic,) = struct.unpack("<i", _read_exact(handle, 4, "symbol table magic"))
        if table_magic != _SYMBOL_TABLE_MAGIC:
            raise ModelError(f"{path}: unexpected symbol table format")
        _read_string(handle)  # table name
        _available, size = struct.unpack("<qq", _read_exact(handle, 16, "symbol table size"))
        if not 0 <= size <= 10_000_000:
            raise ModelError(f"{path}: implausible symbol table size {size}")
        words: list[str] = []
        for _ in range(size):
            words.append(_read_string(handle))
            _read_exact(handle, 8, "symbol key")
        return words


@lru_cache(maxsize=4)
def _vocabulary_cached(graph: Path) -> frozenset[str]:
    words_txt = graph / "words.txt"
    if words_txt.is_file():
        words = [line.split()[0] for line in words_txt.read_text(encoding="utf-8").splitlines() if line.strip()]
    elif (graph / "Gr.fst").is_file():
        words = _read_fst_symbols(graph / "Gr.fst")
    else:
        raise ModelError(f"no vocabulary found in {graph}", hint="expected words.txt or Gr.fst")
    return frozenset(w for w in words if w not in _NON_WORDS)


def model_vocabulary(model_dir: str | Path) -> frozenset[str]:
    return _vocabulary_cached(_graph_dir(model_dir).resolve())


def vocabulary_for_vosk(
    entities: Iterable[str],
    base_phrases: Iterable[str] = (),
    vocabulary: frozenset[str] | set[str] | None = None,
) -> VoskVocabulary:
    """Phrase list for a grammar-mode recognizer: base phrases, entity phrases, "[unk]".

    With a vocabulary, a phrase with any unknown word is left out (Vosk would drop the
    word and keep a phrase the speaker never says); entities left out are reported.
    """
    plan = phrase_list(entities, base_phrases, None if vocabulary is None else vocabulary.__contains__)
    phrases = plan.phrases + [UNKNOWN] if plan.phrases else []
    return VoskVocabulary(phrases, plan.out_of_vocabulary)


def recognizer_grammar(model_dir: str | Path, entities: Iterable[str], base_phrases: Iterable[str] = ()) -> str | None:
    if not supports_runtime_grammar(model_dir):
        return None
    plan = vocabulary_for_vosk(entities, base_phrases, model_vocabulary(model_dir))
    return plan.grammar_json() if plan.phrases else None
