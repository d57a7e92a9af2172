"""`sotto forget SESSION | --profile USER | --expired [--retention-days N]`: delete personal data.

A session is deleted everywhere: its state versions and diffs, trace rows and binding
in the store, and its JSON-lines trace file; the store is then checkpointed and
vacuumed so nothing of it stays in the database files. `--profile` deletes a long-term
profile and the sessions bound to it. `--expired` deletes what is older than the
retention (default 30 days, SOTTO_RETENTION_DAYS); every command that opens the store
also does this at start-up.
"""

from __future__ import annotations

import argparse
import json

from sotto.memory.store import Store
from sotto.privacy.forget import Forgotten, expire, forget_profile, forget_session, retention_days
from sotto.memory.profile import profile_key


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", help="session id to delete")
    parser.add_argument("--profile", metavar="USER", help="delete this user's (or board:ID) profile and its sessions")
    parser.add_argument("--expired", action="store_true", help="delete sessions, profiles and traces past the retention")
    parser.add_argument("--retention-days", type=float, metavar="N", help="retention for --expired (default $SOTTO_RETENTION_DAYS or 30)")
    parser.add_argument("--json", action="store_true", help="JSON output")


def _report(done: Forgotten, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"sessions": done.sessions, "profiles": done.profiles, "trace_files": done.trace_files}))
        return
    print(f"deleted {len(done.sessions)} session(s), {len(done.profiles)} profile(s), {len(done.trace_files)} trace file(s)")
    for item in done.sessions + done.profiles + done.trace_files:
        print(f"  {item}")


def run(args: argparse.Namespace) -> int:
    chosen = sum(bool(x) for x in (args.session, args.profile, args.expired))
    if chosen != 1:
        print("sotto forget: give one of SESSION, --profile USER or --expired")
        return 2
    # Retention at start-up would use the default; --expired applies the one asked for.
    store = Store(apply_retention=not args.expired)
    try:
        if args.expired:
            days = retention_days(args.retention_days)
            if days is None:
                print("sotto forget: retention is off (0 days); nothing expires")
                return 0
            done = expire(store, days)
        elif args.profile:
            done = forget_profile(store, profile_key(args.profile))
            if not done.profiles and not done.sessions:
                print(f"sotto forget: no profile {profile_key(args.profile)!r}")
                return 1
        else:
            done = forget_session(store, args.session)
            if not done.sessions and not done.trace_files:
                print(f"sotto forget: no session {args.session!r}")
                return 1
        _report(done, args.json)
        return 0
    finally:
        store.close()
