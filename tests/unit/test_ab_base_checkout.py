"""A server spec moved to the base checkout (``--netbench-ab-base-dir``): its working
directory and the paths into this checkout point into the base's copy where it has one;
every other setting is kept. No server is started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_netbench import ServerSpec
from pytest_netbench._plugin.servers import in_base_checkout


@pytest.fixture
def checkouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    head, base = tmp_path / "head", tmp_path / "head" / "base"
    for root in (head, base):
        (root / "app").mkdir(parents=True)
        (root / "app" / "server.py").write_text("")
        (root / "src").mkdir()
    (head / ".venv" / "bin").mkdir(parents=True)  # only this checkout has a virtualenv
    monkeypatch.chdir(head)
    return head, base


def test_a_dict_spec_keeps_its_settings_and_runs_the_base_copy(
    checkouts: tuple[Path, Path],
) -> None:
    head, base = checkouts
    python = str(head / ".venv" / "bin" / "python")
    ref = {
        "name": "w1",
        "command": [python, str(head / "app" / "server.py"), "--port", "{port}"],
        "cwd": "app",
        "env": {"PYTHONPATH": f"{head / 'src'}{os.pathsep}/opt/lib", "MODE": "fast"},
        "cpus": "1",
    }
    moved, kwargs = in_base_checkout(ref, {"startup_timeout": 9}, str(head), str(base))
    assert isinstance(moved, dict)
    assert moved["command"] == [python, str(base / "app" / "server.py"), "--port", "{port}"]
    assert moved["env"] == {"PYTHONPATH": f"{base / 'src'}{os.pathsep}/opt/lib", "MODE": "fast"}
    assert (moved["name"], moved["cpus"]) == ("w1", "1")
    assert kwargs == {"startup_timeout": 9, "cwd": str(base / "app")}


def test_a_server_spec_and_a_command_start_from_the_same_place_in_the_base(
    checkouts: tuple[Path, Path],
) -> None:
    head, base = checkouts
    spec = ServerSpec("w2", "hello", ("python", "app/server.py", "{port}"), env={"A": "1"})
    moved, kwargs = in_base_checkout(spec, {}, str(head), str(base))
    assert moved == spec  # nothing in it points into the checkout but its cwd, pytest's own
    assert kwargs == {"cwd": str(base)}
    moved, kwargs = in_base_checkout("python app/server.py {port}", {}, str(head), str(base))
    assert moved == ["python", "app/server.py", "{port}"] and kwargs == {"cwd": str(base)}


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        ("tornado", "is a catalog server"),
        ({"name": "go"}, "is a catalog server"),
        ({"command": ["x", "{port}"], "cwd": "/"}, "outside the checkout pytest runs in"),
    ],
)
def test_what_has_no_place_in_the_base_checkout_is_refused(
    checkouts: tuple[Path, Path], ref: object, words: str
) -> None:
    head, base = checkouts
    with pytest.raises(TypeError, match=words):
        in_base_checkout(ref, {}, str(head), str(base))
