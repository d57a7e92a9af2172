"""How `sotto demo` shows a run: a rich human view, or JSON lines for machines."""

from __future__ import annotations

import json
from typing import IO, Any

from rich.markup import escape

from sotto.demo.runner import DemoResult

METRICS = (("first_byte_ms", "first byte"), ("first_answer_ms", "first answer"), ("total_turn_ms", "total turn"),
           ("barge_in_ms", "barge-in"))
TARGETS = {"first_byte_ms": 700, "first_answer_ms": 1500, "total_turn_ms": 2500, "barge_in_ms": 200}


def _public(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if not k.startswith("_")}


class JsonView:
    """Exactly the docs/DESIGN.md objects on stdout; progress notes on stderr."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        import sys

        if kind == "turn":
            print(json.dumps(_public(payload), ensure_ascii=False), file=self.out, flush=True)
        elif kind == "status" and payload.get("step") == "speech recognition" and "replay" in str(payload.get("asr")):
            print(f"sotto demo: speech recognition is {payload['asr']}", file=sys.stderr, flush=True)
        elif kind == "status" and payload.get("step") == "no barge-in":
            print(f"sotto demo: turn {payload['turn']}: {payload['reason']}", file=sys.stderr, flush=True)

    def finish(self, result: DemoResult) -> None:
        print(json.dumps(result.summary, ensure_ascii=False), file=self.out, flush=True)


class HumanView:
    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(highlight=False)

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        c = self.console
        if kind == "status":
            step = payload.get("step")
            if step == "loading models":
                c.print("[dim]loading models...[/]")
            elif step == "models loaded":
                c.print(f"[dim]llm {payload['llm']}, tts {payload['tts']} (load ms {payload['load_ms']})[/]")
            elif step == "speech recognition":
                asr = str(payload["asr"])
                style = "bold yellow" if "replay" in asr else "dim"
                c.print(f"[{style}]speech recognition: {asr}[/]")
                if "replay" in asr:
                    c.print("[yellow]  the script's words are revealed in step with the audio the board sends; "
                            "timing is real, the words are not recognised from sound[/]")
                else:
                    c.print("[dim]  the simulated user's words are synthesised, sent by the board as audio and "
                            "recognised from it: \"said\" is the script, \"heard\" what recognition made of it[/]")
            elif step == "no barge-in":
                c.print(f"[yellow]turn {payload['turn']}: {payload['reason']}[/]")
            elif step == "nothing heard":
                c.print(f"[yellow]recognition heard no words in: {payload['user']}[/]")
            elif step == "listening":
                c.print(f"[dim]simulated board on a pty: {payload['formats']}[/]")
                c.print(f"[green]listening[/] {payload['ready_ms']:.0f} ms after start (session {payload['session']})\n")
            return
        self._turn(payload)

    def _turn(self, t: dict[str, Any]) -> None:
        c = self.console
        c.rule(f"turn {t['turn']}", style="dim")
        c.print(f"[bold]said[/]   {escape(str(t['user']))}")
        heard = t.get("_heard")
        shown = escape(str(t['final_transcript']))
        if heard and heard != t["final_transcript"]:
            shown += f"  [dim](recognised: {escape(heard)})[/]"
        c.print(f"[bold]heard[/]  {shown}")
        if t.get("interrupted"):
            spoken = t.get("_spoken_prefix") or ""
            c.print(f"[bold]agent[/]  [magenta](talked over after: \"{spoken}\")[/]")
        else:
            c.print(f"[bold]agent[/]  {t['reply']}")
        changes = t.get("_changes") or []
        for change in changes:
            c.print(f"  [cyan]memory[/] {change}")
        if not changes:
            c.print("  [dim]memory unchanged[/]")
        parts = []
        for key, label in METRICS:
            value = t.get(key)
            if value is None:
                continue
            colour = "green" if value <= TARGETS[key] else "red"
            parts.append(f"{label} [{colour}]{value:.0f} ms[/]")
        if t.get("degraded"):
            parts.append(f"[yellow]degraded: {', '.join(t.get('degrade_actions') or [])}[/]")
        c.print("  " + ", ".join(parts))

    def finish(self, result: DemoResult) -> None:
        from rich.table import Table

        s = result.summary
        table = Table(title="summary", show_header=True)
        table.add_column("metric")
        table.add_column("value", justify="right")
        table.add_column("target", justify="right")
        for key, target in (("first_byte_ms_p50", 700), ("first_byte_ms_p95", None), ("first_answer_ms_p50", 1500),
                            ("total_turn_ms_p50", 2500), ("barge_in_ms_p95", 200)):
            value = s.get(key)
            shown = "-" if value is None else f"{value:.0f} ms"
            ok = value is not None and (target is None or value <= target)
            table.add_row(key, f"[{'green' if ok else 'red'}]{shown}[/]", "" if target is None else f"<= {target} ms")
        self.console.print()
        self.console.print(table)
        self.console.print(f"turns {s['turns']}, asr {s['asr']}, llm {s['llm']}, tts {s['tts']}")
        d = result.details
        self.console.print(f"[dim]ready in {d.get('ready_ms', 0):.0f} ms, peak memory {d.get('peak_rss_mb', 0):.0f} MB, "
                           f"session {d.get('session')}[/]")
