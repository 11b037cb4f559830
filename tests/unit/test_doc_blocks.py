"""Every Python block of docs/*.md and README.md runs, as a reader would paste it: a page's
blocks in order, in one namespace, in an empty folder.

A block that cannot run here (it needs a server, a cluster, a file of the reader's, or is
a test function's body) is marked on the line before its fence with
``<!-- not-run: why -->``; it is still compiled, and its import statements are run, so it
can name nothing that does not exist, and the names it imports serve the blocks after it.
docs/architecture.md ("Documentation") says the same to writers. Nothing here sends a
load: a block that would is marked, and an unmarked one that calls a load function (or
starts a server) at its top level is refused before it runs, so the test never loads
whatever happens to listen on the port a page names.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import pytest_netbench

ROOT = Path(__file__).parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"^<!--\s*not-run:(?P<why>.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the block's first line of code
    code: str
    not_run: str | None  # the reason given, or None: the block runs

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marked = NOT_RUN.match(before.strip())
        line = text.count("\n", 0, match.start()) + 2
        out.append(Block(page, line, match.group(1), marked["why"].strip() if marked else None))
    return out


BLOCKS = {page: blocks_of(page) for page in PAGES}
PAGES_WITH_BLOCKS = [page for page, blocks in BLOCKS.items() if blocks]


def compiled(block: Block, tree: ast.Module | None = None) -> object:
    """The block's code object, its line numbers the page's (tracebacks point at the doc)."""
    if tree is None:
        tree = ast.parse(block.code, str(block.page))
    ast.increment_lineno(tree, block.line - 1)
    return compile(tree, str(block.page), "exec")


# What sends traffic or starts a server when called: a block that calls one at its top level
# must be marked (the test would otherwise load whatever listens on the port it names).
SENDS = frozenset(
    {name for name in pytest_netbench.__all__ if name.endswith(("_load", "_load_async"))}
    | {"run_spec", "sweep", "capacity", "cold_start", "crosscheck", "flow", "Server", "from_spec"}
)


def sending_calls(block: Block) -> list[str]:
    """The calls at a block's top level (not inside a def) that would send or serve."""
    found = []
    pending: list[ast.AST] = list(ast.parse(block.code).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in SENDS:
                found.append(name)
        pending.extend(ast.iter_child_nodes(node))
    return found


def run_imports(block: Block, namespace: dict[str, object]) -> None:
    """A block's top-level imports, one at a time: those of this package must work; a
    module the reader installs for that block (dask_kubernetes) may be missing here."""
    for node in ast.parse(block.code).body:
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        code = compiled(block, ast.Module(body=[node], type_ignores=[]))
        try:
            exec(code, namespace)
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] == "pytest_netbench":
                pytest.fail(f"{block.where}: imports what does not exist: {exc}")
        except ImportError as exc:
            pytest.fail(f"{block.where}: imports what does not exist: {exc}")


def test_the_pages_have_blocks_both_run_and_not() -> None:
    every = [block for blocks in BLOCKS.values() for block in blocks]
    assert len(every) > 30
    assert sum(block.not_run is None for block in every) >= 5
    assert sum(block.not_run is not None for block in every) >= 5


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_python_blocks_of_a_page_run(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hang_guard: None
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for block in BLOCKS[page]:
        try:
            code = compiled(block)  # a syntax error fails a marked block too
        except SyntaxError as exc:
            pytest.fail(f"{block.where}: not Python: {exc}")
        if block.not_run is not None:
            assert block.not_run, f"{block.where}: say why it does not run: <!-- not-run: why -->"
            run_imports(block, namespace)
            continue
        sends = sending_calls(block)
        if sends:
            pytest.fail(
                f"{block.where}: calls {', '.join(sorted(set(sends)))}, which would send a load"
                " here: mark it '<!-- not-run: why -->' on the line before its fence"
            )
        try:
            exec(code, namespace)
        except Exception as exc:
            pytest.fail(
                f"{block.where}: the block fails with {type(exc).__name__}: {exc}\n(fix it, or"
                " mark it '<!-- not-run: why -->' on the line before its fence if it cannot"
                " run without a server or a file of the reader's)"
            )


def test_a_block_that_would_send_is_found_before_it_runs() -> None:
    def calls(code: str) -> list[str]:
        return sorted(sending_calls(Block(ROOT / "README.md", 1, code, None)))

    assert calls('r = http_load("http://127.0.0.1:8080/", duration=5)') == ["http_load"]
    assert calls("with Server.from_spec(spec) as s:\n    pass\n") == ["from_spec"]
    assert calls("x = [pytest_netbench.sweep(url, rates='1,2')]") == ["sweep"]
    # A test function's body runs only under pytest: defining it sends nothing.
    assert calls("def test_a(netbench):\n    netbench.http(url)\n    http_load(url)\n") == []
    assert calls("spec = http_spec(url)\npreview(spec)") == []


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_public_name_is_imported_from_the_package(page: Path) -> None:
    """``from pytest_netbench import Server``, never ``from pytest_netbench._servers.launcher
    import Server``: a reader copies the import, and private paths may change."""
    for block in BLOCKS[page]:
        for node in ast.walk(ast.parse(block.code)):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                "pytest_netbench._"
            ):
                continue
            public = [a.name for a in node.names if a.name in pytest_netbench.__all__]
            assert public == [], (
                f"{block.where}: import {', '.join(public)} from pytest_netbench, not from"
                f" {node.module}"
            )
