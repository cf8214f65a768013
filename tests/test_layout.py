"""The layering rules of the package, read from the imports of every module under src/governor.

- the runtime library never imports a world: only the top layer (:data:`TOP_LAYER`: the worlds,
  ``governor.cli`` and ``governor.papers``, the papers' cross-world reproductions and the demo)
  imports ``governor.worlds``;
- ``governor.bench`` (the runtime benchmarks) is a layer above the runtime library: it imports
  the runtime only, no world, no ``governor.cli`` and no ``governor.papers``;
- the runtime library imports none of ``governor.bench``, ``governor.papers`` or ``governor.cli``;
  no world imports ``governor.papers`` or ``governor.cli``;
- ``governor.integrations`` (AgentDojo, MCP, the Agents SDK, LangChain) sits on the ``Guard``
  facade like the CLI: the runtime library and the runtime benchmarks never import it, and it
  imports no world, no ``governor.cli``, ``governor.papers`` or ``governor.bench``;
- nothing imports ``governor.cli`` but the CLI itself (no bench -> cli, no papers -> cli);
- a world imports another world only where :data:`WORLD_DEPENDENCIES` declares it;
- no import cycle between modules, counting imports inside functions too;
- the core loop imports no backend (feedback writers receive a model through a protocol).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "governor"
TOP_LAYER = ("governor.worlds", "governor.cli", "governor.papers")
BENCH = "governor.bench"
INTEGRATIONS = "governor.integrations"
WORLD_DEPENDENCIES = {"backseat": {"driving"}}
CORE_LOOP = (
    "governor.core",
    "governor.usage",
    "governor.deadline",
    "governor.observer",
    "governor.arbiter",
    "governor.feedback",
    "governor.runner",
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> Iterator[str]:
    """The governor modules ``name`` imports (a name imported from a package counts as its
    submodule when there is one)."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[: None if is_package else -1]
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [
                f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in MODULES and target != name:
                yield target


GRAPH = {name: sorted(set(imported(name, path))) for name, path in MODULES.items()}


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def world_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "worlds" else None


def test_the_graph_is_read() -> None:
    assert len(MODULES) > 100
    assert "governor.core" in GRAPH["governor.observer"]
    assert "governor.worlds.driving.env" in GRAPH["governor.worlds.backseat.env"]


def test_the_runtime_imports_no_world() -> None:
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if not any(within(name, top) for top in TOP_LAYER)
        for target in targets
        if within(target, "governor.worlds")
    ]
    assert offenders == []


def test_nothing_below_the_top_layer_imports_it() -> None:
    top = ("governor.cli", "governor.papers")
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if not any(within(name, t) for t in top)
        for target in targets
        if any(within(target, t) for t in top)
    ]
    assert offenders == []


def test_worlds_import_each_other_only_where_declared() -> None:
    offenders = []
    for name, targets in GRAPH.items():
        world = world_of(name)
        for target in targets:
            other = world_of(target)
            declared = WORLD_DEPENDENCIES.get(world or "", set())
            if world and other and other != world and other not in declared:
                offenders.append(f"{name} -> {target}")
    assert offenders == []


def test_the_core_loop_imports_no_backend() -> None:
    offenders = [
        f"{name} -> {target}"
        for name in CORE_LOOP
        for target in GRAPH[name]
        if within(target, "governor.backends")
    ]
    assert offenders == []


def in_runtime(name: str) -> bool:
    return not any(within(name, top) for top in (*TOP_LAYER, BENCH, INTEGRATIONS))


def test_the_runtime_imports_no_bench_papers_cli_or_integration() -> None:
    above = (BENCH, "governor.papers", "governor.cli", INTEGRATIONS)
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if in_runtime(name)
        for target in targets
        if any(within(target, a) for a in above)
    ]
    assert offenders == []


def test_the_benchmarks_import_no_world_cli_or_papers() -> None:
    assert any(within(name, BENCH) for name in GRAPH)
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if within(name, BENCH)
        for target in targets
        if any(within(target, t) for t in TOP_LAYER)
    ]
    assert offenders == []


def test_the_integrations_sit_beside_the_cli() -> None:
    assert any(within(name, INTEGRATIONS) for name in GRAPH)
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if within(name, INTEGRATIONS) or within(name, BENCH)
        for target in targets
        if any(within(target, t) for t in (*TOP_LAYER, BENCH, INTEGRATIONS))
        and not within(target, name.split(".")[0] + "." + name.split(".")[1])
    ]
    assert offenders == []


def test_nothing_imports_the_cli_but_the_cli() -> None:
    offenders = [
        f"{name} -> {target}"
        for name, targets in GRAPH.items()
        if not within(name, "governor.cli")
        for target in targets
        if within(target, "governor.cli")
    ]
    assert offenders == []


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert cycles({"a": ["b"], "b": []}) == []


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


@pytest.mark.parametrize(
    "package", sorted(n for n, p in MODULES.items() if p.name == "__init__.py")
)
def test_every_package_says_what_it_is_and_may_import(package: str) -> None:
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text(encoding="utf-8"))) or ""
    assert len(doc) > 80, f"{package}: a docstring saying what it is and what it may import"
    assert "import" in doc.lower(), f"{package}: the docstring says what the package may import"


def test_import_governor_registers_environments_without_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gymnasium, governor; "
        "env = gymnasium.make('governor/Driving-v0'); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_test_files_have_basenames_of_their_own() -> None:
    """pytest imports test modules by basename: two folders with one name break collection."""
    tests = Path(__file__).resolve().parent
    seen: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        seen.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert {n: p for n, p in seen.items() if len(p) > 1} == {}


ALLOWED_REPEATS = {"constraint": "a family's Constraint", "base": "a package's abstract base"}
"""The basenames that may name several runtime modules, each with its one meaning."""


def runtime_basenames() -> dict[str, list[str]]:
    """Each basename of a module or package outside the worlds and the CLI, with its modules."""
    seen: dict[str, list[str]] = {}
    for name in MODULES:
        if within(name, "governor.worlds") or within(name, "governor.cli"):
            continue
        seen.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    return seen


def test_runtime_names_have_one_meaning() -> None:
    """Outside the worlds and the CLI, no two modules or packages share a basename (``__init__``
    aside: a package counts by its own name), except the allowed repeats."""
    repeated = {
        base: names
        for base, names in runtime_basenames().items()
        if len(names) > 1 and base not in ALLOWED_REPEATS
    }
    assert repeated == {}


def test_the_allowed_repeats_are_still_repeated() -> None:
    seen = runtime_basenames()
    assert {
        base: seen.get(base, []) for base in ALLOWED_REPEATS if len(seen.get(base, [])) < 2
    } == {}
