"""The host's package stack (docs/ARCHITECTURE.md): every import points down it.

Each package of host/sotto has a layer; a module may import its own package and packages
of LOWER layers only, never one above, never a sibling in its own layer. Every import
counts: top-level, inside functions, under TYPE_CHECKING. A new package must be given a
layer here (and a box in docs/ARCHITECTURE.md) before it can be imported at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HOST = Path(__file__).resolve().parents[1] / "host" / "sotto"

# Top of the stack first. Keep in step with the drawing in docs/ARCHITECTURE.md.
LAYERS: list[tuple[str, ...]] = [
    ("__main__",),  # python -m sotto
    ("cli",),  # the `sotto` command: finds the subcommand's module
    ("commands",),  # one module per subcommand, thin
    ("demo", "server", "baseline"),  # what a command runs: the demo, sotto serve, the baseline bench
    ("runtime",),  # the composition root: engines -> store, agent, knowledge, profiles -> sessions
    ("voice",),  # a conversation: mic path, turn engine, ladder, reply player, trace
    ("link", "agent", "privacy"),  # the board link and its events | turns, replies, actions | forgetting
    ("memory",),  # state, schema, patch, rules, store, profiles
    ("engines",),  # ASR, LLM, TTS behind protocols, in-process or remote
    ("models", "sim", "flashing"),  # model files | the simulated board | flashing a board
    ("audio", "text", "knowledge", "backfill", "metrics", "clock", "sotto_fw"),  # leaf libraries, the firmware
    ("sotto",),  # the package itself: sets the offline environment before any engine import
    ("ids", "guard", "untrusted"),  # session ids, the input guard, checks for untrusted text and JSON
    ("errors", "paths", "offline"),  # the error hierarchy, where files live, the no-network switches
]

# Imports against the stack that another change removes; each names it. Nothing else may be added here.
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def layer_of(package: str) -> int:
    for index, names in enumerate(LAYERS):
        if package in names:
            return index
    raise AssertionError(f"package {package!r} has no layer in tests/test_import_order.py")


def package_of(module: str) -> str:
    """sotto.voice.harness -> voice; sotto.errors -> errors; sotto -> sotto; sotto_fw.wire -> sotto_fw."""
    parts = module.split(".")
    if parts[0] == "sotto_fw":
        return "sotto_fw"
    return parts[1] if len(parts) > 1 else "sotto"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(HOST.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(source: str, module: str) -> list[str]:
    """Every sotto / sotto_fw module `source` imports, wherever the import statement is."""
    found: list[str] = []
    package_parts = module.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = package_parts[: len(package_parts) - node.level]
                found.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.append(node.module)
                # `from sotto import paths` imports sotto.paths (but `from sotto import __version__` a name)
                if node.module == "sotto":
                    found += [f"sotto.{a.name}" for a in node.names
                              if (HOST / f"{a.name}.py").exists() or (HOST / a.name).is_dir()]
    return [name for name in found if name.split(".")[0] in ("sotto", "sotto_fw")]


def violations(module: str, source: str) -> list[str]:
    own = package_of(module)
    out = []
    for target in imports_of(source, module):
        other = package_of(target)
        if other == own or (module, target) in KNOWN_EXCEPTIONS:
            continue
        if layer_of(other) <= layer_of(own):
            out.append(f"{module} imports {target} ({own} may not import {other})")
    return out


def host_modules() -> list[Path]:
    return sorted(p for p in HOST.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_import_points_down_the_stack() -> None:
    found = [v for path in host_modules() for v in violations(module_name(path), path.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_every_package_has_a_layer() -> None:
    packages = {package_of(module_name(p)) for p in host_modules()}
    for package in packages:
        layer_of(package)
    listed = {name for names in LAYERS for name in names}
    assert len(listed) == sum(len(names) for names in LAYERS), "a package is listed twice"


def test_the_known_exceptions_still_exist() -> None:
    """An exception whose import is gone must leave the list (it would hide a new one)."""
    for module, target in KNOWN_EXCEPTIONS:
        path = HOST.parent / (module.replace(".", "/") + ".py")
        assert target in imports_of(path.read_text(encoding="utf-8"), module), (module, target)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("sotto.link.board_link", "from sotto.voice.ports import MicAudio\n"),  # an upward import
        ("sotto.agent.core", "def f():\n    from sotto.voice import harness\n"),  # hidden in a function
        ("sotto.memory.store", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from sotto.agent import Agent\n"),
        ("sotto.models.resolve", "import sotto.engines.llm\n"),
        ("sotto.agent.core", "from sotto.link.events import MicAudio\n"),  # a sibling in the same layer
        ("sotto.memory.state", "from ..voice import trace\n"),  # relative
    ],
)
def test_an_upward_import_is_caught(module: str, source: str) -> None:
    assert violations(module, source)


def test_a_downward_import_passes() -> None:
    assert violations("sotto.voice.harness", "from sotto.link.events import MicAudio\nfrom sotto.agent import Agent\n") == []
