"""docs/architecture.md draws the package's tree with a line per module: a module added,
moved or removed without its line fails here, so the page stays the map of the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_netbench

ROOT = Path(pytest_netbench.__file__).parent
PAGE = Path(__file__).parents[2] / "docs" / "architecture.md"
TREE_LINE = re.compile(r"^(?P<indent> *)(?P<name>[\w.]+/?)(?: {2,}\S.*)?$")


def tree_on_the_page() -> set[str]:
    """The paths the page's tree block names, relative to the package."""
    text = PAGE.read_text(encoding="utf-8")
    block = text.split("```text\nsrc/pytest_netbench/\n", 1)[1].split("```", 1)[0]
    paths: set[str] = set()
    folders: list[str] = []
    for line in block.splitlines():
        match = TREE_LINE.match(line)
        assert match, f"not a tree line: {line!r}"
        depth = len(match["indent"]) // 2 - 1
        del folders[depth:]
        name = match["name"]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            paths.add("/".join([*folders, name]))
    return paths


def modules_in_the_package() -> set[str]:
    found = set()
    for path in [*ROOT.rglob("*.py"), *ROOT.rglob("*.c")]:  # a C module is one too
        relative = path.relative_to(ROOT)
        if "apps" in relative.parts[:2] or (path.name == "__init__.py" and relative.parent.parts):
            continue  # the catalog's server programs; a package's __init__ is its folder line
        found.add(relative.as_posix())
    return found


def test_the_page_has_a_line_for_every_module_and_no_other() -> None:
    on_page, in_package = tree_on_the_page(), modules_in_the_package()
    assert sorted(in_package - on_page) == [], "add these to docs/architecture.md's tree"
    assert sorted(on_page - in_package) == [], "gone from the package: remove from the tree"


def test_the_top_level_keeps_only_the_public_surface() -> None:
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert top == ["__init__.py", "_errors.py", "_public.py", "_version.py", "cli.py", "plugin.py"]
