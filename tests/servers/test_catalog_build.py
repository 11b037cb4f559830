"""Building compiled servers: cached by source hash, rebuilt on change, one build at a time.

The recipes here build a tiny C program into a temporary cache, so the tests need gcc
but never touch the user's real cache; one test checks the real catalog's C server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netbench import BuildFailed, ToolchainMissing
from pytest_netbench._servers import build, catalog

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

PROGRAM = '#include <stdio.h>\nint main(void) { puts("%s"); return 0; }\n'


def recipe_for(source_dir: Path, *, tools: tuple[str, ...] = ("gcc",)) -> build.BuildRecipe:
    return build.BuildRecipe(
        name="tiny",
        source_dir=source_dir,
        tools=tools,
        steps=(("gcc", "-O0", "-o", "{out}/tiny", "{src}/tiny.c"),),
        artifact="tiny",
        install_hint="apt-get install gcc",
    )


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    source_dir = tmp_path / "src"
    source_dir.mkdir()
    (source_dir / "tiny.c").write_text(PROGRAM % "first")
    return source_dir


def run(artifact: Path) -> str:
    return subprocess.run([str(artifact)], capture_output=True, check=True).stdout.decode()


def test_first_call_builds_and_second_reuses(sources: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    first = build.ensure_built(recipe_for(sources), root=root)
    assert first.built_now
    assert run(first.artifact) == "first\n"
    assert first.directory.parent == root / "build"
    assert first.directory.name.startswith("tiny-")
    mtime = first.artifact.stat().st_mtime_ns

    second = build.ensure_built(recipe_for(sources), root=root)
    assert not second.built_now
    assert second.artifact == first.artifact
    assert second.artifact.stat().st_mtime_ns == mtime
    # No scratch directories are left next to the build.
    assert sorted(p.name for p in (root / "build").iterdir() if p.is_dir()) == [
        first.directory.name
    ]


def test_source_change_builds_again(sources: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    first = build.ensure_built(recipe_for(sources), root=root)
    (sources / "tiny.c").write_text(PROGRAM % "second")
    assert not build.is_built(recipe_for(sources), root=root)
    changed = build.ensure_built(recipe_for(sources), root=root)
    assert changed.built_now
    assert changed.directory != first.directory
    assert run(changed.artifact) == "second\n"
    assert run(first.artifact) == "first\n"  # the old build is untouched


def test_failing_build_carries_compiler_output(sources: Path, tmp_path: Path) -> None:
    (sources / "tiny.c").write_text("int main(void) { return netbench_undeclared_name; }\n")
    root = tmp_path / "cache"
    with pytest.raises(BuildFailed) as caught:
        build.ensure_built(recipe_for(sources), root=root)
    message = str(caught.value)
    assert "building 'tiny' failed" in message
    assert "exited with code" in message
    assert "netbench_undeclared_name" in message  # gcc's own diagnostic
    assert "tiny.c" in message
    # Nothing half-built is left to be picked up next time.
    assert not build.is_built(recipe_for(sources), root=root)
    assert [p for p in (root / "build").iterdir() if p.is_dir()] == []


def test_missing_toolchain_says_what_to_install(sources: Path, tmp_path: Path) -> None:
    recipe = recipe_for(sources, tools=("netbench-no-such-compiler",))
    with pytest.raises(ToolchainMissing) as caught:
        build.ensure_built(recipe, root=tmp_path / "cache")
    assert "netbench-no-such-compiler" in str(caught.value)
    assert "apt-get install gcc" in str(caught.value)
    assert build.missing_tools(recipe) == ["netbench-no-such-compiler"]


BUILDER = """
import json, sys
from pathlib import Path
from pytest_netbench._servers import build
recipe = build.BuildRecipe(
    name="tiny", source_dir=Path(sys.argv[1]), tools=("gcc",),
    steps=(("gcc", "-O0", "-o", "{out}/tiny", "{src}/tiny.c"),),
    artifact="tiny", install_hint="apt-get install gcc",
)
done = build.ensure_built(recipe, root=Path(sys.argv[2]))
print(json.dumps([done.built_now, str(done.artifact)]))
"""


def test_parallel_processes_build_once(sources: Path, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETBENCH_")}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", BUILDER, str(sources), str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(3)
    ]
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=60)
        assert worker.returncode == 0, err.decode()
        results.append(json.loads(out))
    assert sorted(built for built, _ in results) == [False, False, True]
    assert len({artifact for _, artifact in results}) == 1


def test_catalog_get_does_not_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path / "cache"))
    first = catalog.get("c", app="hello")
    binary = Path(first.command[0])
    assert binary.is_file()
    assert binary.is_relative_to(tmp_path / "cache" / "build")
    mtime = binary.stat().st_mtime_ns
    second = catalog.get("c", app="echo")
    assert Path(second.command[0]) == binary
    assert binary.stat().st_mtime_ns == mtime
    assert second.command[1:] == ("echo", "{host}", "{port}")


def test_missing_compiler_makes_the_server_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path / "cache"))  # nothing built there
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(ToolchainMissing, match=r"'c' server needs gcc.*apt-get install gcc"):
        catalog.get("c")
    with pytest.raises(ToolchainMissing, match=r"'node' is not on PATH"):
        catalog.get("node", app="echo")
    rows = {(name, app): (ok, why) for name, app, ok, why in catalog.availability()}
    assert rows[("c", "hello")][0] is False
    assert "gcc" in rows[("c", "hello")][1]
    assert rows[("asyncio_streams", "hello")][0] is True  # this interpreter needs no PATH


def test_a_finished_build_needs_no_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(build.CACHE_ENV, str(tmp_path / "cache"))
    built = catalog.get("c")
    monkeypatch.setenv("PATH", str(tmp_path))  # gcc gone
    assert catalog.get("c") == built
    rows = {(name, app): (ok, why) for name, app, ok, why in catalog.availability()}
    ok, why = rows[("c", "echo")]
    assert ok
    assert why.endswith("; built"), why
