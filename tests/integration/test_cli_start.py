"""The ``netbench`` command imports what its subcommand needs and nothing else (issue 35).

A short command's time is mostly its imports, and the heavy ones are the report files, the
plots (matplotlib, numpy), Dask, the experiments and the plugin (pytest). Timing a start
on a shared machine proves little, so these tests hold its cause instead: the modules a
fresh interpreter has loaded after ``netbench --help``, and after a one-request load at a
real server. (The CPU figures are benchmarks/bench_cli_start.py's.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)

# Run the command in a fresh interpreter, then list every module it loaded.
_LOADED = """
import json, sys
from pytest_netbench.cli import main
try:
    status = main(sys.argv[1:])
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": int(status or 0), "modules": sorted(sys.modules)}))
"""

# What no load at one target needs: the report files and their pictures, Dask, the
# experiments and their records, the host's description, the plugin and pytest. (psutil
# is a load's when a server listens at the target: the command samples it, issue 30.)
NOT_FOR_A_LOAD = (
    "matplotlib",
    "numpy",
    "dask",
    "distributed",
    "pytest",
    "_pytest",
    "hypothesis",
    "pytest_netbench.plugin",
    "pytest_netbench._plugin",
    "pytest_netbench._report.plots",
    "pytest_netbench._report.html",
    "pytest_netbench._report.writers",
    # Nor a mix's per-request table (its rows and the session files' tables).
    "pytest_netbench._report.requests",
    "pytest_netbench._experiment",
    "pytest_netbench._compare",
    "pytest_netbench._host.environment",
    # Nor what only other loads need: worker processes (workers > 1), file locks on ports
    # (a server the tool starts), HTTP/2 and HPACK, WebSocket connections, gRPC.
    "multiprocessing",
    "filelock",
    "hpack",
    "pytest_netbench._proto.h2_headers",
    "pytest_netbench._proto.h2_client",
    "pytest_netbench._engine.asyncio_io.h2_connection",
    "pytest_netbench._engine.asyncio_io.ws_connection",
    "pytest_netbench._engine.asyncio_io.ws_listen",
    "pytest_netbench._input.grpc",
    "pytest_netbench._proto.grpc",
    # Nor a WebSocket load's frames and checks, a stream's (SSE, chunks) framers and rules,
    # an open loop's timerfd, the client-delay probe's figures, or sliding windows.
    "pytest_netbench._input.websocket",
    "pytest_netbench._proto.websocket",
    "pytest_netbench._proto.ws_template",
    "pytest_netbench._proto.streaming",
    "pytest_netbench._proto.sse",
    "pytest_netbench._engine.rules.streams",
    "pytest_netbench._engine.rules.timerfd",
    "pytest_netbench._engine.asyncio_io.precise_timer",
    "pytest_netbench._stats.probe",
    "pytest_netbench._model.windows",
    # Nor a load with feeders' kinds, checks, values and file readers, nor the suggestion
    # for a misspelt name.
    "pytest_netbench._model.feeders",
    "pytest_netbench._input.feeder_checks",
    "pytest_netbench._input.feeder_text",
    "pytest_netbench._proto.feeding",
    "pytest_netbench._proto.rows",
    "csv",
    "pickle",
    "difflib",
)
# ``--help`` lists the commands: it needs none of a load's parts either.
NOT_FOR_HELP = (
    *NOT_FOR_A_LOAD,
    "psutil",
    "asyncio",
    "uvloop",
    "pytest_netbench._model",
    "pytest_netbench._input.options",
    "pytest_netbench._engine",
    "pytest_netbench._load",
    "pytest_netbench._report",
)


def loaded_by(*args: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout, done.stderr
    data = json.loads(done.stdout.splitlines()[-1])
    return data["status"], data["modules"]


def among(modules: Sequence[str], packages: Sequence[str]) -> list[str]:
    """The modules that are one of ``packages`` or inside one."""
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


def test_help_imports_no_part_of_a_load() -> None:
    status, modules = loaded_by("--help")
    assert status == 0
    assert among(modules, NOT_FOR_HELP) == []
    assert "pytest_netbench.cli" in modules  # what was run, so the list is the real one


def test_a_subcommands_help_imports_its_own_options_only() -> None:
    status, modules = loaded_by("http", "--help")
    assert status == 0
    assert "pytest_netbench._input.options" in modules  # the flags come from the table
    assert among(modules, [*NOT_FOR_A_LOAD, "psutil"]) == []


def test_a_one_request_load_imports_no_report_file_plot_dask_or_plugin(
    fault_server: StartServer,
) -> None:
    server = fault_server("http")
    status, modules = loaded_by("http", server.url + "/", "-n", "1")
    assert status == 0  # the request was answered: the load really ran
    assert "pytest_netbench._load.api" in modules
    assert "pytest_netbench._report.summary" in modules  # its text report was printed
    assert among(modules, NOT_FOR_A_LOAD) == []


def test_the_console_script_exits_with_mains_status_and_collects_during_the_load(
    fault_server: StartServer,
) -> None:
    # command() holds the garbage collector off while the command starts up and at exit
    # (_cli/collector.py): the load itself runs with it on, and the process ends with
    # main's status.
    server = fault_server("http")
    code = (
        "import gc, sys\n"
        "import pytest_netbench._load.api as api\n"
        "http_load = api.http_load\n"
        "def seen(*args, **kwargs):\n"
        "    print('collecting:', gc.isenabled(), file=sys.stderr)\n"
        "    return http_load(*args, **kwargs)\n"
        "api.http_load = seen\n"
        "from pytest_netbench.cli import command\n"
        "command()\n"
    )
    for args, status in (
        (["http", server.url + "/", "-n", "1"], 0),
        (["http", "--no-such-flag", server.url + "/"], 2),
        (["--help"], 0),
    ):
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == status, (args, done.stderr)
        if args[0] == "http" and status == 0:
            assert "collecting: True" in done.stderr
            assert "Requests/sec" in done.stdout
