"""``netbench compare BASE.json HEAD.json``: two session files written by real pytest runs
against a real server, judged in a real subprocess; its output and exit status."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hello_files import HELLO_APP, hello_conftest

DELAYED_TEST = """
import os

def test_hello(netbench, hello):
    srv = hello("--delay-ms", os.environ.get("HELLO_DELAY_MS", "0"))
    netbench.http(srv.url, requests=60, connections=2)
"""


def _netbench(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_netbench.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """base.json (a fast server) and head.json (each request 5 ms slower), 6 trials each:
    two real pytest runs, made once for this module's tests, which only read them."""
    folder = tmp_path_factory.mktemp("sessions")
    shutil.copyfile(HELLO_APP, folder / "hello_app.py")
    (folder / "conftest.py").write_text(hello_conftest())
    (folder / "test_delayed.py").write_text(DELAYED_TEST)
    # As pytester's runs: HOME is the run's folder, so nothing of the user's is read.
    env = {**os.environ, "HOME": str(folder)}
    pytest_run = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--netbench"]
    for name, delay_ms in (("base", "0"), ("head", "5")):
        done = subprocess.run(
            [*pytest_run, "--netbench-trials=6", f"--netbench-json={name}.json", "test_delayed.py"],
            cwd=folder,
            env={**env, "HELLO_DELAY_MS": delay_ms},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    return folder / "base.json", folder / "head.json"


def test_compare_finds_the_slowdown_and_exits_1(sessions: tuple[Path, Path]) -> None:
    base, head = sessions
    done = _netbench(
        "compare",
        str(base),
        str(head),
        "--fail",
        "p50_ms:10%",
        "--json",
        "verdicts.json",
        cwd=base.parent,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Comparison with baseline base.json" in done.stdout
    assert "Gate FAILED: 1 regression(s)" in done.stdout
    lines = [line for line in done.stdout.splitlines() if line.strip().startswith("p50_ms")]
    assert lines and "REGRESSION" in lines[0] and "  6  " in lines[0]  # decided with 6 trials
    verdicts = json.loads((base.parent / "verdicts.json").read_text())
    (p50,) = [i for i in verdicts["items"] if i["metric"] == "p50_ms"]
    assert p50["verdict"] == "regression" and p50["trials"] == 6
    assert p50["change_interval"][0] > 0 and p50["noise_floor"] is not None
    assert verdicts["failed"] is True


def test_compare_of_a_run_with_itself_passes(sessions: tuple[Path, Path]) -> None:
    # The server 5 ms a request: p50 moves far less than 10 % a trial on a quiet machine,
    # which 6 trials a side can show. A busy one moved it 30-47 % a trial (CI, 2 cores
    # beside the example suite), where the gate rightly cannot tell 10 %; the limit is
    # then set above what these very trials' spread lets 6 trials a side show.
    _base, head = sessions
    p50s = [record["result"]["p50_ms"] for record in json.loads(head.read_text())["records"]]
    limit = max(10, math.ceil(150 * (max(p50s) / min(p50s) - 1)))
    done = _netbench("compare", str(head), str(head), "--fail", f"p50_ms:{limit}%", cwd=head.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Gate passed: 0 regression(s), 0 unclear, 0 improved, 1 ok" in done.stdout


def test_compare_with_too_few_trials_is_unclear_and_exits_7(
    tmp_path: Path, sessions: tuple[Path, Path]
) -> None:
    base, head = sessions
    few = tmp_path / "few.json"
    data = json.loads(head.read_text())
    data["records"] = data["records"][:3]  # three trials cannot reach the level
    few.write_text(json.dumps(data))
    done = _netbench("compare", str(base), str(few), "--fail", "p50_ms:10%", cwd=base.parent)
    assert done.returncode == 7, done.stdout + done.stderr
    assert "more trials needed" in done.stdout
    # Taken by a session at --netbench-alpha 0.2, the file is judged at that rate again,
    # where three clear trials a side are enough.
    data["gate"] = {"alpha": 0.2}
    few.write_text(json.dumps(data))
    done = _netbench("compare", str(base), str(few), "--fail", "p50_ms:10%", cwd=base.parent)
    assert done.returncode == 1, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail", "p50_ms=10"], "cannot read threshold"),
        (["--fail", "p51_ms:10%"], "unknown metric"),
        (["--fail", "latency:10%"], "e.g. latency.p99_ms or p99_ms"),
        (["--fail", "p99_ms:10"], "write p99_ms:10% (10 % of the baseline) or p99_ms:10ms"),
        (["--alpha", "0.7"], "--alpha must be between 0 and 0.5"),
    ],
)
def test_bad_input_exits_2_with_what_to_write(
    sessions: tuple[Path, Path], args: list[str], message: str
) -> None:
    base, head = sessions
    done = _netbench("compare", str(base), str(head), *args, cwd=base.parent)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_or_foreign_file_exits_2(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"not": "a session"}')
    for name in ("missing.json", "other.json"):
        done = _netbench("compare", name, name, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "netbench compare: error:" in done.stderr
        assert "Traceback" not in done.stderr
