"""The package's modules import each other in one direction only.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy
import hides a cycle from the interpreter, not from the reader, and the layers in
docs/architecture.md only hold if no module leans on one above it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest_netbench

PACKAGE = "pytest_netbench"
ROOT = Path(pytest_netbench.__file__).parent


def module_files() -> Iterator[tuple[str, Path]]:
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] == "_servers" and "apps" in relative.parts:
            continue  # the catalog's server programs run as scripts, not package modules
        parts = [PACKAGE, *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the tests here (none changes one)."""
    return ast.parse(path.read_text(), str(path))


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``name`` imports (a ``from pkg import mod`` names the module)."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                if not is_package:
                    anchor.pop()
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in out if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    """Each package module's imports of package modules (a copy the caller may change)."""
    return {name: set(imports) for name, imports in _graph().items()}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    files = dict(module_files())
    known = set(files)
    return {name: frozenset(imported_modules(name, path, known)) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def without_package_root(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The package's ``__init__`` only re-exports (lazily): every module is below it."""
    return {m: deps - {PACKAGE} for m, deps in graph.items() if m != PACKAGE}


def test_the_walker_sees_the_package() -> None:
    graph = import_graph()
    assert f"{PACKAGE}._model" in graph
    assert f"{PACKAGE}._model" in graph[f"{PACKAGE}._load.api"]


def test_the_walker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_package_imports_the_package_root() -> None:
    graph = import_graph()
    offenders = sorted(m for m, deps in graph.items() if m != PACKAGE and PACKAGE in deps)
    assert offenders == [], f"import the defining module instead of {PACKAGE}: {offenders}"


def test_no_import_cycles() -> None:
    found = cycles(without_package_root(import_graph()))
    assert found == [], "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


# What each layer may import besides itself (docs/architecture.md): data flows down,
# results up. A whitelist, so a new package or top-level module fails until it has a rule.
BASE = frozenset({"_public", "_errors", "_version"})
BELOW_FRONT_ENDS = frozenset(
    {
        *BASE,
        *("_model", "_stats", "_proto", "_host", "_input", "_engine", "_servers"),
        *("_load", "_flow", "_compare", "_experiment", "_report"),
    }
)
MAY_IMPORT: dict[str, frozenset[str]] = {
    "_public": frozenset(),
    "_version": frozenset(),
    "_errors": frozenset({"_public"}),
    "_model": BASE,
    "_stats": BASE | {"_model"},
    "_proto": BASE | {"_model"},
    "_host": BASE | {"_model"},
    "_input": BASE | {"_model", "_proto", "_host"},
    "_engine": BASE | {"_model", "_proto", "_stats", "_host"},
    "_servers": BASE | {"_model", "_host"},
    "_load": BASE | {"_model", "_input", "_engine", "_stats", "_host"},
    "_flow": BASE | {"_model", "_input", "_load", "_engine", "_proto", "_stats", "_host"},
    "_compare": BASE | {"_model", "_host"},
    "_experiment": BASE | {"_model", "_input", "_load", "_compare", "_host"},
    "_report": BASE | {"_model", "_compare", "_experiment", "_stats", "_host"},
    "_cli": BELOW_FRONT_ENDS,
    "cli": BELOW_FRONT_ENDS | {"_cli"},
    "_plugin": BELOW_FRONT_ENDS,
    "plugin": BELOW_FRONT_ENDS | {"_plugin"},
    "": BELOW_FRONT_ENDS,  # the package root: re-exports, lazily
}
# Single modules a layer may reach below its rule, each for a reason.
EXCEPTIONS = {
    # A stored result decodes its histogram on demand; histogram imports nothing of ours.
    ("_model", f"{PACKAGE}._stats.histogram"),
}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_crossings(graph: dict[str, set[str]]) -> list[str]:
    crossings = []
    for module, deps in graph.items():
        layer = layer_of(module)
        allowed = MAY_IMPORT[layer] | {layer}
        crossings += [
            f"{module} -> {dep}"
            for dep in sorted(deps)
            if layer_of(dep) not in allowed and (layer, dep) not in EXCEPTIONS
        ]
    return crossings


def test_every_module_has_a_layer_rule() -> None:
    unruled = sorted(m for m in import_graph() if layer_of(m) not in MAY_IMPORT)
    assert unruled == [], f"add these layers to MAY_IMPORT: {unruled}"


def test_layers_import_only_downwards() -> None:
    crossings = layer_crossings(import_graph())
    assert crossings == [], "layer crossings:\n" + "\n".join(crossings)


def test_a_module_importing_a_layer_above_it_is_caught() -> None:
    # Deliberate bad imports, one per kind of crossing the rules exist for.
    graph = import_graph()
    graph[f"{PACKAGE}._input.feeders"] |= {f"{PACKAGE}._engine.rules.accounting"}
    graph[f"{PACKAGE}._host.cpus"] |= {f"{PACKAGE}._input.spec"}
    graph[f"{PACKAGE}._engine.rules.accounting"] |= {f"{PACKAGE}._load.api"}
    graph[f"{PACKAGE}._compare.metrics"] |= {f"{PACKAGE}._report.writers"}
    assert sorted(layer_crossings(graph)) == [
        f"{PACKAGE}._compare.metrics -> {PACKAGE}._report.writers",
        f"{PACKAGE}._engine.rules.accounting -> {PACKAGE}._load.api",
        f"{PACKAGE}._host.cpus -> {PACKAGE}._input.spec",
        f"{PACKAGE}._input.feeders -> {PACKAGE}._engine.rules.accounting",
    ]


# Inside the engine: the loop-free rules are written once and import neither loop's I/O;
# each loop's I/O follows the rules and never the other loop; shares pick a loop.
ENGINE = f"{PACKAGE}._engine"
ENGINE_MAY_IMPORT = {
    "rules": frozenset(),
    "asyncio_io": frozenset({"rules"}),
    "trio_io": frozenset({"rules"}),
    "shares": frozenset({"rules", "asyncio_io", "trio_io"}),
}
LOOP_LIBRARIES = ("asyncio", "uvloop", "trio")


def engine_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if module.startswith(f"{ENGINE}.") and len(parts) > 2 else None


def engine_crossings(graph: dict[str, set[str]]) -> list[str]:
    crossings = []
    for module, deps in graph.items():
        part = engine_part(module)
        if part is None:
            continue
        allowed = ENGINE_MAY_IMPORT[part] | {part}
        crossings += [
            f"{module} -> {dep}"
            for dep in sorted(deps)
            if (dep_part := engine_part(dep)) is not None and dep_part not in allowed
        ]
    return crossings


def test_every_engine_module_is_in_a_part_with_a_rule() -> None:
    graph = import_graph()
    loose = sorted(m for m in graph if m.startswith(f"{ENGINE}.") and m.count(".") == 2)
    loose = [m for m in loose if engine_part(m) not in ENGINE_MAY_IMPORT]
    assert loose == [], f"put these under one of {sorted(ENGINE_MAY_IMPORT)}: {loose}"


def test_the_engine_rules_import_neither_loop() -> None:
    assert engine_crossings(import_graph()) == []
    importers = []
    for name, path in module_files():
        if engine_part(name) != "rules":
            continue
        for node in ast.walk(parsed(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            if any(n.split(".")[0] in LOOP_LIBRARIES for n in names):
                importers.append(name)
    assert importers == [], f"loop-free rules importing a loop: {importers}"


def test_an_engine_part_importing_another_loop_is_caught() -> None:
    graph = import_graph()
    graph[f"{ENGINE}.rules.accounting"] |= {f"{ENGINE}.asyncio_io.connection"}
    graph[f"{ENGINE}.trio_io.engine"] |= {f"{ENGINE}.asyncio_io.precise_timer"}
    assert sorted(engine_crossings(graph)) == [
        f"{ENGINE}.rules.accounting -> {ENGINE}.asyncio_io.connection",
        f"{ENGINE}.trio_io.engine -> {ENGINE}.asyncio_io.precise_timer",
    ]


def test_only_the_plugin_imports_pytest() -> None:
    importers = []
    for name, path in module_files():
        if layer_of(name) in ("plugin", "_plugin"):
            continue
        tree = parsed(path)
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "pytest" or n.startswith(("pytest.", "_pytest")) for n in names):
                importers.append(name)
    assert importers == []


def test_only_the_dask_transport_imports_dask() -> None:
    # Dask is an optional extra: one module holds everything that touches it, so a machine
    # without it loses the cluster and nothing else.
    importers = set()
    for name, path in module_files():
        for node in ast.walk(parsed(path)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            if any(n.split(".")[0] in ("distributed", "dask") for n in names):
                importers.add(name)
    assert importers == {f"{PACKAGE}._engine.shares.dask_transport"}
