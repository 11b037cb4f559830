"""The session header's gate lines: what the gate will do, and limits below the noise
floor of the runs stored for this machine, said before any load (no sockets)."""

from __future__ import annotations

import random
from pathlib import Path

from test_compare_noise import _records

from pytest_netbench._compare.storage import Storage
from pytest_netbench._plugin.conclusion import gate_header
from pytest_netbench._plugin.options import Settings


def test_header_states_the_gate_and_flags_a_limit_below_the_noise(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    rng = random.Random(1)
    for name in ("a", "b", "c"):
        storage.save(_records(rng, "t.py::test_a", 0.072, 16), name)
    settings = Settings(
        enabled=True,
        compare_fail="p99_ms:3%,server.cpu_ms_per_request:5%",
        compare_name="",
        sequential=(3, 18),
        storage_dir=str(tmp_path),
    )
    gate, warning = gate_header(settings)
    assert gate == (
        "netbench gate: p99_ms rise > 3%, server.cpu_ms_per_request rise > 5%; sequential, "
        "looks after 3, 6, 9, 12, 15, 18 trials a side (obrien-fleming spending); "
        "false alarms <= 0.01 per test (all gated metrics together)"
    )
    assert warning.startswith("netbench gate: WARNING p99_ms rise > 3%: below the noise floor")
    assert "over 96 stored trials" in warning


def test_no_header_without_a_gate_and_none_for_limits_above_the_noise(tmp_path: Path) -> None:
    assert gate_header(Settings(enabled=True, compare_name="")) == []
    fixed = Settings(
        enabled=True,
        compare_fail="p99_ms:50%",
        compare_name="",
        trials=5,
        storage_dir=str(tmp_path),
    )
    (only,) = gate_header(fixed)
    assert "fixed, 5 trial(s) a side" in only


def test_header_warns_when_the_trials_can_never_show_a_regression(tmp_path: Path) -> None:
    too_few = Settings(
        enabled=True,
        compare_fail="rps:5%,p50_ms:5%,p99_ms:10%,server.cpu_ms_per_request:5%",
        compare_name="",
        trials=5,
        storage_dir=str(tmp_path),
    )
    _gate, warning = gate_header(too_few)
    assert warning.startswith(
        "netbench gate: WARNING 5 trial(s) a side can never show a regression: each of 4"
    )
