"""The one builder of a conversation host.

    engines = load_engines(EngineOptions())
    runtime = Runtime(engines, Store(), RuntimeOptions(knowledge=load_configured_knowledge(flag)))
    session = runtime.voice_session(port, recognizer, session_id="kitchen")   # a board
    service = TurnService(runtime.runner)                                     # sotto serve's text turns
    runtime.agent.run_turn("chat-1", "Hello")                                 # chat, eval
    runtime.close()                       # ends the sessions (profile promotion), stops the workers

One agent (and its knowledge) and one turn engine serve every session of the process; a
board's session gets its long-term profile by one rule (`profile_for`).
"""

from __future__ import annotations

import concurrent.futures
import logging
from dataclasses import dataclass, field
from pathlib import Path

from sotto.agent import Agent, AgentConfig
from sotto.clock import MONOTONIC, Clock
from sotto.engines.base import Recognizer
from sotto.errors import ConfigError
from sotto.ids import SessionId
from sotto.knowledge.base import KnowledgeBase
from sotto.link.events import BoardPort
from sotto.memory.store import Store
from sotto.runtime.engines import LoadedEngines
from sotto.voice.harness import VoiceConfig, VoiceSession
from sotto.voice.trace import TraceSink
from sotto.voice.turn_runner import TurnRunner

log = logging.getLogger(__name__)

BOARD_PROFILE_PREFIX = "board:"


@dataclass(frozen=True)
class RuntimeOptions:
    lang: str = "en"
    knowledge: KnowledgeBase | None = None  # system knowledge for the replies (--knowledge)
    agent: AgentConfig = field(default_factory=AgentConfig)
    # The long-term profile of sessions that name none (a user name or a key); None: a board's
    # own (board:<board id>), else none until the user says their name.
    profile: str | None = None
    voice: VoiceConfig = field(default_factory=VoiceConfig)
    # Many sessions on one model (sotto serve): when the model queue is too long for the
    # budget, answer from the working memory at once and defer the deep work.
    answer_from_memory: bool = False


class Runtime:
    def __init__(self, engines: LoadedEngines, store: Store, options: RuntimeOptions | None = None, *,
                 clock: Clock = MONOTONIC) -> None:
        self.engines = engines
        self.store = store
        self.options = options or RuntimeOptions()
        self.clock = clock
        self.agent = Agent(engines.llm, store, config=self.options.agent, knowledge=self.options.knowledge,
                           capabilities=engines.capabilities)
        self._runner: TurnRunner | None = None
        self._sessions: list[SessionId] = []

    @property
    def runner(self) -> TurnRunner:
        """The turn engine (built on first use: chat and eval need none)."""
        if self._runner is None:
            if self.engines.tts is None:
                raise ConfigError("this host was loaded without a voice: no spoken turns")
            memory_agent = None
            if self.options.answer_from_memory:
                # Same store and knowledge, no model: answers in milliseconds from the working memory.
                config = AgentConfig(model_update="off", reply_mode="composed", outputs=self.options.agent.outputs)
                memory_agent = Agent(None, self.store, config=config, knowledge=self.options.knowledge)
            self._runner = TurnRunner(self.agent, self.engines.tts, clock=self.clock, memory_agent=memory_agent)
        return self._runner

    def profile_for(self, port: BoardPort | None = None, profile: str | None = None) -> str | None:
        """The session's long-term profile: the one asked for, else the configured one, else the
        board's own (board:<board id>), else None (learnt when the user says their name)."""
        if profile or self.options.profile:
            return profile or self.options.profile
        board_id = getattr(port, "board_id", None)
        return f"{BOARD_PROFILE_PREFIX}{board_id[:60]}" if board_id else None

    def open_session(self, session_id: SessionId, *, profile: str | None = None) -> None:
        """Seed the session from its profile on the model worker, ahead of its first turn;
        `close()` promotes its stable items back to the profile."""
        session_id = SessionId(session_id)  # InvalidSessionId here, before anything is built
        self.runner.open_session(session_id, profile=profile)
        self._sessions.append(session_id)

    def end_session(self, session_id: SessionId) -> "concurrent.futures.Future[list[str]]":
        if session_id in self._sessions:
            self._sessions.remove(session_id)
        return self.runner.end_session(session_id)

    def voice_session(
        self,
        port: BoardPort,
        recognizer: Recognizer,
        *,
        session_id: SessionId,
        profile: str | None = None,
        sinks: tuple[TraceSink, ...] = (),
        trace_folder: Path | None = None,
    ) -> VoiceSession:
        """A board's voice session on the shared turn engine, opened on its profile."""
        self.open_session(session_id, profile=self.profile_for(port, profile))
        return VoiceSession(port, recognizer, self.runner, session_id=session_id, lang=self.options.lang,
                            config=self.options.voice, sinks=sinks, trace_folder=trace_folder, clock=self.clock)

    def close(self) -> None:
        """End every open session (each promotes its profile) and stop the workers. Blocking."""
        if self._runner is not None:
            ends = [self.end_session(session_id) for session_id in list(self._sessions)]
            for done in concurrent.futures.as_completed(ends):
                if done.exception() is not None:  # the turns are committed; only the promotion is lost
                    log.warning("profile promotion at session end failed: %s", done.exception())
            self._runner.close()
