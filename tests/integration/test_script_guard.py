"""A script that runs a load of several workers at its top level, without
``if __name__ == "__main__":``: each spawned worker re-runs the script, and the load says
so and what to change, instead of only the workers' exit codes (a real script, run as a
program, against a real server)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)

_LOAD = 'result = http_load("{url}/", requests=40, connections=2, workers=2)\n'


def _run_script(path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path.write_text(text)
    return subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path.parent,
        check=False,
    )


def test_a_load_at_the_top_level_says_to_guard_it(
    fault_server: StartServer, tmp_path: Path
) -> None:
    server = fault_server("http")
    script = tmp_path / "load.py"
    done = _run_script(
        script,
        "from pytest_netbench import http_load\n"
        + _LOAD.format(url=server.url)
        + "print('ok', result.ok)\n",
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "pytest_netbench._engine.shares.workers.WorkerFailed: the load's 2 worker"
    )
    assert f"each one re-runs {script} first" in last
    assert 'Put the code that runs the load under `if __name__ == "__main__":`' in last
    # The workers exited before a load of their own, quietly: no multiprocessing traceback.
    assert "bootstrapping phase" not in done.stderr
    assert "exited with code" not in done.stderr
    assert "ok" not in done.stdout


def test_the_same_load_under_the_guard_runs(fault_server: StartServer, tmp_path: Path) -> None:
    server = fault_server("http")
    done = _run_script(
        tmp_path / "load.py",
        "from pytest_netbench import http_load\n"
        'if __name__ == "__main__":\n    '
        + _LOAD.format(url=server.url)
        + "    print('ok', result.ok, result.errors_total)\n",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "40", "0"]


def test_a_script_fed_on_standard_input_is_told_to_be_saved(
    fault_server: StartServer, tmp_path: Path
) -> None:
    # `python - <<EOF`: a spawned worker re-runs the main script from its path, here
    # "<stdin>", which no worker can read. The load says so before spawning any, guarded
    # or not, instead of each worker dying of FileNotFoundError.
    server = fault_server("http")
    script = (
        "from pytest_netbench import http_load\n"
        'if __name__ == "__main__":\n    '
        + _LOAD.format(url=server.url)
        + "    print('ok', result.ok)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"],
        input=script,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "pytest_netbench._engine.shares.workers.WorkerFailed: the load's 2 worker processes"
        " cannot start"
    ), done.stderr
    assert "read from standard input (`python -`)" in last
    assert "Save the script to a file and run that" in last
    assert "or run the load with workers=1" in last
    assert "FileNotFoundError" not in done.stderr
    assert "exited with code" not in done.stderr
    assert "ok" not in done.stdout


def test_a_load_run_with_python_c_needs_no_script_file(fault_server: StartServer) -> None:
    # `python -c` leaves the main module no path: the workers have nothing to re-run.
    server = fault_server("http")
    code = "from pytest_netbench import http_load\n" + _LOAD.format(url=server.url)
    done = subprocess.run(
        [sys.executable, "-c", code + "print('ok', result.ok, result.errors_total)\n"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", "40", "0"]
