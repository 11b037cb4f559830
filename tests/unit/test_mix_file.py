"""Mix files (vegeta targets, JSON, TOML) and feeders written as text, read into the options
of a load: what each form gives, and each kind of bad file refused with its name, its line
or entry, and what is wrong. No sockets: the specs are built and previewed only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_netbench import Request, SpecError, feeders, http_spec, load_mix, preview
from pytest_netbench._input.feeder_text import feeder_from_data, feeder_from_flag

URL = "http://127.0.0.1:8080"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_a_targets_file_gives_one_request_per_target(tmp_path: Path) -> None:
    write(tmp_path / "order.json", '{"qty": 2}')
    targets = write(
        tmp_path / "targets.txt",
        "# name: list\n"
        "GET http://127.0.0.1:8080/items?page=2\n"
        "X-Account-ID: 8675309\n"
        "\n"
        "POST /orders\n"
        "Content-Type: application/json\n"
        "@order.json\n"
        "HEAD http://127.0.0.1:8080/ping\n",
    )
    options = load_mix(targets, url=URL)
    assert options == {
        "mix": [
            Request("GET", "/items?page=2", {"X-Account-ID": "8675309"}, name="list"),
            Request("POST", "/orders", {"Content-Type": "application/json"}, b'{"qty": 2}'),
            Request("HEAD", "/ping"),
        ]
    }


def test_targets_alike_are_named_by_their_line(tmp_path: Path) -> None:
    write(tmp_path / "a.json", "{}")
    targets = write(tmp_path / "t", "POST /o\n@a.json\n\nPOST /o\n@a.json\nGET /x\n")
    names = [r.label for r in load_mix(targets)["mix"] or ()]
    assert names == ["POST /o (line 1)", "POST /o (line 4)", "GET /x"]
    spec = http_spec(URL, **load_mix(targets))
    assert [name for name, _ in preview(spec, 3)] == names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("get /x\n", "t.txt:1: expected a target line 'METHOD URL'"),
        ("GET /x\nnot a header\n", "t.txt:2: expected a header line 'Name: value'"),
        ("GET /x\nX-A:\n", "t.txt:2: expected a header line"),
        ("GET /x\n@missing.bin\n", "t.txt:2: cannot read the body file 'missing.bin'"),
        ("GET /x\n@\n", "t.txt:2: '@' names no body file"),
        ("GET http://127.0.0.1:9999/x\n", "t.txt:1: 'http://127.0.0.1:9999/x' is not on the"),
        ("GET https://127.0.0.1:8080/x\n", "is not on the load's server http://127.0.0.1:8080"),
        ("GET ftp://127.0.0.1/x\n", "t.txt:1: 'ftp://127.0.0.1/x': only http:// and https://"),
        ("GET items\n", "t.txt:1: the URL 'items' is neither"),
        ("# only a comment\n\n", "t.txt: no targets in the file"),
    ],
)
def test_a_bad_targets_file_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SpecError, match="^.*" + _escaped(message)):
        load_mix(write(tmp_path / "t.txt", text), url=URL)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def test_targets_without_a_url_keep_to_the_first_targets_server(tmp_path: Path) -> None:
    text = "GET http://127.0.0.1:8080/a\nGET http://127.0.0.1:8081/b\n"
    with pytest.raises(SpecError, match=r"t.txt:2: .* is not on the load's server"):
        load_mix(write(tmp_path / "t.txt", text))


TOML = """
mix_order = "weighted"
seed = 7

[[mix]]
name = "profile"
path = "/users/${user.id}"
weight = 3

[[mix]]
name = "order"
method = "POST"
path = "/orders"
headers = { "Content-Type" = "application/json", "X-Request-Id" = "${rid}" }
body = '{"user": ${user.id}, "qty": ${qty}}'

[feeders]
user = { kind = "csv", path = "users.csv", order = "shuffle" }
qty = { kind = "randint", low = 1, high = 5 }
rid = { kind = "uuid4" }
"""


def python_form(folder: Path) -> dict[str, object]:
    """What the TOML and JSON files above say, written in Python."""
    return {
        "mix": [
            Request("GET", "/users/${user.id}", name="profile", weight=3),
            Request(
                "POST",
                "/orders",
                {"Content-Type": "application/json", "X-Request-Id": "${rid}"},
                '{"user": ${user.id}, "qty": ${qty}}',
                name="order",
            ),
        ],
        "mix_order": "weighted",
        "seed": 7,
        "feeders": {
            "user": feeders.csv(folder / "users.csv", order="shuffle"),
            "qty": feeders.randint(1, 5),
            "rid": feeders.uuid4(),
        },
    }


@pytest.mark.parametrize("form", ["toml", "json"])
def test_toml_and_json_give_what_python_writes(tmp_path: Path, form: str) -> None:
    write(tmp_path / "users.csv", "id,plan\n1,free\n2,pro\n3,team\n")
    import tomllib

    data = tomllib.loads(TOML)
    path = tmp_path / f"mix.{form}"
    write(path, TOML if form == "toml" else json.dumps(data, indent=2))
    options = load_mix(path)
    expected = python_form(tmp_path)
    assert options == expected
    # The same requests, byte for byte, as the Python form renders.
    from_file = preview(http_spec(URL, **options), 8)
    assert from_file == preview(http_spec(URL, **expected), 8)  # type: ignore[arg-type]
    assert [name for name, _ in from_file[:4]] == ["profile", "profile", "order", "profile"]


def test_a_body_file_and_a_table_body(tmp_path: Path) -> None:
    write(tmp_path / "body.xml", "<order/>")
    path = write(
        tmp_path / "mix.toml",
        '[[mix]]\nmethod = "PUT"\npath = "/a"\nbody_file = "body.xml"\n'
        '[[mix]]\nmethod = "POST"\npath = "/b"\nbody = { qty = 2, tags = ["x"] }\n',
    )
    first, second = load_mix(path)["mix"] or ()
    assert first.body == b"<order/>"
    assert second.body == b'{"qty":2,"tags":["x"]}'


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("m.json", '{"mix": [}', r"m.json:1:10: not JSON: Expecting value"),
        ("m.toml", "[[mix]\n", r"m.toml: not TOML: .*line 1"),
        ("m.json", "[1, 2]", r"m.json: expected \[\[mix\]\] tables"),
        ("m.json", '{"mix": []}', r"m.json: no requests"),
        ("m.json", '{"mix": [{"path": "/"}], "sed": 1}', r"unknown key 'sed' \(did you mean"),
        ("m.json", '{"mix": [{"method": "GET"}]}', r"m.json: mix\[1\]: give its path"),
        (
            "m.json",
            '{"mix": [{"path": "/"}, {"name": "order", "path": "/", "bdy": ""}]}',
            r"m.json: mix\[2\] \('order'\): unknown key 'bdy' \(did you mean 'body'",
        ),
        ("m.json", '{"mix": [{"path": "/", "headers": 3}]}', r"mix\[1\]: headers must be"),
        ("m.json", '{"mix": [{"path": "/", "body": 3}]}', r"mix\[1\]: body must be text"),
        (
            "m.json",
            '{"mix": [{"path": "/", "body": "", "body_file": "b"}]}',
            r"mix\[1\]: give body or body_file, not both",
        ),
        ("m.json", '{"mix": [{"path": "/", "body_file": "nope"}]}', r"cannot read the body file"),
        (
            "m.json",
            '{"mix": [{"path": "/${id}"}], "feeders": {"id": {"kind": "counter"}}}',
            r"m.json: feeders.id: no feeder kind 'counter' \(did you mean 'count'",
        ),
        (
            "m.json",
            '{"mix": [{"path": "/${id}"}], "feeders": {"id": {"kind": "randint", "low": 1}}}',
            r"m.json: feeders.id: randint needs high",
        ),
        (
            "m.json",
            '{"mix": [{"path": "/"}], "feeders": {"id": {"kind": "count", "begin": 1}}}',
            r"feeders.id: count has no argument 'begin' \(it takes start, step\)",
        ),
    ],
)
def test_a_bad_json_or_toml_file_says_where(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        load_mix(write(tmp_path / name, text))


def test_a_missing_file() -> None:
    with pytest.raises(SpecError, match=r"cannot read the mix file 'no/such.toml'"):
        load_mix("no/such.toml")


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("id=count", ("id", feeders.count())),
        ("id=count:1", ("id", feeders.count(1))),
        ("id=count:100:step=10", ("id", feeders.count(100, 10))),
        ("qty=randint:1:5", ("qty", feeders.randint(1, 5))),
        ("rid=uuid4", ("rid", feeders.uuid4())),
        ("plan=choice:free,pro,team", ("plan", feeders.choice(["free", "pro", "team"]))),
        ("plan=choice:free,pro:3,1", ("plan", feeders.choice(["free", "pro"], [3, 1]))),
        ("user=csv:users.csv:shuffle", ("user", feeders.csv("users.csv", order="shuffle"))),
        (
            "user=csv:u.csv:order=shuffle:on_end=stop:columns=id,plan",
            ("user", feeders.csv("u.csv", order="shuffle", on_end="stop", columns=["id", "plan"])),
        ),
        (
            "row=jsonl:rows.jsonl:sequential:stop",
            ("row", feeders.jsonl("rows.jsonl", on_end="stop")),
        ),
        ("u=call:myapp.data:signups", ("u", feeders.call("myapp.data:signups"))),
        ("u=call:myapp.data:signups:batch=50", ("u", feeders.call("myapp.data:signups", batch=50))),
    ],
)
def test_a_feeder_flag(flag: str, expected: tuple[str, feeders.Feeder]) -> None:
    assert feeder_from_flag(flag) == expected


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("count:1", r"write NAME=KIND\[:ARG...\]"),
        ("id=", r"write NAME=KIND"),
        ("id=counter:1", r"no feeder kind 'counter' \(did you mean 'count'"),
        ("id=count:one", r"start must be a whole number, got 'one'"),
        ("id=count:1:2:3", r"count takes start, step; got 3 arguments"),
        ("rid=uuid4:1", r"uuid4 takes no arguments; got 1"),
        ("q=randint:1", r"randint needs high"),
        ("u=csv:u.csv:ordr=shuffle", r"csv has no argument 'ordr' \(did you mean 'order'"),
        ("u=csv:u.csv:order=shuffle:stop", r"'stop' follows a key=value argument"),
        ("p=choice:a,b:x,1", r"weights must be numbers separated by commas"),
        ("id=count:start=1:start=2", r"start is given twice"),
    ],
)
def test_a_bad_feeder_flag_says_what_to_write(flag: str, message: str) -> None:
    with pytest.raises(SpecError, match=r"^--feeder '.*': " + message):
        feeder_from_flag(flag)


def test_a_feeder_as_data_reads_back_its_to_dict(tmp_path: Path) -> None:
    for feeder in (
        feeders.count(5, 2),
        feeders.randint(1, 9),
        feeders.choice(["a", "b"], [1, 3]),
        feeders.uuid4(),
        feeders.csv(tmp_path / "u.csv", order="random", columns=["id"], delimiter=";"),
        feeders.jsonl(tmp_path / "r.jsonl", on_end="error"),
        feeders.call("myapp.data:signups", batch=10),
    ):
        assert feeder_from_data("x", feeder.to_dict(), where="here") == feeder


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "m.json",
            '{"mix": [{"path": "/u/${user.id}?n=${n}&q=${q}"}], "feeders": {"n": "count:1",'
            ' "q": "randint:1:5", "user": "csv:users.csv:shuffle"}}',
        ),
        (
            "m.toml",
            '[[mix]]\npath = "/u/${user.id}?n=${n}&q=${q}"\n[feeders]\nn = "count:1"\n'
            'q = "randint:1:5"\nuser = "csv:users.csv:shuffle"\n',
        ),
    ],
)
def test_a_file_takes_a_feeder_as_the_flag_s_text(tmp_path: Path, name: str, text: str) -> None:
    # As `--feeder n=count:1` writes it; a relative path is the file's folder's, as in a table.
    write(tmp_path / "users.csv", "id\n1\n2\n")
    options = load_mix(write(tmp_path / name, text))
    assert options["feeders"] == {
        "n": feeders.count(1),
        "q": feeders.randint(1, 5),
        "user": feeders.csv(str(tmp_path / "users.csv"), order="shuffle"),
    }
    ((_, request),) = preview(http_spec(URL, **options), 1)
    assert request.startswith(b"GET /u/")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "m.json",
            '{"mix": [{"path": "/${id}"}], "feeders": {"id": 7}}',
            r'm.json: feeders.id: a feeder is an object with its kind, \{"kind": "count",'
            r' "start": 1\}, or the text a --feeder flag takes after NAME=, "count:1"; got 7',
        ),
        (
            "m.toml",
            '[[mix]]\npath = "/${id}"\n[feeders]\nid = 7\n',
            r'm.toml: feeders.id: a feeder is a table with its kind, \{kind = "count", start ='
            r' 1\}, or the text a --feeder flag takes after NAME=, "count:1"; got 7',
        ),
        (
            "m.json",
            '{"mix": [{"path": "/${id}"}], "feeders": ["count"]}',
            r'm.json: feeders maps each name to its feeder: \{"feeders": \{"id": \{"kind"',
        ),
        (
            "m.toml",
            'feeders = ["count"]\n[[mix]]\npath = "/${id}"\n',
            r"m.toml: feeders maps each name to its feeder: \[feeders\] with a line per feeder",
        ),
        (
            "m.json",
            '{"mix": [{"path": "/${id}"}], "feeders": {"id": "randint:1"}}',
            r"m.json: feeders.id: randint needs high",
        ),
    ],
)
def test_a_feeder_of_neither_form_is_told_in_the_file_s_own_syntax(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    with pytest.raises(SpecError, match=message):
        load_mix(write(tmp_path / name, text))


def test_vegetas_json_targets(tmp_path: Path) -> None:
    lines = [
        {
            "method": "POST",
            "url": f"{URL}/orders",
            "header": {"Content-Type": ["application/json"], "X-Tag": ["a", "b"]},
            "body": "eyJxdHkiOiAyfQ==",  # base64 of {"qty": 2}, as vegeta writes bodies
        },
        {"method": "GET", "url": "/items"},
        {"method": "GET", "url": "/items"},
    ]
    path = write(tmp_path / "targets.json", "\n".join(json.dumps(line) for line in lines))
    first, second, third = load_mix(path, url=URL)["mix"] or ()
    assert first == Request(
        "POST",
        "/orders",
        (("Content-Type", "application/json"), ("X-Tag", "a"), ("X-Tag", "b")),
        b'{"qty": 2}',
    )
    assert (second.label, third.label) == ("GET /items (line 2)", "GET /items (line 3)")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"url": "/a"}\n{"url": "/b",}\n', r"t.json:2: not a JSON target"),
        ('{"url": "/a", "headers": {}}\n', r"t.json:1: unknown key 'headers'"),
        ('{"url": "/a", "body": "not base64!"}\n', r"t.json:1: body is not base64"),
        ('{"url": "/a", "method": "get"}\n', r"t.json:1: method must be a word in capitals"),
        ('{"url": "/a", "header": {"X": [1]}}\n', r"t.json:1: header 'X': a value must be text"),
        ('{"url": "http://127.0.0.1:1/a"}\n', r"t.json:1: .* is not on the load's server"),
    ],
)
def test_bad_json_targets_name_their_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_mix(write(tmp_path / "t.json", text), url=URL)


def test_checks_in_a_toml_mix_file(tmp_path: Path) -> None:
    """The file's checks apply to every kind, a kind's own to it (docs/checks.md)."""
    (tmp_path / "mix.toml").write_text(
        'checks = ["status 200"]\n'
        '[[mix]]\nname = "home"\npath = "/"\nchecks = ["no error page: body !contains Error"]\n'
        '[[mix]]\nname = "api"\npath = "/api"\nchecks = { "json id" = "json id == 7" }\n'
    )
    options = load_mix(tmp_path / "mix.toml")
    spec = http_spec("http://127.0.0.1:8080", **options)
    assert [c.name for c in spec.checks] == ["status 200"]
    assert [[c.text for c in r.checks] for r in spec.mix] == [
        ["no error page: body !contains Error"],
        ["json id: json id == 7"],
    ]
    (tmp_path / "bad.toml").write_text('[[mix]]\npath = "/"\nchecks = ["body has x"]\n')
    with pytest.raises(SpecError, match=r"bad\.toml: mix\[1\]: checks: check 'body has x'"):
        load_mix(tmp_path / "bad.toml")
