"""Stored runs on disk: numbering, lookup by name/number/latest, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import make_result

from pytest_netbench._compare.records import Record
from pytest_netbench._compare.storage import Storage, StorageError, safe_name

ENV = {"cpu_model": "test cpu", "machine_key": "Linux-CPython-3.11-64bit-abc"}


def _records(ok: int) -> list[Record]:
    result = make_result(ok, p50_ms=1.0, p99_ms=2.0, bytes_read=10, bytes_written=5)
    return [
        Record(
            nodeid="t.py::test_x[a]",
            function="t.py::test_x",
            params={"s": "a"},
            result=result,
            started=1.0,
            ended=2.0,
        )
    ]


def test_save_numbers_runs_per_machine_and_loads_them_back(tmp_path: Path) -> None:
    storage = Storage(tmp_path / ".netbench", machine_key="mk1")
    first = storage.save(_records(10), "main", ENV)
    second = storage.save(_records(20), "feature/x y", ENV)
    third = storage.save(_records(30), "main", ENV)
    assert first.path == tmp_path / ".netbench" / "mk1" / "0001_main.json"
    assert second.label == "0002_feature_x_y"
    assert third.number == 3
    assert [r.number for r in storage.runs()] == [1, 2, 3]

    assert storage.load().records[0].result.ok == 30  # latest
    assert storage.load("main").records[0].result.ok == 30  # latest of that name
    assert storage.load("1").records[0].result.ok == 10
    assert storage.load("0002").records[0].result.ok == 20
    assert storage.load("0002_feature_x_y").name == "feature_x_y"
    assert storage.load(str(first.path)).records[0].result.ok == 10  # any file by path
    loaded = storage.load("main")
    assert loaded.environment["cpu_model"] == "test cpu"
    assert loaded.records[0].started == 1.0


def test_unknown_run_lists_what_exists(tmp_path: Path) -> None:
    storage = Storage(tmp_path, machine_key="mk1")
    storage.save(_records(1), "main", ENV)
    with pytest.raises(StorageError, match=r"no stored run 'nope'.*0001_main"):
        storage.find("nope")


def test_empty_storage_explains_and_mentions_other_machines(tmp_path: Path) -> None:
    Storage(tmp_path, machine_key="other-box").save(_records(1), "main", ENV)
    storage = Storage(tmp_path, machine_key="this-box")
    with pytest.raises(StorageError, match=r"no stored runs for this machine.*--netbench-save"):
        storage.load()
    with pytest.raises(StorageError, match=r"other machines exist \(other-box\)"):
        storage.find("main")


def test_numbers_are_never_reused_even_if_a_file_was_claimed(tmp_path: Path) -> None:
    storage = Storage(tmp_path, machine_key="mk")
    storage.save(_records(1), "a", ENV)
    (tmp_path / "mk" / "0002_b.json").write_text("{}")  # a concurrent saver claimed 0002
    run = storage.save(_records(2), "a", ENV)
    assert run.number == 3


def test_names_are_made_file_safe_or_refused() -> None:
    assert safe_name(" release 1.2/rc ") == "release_1.2_rc"
    with pytest.raises(StorageError, match="no usable characters"):
        safe_name("///")


def test_default_machine_key_comes_from_this_machine(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    run = storage.save(_records(1), "main")
    assert run.path.parent.name == storage.machine_key
    assert storage.load().environment["machine_key"] == storage.machine_key
