"""A command's files go through the report writers: each says where it went on stderr
(nothing with --quiet), and a file that cannot be written is a usage error (2) after the
report, never a traceback (which would exit 1, read as a regression by a gate)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_process import load_json, netbench

StartServer = Callable[..., Any]  # the fault_server fixture (tests/integration/conftest.py)


def test_the_json_says_where_it_went_unless_quiet(
    fault_server: StartServer, tmp_path: Path
) -> None:
    server = fault_server("http")
    out = tmp_path / "r.json"
    done = netbench("http", server.url + "/", "-c", "2", "-n", "20", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"netbench: results written to {out}\n"
    assert load_json(out)["ok"] == 20
    quiet = netbench("http", server.url + "/", "-n", "20", "--json", str(out), "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_a_file_that_cannot_be_written_exits_2_after_the_report(
    fault_server: StartServer, tmp_path: Path
) -> None:
    server = fault_server("http")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "r.json"  # its parent is a file
    done = netbench("http", server.url + "/", "-c", "2", "-n", "20", "--json", str(out))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("netbench http: error: cannot write:")
    assert "Traceback" not in done.stderr
    assert "Target:" in done.stdout  # the load ran: its report is printed all the same
