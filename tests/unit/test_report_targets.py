"""Every heading names what the load sent: one request by method and URL, a mix by its
server, kinds and order, templates by their feeders; never a request it did not send."""

from __future__ import annotations

import dataclasses

from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._model.feeders import count
from pytest_netbench._report.experiments import sweep_heading
from pytest_netbench._report.targets import describe_target

PLAIN = LoadSpec(kind="http", host="127.0.0.1", port=8080, target="/items?page=2", duration_s=1.0)
MIX = dataclasses.replace(
    PLAIN,
    target="/",
    mix=(Request("GET", "/items", name="list"), Request("POST", "/orders", weight=3)),
    mix_order="weighted",
)


def test_one_request_is_its_method_and_url() -> None:
    assert describe_target(PLAIN) == "GET http://127.0.0.1:8080/items?page=2"
    echo = LoadSpec(kind="echo", host="::1", port=9000)
    assert describe_target(echo) == "tcp://[::1]:9000"


def test_a_mix_is_its_server_kinds_and_order() -> None:
    assert describe_target(MIX) == (
        "http://127.0.0.1:8080, a mix of 2 requests by weight (list, POST /orders)"
    )
    fed = dataclasses.replace(MIX, mix=MIX.mix[:1], mix_order="cycle", feeders=(("id", count()),))
    assert describe_target(fed) == (
        "http://127.0.0.1:8080, a mix of 1 request in turn (list), filled from feeders id (seed 0)"
    )


def test_a_sweep_of_a_mix_says_so_within_80_columns() -> None:
    lines = sweep_heading(MIX, (100.0, 200.0))
    assert " ".join(" ".join(lines[:2]).split()).startswith(
        "Sweep http://127.0.0.1:8080, a mix of 2 requests by weight (list, POST /orders): 2"
    )
    assert all(len(line) <= 80 for line in lines)
