"""One gate recipe in the docs (issue 20, item 2): every command the pages give for saving
a baseline stores as many trials as the sequential budget, and every gated comparison they
give uses the sequential design and the thresholds of the recommended setup, the one the
gate benchmark (benchmarks/gate_false_alarm.py) measured."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pytest_netbench._plugin.options import DEFAULT_SEQUENTIAL

DOCS = Path(__file__).parents[2] / "docs"
PAGES = ("ci.md", "gating.md", "plugin.md", "quickstart.md")
_BLOCK = re.compile(r"^```(?:console|yaml)\n(.*?)^```", re.MULTILINE | re.DOTALL)
BUDGET = int(DEFAULT_SEQUENTIAL.split(":")[1])


def _commands(page: str) -> list[list[str]]:
    """The pytest commands of a page's console and YAML blocks, continuation lines (a
    trailing backslash, a folded ``run: >``) joined."""
    commands = []
    for block in _BLOCK.findall((DOCS / page).read_text("utf-8")):
        for line in _joined(block.replace("\\\n", " ").splitlines()):
            found = line.find("pytest ")
            if found >= 0 and "--netbench" in line:
                commands.append(shlex.split(line[found:], comments=True))
    return commands


def _joined(lines: list[str]) -> list[str]:
    out: list[str] = []
    folding = -1  # the indentation of a `run: >` line whose text follows
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if folding >= 0 and line.strip() and indent > folding:
            out[-1] += " " + line.strip()
            continue
        folding = indent if line.rstrip().endswith(": >") else -1
        out.append("" if folding >= 0 else line)
    return out


def _value(command: list[str], flag: str) -> str | None:
    for index, word in enumerate(command):
        if word == flag:
            following = command[index + 1] if index + 1 < len(command) else ""
            return "" if following.startswith("-") else following
        if word.startswith(flag + "="):
            return word.split("=", 1)[1]
    return None


def _recommended() -> str:
    """The thresholds of gating.md's recommended setup (its first console block)."""
    (first, *_rest) = _commands("gating.md")
    spec = _value(first, "--netbench-compare-fail")
    assert spec
    return spec


@pytest.mark.parametrize("page", PAGES)
def test_saved_baselines_store_the_sequential_budget(page: str) -> None:
    saves = [c for c in _commands(page) if _value(c, "--netbench-save") is not None]
    assert saves, f"{page}: no command that saves a baseline"
    for command in saves:
        assert _value(command, "--netbench-trials") == str(BUDGET), (page, command)


@pytest.mark.parametrize("page", PAGES)
def test_gated_comparisons_follow_the_recommended_setup(page: str) -> None:
    recommended = _recommended()
    gated = [
        c
        for c in _commands(page)
        if _value(c, "--netbench-compare-fail") is not None
        and "capacity" not in (_value(c, "--netbench-compare-fail") or "")
    ]
    assert gated, f"{page}: no gated command"
    for command in gated:
        assert _value(command, "--netbench-sequential") in ("", DEFAULT_SEQUENTIAL), command
        assert _value(command, "--netbench-trials") is None, command
        assert _value(command, "--netbench-compare-fail") == recommended, (page, command)
