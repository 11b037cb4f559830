"""Every Python block of docs/*.md and README.md runs, as a reader would paste it: a page's
blocks in order, in one namespace, in an empty folder.

A block that cannot run here (it needs a server, a cluster, a file of the reader's, or is
a test function's body) is marked on the line before its fence with
``<!-- not-run: why -->``; it is still compiled, and its import statements are run, so it
can name nothing that does not exist, and the names it imports serve the blocks after it.
docs/architecture.md ("Documentation") says the same to writers. Nothing here sends a
load: a block that would is marked, and an unmarked one that tried would fail on its
missing server, not wait for it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

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
        try:
            exec(code, namespace)
        except Exception as exc:
            pytest.fail(
                f"{block.where}: the block fails with {type(exc).__name__}: {exc}\n(fix it, or"
                " mark it '<!-- not-run: why -->' on the line before its fence if it cannot"
                " run without a server or a file of the reader's)"
            )
