"""`sotto profile [USER] [--json] [--set KEY=VALUE] [--remove KEY]`: long-term profiles.

Without USER: the stored profiles. USER is a name ("Ana" -> user:ana) or a key
("board:kiosk-1"). `--set names|preferences|constraints=VALUE` adds an item, any other
KEY=VALUE is a setting (seeded into new sessions as a preference "KEY: VALUE");
`--remove KEY` drops a setting, `--remove preferences=VALUE` one item.
"""

from __future__ import annotations

import argparse
import datetime
import json

from sotto.errors import SottoError
from sotto.memory.store import Store
from sotto.memory.profile import Profile, edit, profile_key


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("user", nargs="?", help="user name or profile key (omit to list profiles)")
    parser.add_argument("--json", action="store_true", help="JSON output")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="add an item or a setting (repeatable)")
    parser.add_argument("--remove", action="append", default=[], metavar="KEY", help="remove a setting, or FIELD=VALUE one item (repeatable)")


def run(args: argparse.Namespace) -> int:
    from sotto.privacy.forget import apply_retention
    from sotto.untrusted import clean_text

    # Text from a terminal or a script: no control character or lone surrogate (invalid UTF-8) is stored.
    args.set = [clean_text(a) for a in args.set]
    args.remove = [clean_text(a) for a in args.remove]
    key = profile_key(clean_text(args.user)) if args.user else None
    store = Store()
    try:
        apply_retention(store)
        if not args.user:
            for listed, updated_at in store.profiles():
                when = datetime.datetime.fromtimestamp(updated_at).strftime("%Y-%m-%d %H:%M:%S")
                print(json.dumps({"profile": listed, "updated_at": updated_at}) if args.json else f"{listed}\t{when}")
            return 0
        assert key is not None
        current = store.profile(key)
        if args.set or args.remove:
            try:
                updated = edit(current or Profile(key), set_items=args.set, remove=args.remove)
            except SottoError as exc:
                print(f"sotto profile: {exc}")
                return 2
            store.put_profile(updated)
            current = updated
        if current is None:
            print(f"sotto profile: no profile {key!r} (`sotto profile` lists them)")
            return 1
        if args.json:
            print(current.to_json())
            return 0
        print(f"{current.key}")
        for name in ("names", "preferences", "constraints"):
            for item in getattr(current, name):
                print(f"  {name}: {item}")
        for k, v in current.settings.items():
            print(f"  setting {k} = {v}")
        if current.sessions:
            print(f"  from sessions: {', '.join(current.sessions)}")
        return 0
    finally:
        store.close()
