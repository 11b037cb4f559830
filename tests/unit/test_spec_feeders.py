"""The checks of feeders and templates (``http_spec``), before any socket: each mistake
refused with what to write instead (issue 18)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_netbench import Request, SpecError, feeders, http_spec
from pytest_netbench._model.feeders import CsvRows

# Port 9 on loopback: nothing listens, and every check comes before any socket anyway.
URL = "http://127.0.0.1:9/"


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "users.csv"
    path.write_text("id,email,first name\n1,a@x,Ann\n2,b@x,Bob\n")
    return path


def refused(message: str, url: str = URL, **options: Any) -> None:
    with pytest.raises(SpecError, match=message):
        http_spec(url, **options)


def test_a_good_spec_holds_its_feeders_as_data_with_absolute_paths(
    users: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(users.parent)
    spec = http_spec(
        "http://127.0.0.1:9/u/${u.id}",
        headers={"X-Name": "${u.first name}"},
        feeders={"u": feeders.csv("users.csv"), "n": feeders.count()},
        body="${n}",
        method="POST",
        seed=3,
    )
    name, feeder = spec.feeders[0]
    assert name == "u" and isinstance(feeder, CsvRows) and feeder.path == str(users)
    assert spec.seed == 3
    assert spec.to_dict()["feeders"]["n"] == {"kind": "count", "start": 0, "step": 1}


def test_an_unknown_placeholder_names_the_closest_feeder(users: Path) -> None:
    refused(
        r"\$\{usr.id\} in 'GET /u/\$\{usr.id\}' names no feeder: did you mean \$\{users\}\?",
        "http://127.0.0.1:9/u/${usr.id}",
        feeders={"users": feeders.csv(users)},
    )
    refused(
        r"\$\{id\} in 'show' names no feeder: the feeders: n",
        mix=[Request("GET", "/${id}", name="show")],
        feeders={"n": feeders.count()},
    )


def test_a_feeder_not_used_is_refused(users: Path) -> None:
    refused(
        r"feeder 'spare' is not used: no \$\{spare\}",
        "http://127.0.0.1:9/${n}",
        feeders={"n": feeders.count(), "spare": feeders.uuid4()},
    )


def test_a_path_placeholder_without_feeders_is_refused_and_the_escape_is_named() -> None:
    refused(r"has a placeholder, but the load has no feeders.*'\$\$\{'", "http://127.0.0.1:9/${id}")
    refused(
        "has a placeholder, but the load has no feeders",
        mix=[Request("GET", "/items/${id}")],
    )
    # Without feeders a body or header is sent as written (a binary body is never read).
    assert http_spec(URL, method="POST", body=b"${raw}", headers={"X": "${y}"}).body == b"${raw}"


def test_a_missing_file_and_a_missing_column_are_refused(users: Path, tmp_path: Path) -> None:
    refused(
        r"feeder 'u' \(csv\): no file 'nope.csv' \(looked for /",
        "http://127.0.0.1:9/${u.id}",
        feeders={"u": feeders.csv("nope.csv")},
    )
    refused(
        r"feeder 'u': users.csv has no column 'emial' \(did you mean 'email'\? its columns:"
        r" id, email, first name\)",
        "http://127.0.0.1:9/${u.emial}",
        feeders={"u": feeders.csv(users)},
    )
    refused(
        r"feeder 'u' gives rows of a CSV file; name a column: \$\{u.column\}",
        "http://127.0.0.1:9/${u}",
        feeders={"u": feeders.csv(users)},
    )
    empty = tmp_path / "empty.csv"
    empty.write_text("id\n")
    refused(
        "empty.csv has no rows", "http://127.0.0.1:9/${u.id}", feeders={"u": feeders.csv(empty)}
    )


def test_jsonl_fields_are_checked_against_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "o.jsonl"
    path.write_text('{"id": 1, "sku": "a"}\n')
    assert http_spec("http://127.0.0.1:9/${o.sku}", feeders={"o": feeders.jsonl(path)})
    refused(
        r"o.jsonl has no field 'skus' \(did you mean 'sku'\?",
        "http://127.0.0.1:9/${o.skus}",
        feeders={"o": feeders.jsonl(path)},
    )
    path.write_text("[1, 2]\n")
    refused(
        r"is not a JSON object, so it has no fields: write \$\{o\}",
        "http://127.0.0.1:9/${o.id}",
        feeders={"o": feeders.jsonl(path)},
    )


def test_a_single_value_feeder_has_no_fields() -> None:
    refused(
        r"\$\{n.id\} in .*: feeder 'n' \(count\) gives one value, not rows with fields:"
        r" write \$\{n\}",
        "http://127.0.0.1:9/${n.id}",
        feeders={"n": feeders.count()},
    )


def test_a_template_that_does_not_render_valid_http_is_refused(users: Path, tmp_path: Path) -> None:
    refused(
        r"cannot build the request: \$\{h\} is in a header name",
        "http://127.0.0.1:9/${n}",
        headers={"X-${h}": "1"},
        feeders={"n": feeders.count(), "h": feeders.count()},
    )
    refused(
        r"cannot build the request 'bad': .*unclosed",
        mix=[Request("POST", "/", body="{${n", name="bad")],
        feeders={"n": feeders.count()},
    )
    refused(
        "its Content-Length is computed for each request: drop the Content-Length header",
        method="POST",
        headers={"Content-Length": "3"},
        body="${n}",
        feeders={"n": feeders.count()},
    )
    breaks = tmp_path / "breaks.csv"
    breaks.write_text('v\n"a\r\nb"\n')
    refused(
        r"rendered from the feeders' first values: .*cannot hold a line break",
        headers={"X-V": "${b.v}"},
        feeders={"b": feeders.csv(breaks)},
    )


@pytest.mark.parametrize(
    ("feeder", "message"),
    [
        (feeders.count(step=0), "step must not be 0"),
        (feeders.randint(5, 1), r"low \(5\) is above high \(1\)"),
        (feeders.randint(1.5, 3), "low must be a whole number"),  # type: ignore[arg-type]
        (feeders.choice([]), "give a non-empty list of values"),
        (feeders.choice("abc"), "give a non-empty list of values"),
        (feeders.choice(["a", "b"], weights=[1]), "1 weights for 2 values"),
        (feeders.choice(["a", "b"], weights=[0, 0]), "the weights add up to 0"),
        (feeders.choice(["a"], weights=[-1]), "a weight must be a number >= 0"),
        (feeders.call("no_such_module:f"), "cannot import 'no_such_module:f'"),
        (feeders.call("os.path"), "is not 'module:function'"),
        (feeders.call(lambda batch: []), "define it at a module's top level"),
        (feeders.call("os:getcwd", batch=0), "batch must be a whole number >= 1"),
        (feeders.call("os:getcwd", on_end="wrap"), "on_end must be 'stop' or 'error'"),  # type: ignore[arg-type]
        (
            feeders.jsonl("x.jsonl", order="sorted"),
            "order must be one of sequential, shuffle, random",
        ),  # type: ignore[arg-type]
        (feeders.jsonl("x.jsonl", on_end="loop"), "on_end must be one of wrap, stop, error"),  # type: ignore[arg-type]
        (
            feeders.csv("x.csv", order="random", on_end="stop"),
            "never runs out, so on_end does not apply",
        ),
        ("count", r"must be made by feeders.count\(\)"),
    ],
)
def test_bad_feeder_arguments_are_refused(feeder: Any, message: str) -> None:
    refused(message, "http://127.0.0.1:9/${f}", feeders={"f": feeder})


def test_bad_feeders_and_seeds_are_refused() -> None:
    refused(r"feeders must be a dict of name -> feeder", feeders=[feeders.count()])
    refused(
        r"a feeder's name is a Python identifier .* got 'user-id'",
        feeders={"user-id": feeders.count()},
    )
    refused("seed must be a whole number, got '1'", seed="1")
    refused("seed must be a whole number, got True", seed=True)
