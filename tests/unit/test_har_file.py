"""HAR files read as mixes: what is kept of each entry, and the clear errors (no sockets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_netbench import SpecError, load_mix


def har(tmp_path: Path, *entries: dict[str, Any], suffix: str = ".har") -> Path:
    path = tmp_path / f"browsed{suffix}"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": list(entries)}}))
    return path


def entry(url: str, method: str = "GET", **request: Any) -> dict[str, Any]:
    return {"request": {"method": method, "url": url, "headers": [], **request}}


URL = "http://127.0.0.1:8080/"


def test_each_entry_is_a_kind_with_its_path_headers_and_body(tmp_path: Path) -> None:
    headers = [
        {"name": ":authority", "value": "127.0.0.1:8080"},
        {"name": "Host", "value": "127.0.0.1:8080"},
        {"name": "Content-Length", "value": "8"},
        {"name": "Cookie", "value": "session=abc"},
        {"name": "Accept", "value": "application/json"},
    ]
    params = [{"name": "user", "value": "a b"}, {"name": "pw", "value": "x&y"}]
    form = {"mimeType": "application/x-www-form-urlencoded", "params": params}
    mix = load_mix(
        har(
            tmp_path,
            entry("http://127.0.0.1:8080/items?page=2", headers=headers),
            entry("http://127.0.0.1:8080/cart", "POST", postData={"text": '{"id":3}'}),
            entry("http://127.0.0.1:8080/login", "post", postData=form),
            entry("data:image/png;base64,AAAA"),
        ),
        url=URL,
    )["mix"]
    assert [k.label for k in mix] == ["GET /items?page=2", "POST /cart", "POST /login"]
    assert mix[0].headers == (("Cookie", "session=abc"), ("Accept", "application/json"))
    assert mix[1].body == b'{"id":3}'
    assert mix[2].body == b"user=a+b&pw=x%26y"


def test_the_same_request_twice_is_two_kinds_named_by_entry(tmp_path: Path) -> None:
    mix = load_mix(har(tmp_path, entry(URL + "a"), entry(URL + "b"), entry(URL + "a")))["mix"]
    assert [k.label for k in mix] == ["GET /a (entry 1)", "GET /b", "GET /a (entry 3)"]


def test_a_json_file_holding_a_har_is_read_as_one(tmp_path: Path) -> None:
    mix = load_mix(har(tmp_path, entry(URL + "x"), suffix=".json"), url=URL)["mix"]
    assert [k.label for k in mix] == ["GET /x"]


def test_requests_to_other_servers_are_listed_remote_hosts_first(tmp_path: Path) -> None:
    path = har(
        tmp_path,
        entry(URL),
        entry("https://fonts.example.com/a.woff2"),
        entry("https://fonts.example.com/b.woff2"),
        entry("http://127.0.0.1:9090/api"),
    )
    with pytest.raises(SpecError) as caught:
        load_mix(path, url=URL)
    said = str(caught.value)
    assert "3 of 4 requests go to other servers than http://127.0.0.1:8080:" in said
    assert "https://fonts.example.com:443 (2), http://127.0.0.1:9090 (1)" in said
    assert "netbench sends only to this machine" in said


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{not json", "not a HAR file: Expecting property name"),
        ('{"log": {}}', 'no {"log": {"entries": [...]}} in it'),
        ('{"log": []}', 'no {"log": {"entries": [...]}} in it'),
        ('{"log": {"entries": [{"request": {"url": "http://a:1/",'
         ' "postData": {"params": ["x"]}}}]}}', "entry 1: a form field is"),
        ('{"log": {"entries": []}}', "no HTTP requests in the HAR file"),
        ('{"log": {"entries": [{"response": {}}]}}', "entry 1: an entry has a request with a url"),
        ('{"log": {"entries": [{"request": {"method": "G T", "url": "http://a:1/"}}]}}',
         "method must be a word"),
    ],
)  # fmt: skip
def test_a_file_that_is_not_a_har_says_why(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "broken.har"
    path.write_text(content)
    with pytest.raises(SpecError) as caught:
        load_mix(path)
    assert said in str(caught.value) and "broken.har" in str(caught.value)


def test_a_mix_file_that_names_a_request_log_is_no_har(tmp_path: Path) -> None:
    path = tmp_path / "mix.json"
    path.write_text('{"mix": [{"name": "log", "path": "/log"}]}')
    assert [k.label for k in load_mix(path)["mix"]] == ["log"]
