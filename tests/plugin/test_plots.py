"""End-to-end: ``--netbench-plot DIR`` draws a picture of every kind from real runs on
loopback (loads in a matrix with trials, a sweep, a capacity search and a cold start of
the paced and warming servers), each file named after its test, parameters, trial and
kind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

EVERY_KIND = """
import pytest

@pytest.mark.parametrize("served", [800, 1600])
def test_load(netbench, paced, served):
    netbench.http(paced(served), rate=300, duration=0.25, connections=4, allow_invalid=True)

def test_sweep(netbench, paced):
    netbench.sweep(paced(1000), rates="200,400", duration=0.2, connections=4,
                   allow_invalid=True)

def test_capacity(netbench, paced):
    netbench.capacity(paced(400), slo="p99_ms < 50", start_rate=150, precision=0.25,
                      duration=0.25, allow_invalid=True)

def test_cold(netbench, warming):
    netbench.cold_start(warming(200, 1000, 0.3), duration=0.6, resolution=0.1,
                        connections=4, allow_invalid=True)
"""


def _pictures(directory: Path) -> list[str]:
    names = sorted(p.name for p in directory.iterdir())
    assert all((directory / n).read_bytes()[:8] == PNG_MAGIC for n in names)
    return names


def test_every_kind_of_picture_is_drawn_and_named(
    pytester: pytest.Pytester, paced_app: object
) -> None:
    pytester.makepyfile(test_pics=EVERY_KIND)
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-trials=2", "--netbench-plot=plots"
    )
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*14 plot(s) drawn in plots*"])
    loads = [
        f"test_pics.test_load-served={served}-trial{trial}-{kind}.png"
        for served in (800, 1600)
        for trial in (1, 2)
        for kind in ("latency", "timeline")
    ]
    assert _pictures(pytester.path / "plots") == sorted(
        [
            *loads,
            "test_pics.test_load-latency.png",  # both parametrisations on one spectrum
            "test_pics.test_load-matrix-p99_ms.png",
            "test_pics.test_load-matrix-rps.png",
            "test_pics.test_sweep-sweep.png",
            "test_pics.test_cold-cold_start.png",
            "test_pics.test_capacity-capacity.png",
        ]
    )


def test_a_single_load_without_trials_is_named_without_one(
    pytester: pytest.Pytester, hello_app: object
) -> None:
    pytester.makepyfile(
        test_one="""
        def test_get(netbench, hello):
            netbench.http(hello().url, requests=200, connections=2, label="warm")
        """
    )
    result = pytester.runpytest_subprocess(
        "--netbench", "--netbench-plot=plots", "--netbench-metrics=rps,p50_ms,server.cpu_s"
    )
    result.assert_outcomes(passed=1)
    assert _pictures(pytester.path / "plots") == [
        "test_one.test_get-load=warm-latency.png",
        "test_one.test_get-load=warm-timeline.png",
        "test_one.test_get-matrix-p50_ms.png",
        "test_one.test_get-matrix-rps.png",
        "test_one.test_get-matrix-server.cpu_s.png",
    ]


def test_a_missing_matplotlib_stops_the_session_before_any_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A None entry in sys.modules is how Python marks a module that cannot be imported.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(pytest.UsageError, match=r"pip install 'pytest-netbench\[plot\]'"):
        pytester.parseconfigure("--netbench", "--netbench-plot=plots")
