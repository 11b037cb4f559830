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
