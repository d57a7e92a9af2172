"""`sotto chat [--session ID] [--model GGUF]`: type turns instead of speaking.

Each turn prints the reply as its sentences arrive and then what changed in the
working memory. `--session` resumes a stored session. Type /state to see the whole
state, /quit (or Ctrl+D) to leave.
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", help="session id to start or resume (default: a new one)")
    parser.add_argument("--model", metavar="GGUF", help="a GGUF model (default: the embedded SmolLM2-135M)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="model context window in tokens")
    parser.add_argument("--update", choices=("after_reply", "before_reply", "off"), default="after_reply")
    parser.add_argument("--reply", choices=("auto", "composed"), default="auto",
                        help="auto: routed, the model answers open questions when it passed its probe; composed: never the model")
    parser.add_argument("--knowledge", metavar="FILE", help="system knowledge file for the reply (default: $SOTTO_KNOWLEDGE)")
    parser.add_argument("--user", metavar="NAME", help="the user's long-term profile (default: learned when they say their name)")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.json import JSON

    from sotto.agent import AgentConfig
    from sotto.ids import SessionId
    from sotto.knowledge import load_configured_knowledge
    from sotto.memory.store import Store
    from sotto.privacy.forget import apply_retention
    from sotto.runtime import EngineOptions, Runtime, RuntimeOptions, load_engines
    from sotto.untrusted import clean_text, has_lone_surrogate

    console = Console()
    session = SessionId(args.session or time.strftime("chat-%Y%m%d-%H%M%S"))
    knowledge = load_configured_knowledge(args.knowledge)  # a bad file fails before the model loads
    engines = load_engines(EngineOptions(model=args.model, n_ctx=args.n_ctx), voice=False)
    store = Store()
    apply_retention(store)
    runtime = Runtime(engines, store, RuntimeOptions(knowledge=knowledge, profile=args.user,
                                                     agent=AgentConfig(model_update=args.update, reply_mode=args.reply)))
    agent = runtime.agent
    state = agent.open_session(session, profile=runtime.profile_for())
    resumed = store.last_turn(session)
    console.print(f"[bold]sotto chat[/] session [cyan]{session}[/] ({'resumed at turn ' + str(resumed) if resumed else 'new'}), model {engines.llm.name}")
    console.print("Type /state to see the memory, /quit to leave.", style="dim")
    try:
        while True:
            line: str | None
            try:
                line = console.input("[bold green]you>[/] ")
            except EOFError:
                break
            except UnicodeDecodeError:  # a strict-UTF-8 terminal read bytes that are not UTF-8
                line = None
            if line is None or has_lone_surrogate(line):  # not UTF-8: refused, not half-kept
                console.print("that line is not UTF-8 text; it was skipped", style="yellow")
                continue
            words = clean_text(line).strip()
            if not words:
                continue
            if words in ("/quit", "/exit"):
                break
            if words == "/state":
                console.print(JSON(agent.state(session).to_json()))
                continue
            started = time.perf_counter()
            turn = agent.start_turn(session, words)
            console.print("[bold blue]sotto>[/] ", end="")
            first_ms = None
            try:
                for sentence in turn.sentences():
                    first_ms = first_ms or (time.perf_counter() - started) * 1000
                    console.print(sentence + " ", end="", highlight=False)
            except KeyboardInterrupt:
                turn.cancel()
            console.print()
            result = turn.finish()
            for change in result.changes:
                console.print("   " + change.describe(), style="dim", highlight=False, markup=False)
            console.print(
                f"   [{result.reply_source} reply, first sentence {first_ms or 0:.0f} ms, "
                f"model update {result.model_update_ms:.0f} ms{', json failure' if result.json_failures else ''}]",
                style="dim", markup=False,
            )
            state = result.state
        agent.end_session(session)  # stable preferences go to the long-term profile
    finally:
        store.close()
    console.print(f"session {state.session_id} saved; resume with: sotto chat --session {state.session_id}", style="dim")
    return 0
