"""End-to-end under pytest-xdist: load windows never overlap, and results reach the controller."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("xdist")


def test_load_windows_do_not_overlap_under_n2(pytester: pytest.Pytester, hello_app: object) -> None:
    pytester.makepyfile(
        """
        import os
        import pytest

        @pytest.mark.parametrize("i", range(6))
        def test_load(netbench, hello, i):
            srv = hello()  # server start-up runs in parallel, outside the window
            worker = os.environ.get("PYTEST_XDIST_WORKER", "none")
            with open(f"worker-{i}.txt", "w") as f:
                f.write(worker)
            # This test is about the windows, not the figures: a busy machine may make
            # the engine call a load untrustworthy, which must not fail it.
            r = netbench.http(srv.url, duration=0.3, connections=2, allow_invalid=True)
            assert r.ok > 0
        """
    )
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess("--netbench", "-n", "2", f"--netbench-json={out}")
    result.assert_outcomes(passed=6)
    workers = {(pytester.path / f"worker-{i}.txt").read_text() for i in range(6)}
    assert workers == {"gw0", "gw1"}, "both workers must have run loads for the test to mean much"

    records = _load_json(out)["records"]
    assert len(records) == 6  # every worker's results reached the controller's JSON
    windows = sorted((r["started"], r["ended"]) for r in records)
    for (_, end), (start, _) in itertools.pairwise(windows):
        assert start >= end, f"windows overlap: {windows}"
    # The matrix in the controller's summary is whole as well.
    result.stdout.fnmatch_lines(["*= netbench =*", "*test_load*"])
    summary = result.stdout.str().split("= netbench =", 1)[1]
    assert all(f"\n{i} " in summary for i in range(6)), summary


def _load_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
