"""The llama.cpp language model engine (llama-cpp-python), behind `LanguageModel`.

`load()` opens the embedded SmolLM2-135M by default or any GGUF by path. The engine
keeps llama.cpp's KV cache between calls: llama-cpp-python compares the new prompt's
tokens with the ones already evaluated and decodes only what follows the longest
common prefix, so prompts built static-part-first (see sotto.memory.prompts) pay only
for what changed. `last_call` records how many prompt tokens were reused and how long
the prompt took, which is how that saving is measured.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

import sotto  # noqa: F401  (offline environment before any engine import)
from sotto.engines.base import ChatMessage, Completion, LanguageModel
from sotto.errors import ContextOverflow, ModelLoadFailed, ModelNotFound

DEFAULT_N_CTX = 2048


@dataclass
class CallTiming:
    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens found in the KV cache (not re-evaluated)
    first_token_ms: float = 0.0  # prompt evaluation plus the first sampled token
    total_ms: float = 0.0
    completion_tokens: int = 0


class LlamaEngine:
    """One llama.cpp model. Not thread-safe: one call at a time (the agent serialises them)."""

    def __init__(self, llama: Any, *, name: str, n_ctx: int, identity: str = "") -> None:
        self._llama = llama
        self.name = name
        # What measurements of this model are cached by (capability probe): the file itself.
        self.identity = identity or name
        self.n_ctx = n_ctx
        self.last_call = CallTiming()
        self._grammars: dict[str, Any] = {}

    # ------------------------------------------------------------------ LanguageModel

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None = None,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Completion:
        pieces: list[str] = []
        finish = "stop"
        for piece, reason in self._run(messages, max_tokens=max_tokens, grammar=grammar, temperature=temperature, stop=stop):
            pieces.append(piece)
            if reason:
                finish = reason
        return Completion(
            text="".join(pieces),
            prompt_tokens=self.last_call.prompt_tokens,
            completion_tokens=self.last_call.completion_tokens,
            finish_reason=finish,
        )

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        stop: Sequence[str] = (),
    ) -> Iterator[str]:
        for piece, _ in self._run(messages, max_tokens=max_tokens, grammar=None, temperature=temperature, stop=stop):
            if piece:
                yield piece

    def reset_cache(self) -> None:
        """Forget the evaluated prefix (used to measure what prefix reuse saves)."""
        self._llama.reset()

    # ------------------------------------------------------------------ internals

    def _grammar(self, text: str) -> Any:
        if text not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def _run(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int,
        grammar: str | None,
        temperature: float,
        stop: Sequence[str],
    ) -> Iterator[tuple[str, str | None]]:
        before = list(getattr(self._llama, "_input_ids", []))
        started = time.perf_counter()
        timing = CallTiming()
        self.last_call = timing
        try:
            chunks = self._llama.create_chat_completion(
                messages=[{"role": m.role, "content": m.content} for m in messages],
                max_tokens=max_tokens,
                temperature=temperature,
                stop=list(stop) or None,
                grammar=self._grammar(grammar) if grammar else None,
                stream=True,
            )
            first = True
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = choice.get("delta", {}).get("content") or ""
                reason = choice.get("finish_reason")
                if first and (piece or reason):
                    first = False
                    timing.first_token_ms = (time.perf_counter() - started) * 1000
                    self._note_prefix(before, timing)
                if piece:
                    timing.completion_tokens += 1
                yield piece, reason
        except ValueError as exc:
            if "context window" in str(exc) or "exceed" in str(exc):
                raise ContextOverflow(f"{self.name}: {exc}", hint=f"n_ctx={self.n_ctx}") from exc
            raise
        finally:
            timing.total_ms = (time.perf_counter() - started) * 1000

    def _note_prefix(self, before: list[int], timing: CallTiming) -> None:
        after = list(getattr(self._llama, "_input_ids", []))
        reused = 0
        for a, b in zip(before, after):
            if a != b:
                break
            reused += 1
        # `after` holds the prompt plus the first sampled token.
        timing.prompt_tokens = max(len(after) - 1, 0)
        timing.reused_tokens = min(reused, timing.prompt_tokens)


def default_threads(cores: int | None = None) -> int:
    """One llama.cpp thread on a 2-core host: Piper, the link and the event loop need the
    other core, and llama.cpp's threads spin on barriers, so when one is descheduled all
    of them wait (measured here under load: the state patch took 4-5 s with 1 thread,
    12-44 s with 2). Bigger hosts leave two cores free."""
    n = cores if cores is not None else (os.cpu_count() or 1)
    return 1 if n <= 2 else min(8, n - 2)


def load(path: str | Path | None = None, n_ctx: int = DEFAULT_N_CTX, n_threads: int | None = None) -> LlamaEngine:
    """Open a GGUF model: the embedded SmolLM2-135M when `path` is None."""
    if path is None:
        from sotto.models.embedded import smollm2_gguf

        model_path = smollm2_gguf()
    else:
        model_path = Path(path).expanduser()
        if not model_path.is_file():
            raise ModelNotFound(f"no GGUF model at {model_path}", hint="pass the path of a .gguf file")
    try:
        with model_path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise ModelLoadFailed(f"cannot read {model_path}: {exc}") from exc
    if magic != b"GGUF":
        raise ModelLoadFailed(f"{model_path} is not a GGUF file")
    threads = n_threads or default_threads()
    try:
        from llama_cpp import Llama

        with without_extra_buffer_types():
            llama = Llama(
                model_path=str(model_path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
    except Exception as exc:  # llama.cpp reports load failures as plain exceptions
        raise ModelLoadFailed(f"llama.cpp could not load {model_path}: {exc}") from exc
    return LlamaEngine(llama, name=model_path.stem, n_ctx=n_ctx, identity=file_identity(model_path))


def file_identity(path: Path) -> str:
    """A model file as measurements of it are cached: its path, size and modification time."""
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


_PARAMS_LOCK = threading.Lock()


@contextlib.contextmanager
def without_extra_buffer_types() -> Iterator[None]:
    """Load with llama.cpp's extra CPU buffer types off. On a CPU that reports AMX, llama.cpp
    repacks the weights for AMX tiles; in the virtual machines we run on, the first batched
    decode then dies with a general protection fault in libggml-cpu (any prompt longer than
    one token). Without the repack the same model runs on the AVX2/AVX-512 kernels.
    `Llama()` takes no argument for it, so its default model parameters are wrapped for
    the duration of the load."""
    import llama_cpp.llama as llama_module

    with _PARAMS_LOCK:
        original = llama_module.llama_cpp.llama_model_default_params

        def params() -> Any:
            p = original()
            if hasattr(p, "use_extra_bufts"):
                p.use_extra_bufts = False
            return p

        llama_module.llama_cpp.llama_model_default_params = params
        try:
            yield
        finally:
            llama_module.llama_cpp.llama_model_default_params = original


def _check_protocol(engine: LlamaEngine) -> LanguageModel:
    return engine
