"""Property-based fuzzing of what users write: durations, stages, thresholds, URLs, feeders
as flags and as data, request templates, WebSocket id messages, mix files (JSON and TOML)
and vegeta targets files (text and JSON). Arbitrary text, and text built from each format's
own pieces, gives a value or the documented error (``SpecError``, or ``ValueError`` where
the function says so), then a checked spec or a ``SpecError``; never another exception."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fuzzing import fuzz
from hypothesis import event, example, given
from hypothesis import strategies as st

from pytest_netbench import SpecError
from pytest_netbench._compare.thresholds import parse_thresholds
from pytest_netbench._input.durations import parse_duration
from pytest_netbench._input.feeder_text import feeder_from_data, feeder_from_flag
from pytest_netbench._input.feeders import checked_feeders
from pytest_netbench._input.mix_file import load_mix
from pytest_netbench._input.spec import http_spec, ws_spec
from pytest_netbench._input.stages import parse_stage_text
from pytest_netbench._input.target import parse_host_port, parse_http_url
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.feeders import Call, Feeder
from pytest_netbench._proto.http import render_spec_request
from pytest_netbench._proto.templates import TemplateError, parse, request_problem, request_template
from pytest_netbench._proto.websocket import render_handshake
from pytest_netbench._proto.ws_template import IdTemplate

URL = "http://127.0.0.1:9/"
ANYTHING = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def spec_error_or(function: Any, *args: Any, **kwargs: Any) -> Any:
    """``function(...)``, or None when it raised SpecError (saying something)."""
    try:
        return function(*args, **kwargs)
    except SpecError as exc:
        assert str(exc)
        return None


# -- durations and stages --
_DURATION = st.tuples(
    st.lists(
        st.tuples(
            st.sampled_from(["0", "1", "30", "1.5", "007", "1e3", "99999999999999999999"]),
            st.sampled_from(["", "ms", "s", "m", "h", "d", "S", " "]),
        ).map("".join),
        max_size=4,
    ),
    st.sampled_from(["", " "]),
).map(lambda parts: parts[1].join(parts[0]))


@fuzz(2)
@given(st.one_of(st.text(max_size=20), _DURATION, st.text("0123456789.msh -+eE_", max_size=12)))
@example("1e400")
@example("nan")
@example("\u0663s")  # a digit of another script
def test_a_duration_is_seconds_or_a_spec_error(text: str) -> None:
    seconds = spec_error_or(parse_duration, text)
    assert seconds is None or (math.isfinite(seconds) and seconds >= 0)


@fuzz()
@given(
    st.lists(
        st.tuples(st.integers(0, 10**6), st.sampled_from(["h", "m", "s", "ms"])),
        min_size=1,
        max_size=4,
    )
)
def test_a_duration_in_parts_is_their_sum(parts: list[tuple[int, str]]) -> None:
    unit = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    text = "".join(f"{n}{u}" for n, u in parts)
    assert parse_duration(text) == pytest.approx(sum(n * unit[u] for n, u in parts))


@fuzz()
@given(
    st.one_of(
        st.text(max_size=20),
        st.tuples(_DURATION, st.sampled_from([":", ""]), st.text("0123456789.-e", max_size=6)).map(
            "".join
        ),
    )
)
def test_a_stage_is_a_stage_or_a_spec_error(text: str) -> None:
    spec_error_or(parse_stage_text, text)


# -- thresholds --
_METRICS = st.sampled_from(
    [
        "p99_ms",
        "p50_ms",
        "rps",
        "errors_total",
        "errors.timeout",
        "in_flight",
        "server.cpu_ms_per_request",
        "server.cpu_s",
        "by_request.search.p99_ms",
        "by_request.GET /a.json.rps",
        "status_codes.404",
        "capacity",
        "latency",
        "mode",
        "nope",
        "__class__",
        "p99_ms.real",
        "by_request.",
        "timeline",
    ]
)


@fuzz(2)
@given(
    st.one_of(
        st.text(max_size=30),
        st.lists(
            st.tuples(
                _METRICS,
                st.sampled_from([":", " : ", ""]),
                st.sampled_from(["10", "0", ".5", "1.", "1e3", "-1", "99999999999"]),
                st.sampled_from(["%", "ms", "s", "", "x"]),
            ).map("".join),
            max_size=3,
        ).map(",".join),
    )
)
def test_thresholds_are_thresholds_or_a_spec_error(text: str) -> None:
    thresholds = spec_error_or(parse_thresholds, text)
    for threshold in thresholds or ():
        assert threshold.limit >= 0 and threshold.describe()
        assert isinstance(threshold.fails(1.0, 2.0), bool)


# -- URLs --
@fuzz(2)
@given(
    st.one_of(
        st.text(max_size=30),
        st.tuples(
            st.sampled_from(["http://", "https://", "ws://", "", "http:/"]),
            st.sampled_from(["127.0.0.1", "[::1]", "[::1", "localhost", "", "h\u2100st", "a@b"]),
            st.sampled_from(["", ":8080", ":0", ":99999", ":x", ":\u00b2"]),
            st.sampled_from(["", "/", "/a?b=c", "/${id}", "#f"]),
        ).map("".join),
    )
)
@example("http://[::1/")
@example("http://h\u2100st/")
def test_a_url_is_a_target_or_a_spec_error(text: str) -> None:
    target = spec_error_or(parse_http_url, text)
    assert target is None or ((target.host and 0 <= target.port <= 65535) or target.port)
    spec_error_or(parse_host_port, text.removeprefix("http://"))


# -- feeders, as flags and as data --
_FLAG_PARTS = st.sampled_from(
    [
        "1",
        "-3",
        "x",
        "a,b",
        "1,2",
        "free,pro",
        "3,1",
        "rows.csv",
        "order=shuffle",
        "on_end=stop",
        "on_end=nope",
        "start=1",
        "step=x",
        "weights=1,x",
        "columns=a,b",
        "delimiter=;",
        "=",
        "",
        "values=",
    ]
)
_KINDS = ["count", "randint", "choice", "uuid4", "csv", "jsonl", "call", "cnt", ""]


def check_feeder(name: str, feeder: Feeder) -> None:
    """The load's checks of a feeder (a function feeder's is not: it imports its module,
    and arbitrary text must never pick a module to import)."""
    assert isinstance(feeder, Feeder)
    if not isinstance(feeder, Call):
        checked = spec_error_or(checked_feeders, {name: feeder})
        event("feeder checked" if checked else "feeder refused by the check")


_FLAG = st.tuples(
    st.sampled_from(["id", "user", "id", "user", "", " x ", "1a"]),
    st.sampled_from(["=", "=", "=", ""]),
    st.sampled_from([*_KINDS[:6], *_KINDS]),
    st.lists(_FLAG_PARTS, max_size=3).map(lambda parts: "".join(":" + p for p in parts)),
).map("".join)


@fuzz(2)
@given(st.one_of(st.text(max_size=30), _FLAG, _FLAG, _FLAG))
def test_a_feeder_flag_is_a_feeder_or_a_spec_error(text: str) -> None:
    made = spec_error_or(feeder_from_flag, text)
    event("refused" if made is None else "a feeder")
    if made is not None:
        check_feeder(*made)


@st.composite
def spoiled(draw: st.DrawFn, valid: st.SearchStrategy[dict[str, Any]]) -> object:
    """Mostly well-formed data, and now and then one of its values (or a key of its own)
    anything at all: most examples then reach the checks past the first."""
    data = draw(valid)
    spoil = draw(st.integers(0, 7))  # 5 and 6, not an end: hypothesis draws the ends more
    if spoil == 5:
        data[draw(st.sampled_from([*sorted(data), "bogus"]))] = draw(ANYTHING)
    elif spoil == 6 and draw(st.booleans()):
        return draw(ANYTHING)
    return data


_FEEDER_DATA = st.one_of(
    spoiled(
        st.one_of(
            st.fixed_dictionaries(
                {"kind": st.just("count")},
                optional={"start": st.integers(-5, 5), "step": st.integers(-1, 2)},
            ),
            st.fixed_dictionaries(
                {"kind": st.just("randint"), "low": st.integers(-5, 5), "high": st.integers(-5, 5)}
            ),
            st.fixed_dictionaries(
                {
                    "kind": st.just("choice"),
                    "values": st.lists(st.text(max_size=3) | st.integers()),
                },
                optional={"weights": st.lists(st.floats(-1, 5) | st.integers(0, 3), max_size=3)},
            ),
            st.fixed_dictionaries({"kind": st.sampled_from(["uuid4", "cnt", ""])}),
            st.fixed_dictionaries(
                {"kind": st.sampled_from(["csv", "jsonl"])},
                optional={
                    "path": st.sampled_from(["rows.csv", "rows.jsonl", "none.csv", "", "a\x00b"]),
                    "order": st.sampled_from(["sequential", "shuffle", "random", "other"]),
                    "on_end": st.sampled_from(["wrap", "stop", "error", "other"]),
                    "columns": st.lists(st.sampled_from(["a", "b", ""]), max_size=3),
                    "delimiter": st.sampled_from([",", ";;", "", '"', "\t"]),
                },
            ),
        )
    ),
    st.sampled_from(["count:1", "randint:1:5", "csv:rows.csv:shuffle", "jsonl:rows.jsonl", "x:"]),
    ANYTHING,
)


@contextmanager
def folder() -> Iterator[str]:
    """A folder holding a small CSV and JSON-lines file and a body file, for the paths a
    fuzzed file names to find sometimes."""
    with tempfile.TemporaryDirectory() as path:
        with open(os.path.join(path, "rows.csv"), "w") as file:
            file.write("a,b\n1,x\n2,y\n")
        with open(os.path.join(path, "rows.jsonl"), "w") as file:
            file.write('{"a": 1}\n{"a": 2}\n')
        with open(os.path.join(path, "body.txt"), "wb") as file:
            file.write(b"a body")
        yield path


@fuzz(2)
@given(_FEEDER_DATA)
@example({"kind": "csv", "path": 5})
@example({"kind": "choice", "values": 5})
def test_a_feeder_as_data_is_a_feeder_or_a_spec_error(data: object) -> None:
    with folder() as path:
        feeder = spec_error_or(feeder_from_data, "f", data, where="here", relative_to=path)
        if feeder is not None:
            check_feeder("f", feeder)


# -- request templates --
@fuzz(2)
@given(
    st.binary(max_size=40)
    | st.lists(
        st.sampled_from([b"${", b"$${", b"}", b"a", b".", b"$", b"{", b"\xff", b"id", b"${a.b}"])
    ).map(b"".join)
)
def test_a_template_is_cut_at_its_placeholders_or_refused(text: bytes) -> None:
    try:
        segments, slots, offsets = parse(text)
    except TemplateError as exc:
        assert str(exc)
        return
    assert len(segments) == len(slots) + 1 == len(offsets) + 1
    rebuilt = segments[0] + b"".join(
        s.text.encode() + seg for s, seg in zip(slots, segments[1:], strict=True)
    )
    assert rebuilt == text.replace(b"$${", b"${") or b"$${" in text


# -- a WebSocket load's message with ids --
@fuzz()
@given(
    st.one_of(st.text(max_size=20), ANYTHING.map(json.dumps)),
    st.sampled_from(["id", "", "x.y", "\u00e9"]),
)
@example("[" * 3000 + "]" * 3000, "id")
def test_an_id_message_is_a_template_or_a_value_error(message: str, field: str) -> None:
    try:
        template = IdTemplate.from_message(message, field)
    except ValueError as exc:
        assert "answer='id'" in str(exc)
    else:
        assert json.loads(template.payload(7))[field] == 7
    spec_error_or(
        ws_spec, "ws://127.0.0.1:9/", message=message, answer="id", id_field=field or None
    )


# -- mix files --
_PATHS = ["/", "/items", "/a", "/b?q=1", "/${id}", "/${f.a}", "/x/${f.a}", "/${f.zz}", "/${nope}"]
_REQUEST_FIELDS = {
    "method": st.sampled_from(["GET", "POST", "HEAD", "PUT", "post", "BAD METHOD", ""]),
    "headers": st.dictionaries(
        st.sampled_from(["X-A", "Host", "X-Id", "a:b", ""]),
        st.sampled_from(["1", "${id}", "${f.b}", "a\r\nb"]) | st.integers(),
        max_size=2,
    )
    | st.lists(st.tuples(st.sampled_from(["X-A", "X-B"]), st.text(max_size=4))),
    "name": st.sampled_from(["", "search", "a.b", "c"]),
    "weight": st.integers(-1, 3),
}
_BODY = st.sampled_from(["", "x", '{"id": ${id}}', "${f}"]) | st.dictionaries(
    st.sampled_from(["a", "b"]), st.integers(), max_size=2
)
_BODY_FILE = st.sampled_from(["body.txt", "none.txt", "", ".", "a\x00b"])
_REQUEST = spoiled(
    st.one_of(
        *[st.fixed_dictionaries({"path": st.sampled_from(_PATHS)}, optional=_REQUEST_FIELDS)] * 2,
        st.fixed_dictionaries(
            {"path": st.sampled_from(_PATHS), "body": _BODY}, optional=_REQUEST_FIELDS
        ),
        st.fixed_dictionaries(
            {"path": st.sampled_from(_PATHS), "body_file": _BODY_FILE}, optional=_REQUEST_FIELDS
        ),
    )
)

_MIX = spoiled(
    st.fixed_dictionaries(
        {"mix": st.lists(_REQUEST, min_size=1, max_size=3)},
        optional={
            "mix_order": st.sampled_from(["cycle", "weighted", "random"]),
            "feeders": st.dictionaries(
                st.sampled_from(["id", "f", "1x"]), _FEEDER_DATA, max_size=2
            ),
            "seed": st.integers(-1, 2**70),
        },
    )
)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if value != value
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items() if v is not None
            )
            + "}"
        )
    return '""'


def toml_text(data: dict[str, Any], tables: bool) -> str:
    """``data`` as TOML: every value inline, or the mix as ``[[mix]]`` tables."""
    lines = [
        f"{json.dumps(k)} = {toml_value(v)}"
        for k, v in data.items()
        if v is not None and (k != "mix" or not tables)
    ]
    mix = data.get("mix")
    if tables and isinstance(mix, list) and all(isinstance(r, dict) for r in mix):
        for request in mix:
            lines.append("[[mix]]")
            lines += [
                f"{json.dumps(k)} = {toml_value(v)}" for k, v in request.items() if v is not None
            ]
    elif tables and mix is not None:
        lines.insert(0, f'"mix" = {toml_value(mix)}')
    return "\n".join(lines) + "\n"


def load_and_check(path: str, url: str | None = None) -> None:
    options = spec_error_or(load_mix, path, url=url)
    if options is None:
        event("refused: the file")
    elif spec_error_or(http_spec, URL, requests=1, **options) is None:
        event("refused: the spec")
    else:
        event("a checked spec")


@fuzz(3)
@given(st.one_of(_MIX, ANYTHING), st.sampled_from(["json", "toml", "toml-tables"]))
@example({"mix": [{"path": "/", "body_file": "a\x00b"}]}, "json")
@example({"mix": [[1] * 1]}, "json")
def test_a_mix_file_is_options_and_a_spec_or_a_spec_error(data: object, form: str) -> None:
    with folder() as path:
        if form == "json":
            name, text = "mix.json", json.dumps(data)
        else:
            if not isinstance(data, dict):
                data = {"mix": data}
            name, text = "mix.toml", toml_text(data, tables=form == "toml-tables")
        file = os.path.join(path, name)
        with open(file, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
        load_and_check(file)


@fuzz(2)
@given(st.text(max_size=60), st.sampled_from(["mix.json", "mix.toml", "targets.txt"]))
@example("[" * 3000, "mix.json")
@example("a = " + "[" * 3000, "mix.toml")
def test_any_text_as_a_mix_file_is_options_or_a_spec_error(text: str, name: str) -> None:
    with folder() as path:
        file = os.path.join(path, name)
        with open(file, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write(text)
        load_and_check(file)


# -- vegeta targets --
_TARGET_LINES = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(["GET", "POST", "get", "HEAD", "X", "GET\t", "DELETE"]),
            st.sampled_from([" ", "  ", "\t", ""]),
            st.sampled_from(
                [
                    "/",
                    "/items?q=1",
                    "http://127.0.0.1:9/a",
                    "https://127.0.0.1:9/a",
                    "http://other:1/b",
                    "ftp://x/",
                    "items",
                    "http://[::1/",
                    "/a b",
                    "/${id}",
                ]
            ),
        ).map("".join),
        st.sampled_from(
            [
                "X-A: 1",
                "Host: h",
                "Bad header",
                ": v",
                "K:",
                "@body.txt",
                "@none.txt",
                "@",
                "@.",
                "@a\x00b",
                "# name: search",
                "#name:",
                "# a comment",
                "",
                "   ",
            ]
        ),
        st.text(max_size=12),
    ),
    max_size=8,
)
_TARGETS = st.tuples(
    st.sampled_from(["GET /", "POST http://127.0.0.1:9/a", ""]), _TARGET_LINES
).map(lambda parts: [parts[0], *parts[1]])


@fuzz(2)
@given(_TARGETS, st.sampled_from([None, URL, "http://other:1/"]))
@example(["GET http://[::1/"], None)
@example(["GET /", "@a\x00b"], None)
def test_a_targets_file_is_requests_or_a_spec_error(lines: list[str], url: str | None) -> None:
    with folder() as path:
        file = os.path.join(path, "targets.txt")
        with open(file, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write("\n".join(lines))
        load_and_check(file, url)


_JSON_TARGET = spoiled(
    st.fixed_dictionaries(
        {"url": st.sampled_from(["/", "/a", "http://127.0.0.1:9/x", "http://[::1/", "x"])},
        optional={
            "method": st.sampled_from(["GET", "POST", "post", "A B"]),
            "header": st.dictionaries(
                st.sampled_from(["X-A", "X-B"]), st.lists(st.text(max_size=4), max_size=2)
            ),
            "body": st.sampled_from(["aGk=", "!!", ""]),
        },
    )
)


@fuzz(2)
@given(st.lists(_JSON_TARGET, min_size=1, max_size=4))
@example([{"url": "/", "body": "\x80"}])  # not ASCII: b64decode's ValueError, no binascii.Error
def test_json_targets_are_requests_or_a_spec_error(targets: list[object]) -> None:
    with folder() as path:
        file = os.path.join(path, "targets.json")
        with open(file, "w", encoding="utf-8", errors="surrogatepass") as out:
            out.write("\n".join(json.dumps(target) for target in targets))
        load_and_check(file)


# -- the request a checked spec sends --
@fuzz(2)
@given(
    st.sampled_from(["GET", "post", "M-SEARCH", "G\u00c9T", "A1", "PUT"]),
    st.sampled_from(["/", "/a?b=c", "/%20", "/\u00e9", "/a\x01b", "/a\tb", "/a\\b", "/{x}"]),
    st.dictionaries(
        st.sampled_from(
            ["X-A", "a b", "", "X-\u00dc", "Content-Length", "X(1)", "Transfer-Encoding"]
        ),
        st.sampled_from(["1", "\u00e9", "\x7f", "\x01", "a\tb", " x ", "chunked", ""]),
        max_size=2,
    ),
    st.sampled_from([b"", b"x"]),
    st.booleans(),
)
@example("GET", "/", {"a b": "1"}, b"", True)
@example("G\u00c9T", "/", {}, b"", True)
@example("GET", "/", {"Content-Length": "1"}, b"", True)
@example("GET", "/", {"Upgrade": "websocket", "Connection": "Upgrade"}, b"", True)
def test_a_checked_spec_sends_requests_http_parsers_read(
    method: str, path: str, headers: dict[str, str], body: bytes, keepalive: bool
) -> None:
    options: dict[str, Any] = {"method": method, "headers": headers, "body": body}
    spec = spec_error_or(
        http_spec, URL.rstrip("/") + path, requests=1, keepalive=keepalive, **options
    )
    event("refused" if spec is None else "a checked spec")
    if spec is not None:
        assert request_problem(render_spec_request(spec)) == ""


# -- requests rendered from feeders' values --
@fuzz(2)
@given(
    st.sampled_from(["/${v}", "/a?q=${v}&n=${n}", "/${n}/x"]),
    st.sampled_from([{}, {"X-V": "${v}"}, {"X-N": "${n}", "X-A": "a ${v} b"}]),
    st.sampled_from(["", "${v}", '{"n": ${n}, "v": "${v}"}']),
    st.lists(st.binary(max_size=8), min_size=1, max_size=5),
    st.lists(st.integers(-(10**30), 10**30), min_size=1, max_size=5),
    st.booleans(),
)
@example("/", {"X-V": "${v}"}, "", [b"\x01"], [1], True)
@example("/", {"X-V": "${v}"}, "", [b"\x7f"], [1], True)
def test_a_template_renders_requests_http_parsers_read_or_says_why_not(
    path: str,
    headers: dict[str, str],
    body: str,
    values: list[bytes],
    numbers: list[int],
    keepalive: bool,
) -> None:
    spec = LoadSpec(
        kind="http",
        host="127.0.0.1",
        port=9,
        scheme="http",
        target=path,
        method="POST" if body else "GET",
        headers=tuple(headers.items()),
        body=body.encode(),
        keepalive=keepalive,
    )
    template = request_template(spec, None, int_feeders={"n"})
    count = min(len(values), len(numbers))
    columns = [values[:count] if slot.feeder == "v" else numbers[:count] for slot in template.slots]
    try:
        requests = template.render(columns, count)
    except TemplateError as exc:
        assert str(exc)
        return
    assert len(requests) == count
    for request in requests:
        assert request_problem(request) == "", request


@fuzz(2)
@given(
    st.sampled_from(["/", "/chat?room=1", "/\u00e9", "/\u0416", "/a%20b", "/a\x01"]),
    st.dictionaries(
        st.sampled_from(["X-A", "a b", "X-\u00dc", "Origin", "X(1)"]),
        st.sampled_from(["1", "\u00e9", "\u0416", "\x01", "a\tb", "http://h"]),
        max_size=2,
    ),
    st.sampled_from([None, "chat", "a,b", ["x"]]),
)
@example("/\u0416", {}, None)
@example("/", {"X-A": "\u0416"}, None)
@example("/", {"a b": "1"}, None)
def test_a_checked_websocket_spec_sends_a_handshake_http_parsers_read(
    path: str, headers: dict[str, str], subprotocols: object
) -> None:
    spec = spec_error_or(
        ws_spec, "ws://127.0.0.1:9" + path, headers=headers, subprotocols=subprotocols, requests=1
    )
    event("refused" if spec is None else "a checked spec")
    if spec is not None:
        handshake = render_handshake(
            "127.0.0.1:9", spec.target, "k", spec.subprotocols, spec.headers
        )
        assert request_problem(handshake) == ""
