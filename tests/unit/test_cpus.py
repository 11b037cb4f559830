"""CPU sets as users write them, checked before anything starts."""

from __future__ import annotations

import pytest

from pytest_netbench import SpecError, http_spec
from pytest_netbench._host.cpus import available_cpus, parse_cpus

FIRST = available_cpus()[0]


@pytest.mark.parametrize(
    ("given", "parsed"),
    [(None, ()), (str(FIRST), (FIRST,)), ([FIRST], (FIRST,)), (f"{FIRST}-{FIRST}", (FIRST,))],
)
def test_a_cpu_list_is_read_as_linux_tools_write_it(given: object, parsed: tuple[int, ...]) -> None:
    assert parse_cpus(given) == parsed  # type: ignore[arg-type]


def test_every_cpu_this_process_may_use() -> None:
    cpus = available_cpus()
    text = ",".join(map(str, cpus))
    assert parse_cpus(text) == cpus
    assert parse_cpus(f"{cpus[0]}-{cpus[-1]}") == tuple(range(cpus[0], cpus[-1] + 1))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("one", "is not a CPU list: write e.g. '1', '0,2' or '2-3'"),
        ("", "is not a CPU list"),
        ([], "names no CPU"),
        (True, "must be a CPU list"),
        (str(max(available_cpus()) + 1), "is not one this process may use"),
    ],
)
def test_a_bad_cpu_list_is_refused_with_what_to_write(given: object, message: str) -> None:
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_cpus(given)  # type: ignore[arg-type]


def test_a_load_names_its_generator_cpus_before_any_socket() -> None:
    spec = http_spec("http://127.0.0.1:9/", cpus=str(FIRST), requests=1)
    assert spec.cpus == (FIRST,)
    with pytest.raises(SpecError, match="cpus='nope'"):
        http_spec("http://127.0.0.1:9/", cpus="nope")
