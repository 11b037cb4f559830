"""Request templates before any socket: ``${name}`` placeholders cut into fixed segments and
slots, and a batch rendered to the exact bytes a request must be (issue 18)."""

from __future__ import annotations

import pytest

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto.templates import (
    Slot,
    TemplateError,
    has_placeholder,
    parse,
    request_problem,
    request_template,
)

HEAD = b"Host: 127.0.0.1:8080\r\nUser-Agent: netbench\r\n"


def test_a_template_is_cut_into_segments_and_slots() -> None:
    segments, slots, offsets = parse(b"/items/${id}/${user.email}?x=1")
    assert segments == (b"/items/", b"/", b"?x=1")
    assert slots == (Slot("id", None), Slot("user", "email"))
    assert offsets == (7, 13)


def test_json_braces_are_themselves_and_a_doubled_dollar_writes_a_literal_placeholder() -> None:
    segments, slots, _ = parse(b'{"a": {"b": [1, {}]}, "t": "$${id} costs $5", "u": ${u}}')
    assert slots == (Slot("u", None),)
    assert segments == (b'{"a": {"b": [1, {}]}, "t": "${id} costs $5", "u": ', b"}")
    assert not has_placeholder(b'{"price": "$5", "tpl": "$${x}"}')
    assert has_placeholder(b"/a/${x}")


def test_a_column_name_may_hold_spaces_and_dashes() -> None:
    assert parse(b"${users.first name}-${users.e-mail}")[1] == (
        Slot("users", "first name"),
        Slot("users", "e-mail"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"/items/${id", "an unclosed \\$\\{"),
        (b"/items/${}", "\\$\\{\\} is not a placeholder"),
        (b"/items/${1id}", "\\$\\{1id\\} is not a placeholder"),
        (b"/items/${a b}", "\\$\\{a b\\} is not a placeholder"),
        (b"/items/${a.}", "write \\$\\$\\{ for a literal"),
    ],
)
def test_a_malformed_placeholder_is_refused_with_the_escape_named(
    text: bytes, message: str
) -> None:
    with pytest.raises(TemplateError, match=message):
        parse(text)


def spec_of(
    target: str = "/",
    *,
    method: str = "GET",
    headers: dict[str, str] | None = None,
    body: str = "",
    keepalive: bool = True,
    proxy: tuple[str, int] | None = None,
) -> LoadSpec:
    """The spec of a load at 127.0.0.1:8080 (the templates alone: no feeders checked)."""
    return LoadSpec(
        kind="http",
        host="127.0.0.1",
        port=8080,
        target=target,
        method=method,
        headers=tuple((headers or {}).items()),
        body=body.encode(),
        keepalive=keepalive,
        proxy=proxy,
    )


def test_a_path_and_header_template_renders_byte_exact_requests() -> None:
    spec = spec_of("/items/${id}?user=${u.name}", headers={"X-Request-Id": "${rid}"})
    template = request_template(spec, None, int_feeders={"id"})
    assert [s.region for s in template.slots] == ["target", "target", "header"]
    out = template.render([[7, 8], [b"ann", b"bob"], [b"r-1", b"r-2"]], 2)
    assert out == [
        b"GET /items/7?user=ann HTTP/1.1\r\n" + HEAD + b"X-Request-Id: r-1\r\n\r\n",
        b"GET /items/8?user=bob HTTP/1.1\r\n" + HEAD + b"X-Request-Id: r-2\r\n\r\n",
    ]


def test_a_varying_body_gets_its_own_content_length() -> None:
    spec = spec_of(
        method="POST",
        headers={"Content-Type": "application/json"},
        body='{"user": "${u}", "qty": ${n}, "note": "100%"}',
    )
    template = request_template(spec, None, int_feeders={"n"})
    out = template.render([[b"a", b"bernadette"], [1, 12345]], 2)
    bodies = [
        b'{"user": "a", "qty": 1, "note": "100%"}',
        b'{"user": "bernadette", "qty": 12345, "note": "100%"}',
    ]
    for request, body in zip(out, bodies, strict=True):
        head = b"POST / HTTP/1.1\r\n" + HEAD + b"Content-Type: application/json\r\n"
        assert request == head + b"Content-Length: %d\r\n\r\n" % len(body) + body
        assert request_problem(request) == ""


def test_a_fixed_body_with_an_escape_counts_the_bytes_it_sends() -> None:
    spec = spec_of("/${id}", method="POST", body='{"t": "$${x}"}')
    template = request_template(spec, None)
    (request,) = template.render([[b"1"]], 1)
    body = b'{"t": "${x}"}'
    assert request.endswith(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    assert request_problem(request) == ""


def test_nothing_to_fill_renders_the_same_bytes_object_every_time() -> None:
    spec = spec_of(keepalive=False)
    template = request_template(spec, None)
    assert template.fixed == b"GET / HTTP/1.1\r\n" + HEAD + b"Connection: close\r\n\r\n"
    first, second = template.render([], 2)
    assert first is second is template.fixed


def test_a_mix_kind_takes_the_load_headers_and_a_proxy_the_absolute_form() -> None:
    spec = spec_of(headers={"Authorization": "Bearer ${token}"}, proxy=("127.0.0.1", 3128))
    kind = Request("DELETE", "/items/${id}", headers={"X-Kind": "delete"})
    template = request_template(spec, kind)
    assert [slot.feeder for slot in template.slots] == ["id", "token"]  # in request order
    (request,) = template.render([[b"9"], [b"t0"]], 1)
    assert request == (
        b"DELETE http://127.0.0.1:8080/items/9 HTTP/1.1\r\n"
        + HEAD
        + b"Authorization: Bearer t0\r\nX-Kind: delete\r\n\r\n"
    )


def test_path_values_are_percent_encoded_only_where_a_url_needs_it() -> None:
    spec = spec_of("/search?q=${q}")
    template = request_template(spec, None)
    values = [b"plain", b"two words", b"caf\xc3\xa9", b"a%20b&c=d/e", b'"#<>{}|\r\n']
    lines = [r.split(b"\r\n")[0] for r in template.render([values], len(values))]
    assert lines == [
        b"GET /search?q=plain HTTP/1.1",
        b"GET /search?q=two%20words HTTP/1.1",
        b"GET /search?q=caf%C3%A9 HTTP/1.1",
        b"GET /search?q=a%20b&c=d/e HTTP/1.1",  # already encoded: as it is
        b"GET /search?q=%22%23%3C%3E%7B%7D%7C%0D%0A HTTP/1.1",
    ]


def test_a_header_value_with_a_line_break_is_refused() -> None:
    spec = spec_of(headers={"X-User": "${u}"})
    template = request_template(spec, None)
    with pytest.raises(TemplateError, match="cannot hold a line break"):
        template.render([[b"ok", b"evil\r\nX-Injected: 1"]], 2)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (spec_of(headers={"X-${h}": "v"}), "\\$\\{h\\} is in a header name"),
        (spec_of(method="${m}"), "method must be a token of letters"),
    ],
)
def test_placeholders_go_nowhere_but_path_header_values_and_body(
    spec: LoadSpec, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        request_template(spec, None)


def test_a_varying_body_refuses_a_content_length_of_its_own() -> None:
    spec = spec_of(method="POST", headers={"Content-Length": "10"}, body="${b}")
    with pytest.raises(TemplateError, match="drop the Content-Length header"):
        request_template(spec, None)


def test_request_problem_reads_a_request_as_llhttp_does() -> None:
    assert request_problem(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n") == ""
    assert request_problem(b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab") != ""
    assert request_problem(b"GET /a b HTTP/1.1\r\n\r\n") != ""
