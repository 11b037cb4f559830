"""The package as a user gets it: built into an sdist and a wheel, the wheel installed into
a fresh virtualenv outside the checkout (its declared dependencies only, no extras), and
then used from a directory outside the checkout: ``netbench servers``, a load from the
``netbench`` command at a catalog server the installed package starts, and a one-test
``pytest --netbench`` session through the installed plugin.

Nothing here may import the checkout's ``src``: each step checks where ``pytest_netbench``
came from. Only the installed dependencies come from the package index (pip's cache makes
that quick after the first run).
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
BUILD_S = 300  # build and install: a fresh build environment, dependencies from the index
RUN_S = 60  # each command of the installed package
SERVER = "asyncio_streams"  # a catalog server that needs no compiler and no framework
# What `python -m build` needs of the checkout to make the sdist.
PROJECT_FILES = ("pyproject.toml", "README.md")
# The catalog's sources (the package data), relative to the package.
APPS = (
    "_servers/apps/python/_netbench_app.py",
    "_servers/apps/python/asyncio_streams_server.py",
    "_servers/apps/python/wsgiref_server.py",
    "_servers/apps/c/server.c",
    "_servers/apps/go/main.go",
    "_servers/apps/java/NetbenchServer.java",
    "_servers/apps/node/server.js",
    "_servers/apps/rust/main.rs",
    "_servers/apps/nginx/run_nginx.py",
)
# Bytecode a run from the checkout can leave beside the apps; it must not be shipped.
STRAY_BYTECODE = "_servers/apps/python/__pycache__/_netbench_app.cpython-311.pyc"


def _run(
    command: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = RUN_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done.stdout


@dataclass(frozen=True)
class Dists:
    sdist: Path
    wheel: Path


@dataclass(frozen=True)
class Installed:
    venv: Path
    work: Path  # the working directory of every command: outside the checkout

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def script(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    @property
    def env(self) -> dict[str, str]:
        """The caller's environment without what would point Python, pytest or netbench at
        the checkout or at this test session; the venv's scripts first on PATH."""
        dropped = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in dropped and not k.startswith(("PYTEST_", "NETBENCH_"))
        }
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *command: str, timeout: float = RUN_S) -> subprocess.CompletedProcess[str]:
        return _run(list(command), cwd=self.work, env=self.env, timeout=timeout)


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    """``python -m build`` of a copy of the checkout: the sdist, then the wheel built from
    that sdist (a copy, so that no build/ or egg-info lands in the shared checkout)."""
    if importlib.util.find_spec("build") is None:
        message = "build is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    project = tmp_path_factory.mktemp("project")
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, project / name)
    shutil.copytree(
        ROOT / "src",
        project / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    stray = project / "src" / "pytest_netbench" / STRAY_BYTECODE
    stray.parent.mkdir()
    stray.write_bytes(b"not a source")
    out = tmp_path_factory.mktemp("dist")
    _ok(
        _run(
            [sys.executable, "-m", "build", "--outdir", str(out), str(project)],
            cwd=project,
            timeout=BUILD_S,
        )
    )
    (sdist,) = out.glob("pytest_netbench-*.tar.gz")
    (wheel,) = out.glob("pytest_netbench-*.whl")
    return Dists(sdist, wheel)


@pytest.fixture(scope="module")
def installed(dists: Dists, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """The wheel in a fresh virtualenv under the session's temporary directory.

    The venv is made without pip and filled by this interpreter's pip (``--python``), which
    spares the seconds ``ensurepip`` takes; what gets installed is the same.
    """
    base = tmp_path_factory.mktemp("installed")
    assert not base.resolve().is_relative_to(ROOT.resolve())
    venv, work = base / "venv", base / "work"
    work.mkdir()
    # An ini file here makes this directory pytest's rootdir: no conftest.py or ini file
    # of a parent directory takes part in the session below.
    (work / "pytest.ini").write_text("[pytest]\n")
    # The base interpreter, not this test's venv (whose packages must not leak in).
    _ok(_run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base))
    _ok(
        _run(
            [
                sys.executable,
                *("-m", "pip", "--python", str(venv / "bin" / "python")),
                *("install", "--disable-pip-version-check", "--no-input", str(dists.wheel)),
            ],
            cwd=base,
            timeout=BUILD_S,
        )
    )
    yield Installed(venv, work)


def test_the_sdist_and_the_wheel_hold_the_catalog_sources_and_py_typed(dists: Dists) -> None:
    wheel = set(zipfile.ZipFile(dists.wheel).namelist())
    with tarfile.open(dists.sdist) as tar:
        sdist = set(tar.getnames())
    (top,) = {name.split("/")[0] for name in sdist}
    for relative in (*APPS, "py.typed"):
        assert f"pytest_netbench/{relative}" in wheel
        assert f"{top}/src/pytest_netbench/{relative}" in sdist
    assert not [name for name in wheel | sdist if name.endswith(".pyc")]
    # The plugin and the command are declared in the wheel's metadata.
    dist_info = next(n.split("/")[0] for n in wheel if n.endswith(".dist-info/METADATA"))
    with zipfile.ZipFile(dists.wheel) as whl:
        metadata = whl.read(f"{dist_info}/METADATA").decode()
        entry_points = whl.read(f"{dist_info}/entry_points.txt").decode()
    assert "Requires-Dist: pytest>=8" in metadata.splitlines()
    assert "netbench = pytest_netbench.plugin" in entry_points
    assert "netbench = pytest_netbench.cli:command" in entry_points


def test_the_installed_package_is_imported_with_its_dependencies(installed: Installed) -> None:
    out = _ok(
        installed.run(
            installed.python,
            "-c",
            "import pytest, pytest_netbench, pytest_netbench.plugin, sys;"
            "print(pytest_netbench.__file__);"
            "print(sorted(m for m in ('trio', 'matplotlib', 'distributed') if m in sys.modules))",
        )
    )
    module, optional = out.splitlines()
    assert Path(module).is_relative_to(installed.venv), module
    assert optional == "[]"  # the optional extras are not imported, nor needed


def test_netbench_servers_lists_the_catalog(installed: Installed) -> None:
    out = _ok(installed.run(installed.script("netbench"), "servers"))
    rows = {line.split()[0]: line.split()[2] for line in out.splitlines() if line[:2] == "  "}
    assert rows[SERVER] == "yes"
    assert rows["wsgiref"] == "yes"
    assert rows["tornado"] == "NO"  # the frameworks are an extra, and it says so


def test_netbench_http_at_a_catalog_server_of_the_installed_package(
    installed: Installed,
) -> None:
    holder = installed.work / "hold_server.py"
    holder.write_text(
        textwrap.dedent(
            f"""\
            import json, sys
            import pytest_netbench
            from pytest_netbench import Server, catalog

            spec = catalog.get({SERVER!r})
            with Server.from_spec(spec) as server:
                print(json.dumps({{"module": pytest_netbench.__file__,
                                   "command": list(spec.command), "url": server.url}}),
                      flush=True)
                sys.stdin.readline()  # serve until the test closes stdin
            """
        )
    )
    proc = subprocess.Popen(
        [installed.python, str(holder)],
        cwd=installed.work,
        env=installed.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready, _, _ = select.select([proc.stdout], [], [], RUN_S)
        line = proc.stdout.readline() if ready else ""
        if not line:
            proc.kill()
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"the catalog server did not start: {err}")
        started = json.loads(line)
        assert Path(started["module"]).is_relative_to(installed.venv)
        app = Path(started["command"][1])
        assert app.is_relative_to(installed.venv) and app.name == "asyncio_streams_server.py"

        out_json = installed.work / "load.json"
        netbench = installed.script("netbench")
        done = installed.run(
            netbench, "http", started["url"], "-c", "4", "-n", "300", "--json", str(out_json)
        )
        assert "300 sent, 300 ok, 0 errors, 0 in flight" in _ok(done)
        result = json.loads(out_json.read_text())
        assert (result["sent"], result["ok"], result["errors_total"]) == (300, 300, 0)

        # The optional extras are missing here, and asking for them says how to get them.
        done = installed.run(netbench, "http", started["url"], "-n", "10", "--loop", "trio")
        assert done.returncode != 0
        assert "pip install 'pytest-netbench[trio]'" in done.stderr
        pictures = installed.work / "pictures"
        done = installed.run(netbench, "http", started["url"], "-n", "10", "--plot", str(pictures))
        assert done.returncode != 0
        assert "pip install 'pytest-netbench[plot]'" in done.stderr

        proc.stdin.close()
        assert proc.wait(RUN_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_pytest_netbench_runs_a_test_through_the_installed_plugin(installed: Installed) -> None:
    (installed.work / "test_hello_installed.py").write_text(
        textwrap.dedent(
            f"""\
            import sys
            from pathlib import Path

            import pytest
            import pytest_netbench


            @pytest.mark.parametrize("server", [{SERVER!r}], indirect=True)
            def test_hello(netbench, server):
                assert Path(pytest_netbench.__file__).is_relative_to(sys.prefix)
                r = netbench.http(server.url, connections=4, requests=300)
                assert (r.sent, r.ok, r.errors_total, r.in_flight) == (300, 300, 0, 0)
                assert r.status_codes == {{200: 300}}
            """
        )
    )
    pytest_script = installed.script("pytest")
    done = installed.run(
        pytest_script, "--netbench", "-p", "no:cacheprovider", "test_hello_installed.py"
    )
    out = _ok(done)
    lines = out.splitlines()
    assert "1 passed" in lines[-1], out
    assert f"rootdir: {installed.work}" in lines, out
    # The session's matrix, from the installed plugin, has the server's row.
    assert any(line.startswith(f"{SERVER} ") for line in lines), out
    # Without the flag the plugin skips it: a normal test run stays fast.
    done = installed.run(pytest_script, "-p", "no:cacheprovider", "test_hello_installed.py")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout.splitlines()[-1], done.stdout
