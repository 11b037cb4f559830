"""Naming interpreters for ``python=``: ini ``netbench_python`` and ``--netbench-python``,
end to end in pytester runs that start real servers under real interpreters."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BOOTSTRAP_PYPY = Path(__file__).resolve().parents[2] / ".venv-pypy" / "bin" / "pypy3"

# Starts a catalog server under python="mine" and reports which interpreter served it.
USES_MINE = """
def test_named(netbench, netbench_server):
    srv = netbench_server("asyncio_streams", python="mine")
    r = netbench.http(srv.url, requests=20, connections=2)
    assert r.ok == 20
    print("SERVED-BY", srv.interpreter.path, srv.interpreter.implementation)
"""


def python_wrapper(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


def test_ini_names_an_interpreter_relative_to_the_ini_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapper = python_wrapper(pytester.path / "envs" / "mine" / "python")
    pytester.makeini("[pytest]\nnetbench_python =\n    mine = envs/mine/python\n")
    pytester.makepyfile(USES_MINE)
    monkeypatch.chdir(pytester.mkdir("sub"))  # run from elsewhere: the path stays the ini's
    result = pytester.runpytest_subprocess("--netbench", "-s", str(pytester.path))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*SERVED-BY {wrapper} {sys.implementation.name}*"])


def test_the_flag_wins_over_the_ini(pytester: pytest.Pytester) -> None:
    python_wrapper(pytester.path / "a" / "python")
    flagged = python_wrapper(pytester.path / "b" / "python")
    pytester.makeini("[pytest]\nnetbench_python = mine=a/python\n")
    pytester.makepyfile(USES_MINE)
    result = pytester.runpytest_subprocess("--netbench", "-s", "--netbench-python", "mine=b/python")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*SERVED-BY {flagged} *"])


@pytest.mark.skipif(not BOOTSTRAP_PYPY.exists(), reason="no .venv-pypy: run scripts/bootstrap.sh")
def test_a_named_pypy_serves_a_framework(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\nnetbench_python = pypy3={BOOTSTRAP_PYPY}\n")
    pytester.makepyfile(
        """
        def test_tornado_on_pypy(netbench, netbench_server):
            srv = netbench_server("tornado", python="pypy3")
            assert srv.interpreter.implementation == "pypy"
            r = netbench.http(srv.url, requests=20, connections=2)
            assert r.ok == 20
        """
    )
    result = pytester.runpytest_subprocess("--netbench", "-rs")
    result.assert_outcomes(passed=1)


def test_a_missing_flag_path_stops_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_MINE)
    result = pytester.runpytest_subprocess("--netbench", "--netbench-python", "mine=./nope")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*python='mine' is named by --netbench-python as './nope', but */nope does not exist*"]
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("pypy3", "*netbench_python in *tox.ini: 'pypy3' is not NAME=PATH; write e.g.*"),
        ("a/b=python", "*netbench_python in *tox.ini: 'a/b' cannot name an interpreter*"),
    ],
)
def test_a_malformed_ini_entry_stops_the_session(
    pytester: pytest.Pytester, line: str, message: str
) -> None:
    pytester.makefile(".ini", tox=f"[pytest]\nnetbench_python = {line}\n")
    pytester.makepyfile(USES_MINE)
    result = pytester.runpytest_subprocess("--netbench")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_ini_entry_for_an_absent_interpreter_skips_with_the_entry(
    pytester: pytest.Pytester,
) -> None:
    """A shared config may name an interpreter only some machines have: its tests skip."""
    pytester.makeini("[pytest]\nnetbench_python = mine=.venv-other/bin/python\n")
    pytester.makepyfile(USES_MINE)
    result = pytester.runpytest_subprocess("--netbench", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*SKIPPED*python='mine' is named by netbench_python in *tox.ini as"
            " '.venv-other/bin/python', but */.venv-other/bin/python does not exist*"
        ]
    )
