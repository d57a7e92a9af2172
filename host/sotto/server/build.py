"""Builds a ready `SottoServer` from an engine configuration (in-process or remote engines)."""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sotto  # noqa: F401  (offline environment before any engine import)
from sotto.engines.base import LanguageModel, SpeechSynthesizer
from sotto.engines.config import EngineConfig, RecognizerFactory
from sotto.ids import SessionId
from sotto.server.app import ServeOptions, SottoServer
from sotto.server.turns import TurnService
from sotto.voice.turn_runner import TurnRunner
from sotto.voice.budgets import BudgetConfig


@dataclass
class BuiltEngines:
    llm: LanguageModel
    tts: SpeechSynthesizer
    recognizers: RecognizerFactory
    load_ms: dict[str, float] = field(default_factory=dict)
    capabilities: Any = None  # sotto.agent.capability.ModelCapabilities (None: not probed)

    def labels(self, config: EngineConfig) -> dict[str, Any]:
        described = config.describe()
        return {"llm": f"{self.llm.name} ({described['llm']})", "tts": f"{self.tts.name} ({described['tts']})",
                "asr": described["asr"]}


def load_engines(config: EngineConfig, *, lang: str = "en") -> BuiltEngines:
    """LLM and TTS side by side (in-process loads take ~1 s each; remote ones are instant)."""

    def timed(fn: Any) -> tuple[Any, float]:
        started = time.perf_counter()
        return fn(), (time.perf_counter() - started) * 1000.0

    def gated() -> Any:
        from sotto.agent.capability import capabilities_for

        from sotto.backfill.lexicon import default_lexicon

        llm = config.load_llm()
        default_lexicon()  # the ASR backfill's lexicon, before the first turn needs it
        return llm, capabilities_for(llm)  # probed once per model file (or server), then cached

    with concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="sotto-load") as pool:
        llm_future = pool.submit(timed, gated)
        tts_future = pool.submit(timed, lambda: config.load_tts(lang=lang))
        (llm, capabilities), llm_ms = llm_future.result()
        tts, tts_ms = tts_future.result()
    return BuiltEngines(llm, tts, config.recognizers(), {"llm": round(llm_ms, 1), "tts": round(tts_ms, 1)}, capabilities)


def build_server(
    engines: BuiltEngines,
    options: ServeOptions,
    *,
    db_path: Path | None = None,
    budgets: BudgetConfig | None = None,
    retention: bool = False,
) -> SottoServer:
    """`retention`: delete what is past the retention first (`sotto serve` on the user's store)."""
    from sotto.agent import Agent, AgentConfig
    from sotto.memory.store import Store
    from sotto.privacy.forget import apply_retention

    store = Store(db_path)
    if retention:
        apply_retention(store)
    agent = Agent(engines.llm, store, capabilities=engines.capabilities)
    # Same store, no model: answers from the working memory when the model queue is too long.
    memory_agent = Agent(None, store, config=AgentConfig(model_update="off", reply_mode="composed"))
    runner = TurnRunner(agent, engines.tts, memory_agent=memory_agent)
    service = TurnService(runner, budgets=budgets)
    return SottoServer(service, engines.recognizers, options,
                       board_bridges=board_bridge_factory(runner, engines.recognizers, options.lang))


def board_bridge_factory(runner: TurnRunner, recognizers: Any, lang: str) -> Any:
    """Wi-Fi boards (binary wire frames): BoardLink over the WebSocket + the voice session,
    exactly as `sotto run` serves a serial board."""
    from sotto.server.wsboard import WebSocketBoardBridge
    from sotto.voice.harness import VoiceSession

    def make(session_id: SessionId) -> WebSocketBoardBridge:
        runner.open_session(session_id)

        def make_session(link: Any) -> VoiceSession:
            return VoiceSession(link, recognizers.make(lang), runner, session_id=session_id, lang=lang)

        def end_session() -> None:  # Agent.end_session (profile promotion) on the model worker
            runner.end_session(session_id)

        return WebSocketBoardBridge(session_id, make_session, on_close=end_session)

    return make
