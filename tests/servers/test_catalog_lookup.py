"""Looking servers up: names, specs, errors for bad requests, availability and listing."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_netbench import SpecError, ToolchainMissing
from pytest_netbench._servers import catalog

ALL = [
    "asyncio_streams", "asyncio_uvloop", "socketserver", "wsgiref", "twisted", "twisted_web",
    "tornado", "gevent", "eventlet", "aiohttp", "trio", "go", "node", "java", "c", "rust", "nginx",
    "starlette",
]  # fmt: skip
HELLO_ONLY = {"wsgiref", "twisted_web", "aiohttp", "nginx", "starlette"}
WEBSOCKET = {"tornado", "aiohttp", "go", "node"}  # the servers with a ws app
HTTP2 = {"go", "node", "nginx", "hypercorn"}  # the servers with h2c and h2 apps
WITHOUT_HELLO = ["hypercorn", "grpcio"]  # HTTP/2 or gRPC only
PROXIES = ["twisted_proxy", "go_proxy", "nginx_proxy"]
PYTHON_SERVERS = ALL[:11]


def test_names_per_app() -> None:
    assert catalog.names(app="hello") == ALL
    assert catalog.names(app=None) == ALL + WITHOUT_HELLO
    assert catalog.names(app="echo") == [n for n in ALL if n not in HELLO_ONLY]
    assert catalog.names(app="ws") == [n for n in ALL if n in WEBSOCKET]
    assert (
        catalog.names(app="h2c")
        == catalog.names(app="h2")
        == [n for n in ALL + WITHOUT_HELLO if n in HTTP2]
    )
    assert catalog.names(app="grpc") == ["grpcio"]
    assert catalog.names(app=None, proxies=True) == ALL + WITHOUT_HELLO + PROXIES
    assert catalog.proxy_names() == PROXIES


@pytest.mark.parametrize("name", PYTHON_SERVERS)
def test_python_spec_shape(name: str) -> None:
    try:
        spec = catalog.get(name)
    except ToolchainMissing as exc:
        pytest.skip(str(exc))
    assert spec.command[0] == "{python}"
    assert os.path.isfile(spec.command[1])
    assert "{host}" in spec.command and "{port}" in spec.command
    assert spec.protocol == "http" and spec.app == "hello"
    assert spec.python is None
    assert spec.port_pattern is not None
    match = re.search(spec.port_pattern, "NETBENCH_LISTENING port=41234\n")
    assert match is not None and match.group(1) == "41234"


def test_echo_spec_is_tcp() -> None:
    spec = catalog.get("asyncio_streams", app="echo")
    assert spec.protocol == "tcp"
    assert spec.command[spec.command.index("--app") + 1] == "echo"


def test_unknown_name_suggests_the_close_one() -> None:
    with pytest.raises(SpecError, match=r"no server 'tornadoo'; did you mean 'tornado'"):
        catalog.get("tornadoo")


def test_app_the_framework_lacks_names_what_it_has() -> None:
    with pytest.raises(SpecError, match=r"'aiohttp' has no 'echo' app.*it has: hello, ws"):
        catalog.get("aiohttp", app="echo")
    with pytest.raises(SpecError, match=r"app must be 'hello' \(HTTP\), 'echo' \(TCP\), 'ws'"):
        catalog.get("tornado", app="websocket")  # type: ignore[arg-type]


def test_python_choice_is_refused_for_foreign_servers() -> None:
    with pytest.raises(SpecError, match=r"python='pypy3' applies to the Python servers only"):
        catalog.get("go", python="pypy3")
    for name in ("node", "nginx", "c"):  # every kind that is not a Python server
        with pytest.raises(SpecError, match="applies to the Python servers only"):
            catalog.get(name, python=sys.executable)
    assert catalog.get("asyncio_streams", python=sys.executable).python == sys.executable


def test_missing_interpreter_is_a_toolchain_problem() -> None:
    with pytest.raises(ToolchainMissing, match="netbench-no-such-python"):
        catalog.get("asyncio_streams", python="netbench-no-such-python")


@pytest.mark.skipif(shutil.which("pypy3") is None, reason="pypy3 is not installed")
def test_pypy_reasons() -> None:
    rows = {(name, app): (ok, why) for name, app, ok, why in catalog.availability("pypy3")}
    ok, why = rows[("asyncio_streams", "hello")]
    assert ok and "pypy" in why
    ok, why = rows[("asyncio_uvloop", "hello")]
    assert not ok and "CPython only" in why
    with pytest.raises(ToolchainMissing, match="CPython only"):
        catalog.get("asyncio_uvloop", python="pypy3")


def test_availability_covers_every_server_and_app() -> None:
    rows = catalog.availability()
    assert [(n, a) for n, a, _, _ in rows] == [
        (n, a)
        for n in ALL
        for a in ("hello", "echo", "ws", "h2c", "h2")
        if a == "hello"
        or (a == "echo" and n not in HELLO_ONLY)
        or (a == "ws" and n in WEBSOCKET)
        or (a in ("h2c", "h2") and n in HTTP2)
    ] + [("hypercorn", "h2c"), ("hypercorn", "h2"), ("grpcio", "grpc")] + [
        (n, "hello") for n in PROXIES
    ]
    for name, _app, ok, reason in rows:
        assert reason, name  # either what runs or why it cannot
        if not ok:
            assert "install" in reason or "needs" in reason, reason


@pytest.mark.skipif(
    os.environ.get("NETBENCH_REQUIRE_ALL_SERVERS") != "1" and os.environ.get("CI") != "true",
    reason="runs in CI (CI=true) or with NETBENCH_REQUIRE_ALL_SERVERS=1, where every"
    " toolchain must be present",
)
def test_nothing_is_missing_on_the_ci_machine() -> None:
    missing = [f"{n}/{a}: {why}" for n, a, ok, why in catalog.availability() if not ok]
    assert missing == []


def test_listing_names_every_server() -> None:
    text = catalog.listing()
    for name in ALL + PROXIES:
        assert re.search(rf"^  {name}\s+hello", text, re.MULTILINE), name
    echo_only = catalog.listing(app="echo")
    assert "aiohttp" not in echo_only
    assert re.search(r"^  c\s+echo\s+(yes|NO)", echo_only, re.MULTILINE)
    http2 = catalog.listing(app="h2")
    for name in sorted(HTTP2):
        assert re.search(rf"^  {name}\s+h2\s+(yes|NO)", http2, re.MULTILINE), name
    assert "grpcio" not in http2
    assert re.search(r"^  grpcio\s+grpc\s+(yes|NO)", catalog.listing(), re.MULTILINE)


def test_python_apps_keep_to_python_39() -> None:
    """Debian's PyPy implements Python 3.9: the server scripts must parse there."""
    apps = sorted((Path(catalog.__file__).parent / "apps").rglob("*.py"))
    assert len(apps) >= 12
    pypy = shutil.which("pypy3")
    if pypy is None:
        for app in apps:
            ast.parse(app.read_text(), str(app), feature_version=(3, 9))
        return
    check = "import sys\nfor f in sys.argv[1:]:\n    compile(open(f).read(), f, 'exec')\n"
    done = subprocess.run([pypy, "-c", check, *map(str, apps)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
