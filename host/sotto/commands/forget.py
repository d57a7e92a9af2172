"""`sotto forget SESSION | --profile USER | --expired [--retention-days N]`: delete personal data.

A session is deleted everywhere: its state versions and diffs, trace rows and binding
in the store, its JSON-lines trace file, the items it put into long-term profiles (and
their copies in sessions those profiles seeded); the store is then checkpointed and
vacuumed so nothing of it stays in the database files. `--profile` deletes a long-term
profile, the sessions bound to it or that contributed to it. `--expired` deletes what
is older than the retention (default 30 days, SOTTO_RETENTION_DAYS); every command that
opens the store also does this at start-up.
"""

from __future__ import annotations

import argparse
import json

from sotto.ids import SessionId
from sotto.memory.store import Store
from sotto.memory.profile import profile_key
from sotto.privacy.forget import Forgotten, apply_retention, expire, forget_profile, forget_session, retention_days


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", help="session id to delete")
    parser.add_argument("--profile", metavar="USER", help="delete this user's (or board:ID) profile and its sessions")
    parser.add_argument("--expired", action="store_true", help="delete sessions, profiles and traces past the retention")
    parser.add_argument("--retention-days", type=float, metavar="N", help="retention for --expired (default $SOTTO_RETENTION_DAYS or 30)")
    parser.add_argument("--json", action="store_true", help="JSON output")


def _report(done: Forgotten, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"sessions": done.sessions, "profiles": done.profiles, "trace_files": done.trace_files,
                          "profiles_cleaned": done.profiles_cleaned, "sessions_cleaned": done.sessions_cleaned}))
        return
    print(f"deleted {len(done.sessions)} session(s), {len(done.profiles)} profile(s), {len(done.trace_files)} trace file(s)")
    for item in done.sessions + done.profiles + done.trace_files:
        print(f"  {item}")
    if done.profiles_cleaned or done.sessions_cleaned:
        print(f"removed their items from {len(done.profiles_cleaned)} profile(s) and {len(done.sessions_cleaned)} "
              f"other session(s) seeded from them")


def run(args: argparse.Namespace) -> int:
    chosen = sum(bool(x) for x in (args.session, args.profile, args.expired))
    if chosen != 1:
        print("sotto forget: give one of SESSION, --profile USER or --expired")
        return 2
    # Checked before the store opens: a path or any other bad id is refused, never unlinked.
    session = SessionId(args.session) if args.session else None
    key = profile_key(args.profile) if args.profile else None
    store = Store()
    try:
        if not args.expired:  # --expired applies the retention asked for instead of the default
            apply_retention(store)
        if args.expired:
            days = retention_days(args.retention_days)
            if days is None:
                print("sotto forget: retention is off (0 days); nothing expires")
                return 0
            done = expire(store, days)
        elif key is not None:
            done = forget_profile(store, key)
            if not done.profiles and not done.sessions:
                print(f"sotto forget: no profile {key!r}")
                return 1
        else:
            assert session is not None
            done = forget_session(store, session)
            if not done.sessions and not done.trace_files:
                print(f"sotto forget: no session {session!r}")
                return 1
        _report(done, args.json)
        return 0
    finally:
        store.close()
