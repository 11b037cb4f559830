"""``netbench http URL --mix FILE`` and ``--feeder``, run as a real subprocess against a
real loopback server that writes down every request it reads (request_log_server.py): what
arrives is what the file says, each kind is counted on its own, and a bad file or flag is
a usage error naming the file, the line and what is wrong, with nothing sent."""

from __future__ import annotations

import json
import re
import select
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_process import load_json, netbench

from pytest_netbench.cli import ExitCode

RECORDING_SERVER = Path(__file__).with_name("request_log_server.py")


@dataclass
class Recording:
    url: str
    log: Path

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def lines(self) -> Counter[str]:
        return Counter(request["line"] for request in self.requests())


@pytest.fixture
def recording(tmp_path: Path) -> Iterator[Recording]:
    log = tmp_path / "received.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(RECORDING_SERVER), str(log)], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        match = re.search(rb"port=(\d+)", proc.stdout.readline() if ready else b"")
        assert match is not None, "the recording server did not start"
        yield Recording(f"http://127.0.0.1:{int(match.group(1))}", log)
    finally:
        proc.kill()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def assert_kinds_add_up(data: dict[str, Any]) -> None:
    kinds = data["by_request"].values()
    for kind in kinds:
        assert kind["sent"] == kind["ok"] + sum(kind["errors"].values()) + kind["in_flight"]
    assert data["sent"] == data["ok"] + data["errors_total"] + data["in_flight"]
    assert sum(kind["sent"] for kind in kinds) == data["sent"]
    assert sum(kind["ok"] for kind in kinds) == data["ok"]


def test_a_vegeta_targets_file_with_a_body_file(recording: Recording, tmp_path: Path) -> None:
    (tmp_path / "order.json").write_text('{"sku": "A-1", "qty": 2}')
    targets = tmp_path / "targets.txt"
    targets.write_text(
        "# name: list\n"
        f"GET {recording.url}/items?page=2\n"
        "X-Account-ID: 8675309\n"
        "\n"
        "# name: order\n"
        "POST /orders\n"
        "Content-Type: application/json\n"
        "@order.json\n"
        "\n"
        f"GET {recording.url}/missing\n"
    )
    out = tmp_path / "result.json"
    done = netbench(
        "http", recording.url, "--mix", str(targets), "-n", "30", "-c", "2", "--json", str(out)
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert recording.lines() == {
        "GET /items?page=2 HTTP/1.1": 10,
        "POST /orders HTTP/1.1": 10,
        "GET /missing HTTP/1.1": 10,
    }
    for request in recording.requests():
        if request["line"].startswith("GET /items"):
            assert request["headers"]["x-account-id"] == "8675309"
            assert request["body"] == ""
        elif request["line"].startswith("POST"):
            assert request["headers"]["content-type"] == "application/json"
            assert request["body"] == '{"sku": "A-1", "qty": 2}'
    data = load_json(out)
    assert list(data["by_request"]) == ["list", "order", "GET /missing"]
    missing = data["by_request"]["GET /missing"]
    assert (missing["ok"], missing["errors"]["status"]) == (0, 10)
    assert missing["status_codes"] == {"404": 10}
    assert data["by_request"]["order"]["ok"] == 10
    assert_kinds_add_up(data)


TOML_MIX = """
mix_order = "weighted"

[[mix]]
name = "search"
path = "/search?q=shoes"
weight = 3

[[mix]]
name = "flaky"
method = "PUT"
path = "/flaky/1"
headers = { "Content-Type" = "text/plain" }
body = "put me"
"""


@pytest.mark.parametrize("form", ["toml", "json"])
def test_a_json_or_toml_mix_sends_by_weight(
    recording: Recording, tmp_path: Path, form: str
) -> None:
    import tomllib

    mix = tmp_path / f"mix.{form}"
    mix.write_text(TOML_MIX if form == "toml" else json.dumps(tomllib.loads(TOML_MIX)))
    out = tmp_path / "result.json"
    done = netbench(
        "http", recording.url, "--mix", str(mix), "-n", "40", "-c", "1", "--json", str(out)
    )
    assert done.returncode == ExitCode.OK, done.stderr
    assert recording.lines() == {"GET /search?q=shoes HTTP/1.1": 30, "PUT /flaky/1 HTTP/1.1": 10}
    assert {r["body"] for r in recording.requests() if r["line"].startswith("PUT")} == {"put me"}
    data = load_json(out)
    flaky = data["by_request"]["flaky"]
    assert (flaky["ok"], flaky["errors"]["status"], flaky["status_codes"]) == (
        5,
        5,
        {"200": 5, "503": 5},
    )
    assert data["by_request"]["search"]["ok"] == 30
    assert data["spec"]["mix_order"] == "weighted"
    assert_kinds_add_up(data)


def test_a_per_request_threshold_on_a_mix(recording: Recording, tmp_path: Path) -> None:
    mix = tmp_path / "mix.toml"
    mix.write_text(TOML_MIX)
    done = netbench(
        "http",
        recording.url,
        "--mix",
        str(mix),
        "-n",
        "40",
        "-c",
        "1",
        "--threshold",
        "by_request.search.errors_total < 1",
        "--threshold",
        "by_request.flaky.errors_total < 1",
    )
    assert done.returncode == ExitCode.THRESHOLD_FAILED, done.stderr
    assert re.search(r"ok\s+by_request\.search\.errors_total < 1", done.stdout)
    assert re.search(r"FAILED\s+by_request\.flaky\.errors_total < 1", done.stdout)
    misspelt = netbench(
        "http", recording.url, "--mix", str(mix), "-n", "10", "--threshold",
        "by_request.serch.p99_ms < 50",
    )  # fmt: skip
    assert misspelt.returncode == ExitCode.USAGE
    assert "'serch'" in misspelt.stderr and "search, flaky" in misspelt.stderr
    assert recording.lines() == {"GET /search?q=shoes HTTP/1.1": 30, "PUT /flaky/1 HTTP/1.1": 10}


def test_show_requests_renders_feeders_and_sends_nothing(
    recording: Recording, tmp_path: Path
) -> None:
    (tmp_path / "users.csv").write_text("id,plan\n7,free\n8,pro\n9,team\n")
    mix = tmp_path / "mix.toml"
    mix.write_text(
        '[[mix]]\nname = "profile"\npath = "/users/${user.id}?n=${n}"\n'
        '[[mix]]\nname = "order"\nmethod = "POST"\npath = "/orders"\n'
        'headers = { "X-Request-Id" = "${rid}" }\n'
        'body = \'{"user": ${user.id}, "plan": "${user.plan}", "qty": ${qty}}\'\n'
        '[feeders]\nuser = { kind = "csv", path = "users.csv" }\n'
    )
    args = ["http", recording.url, "--mix", str(mix), "--feeder", "n=count:100"]
    args += ["--feeder", "qty=randint:1:5", "--feeder", "rid=uuid4", "--seed", "3"]
    done = netbench(*args, "--show-requests", "4")
    assert done.returncode == ExitCode.OK, done.stderr
    heads = re.findall(r"^# (\d) of 4: (\w+)$", done.stdout, re.MULTILINE)
    assert heads == [("1", "profile"), ("2", "order"), ("3", "profile"), ("4", "order")]
    assert "GET /users/7?n=100 HTTP/1.1" in done.stdout
    assert "GET /users/9?n=101 HTTP/1.1" in done.stdout
    bodies = re.findall(r'^\{"user": (\d), "plan": "(\w+)", "qty": ([1-5])\}$', done.stdout, re.M)
    assert [(user, plan) for user, plan, _ in bodies] == [("8", "pro"), ("7", "free")]
    assert len(re.findall(r"^X-Request-Id: [0-9a-f-]{36}$", done.stdout, re.MULTILINE)) == 2
    assert "4 requests shown; nothing was sent" in done.stderr
    again = netbench(*args, "--show-requests", "4")
    assert again.stdout == done.stdout  # the same seed, the same requests
    other = netbench(*args[:-1], "4", "--show-requests", "4")
    assert other.stdout != done.stdout
    assert recording.requests() == []


def test_show_requests_of_a_plain_load_with_feeders(recording: Recording) -> None:
    done = netbench(
        "http", recording.url + "/items/${id}", "--feeder", "id=count:1:step=5",
        "-H", "X-Plan: ${plan}", "--feeder", "plan=choice:free,pro:0,1", "--show-requests", "3",
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    assert re.findall(r"^GET (\S+) HTTP/1.1$", done.stdout, re.M) == [
        "/items/1",
        "/items/6",
        "/items/11",
    ]
    assert re.findall(r"^X-Plan: (\w+)$", done.stdout, re.M) == ["pro", "pro", "pro"]
    assert recording.requests() == []


BAD_FILES = [
    ("targets.txt", "GET /a\nX-Broken\n", r"targets.txt:2: expected a header line 'Name: value'"),
    ("targets.txt", "GET /a\n@nowhere.json\n", r"targets.txt:2: cannot read the body file"),
    ("targets.txt", "get /a\n", r"targets.txt:1: expected a target line 'METHOD URL'"),
    ("targets.txt", "GET http://127.0.0.1:1/a\n", r"targets.txt:1: .* is not on the load's"),
    ("mix.json", '{"mix": [{"path": "/a"},]}', r"mix.json:1:25: not JSON"),
    ("mix.toml", '[[mix]]\npath = "/a"\nwieght = 2\n', r"mix.toml: mix\[1\]: unknown key 'wieght'"),
    ("mix.toml", "[[mix]]\npath = /a\n", r"mix.toml: not TOML: .*line 2"),
    ("mix.toml", '[[mix]]\npath = "/a/${id}"\n', r"has a placeholder, but the load has no feeders"),
    (
        "mix.toml",
        '[[mix]]\npath = "/a/${idd}"\n[feeders.id]\nkind = "count"\n',
        r"\$\{idd\} in 'GET /a/\$\{idd\}' names no feeder: did you mean \$\{id\}",
    ),
    (
        "mix.toml",
        '[[mix]]\npath = "/a"\n[feeders.id]\nkind = "count"\n',
        r"feeder 'id' is not used",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), BAD_FILES, ids=[m for *_, m in BAD_FILES])
def test_a_bad_mix_file_is_a_usage_error_before_any_request(
    recording: Recording, tmp_path: Path, name: str, text: str, message: str
) -> None:
    mix = tmp_path / name
    mix.write_text(text)
    done = netbench("http", recording.url, "--mix", str(mix), "-n", "5")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.search(message, done.stderr), done.stderr
    assert done.stderr.startswith("netbench http: error: ")
    assert "Traceback" not in done.stderr
    assert recording.requests() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mix", "no-such-file.toml"], r"cannot read the mix file 'no-such-file.toml'"),
        (["--feeder", "id=counter:1"], r"no feeder kind 'counter' \(did you mean 'count'"),
        (["--feeder", "id=count:x"], r"start must be a whole number"),
        (["--feeder", "id=count", "--feeder", "id=uuid4"], r"two feeders are named 'id'"),
        (["--feeder", "id=count"], r"feeder 'id' is not used"),
    ],
)
def test_a_bad_feeder_flag_or_missing_file(
    recording: Recording, args: list[str], message: str
) -> None:
    done = netbench("http", recording.url, *args, "-n", "5")
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert re.search(message, done.stderr), done.stderr
    assert recording.requests() == []


def test_cli_feeders_fill_every_request_sent(recording: Recording, tmp_path: Path) -> None:
    (tmp_path / "users.csv").write_text("id,plan\n" + "".join(f"{n},p{n}\n" for n in range(1, 9)))
    mix = tmp_path / "mix.toml"
    mix.write_text(
        '[[mix]]\nname = "item"\npath = "/items/${id}"\n'
        '[[mix]]\nname = "signup"\nmethod = "POST"\npath = "/users"\n'
        'body = \'{"user": ${user.id}, "plan": "${user.plan}"}\'\n'
    )
    out = tmp_path / "result.json"
    done = netbench(
        "http", recording.url, "--mix", str(mix), "--feeder", "id=count:1",
        "--feeder", f"user=csv:{tmp_path / 'users.csv'}:on_end=stop", "-d", "20s", "-c", "2",
        "--json", str(out),
    )  # fmt: skip
    assert done.returncode == ExitCode.OK, done.stderr
    received = recording.requests()
    items = sorted(
        int(r["line"].split()[1].rsplit("/", 1)[1]) for r in received if "/items/" in r["line"]
    )
    bodies = sorted(r["body"] for r in received if r["line"].startswith("POST"))
    # Each user row once (on_end=stop ends the load at the ninth signup), each id once.
    assert bodies == sorted(f'{{"user": {n}, "plan": "p{n}"}}' for n in range(1, 9))
    assert items == list(range(1, len(items) + 1)) and len(items) in (8, 9)
    data = load_json(out)
    assert data["by_request"]["signup"]["ok"] == 8
    assert_kinds_add_up(data)
