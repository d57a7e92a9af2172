"""The capability gate: which jobs the configured model may do, measured once per model file.

    caps = capabilities_for(model)           # cached under the data folder, else probed now
    caps.does(OPEN_ANSWER, "en")             # open questions in English go to the model
    caps.does(PATCH)                         # False: the model is never called for state patches

At start-up each job the model may do is run on a small fixed probe set, through the
same code that does the job in a turn, and checked like a turn's output is:
- open_answer (per language): short questions with one right answer; the first sentence
  that passes the open-answer checks must contain it.
- patch: statements on an empty state; the grammar-bound patch must parse and carry the
  value said, verbatim.
- tie_break: a question and two candidate items; the grammar-bound choice (an enum of
  item numbers) must pick the one that answers.
A job is given only when its probes pass (open answers: at least 3 of 5 per language;
patch and tie-break: all). The open-answer probes also measure the model's speed (ms
per new prompt token, ms per generated token, tokens to the first sentence), from which
the time to the first answer sentence of a turn is predicted. The probe questions are
not in any evaluation set.

Results are cached in `data_dir()/model_capabilities.json`, keyed by the model's
identity (a GGUF's path, size and mtime; a server's URL and model), so a larger GGUF
or `--llm-url` is gated the same way, with no code change.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from sotto.agent.reply import OpenAnswer, open_answer_messages, open_answer_sentences
from sotto.engines.base import ChatMessage, LanguageModel
from sotto.errors import SottoError
from sotto.memory.monologue import Monologue
from sotto.memory.rules import extract
from sotto.memory.state import SessionState
from sotto.paths import data_dir

OPEN_ANSWER = "open_answer"
PATCH = "patch"
TIE_BREAK = "tie_break"
JOBS = (OPEN_ANSWER, PATCH, TIE_BREAK)
PROBE_VERSION = 1
CACHE_FILE = "model_capabilities.json"
OPEN_ANSWER_PASS = 3  # of the 5 questions per language

# (question, accepted answers) per language.
OPEN_PROBES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "en": (
        ("What is the capital of France?", ("Paris",)),
        ("How many days are in a week?", ("seven", "7")),
        ("What color is the sky on a clear day?", ("blue",)),
        ("What is the opposite of hot?", ("cold",)),
        ("What do cows drink?", ("water",)),
    ),
    "zh": (
        ("法国的首都是哪里？", ("巴黎",)),
        ("一个星期有几天？", ("七", "7")),
        ("晴天的天空是什么颜色？", ("蓝",)),
        ("热的反义词是什么？", ("冷",)),
        ("一年有几个月？", ("十二", "12")),
    ),
}
# (statement, the value the patch must carry).
PATCH_PROBES = (
    ("My name is Priya.", "Priya"),
    ("The parcel locker code is 4417.", "4417"),
    ("Remind me to call the plumber at 5 pm.", "plumber"),
)
# (question, candidates, the number of the one that answers).
TIE_BREAK_PROBES = (
    ("When is the dentist?", ("dentist appointment: 3 pm", "parcel pickup: 5 pm"), 1),
    ("What day is the team dinner?", ("car wash: Saturday", "team dinner: Friday"), 2),
)
TIE_BREAK_SYSTEM = "Pick the note that answers the question. Reply with the note's number only."
# Chat-template tokens around the user's words in a turn's prompt (llama.cpp re-evaluates
# only what follows the cached static system part).
TEMPLATE_TOKENS = 12


@dataclass
class JobVerdict:
    job: str
    passed: bool
    score: str  # e.g. "4/5"
    reason: str
    ms: float = 0.0


@dataclass
class ModelCapabilities:
    model: str  # the model's name
    identity: str  # what the cache is keyed by
    measured: bool  # False: not probed (all jobs given by the caller, e.g. a test)
    jobs: dict[str, JobVerdict] = field(default_factory=dict)  # "open_answer:en", "patch", "tie_break"
    prompt_ms_per_token: float = 0.0
    gen_ms_per_token: float = 0.0
    first_sentence_tokens: float = 0.0
    measured_at: float = 0.0
    reachable: bool = True  # False: the model never answered a probe (a server down): not cached

    def does(self, job: str, lang: str | None = None) -> bool:
        if not self.measured:
            return True
        verdict = self.jobs.get(f"{job}:{lang}" if lang else job)
        return bool(verdict and verdict.passed)

    def predict_first_sentence_ms(self, new_prompt_tokens: int) -> float | None:
        """Time from the call to the first sentence, from the measured speed and the prompt size."""
        if self.prompt_ms_per_token <= 0 or self.gen_ms_per_token <= 0:
            return None
        return (new_prompt_tokens + TEMPLATE_TOKENS) * self.prompt_ms_per_token + self.first_sentence_tokens * self.gen_ms_per_token

    def summary(self) -> dict[str, str]:
        """Per job: "yes (4/5 ...)" or "no (...)", for `sotto models list`, the demo and stats."""
        return {name: ("yes" if v.passed else "no") + f" ({v.score}: {v.reason})" for name, v in sorted(self.jobs.items())}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> "ModelCapabilities":
        jobs = {k: JobVerdict(**v) for k, v in dict(raw.get("jobs", {})).items()}
        return cls(**{**raw, "jobs": jobs})


def unprobed(model: LanguageModel) -> ModelCapabilities:
    """Every job given without a probe: only for callers that chose so (tests)."""
    return ModelCapabilities(model=model.name, identity=model_identity(model), measured=False)


def model_identity(model: LanguageModel) -> str:
    return str(getattr(model, "identity", "") or model.name)


# ------------------------------------------------------------------ probes


def probe_open_answers(model: LanguageModel, lang: str, speed: list[tuple[float, float, float]], *,
                       clock: Callable[[], float] = time.perf_counter) -> tuple[JobVerdict, bool]:
    """The verdict, and whether the model answered at all. `speed` collects (ms per new
    prompt token, ms per generated token, first-sentence tokens)."""
    started = time.perf_counter()
    right: list[str] = []
    notes: list[str] = []
    answered = False
    total = len(OPEN_PROBES[lang])
    for asked, (question, accepted) in enumerate(OPEN_PROBES[lang]):
        if asked - len(right) > total - OPEN_ANSWER_PASS:
            break  # it can no longer pass: spend no more CPU on it
        answer = OpenAnswer()
        try:
            said = list(open_answer_sentences(model, question, lang, answer, max_sentences=lambda: 1, clock=clock))
        except SottoError as exc:
            notes.append(f"{question[:20]}: {exc.code}")
            continue
        answered = answered or answer.first_piece_ms is not None
        if said and any(a.lower() in said[0].lower() for a in accepted):
            right.append(question)
        else:
            notes.append(f"{question[:24]!r} -> {(said[0] if said else (answer.rejected[:1] or ['nothing'])[0])[:50]!r}")
        if said and answer.first_piece_ms and answer.first_sentence_ms:
            prompt_tokens = model.count_tokens(question) + TEMPLATE_TOKENS
            tokens = max(1, model.count_tokens(said[0]))
            gen_ms = max(0.0, answer.first_sentence_ms - answer.first_piece_ms)
            speed.append((answer.first_piece_ms / prompt_tokens, gen_ms / max(1, tokens - 1), float(tokens)))
    passed = len(right) >= OPEN_ANSWER_PASS
    reason = f"{len(right)} of {total} {lang} probe questions answered right with a checked first sentence"
    if notes:
        reason += "; missed: " + "; ".join(notes[:2])
    verdict = JobVerdict(f"{OPEN_ANSWER}:{lang}", passed, f"{len(right)}/{total}", reason, _ms(started))
    return verdict, answered


def probe_patch(model: LanguageModel) -> JobVerdict:
    started = time.perf_counter()
    monologue = Monologue(model, retries=0)
    done = 0
    for words, value in PATCH_PROBES:
        empty = SessionState(session_id="probe")
        rules = extract(words, empty)
        update = monologue.model_update(empty, words, rules)
        if update.patch is None:
            reason = f"no valid patch for {words!r} ({(update.failures or ['no output'])[0][:60]})"
            return JobVerdict(PATCH, False, f"{done}/{len(PATCH_PROBES)}", reason, _ms(started))
        if not any(value.lower() in s.lower() for s in update.state.all_strings()):
            reason = f"the patch for {words!r} does not carry {value!r}"
            return JobVerdict(PATCH, False, f"{done}/{len(PATCH_PROBES)}", reason, _ms(started))
        done += 1
    return JobVerdict(PATCH, True, f"{done}/{len(PATCH_PROBES)}", "every probe statement patched verbatim", _ms(started))


def tie_break_grammar(count: int) -> str:
    return "root ::= " + " | ".join(f'"{i}"' for i in range(1, count + 1))


def tie_break_messages(question: str, candidates: Sequence[str]) -> list[ChatMessage]:
    notes = "\n".join(f"{i}. {c}" for i, c in enumerate(candidates, 1))
    return [ChatMessage("system", TIE_BREAK_SYSTEM), ChatMessage("user", f"Notes:\n{notes}\nQuestion: {question}\nNumber:")]


def probe_tie_break(model: LanguageModel) -> JobVerdict:
    started = time.perf_counter()
    done = 0
    for question, candidates, right in TIE_BREAK_PROBES:
        try:
            out = model.complete(tie_break_messages(question, candidates), max_tokens=2,
                                 grammar=tie_break_grammar(len(candidates)), temperature=0.0)
        except SottoError as exc:
            return JobVerdict(TIE_BREAK, False, f"{done}/{len(TIE_BREAK_PROBES)}", f"call failed: {exc.code}", _ms(started))
        if out.text.strip() != str(right):
            reason = f"picked {out.text.strip()[:8]!r} for {question!r} (right: {right})"
            return JobVerdict(TIE_BREAK, False, f"{done}/{len(TIE_BREAK_PROBES)}", reason, _ms(started))
        done += 1
    return JobVerdict(TIE_BREAK, True, f"{done}/{len(TIE_BREAK_PROBES)}", "picked the answering note every time", _ms(started))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def probe(model: LanguageModel, *, clock: Callable[[], float] = time.perf_counter) -> ModelCapabilities:
    """Run every probe on the model now (seconds on a small model). `clock` times the
    open answers (the speed the first-answer prediction is made from)."""
    caps = ModelCapabilities(model=model.name, identity=model_identity(model), measured=True, measured_at=time.time())
    speed: list[tuple[float, float, float]] = []
    answered = False
    for lang in OPEN_PROBES:
        verdict, any_output = probe_open_answers(model, lang, speed, clock=clock)
        caps.jobs[verdict.job] = verdict
        answered = answered or any_output
    caps.reachable = answered
    for verdict in (probe_patch(model), probe_tie_break(model)):
        caps.jobs[verdict.job] = verdict
    if speed:
        caps.prompt_ms_per_token = round(statistics.median(s[0] for s in speed), 2)
        caps.gen_ms_per_token = round(statistics.median(s[1] for s in speed), 2)
        caps.first_sentence_tokens = round(statistics.median(s[2] for s in speed), 1)
    return caps


# ------------------------------------------------------------------ cache


class CapabilityCache:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / CACHE_FILE
        self._data: dict[str, Any] = {}
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and loaded.get("version") == PROBE_VERSION:
                self._data = dict(loaded.get("models", {}))
        except (OSError, ValueError):
            self._data = {}  # missing or corrupt: probe again

    def get(self, identity: str) -> ModelCapabilities | None:
        raw = self._data.get(identity)
        if not isinstance(raw, dict):
            return None
        try:
            return ModelCapabilities.from_dict(raw)
        except (TypeError, ValueError):
            return None

    def put(self, caps: ModelCapabilities) -> None:
        self._data[caps.identity] = caps.to_dict()
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"version": PROBE_VERSION, "models": self._data}, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)

    def all(self) -> list[ModelCapabilities]:
        out = []
        for identity in self._data:
            caps = self.get(identity)
            if caps is not None:
                out.append(caps)
        return out


def capabilities_for(model: LanguageModel, cache: CapabilityCache | None = None, *, force: bool = False) -> ModelCapabilities:
    """The cached verdicts for this model file, else a fresh probe (then cached)."""
    cache = cache or CapabilityCache()
    identity = model_identity(model)
    if not force:
        cached = cache.get(identity)
        if cached is not None:
            return cached
    caps = probe(model)
    if caps.reachable:
        cache.put(caps)  # a server that never answered is probed again next time
    return caps


def new_prompt_tokens(model: LanguageModel, question: str, lang: str) -> int:
    """The tokens of a turn's open-answer prompt that are not cached (the user's words)."""
    messages = open_answer_messages(question, lang)
    return model.count_tokens(messages[-1].content)
