"""One table of exit statuses: every ``ExitCode`` is in docs/cli.md with its number and its
meaning, the table lists nothing else, ``netbench --help`` ends with it, and no part of the
command returns or exits with a bare number."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import pytest_netbench.cli
from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench.cli import main

ROOT = Path(__file__).parents[2]
CLI_SOURCES = [
    Path(pytest_netbench.cli.__file__),
    *sorted((Path(pytest_netbench.cli.__file__).parent / "_cli").glob("*.py")),
]
ROW = re.compile(r"^\|\s*(?P<number>[^|]*?)\s*\|\s*(?P<name>[^|]*?)\s*\|\s*(?P<meaning>.*?)\s*\|$")


def _docs_table() -> list[tuple[str, str, str]]:
    """The rows of the table under docs/cli.md's "Exit status" heading."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit status\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = ROW.match(line.strip())
        if match and not set(match["number"]) <= set("-: "):
            rows.append((match["number"], match["name"], match["meaning"]))
    return rows[1:]  # the header row


def test_every_exit_code_is_in_the_docs_table_and_nothing_else() -> None:
    documented = [(number, name.strip("`"), meaning) for number, name, meaning in _docs_table()]
    expected = [(str(code.value), code.name, code.meaning) for code in ExitCode]
    assert [row[:2] for row in documented] == [row[:2] for row in expected]
    # The meaning is the help's, word for word (the docs add only code formatting).
    assert [meaning.replace("`", "") for *_, meaning in documented] == [
        meaning for *_, meaning in expected
    ]


def test_every_meaning_is_one_line_and_usage_is_what_argparse_exits_with() -> None:
    assert all(code.meaning and "\n" not in code.meaning for code in ExitCode)
    assert ExitCode.USAGE.value == 2  # what argparse exits with on a usage error
    assert ExitCode.INTERRUPTED.value == 128 + 2  # SIGINT, as shells report it


def test_the_help_ends_with_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    epilog = capsys.readouterr().out.split("\nexit status:\n", 1)[1]
    for code in ExitCode:
        assert re.search(rf"^ +{code.value} +{code.name} +\S", epilog, re.MULTILINE), code


def test_a_usage_error_exits_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["http", "http://127.0.0.1:1/", "-c", "0"])
    assert exited.value.code == ExitCode.USAGE
    assert "connections" in capsys.readouterr().err


# -- no bare numbers ---------------------------------------------------------------------------
def _bare_int(node: ast.expr | None) -> bool:
    """An integer written out, directly or as a branch of ``a if c else b`` / ``a or b``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _bare_int(node.operand)
    if isinstance(node, ast.IfExp):
        return _bare_int(node.body) or _bare_int(node.orelse)
    if isinstance(node, ast.BoolOp):
        return any(_bare_int(value) for value in node.values)
    return False


def _exits(call: ast.Call) -> bool:
    """``sys.exit(...)``, ``parser.exit(...)``, ``exit(...)``, ``SystemExit(...)``."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in ("exit", "_exit")
    return isinstance(func, ast.Name) and func.id in ("exit", "quit", "SystemExit")


def bare_statuses(source: str) -> list[int]:
    """Line numbers of ``return N`` and exits with ``N`` written as a number."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Return) and _bare_int(node.value):
            found.append(node.lineno)
        elif isinstance(node, ast.Call) and _exits(node):
            status = node.args[0] if node.args else None
            status = next((k.value for k in node.keywords if k.arg == "status"), status)
            if _bare_int(status):
                found.append(node.lineno)
    return found


def test_the_checker_finds_bare_numbers() -> None:
    source = (
        "def f(x):\n"
        "    if x: return 0\n"
        "    if x: return EXIT if x else 6\n"
        "    if x: sys.exit(3)\n"
        "    if x: parser.exit(2, 'bad')\n"
        "    if x: raise SystemExit(-1)\n"
        "    if x: parser.exit(status=2)\n"
        "    if x: return ExitCode.OK\n"
        "    return None\n"
    )
    assert bare_statuses(source) == [2, 3, 4, 5, 6, 7]


@pytest.mark.parametrize("path", CLI_SOURCES, ids=lambda p: p.name)
def test_the_command_returns_and_exits_with_exit_codes_only(path: Path) -> None:
    lines = bare_statuses(path.read_text(encoding="utf-8"))
    assert lines == [], f"{path.name}: a bare number at line(s) {lines}: use ExitCode"
