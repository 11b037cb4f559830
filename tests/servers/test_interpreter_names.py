"""Interpreters named once (``NAME=PATH``) and found by ``python="NAME"``, with real ones:
this Python behind a wrapper script, and the PyPy virtualenv scripts/bootstrap.sh makes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_netbench import InterpreterNotFound, SpecError, ToolchainMissing
from pytest_netbench._servers import catalog, interpreter_names, interpreters
from pytest_netbench._servers.interpreter_names import ENV_VAR, parse_entries

REPO = Path(__file__).resolve().parents[2]
BOOTSTRAP_PYPY = REPO / ".venv-pypy" / "bin" / "pypy3"
needs_bootstrap_pypy = pytest.mark.skipif(
    not BOOTSTRAP_PYPY.exists(), reason="no .venv-pypy: run bash scripts/bootstrap.sh"
)


def python_wrapper(path: Path) -> Path:
    """A script running this interpreter under another path, so it is probed by path."""
    path.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


def test_entries_take_relative_paths_from_their_base(tmp_path: Path) -> None:
    named = parse_entries(
        ["py = bin/python", "", "other=/opt/x/bin/python3", "py=venv/bin/python"],
        base_dir=tmp_path,
        source="test",
    )
    assert sorted(named) == ["other", "py"]
    assert named["py"].path == str(tmp_path / "venv" / "bin" / "python")  # the last one wins
    assert named["py"].written == "venv/bin/python"
    assert named["other"].path == "/opt/x/bin/python3"


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ("pypy3", "'pypy3' is not NAME=PATH; write e.g. pypy3=.venv-pypy/bin/pypy3"),
        ("=bin/python", "is not NAME=PATH"),
        ("pypy3=", "is not NAME=PATH"),
        ("bin/pypy=bin/pypy3", "'bin/pypy' cannot name an interpreter"),
    ],
)
def test_malformed_entries_name_their_source(entry: str, match: str) -> None:
    with pytest.raises(SpecError, match=rf"^the ini option: .*{match}"):
        parse_entries([entry], base_dir="/", source="the ini option")


def test_the_environment_names_an_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python_wrapper(tmp_path / "mypython")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, "mine=./mypython, spare=/nonexistent/python")
    info = interpreters.interpreter_info("mine")
    assert info.path == str(tmp_path / "mypython")
    assert info.implementation == sys.implementation.name
    assert interpreters.resolve_python("mine") == str(tmp_path / "mypython")


def test_a_registered_name_wins_and_is_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = python_wrapper(tmp_path / "first")
    second = python_wrapper(tmp_path / "second")
    monkeypatch.setenv(ENV_VAR, f"py={first}")
    outer = parse_entries([f"py={second}"], base_dir="/", source="outer")
    inner = parse_entries(["py=/nonexistent/python"], base_dir="/", source="inner")
    interpreter_names.register(outer)
    try:
        interpreter_names.register(inner)
        with pytest.raises(InterpreterNotFound, match="named by inner"):
            interpreters.resolve_python("py")
        interpreter_names.unregister(inner)
        assert interpreters.resolve_python("py") == str(second)
    finally:
        interpreter_names.unregister(outer)
    assert interpreters.resolve_python("py") == str(first)


def test_a_path_is_never_a_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "python3=/nonexistent/python")
    assert interpreter_names.lookup("/usr/bin/python3") is None
    assert interpreter_names.lookup("python3") is not None


def test_a_missing_interpreter_names_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(ENV_VAR, "gone=venv/bin/python")
    with pytest.raises(InterpreterNotFound) as missing:
        interpreters.resolve_python("gone")
    text = str(missing.value)
    assert f"python='gone' is named by the environment variable {ENV_VAR}" in text
    assert f"{tmp_path}/venv/bin/python does not exist" in text
    assert "fix the entry" in text
    # The catalog turns it into the reason a server cannot run (the plugin's skip).
    with pytest.raises(ToolchainMissing, match="named by the environment variable"):
        catalog.get("asyncio_streams", python="gone")


def test_a_file_that_cannot_run_names_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "python").write_text("not a program")
    monkeypatch.setenv(ENV_VAR, f"flat={tmp_path / 'python'},dir={tmp_path}")
    for name in ("flat", "dir"):
        with pytest.raises(InterpreterNotFound, match="is not an executable file"):
            interpreters.resolve_python(name)


def test_a_malformed_environment_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "pypy3")
    with pytest.raises(InterpreterNotFound, match=f"{ENV_VAR}: 'pypy3' is not NAME=PATH"):
        interpreters.resolve_python("pypy3")


def test_an_unknown_name_says_how_to_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(InterpreterNotFound, match="or name it once: ini netbench_python"):
        interpreters.resolve_python("netbench-no-such-python")


@needs_bootstrap_pypy
def test_this_repository_names_the_bootstrap_pypy() -> None:
    """pyproject.toml's netbench_python, registered by the plugin for this very session."""
    for name in ("pypy3", "pypy"):
        entry = interpreter_names.lookup(name)
        assert entry is not None, name
        assert entry.path == str(BOOTSTRAP_PYPY)
        assert entry.source == f"netbench_python in {REPO / 'pyproject.toml'}"


@needs_bootstrap_pypy
def test_a_named_pypy_runs_the_frameworks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv(ENV_VAR, "venv-pypy=.venv-pypy/bin/pypy3")
    spec = catalog.get("tornado", python="venv-pypy")  # Debian's pypy3 has no tornado
    assert spec.python == "venv-pypy"
    info = interpreters.interpreter_info("venv-pypy")
    assert info.implementation == "pypy"
    assert info.path == str(BOOTSTRAP_PYPY)  # the venv's path, not the symlink's target
    assert f"Python ones on venv-pypy = {BOOTSTRAP_PYPY}" in catalog.listing()
