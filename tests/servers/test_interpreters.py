"""The interpreter probe: one program, run in process for this Python and by path elsewhere.

Foreign interpreters run the probe with nothing of pytest_netbench importable, so these
tests run it that way too: under Debian's pypy3 when it is installed, and always under
this Python with ``-S`` (no site-packages, hence no editable install of the package).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netbench import InterpreterNotFound
from pytest_netbench._servers import interpreter_probe, interpreters

PROBE = Path(interpreter_probe.__file__)
FOREIGN = [pytest.param([sys.executable, "-S"], id="python-S")]
if shutil.which("pypy3"):
    FOREIGN.append(pytest.param([shutil.which("pypy3")], id="pypy3"))


def python_wrapper(path: Path, before: str = "") -> Path:
    """A script running this interpreter (a symlink would lose its virtualenv)."""
    path.write_text(f'#!/bin/sh\n{before}\nexec {sys.executable} "$@"\n')
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("python", FOREIGN)
def test_probe_runs_without_the_package(python: list[str], tmp_path: Path) -> None:
    cant_import = subprocess.run(
        [*python, "-c", "import pytest_netbench"], capture_output=True, cwd=tmp_path, timeout=30
    )
    assert cant_import.returncode != 0  # the probe below really runs without the package
    # "catalog" and "build" are files beside the probe: run by path they must not count.
    asked = ["json", "catalog", "build", "netbench_no_such_module"]
    done = subprocess.run(
        [*python, str(PROBE), *asked], capture_output=True, cwd=tmp_path, timeout=30
    )
    assert done.returncode == 0, done.stderr.decode()
    answer = json.loads(done.stdout)
    assert answer["modules"] == {"json": "?"}  # stdlib: importable, no distribution
    assert answer["implementation"] in ("cpython", "pypy")
    assert answer["python_version"][0] == "3"


def test_probe_by_path_and_in_process_agree(tmp_path: Path) -> None:
    # This interpreter under another name is probed in a subprocess.
    link = python_wrapper(tmp_path / "python-wrapper")
    modules = {"psutil": "psutil", "pytest": "pytest", "netbench_no_such_module": "x"}
    here = interpreters.interpreter_info(None, modules)
    there = interpreters.interpreter_info(str(link), modules)
    assert there.path == str(link) and here.path == sys.executable
    assert (there.implementation, there.python_version, there.implementation_version) == (
        here.implementation,
        here.python_version,
        here.implementation_version,
    )
    # Each covers at least the modules asked about (a cached probe may cover more).
    asked = {m: there.modules.get(m) for m in modules}
    assert asked == {m: here.modules.get(m) for m in modules}
    assert asked["psutil"] and asked["pytest"] and asked["netbench_no_such_module"] is None
    assert here.version == tuple(sys.version_info[:3])


def test_one_probe_serves_later_questions(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    wrapper = python_wrapper(tmp_path / "counting-python", f"echo run >> {calls}")
    first = interpreters.interpreter_info(str(wrapper), {"psutil": "psutil"})
    assert interpreters.interpreter_info(str(wrapper)) is first  # fewer modules: kept
    assert interpreters.resolve_python(str(wrapper)) == str(wrapper)
    assert calls.read_text().count("run") == 1
    wider = interpreters.interpreter_info(str(wrapper), {"pytest": "pytest"})
    assert calls.read_text().count("run") == 2  # a module not asked before: probed again
    assert set(wider.modules) == {"psutil", "pytest"}


def test_output_that_is_not_the_probe_answer(tmp_path: Path) -> None:
    liar = tmp_path / "not-python"
    liar.write_text("#!/bin/sh\necho hello\n")
    liar.chmod(0o755)
    with pytest.raises(InterpreterNotFound, match="does not look like a Python interpreter"):
        interpreters.interpreter_info(str(liar))


def test_label_names_the_implementation() -> None:
    pypy = interpreters.InterpreterInfo("/usr/bin/pypy3", "pypy", "3.9.16", "7.3.11")
    assert pypy.label == "PyPy 7.3.11 (Python 3.9.16)"
    assert pypy.version == (3, 9, 16)
    here = interpreters.interpreter_info(None)
    assert here.label == f"CPython {here.python_version}" or sys.implementation.name != "cpython"
    assert os.path.isabs(here.path)
