"""The documentation names only what exists: docs/api.md's table is the public API
(``__all__``), and every ``from pytest_netbench... import X`` or ``import pytest_netbench...``
in a Python block of docs/*.md or README.md resolves. (Running the blocks is another test's
job; this one only reads their imports.)"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import pytest_netbench

ROOT = Path(__file__).parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
IMPORT_LINE = re.compile(
    r"^\s*(from\s+pytest_netbench\S*\s+import\s.+|import\s+pytest_netbench.*)$"
)


def api_table_names() -> list[str]:
    """The first column of the first table in docs/api.md."""
    lines = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| name |"))
    names = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cell = line.split("|")[1].strip()
        assert cell.startswith("`") and cell.endswith("`"), line
        names.append(cell.strip("`"))
    return names


def test_the_api_table_is_the_public_api() -> None:
    names = api_table_names()
    assert len(names) == len(set(names)), "a name is listed twice in docs/api.md"
    assert sorted(set(pytest_netbench.__all__) - set(names)) == [], "add these to docs/api.md"
    assert sorted(set(names) - set(pytest_netbench.__all__)) == [], "not public: remove them"


def python_blocks() -> Iterator[tuple[str, str]]:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield f"{page.relative_to(ROOT)}:{line}", match.group(1)


def import_statements(code: str) -> Iterator[ast.Import | ast.ImportFrom]:
    """The package's imports in a block: from its syntax tree, or, for a fragment that is
    not a whole program, from each import line on its own."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        sources = [m.group(1) for m in map(IMPORT_LINE.match, code.splitlines()) if m]
        trees = [ast.parse(source.strip()) for source in sources]
    else:
        trees = [tree]
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(name.split(".")[0] == "pytest_netbench" for name in names):
                yield node


def unresolved(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.split(".")[0] == "pytest_netbench"]
        return [name for name in names if not _module_exists(name)]
    module_name = node.module or ""
    if not _module_exists(module_name):
        return [module_name]
    module = importlib.import_module(module_name)
    return [
        f"{module_name}.{a.name}"
        for a in node.names
        if not hasattr(module, a.name) and not _module_exists(f"{module_name}.{a.name}")
    ]


def _module_exists(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        return False
    return True


BLOCKS = list(python_blocks())


def test_the_pages_have_python_blocks_with_imports() -> None:
    assert len(BLOCKS) > 20
    assert sum(1 for _, code in BLOCKS for _ in import_statements(code)) > 20


@pytest.mark.parametrize(("where", "code"), BLOCKS, ids=[where for where, _ in BLOCKS])
def test_a_python_block_imports_only_names_that_exist(where: str, code: str) -> None:
    missing = [name for node in import_statements(code) for name in unresolved(node)]
    assert missing == [], f"{where} imports what does not exist: {missing}"
