"""`sotto stats [--json] [--session S]`: latency percentiles, tokens, failure and degradation rates
over the stored traces (voice JSON-lines traces and the memory store)."""

from __future__ import annotations

import argparse
import json

from sotto import paths
from sotto.agent.stats import LATENCY_METRICS, collect
from sotto.memory.store import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--session", metavar="S", help="only this session")


def run(args: argparse.Namespace) -> int:
    from sotto.ids import SessionId
    from sotto.privacy.forget import apply_retention

    session = SessionId(args.session) if args.session else None
    store = Store()
    try:
        from sotto.agent.capability import CapabilityCache

        apply_retention(store)
        summary = collect(paths.traces_dir(), store, session=session, capabilities=CapabilityCache().all()).summary()
    finally:
        store.close()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    print(f"sessions {summary['sessions']}, voice turns {summary['voice_turns']}, agent turns {summary['agent_turns']}")
    for metric in LATENCY_METRICS:
        p50, p95 = summary[f"{metric}_p50"], summary[f"{metric}_p95"]
        print(f"  {metric:<16} p50 {'-' if p50 is None else round(p50)}  p95 {'-' if p95 is None else round(p95)}")
    print(f"  barge-ins {summary['barge_ins']}, interrupted {summary['interrupted_turns']}, "
          f"degraded {summary['degraded_turns']} (rate {summary['degradation_rate']}) {summary['degrade_actions']}")
    print(f"  state-update failures {summary['state_update_failures']} (rate {summary['state_update_failure_rate']}), "
          f"skipped {summary['state_updates_skipped']}")
    print(f"  tokens: update prompt {summary['update_prompt_tokens']}, update completion "
          f"{summary['update_completion_tokens']}, reply {summary['reply_tokens']}")
    c = summary["confirmations"]
    print(f"  confirmations: asked {c['asked']}, confirmed {c['confirmed']}, corrected {c['corrected']}, "
          f"denied {c['denied']}, lapsed {c['lapsed']}")
    if summary["routes"]:
        print("  routes: " + ", ".join(f"{name} {count}" for name, count in summary["routes"].items()))
        for why, count in summary["route_reasons"].items():
            print(f"    {count:>4}  {why}")
    for model, jobs in summary["model_jobs"].items():
        print(f"  model {model} (start-up probe):")
        for job, verdict in jobs.items():
            print(f"    {job:<16} {verdict}")
    if summary["unreadable_lines"]:
        print(f"  ({summary['unreadable_lines']} unreadable trace lines skipped)")
    return 0
