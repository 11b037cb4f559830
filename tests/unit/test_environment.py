"""The environment a run was measured on: its facts, the machine key, git information."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

from pytest_netbench._compare.records import write_session_json
from pytest_netbench._host.environment import collect_environment, git_info, machine_key


def test_environment_is_written_with_its_machine_key(tmp_path: Path) -> None:
    env = collect_environment()
    path = write_session_json(tmp_path / "e.json", [], env)
    data = json.loads(path.read_text())["environment"]
    assert data["machine_key"] == env.machine_key == machine_key(env)
    assert data["cores_logical"] >= 1
    assert data["packages"]["pytest_netbench"]
    assert data["python_version"].count(".") == 2


def test_machine_key_is_stable_and_ignores_hostname() -> None:
    env = collect_environment()
    assert machine_key(env) == machine_key(replace(env, hostname="elsewhere"))
    assert machine_key(env) != machine_key(replace(env, cores_logical=env.cores_logical + 1))
    assert machine_key(env) != machine_key(replace(env, cpu_model="another cpu"))
    assert "/" not in machine_key(env)


def test_git_info_inside_and_outside_a_repository(tmp_path: Path) -> None:
    assert git_info(tmp_path) is None
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "-C", str(tmp_path), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), *ident, "commit", "-q", "-m", "m"], check=True)
    info = git_info(tmp_path)
    assert info is not None
    assert len(info.commit) == 40 and not info.dirty
    (tmp_path / "f").write_text("changed")
    dirty = git_info(tmp_path)
    assert dirty is not None and dirty.dirty
