"""`sotto state [SESSION] [--diff] [--json]`: a session's working memory and its history.

Without SESSION: the stored sessions. `--rollback N` makes version N current again,
`--drop TEXT` removes items mentioning TEXT, and `--set FIELD=VALUE` (also FIELD[i]=VALUE,
FIELD+=VALUE; validated against the schema) edits a field; each is recorded as a
"user-edit" version with the command that made it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex

from sotto.errors import StoreError
from sotto.ids import SessionId
from sotto.memory.diff import diff_states
from sotto.memory.edit import edit_state
from sotto.memory.patch import StatePatch, apply_patch
from sotto.memory.store import Store
from sotto.privacy.forget import apply_retention
from sotto.untrusted import clean_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", nargs="?", help="session id (omit to list sessions)")
    parser.add_argument("--diff", action="store_true", help="show every version with what changed, which turn, and who")
    parser.add_argument("--json", action="store_true", help="JSON output, one object per line")
    parser.add_argument("--rollback", type=int, metavar="VERSION", help="make this version the current state")
    parser.add_argument("--drop", metavar="TEXT", help="remove every item that mentions TEXT")
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE",
        help="edit a field: current_task=..., facts[0]=..., facts+=... (repeatable; an empty indexed value deletes)",
    )


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def run(args: argparse.Namespace) -> int:
    session = SessionId(args.session) if args.session else None
    # Arguments are text from a terminal or a script: no control character or lone surrogate
    # (invalid UTF-8) reaches the stored state or its edit note.
    args.set = [clean_text(a) for a in args.set]
    drop = clean_text(args.drop) if args.drop else ""
    store = Store()
    try:
        apply_retention(store)
        if session is None:
            for sid, updated, version in store.sessions():
                if args.json:
                    print(json.dumps({"session": sid, "updated_at": updated, "version": version}))
                else:
                    print(f"{sid}\tversion {version}\t{_when(updated)}")
            return 0
        history = store.history(session)
        latest = history[-1]
        if args.rollback is not None or drop or args.set:
            if sum(bool(x) for x in (args.rollback is not None, drop, args.set)) > 1:
                print("sotto state: use one of --rollback, --drop, --set at a time")
                return 2
            state = latest.state
            if args.set:
                new = state
                try:
                    for assignment in args.set:
                        new = edit_state(new, assignment)
                except StoreError as exc:
                    print(f"sotto state: {exc}")
                    return 2
                changes = diff_states(state, new)
                command = "sotto state " + session + "".join(f" --set {shlex.quote(a)}" for a in args.set)
            elif args.rollback is not None:
                match = [h for h in history if h.version == args.rollback]
                if not match:
                    print(f"sotto state: no version {args.rollback} (0..{latest.version})")
                    return 2
                new = match[0].state.copy()
                new.session_id = session
                changes = diff_states(state, new)
                command = f"sotto state {session} --rollback {args.rollback}"
            else:
                applied = apply_patch(state, StatePatch(drop_items=[drop]))
                new, changes = applied.state, applied.changes
                command = f"sotto state {session} --drop {shlex.quote(drop)}"
            new.touch()
            version = store.commit(new, turn=latest.turn, source="user-edit", changes=changes, note=command)
            print(f"version {version}: {len(changes)} change(s)")
            history = store.history(session)
            latest = history[-1]
        if args.json:
            if args.diff:
                for h in history:
                    print(json.dumps({"version": h.version, "turn": h.turn, "source": h.source, "note": h.note, "changes": h.changes, "at": h.created_at}, ensure_ascii=False))
            print(json.dumps(latest.state.to_dict(), ensure_ascii=False))
            return 0
        from rich.console import Console
        from rich.json import JSON

        console = Console()
        if args.diff:
            for h in history:
                note = f" ({h.note})" if h.note else ""
                console.print(f"[bold]v{h.version}[/] turn {h.turn} by {h.source}{note} at {_when(h.created_at)}", highlight=False)
                for c in h.changes:
                    op = {"add": "[green]+[/]", "remove": "[red]-[/]"}.get(c["op"], "[yellow]~[/]")
                    text = c["new"] if c["op"] == "add" else c["old"] if c["op"] == "remove" else f"{c['old']!r} -> {c['new']!r}"
                    console.print(f"   {op} {c['field']}: {text}", markup=True, highlight=False)
        console.print(f"[bold]{session}[/] version {latest.version} (turn {latest.turn}, {latest.source})")
        console.print(JSON(latest.state.to_json()))
        return 0
    finally:
        store.close()
