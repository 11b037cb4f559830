"""Every load option is declared once (``_input.options.LOAD_OPTIONS``, and an LLM load's own in
``LLM_OPTIONS``): the library's signatures, the fixture's, the CLI's flags, the plugin's
session flags and the docs' listing are held to it here."""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

import pytest

import pytest_netbench
from pytest_netbench import SpecError
from pytest_netbench._cli.llm import LLM_SETS
from pytest_netbench._cli.options import _CROSSCHECK_ONLY, build_parser
from pytest_netbench._experiment.capacity import CapacityOptions, CapacitySearch
from pytest_netbench._experiment.cold_start import ColdStartOptions, Settling
from pytest_netbench._experiment.crosscheck import CrosscheckOptions, SecondTool
from pytest_netbench._experiment.sweep import SweepBounds, SweepOptions
from pytest_netbench._input.flags import SHARED_FLAGS, SharedFlag
from pytest_netbench._input.options import (
    LLM_OPTIONS,
    LOAD_OPTIONS,
    EchoOptions,
    HttpOptions,
    LlmOptions,
    LoadKind,
    LoadOption,
    WsOptions,
    options_of,
)
from pytest_netbench._plugin.loads import NetbenchFixture

# Options an experiment takes that only the library's callers can give (the fixture runs
# its own runner, on its own server and cluster, with its own progress and reruns).
LIBRARY_ONLY = {"runner", "server", "cluster", "progress", "stop", "on_step", "retries"}
FIXTURE_ONLY = {"server", "label", "allow_invalid", "retries", "cluster"}


def names_of(load: LoadKind) -> set[str]:
    return {option.name for option in options_of(load)}


def test_the_typed_dicts_are_the_table() -> None:
    assert set(get_type_hints(HttpOptions)) == names_of("http")
    assert set(get_type_hints(EchoOptions)) == names_of("echo")
    assert set(get_type_hints(WsOptions)) == names_of("ws")
    assert len({option.name for option in LOAD_OPTIONS}) == len(LOAD_OPTIONS)
    llm = {option.name for option in LLM_OPTIONS}
    assert set(get_type_hints(LlmOptions)) == names_of("http") | llm
    assert len(llm) == len(LLM_OPTIONS) and not llm & names_of("http")


def load_entry_points() -> list[tuple[str, Callable[..., Any], str]]:
    nb = pytest_netbench
    http = "Unpack[HttpOptions]"
    echo = "Unpack[EchoOptions]"
    ws = "Unpack[WsOptions]"
    llm = "Unpack[LlmOptions]"
    return [
        ("http_spec", nb.http_spec, http),
        ("echo_spec", nb.echo_spec, echo),
        ("http_load", nb.http_load, http),
        ("http_load_async", nb.http_load_async, http),
        ("echo_load", nb.echo_load, echo),
        ("echo_load_async", nb.echo_load_async, echo),
        ("ws_spec", nb.ws_spec, ws),
        ("ws_load", nb.ws_load, ws),
        ("ws_load_async", nb.ws_load_async, ws),
        ("llm_load", nb.llm_load, llm),
        ("sweep", nb.sweep, http),
        ("capacity", nb.capacity, http),
        ("cold_start", nb.cold_start, http),
        ("crosscheck", nb.crosscheck, http),
        ("fixture.http", NetbenchFixture.http, http),
        ("fixture.echo", NetbenchFixture.echo, echo),
        ("fixture.ws", NetbenchFixture.ws, ws),
        ("fixture.llm", NetbenchFixture.llm, llm),
        ("fixture.sweep", NetbenchFixture.sweep, "Unpack[SweepOptions]"),
        ("fixture.capacity", NetbenchFixture.capacity, "Unpack[CapacityOptions]"),
        ("fixture.cold_start", NetbenchFixture.cold_start, "Unpack[ColdStartOptions]"),
        ("fixture.crosscheck", NetbenchFixture.crosscheck, "Unpack[CrosscheckOptions]"),
    ]


@pytest.mark.parametrize(("name", "function", "annotation"), load_entry_points())
def test_every_entry_point_takes_the_load_options_from_the_table(
    name: str, function: Callable[..., Any], annotation: str
) -> None:
    parameters = inspect.signature(function).parameters.values()
    variadic = [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [str(p.annotation) for p in variadic] == [annotation], name
    # None of its own keywords shadows a load option (it would take the option's place).
    own = {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert not own & {o.name for o in (*LOAD_OPTIONS, *LLM_OPTIONS)}, name


EXPERIMENT_OPTIONS = {
    "sweep": (SweepBounds, SweepOptions, {"rates"}),
    "capacity": (CapacitySearch, CapacityOptions, set()),
    "cold_start": (Settling, ColdStartOptions, set()),
    "crosscheck": (SecondTool, CrosscheckOptions, set()),
}


@pytest.mark.parametrize("experiment", sorted(EXPERIMENT_OPTIONS))
def test_the_fixture_takes_each_experiment_option_by_its_typed_dict(experiment: str) -> None:
    own, combined, named = EXPERIMENT_OPTIONS[experiment]
    library = inspect.signature(getattr(pytest_netbench, experiment)).parameters
    keyword = inspect.Parameter.KEYWORD_ONLY
    takes = {n for n, p in library.items() if p.kind is keyword} - LIBRARY_ONLY - named
    assert set(get_type_hints(own)) == takes
    assert set(get_type_hints(combined)) == takes | names_of("http")
    # The fixture types no default of its own: the library's apply.
    fixture = inspect.signature(getattr(NetbenchFixture, experiment)).parameters
    assert {n for n, p in fixture.items() if p.kind is keyword} - FIXTURE_ONLY == named


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


# What each subcommand leaves out of its load's options, and why (see _cli/options.py).
LEFT_OUT: dict[str, tuple[LoadKind, set[str]]] = {
    "http": ("http", set()),
    "echo": ("echo", set()),
    "ws": ("ws", set()),
    # What a gRPC call sets itself (_cli/options.py's GRPC_LEFT_OUT).
    "grpc": (
        "http",
        {"method", "body", "mix", "mix_order", "feeders", "pipeline", "protocol", "checks"},
    ),
    "sweep": ("http", {"rate", "pipeline", "connect_first", "connect_rate", "stages"}),
    "capacity": ("http", {"rate", "pipeline", "connect_first", "connect_rate", "stages"}),
    "cold-start": (
        "http",
        {
            "requests",
            "rate",
            "arrival",
            "max_connections",
            "warmup",
            "timeline_resolution",
            "stages",
        },
    ),
    # What an LLM load sets itself (_cli/llm.py's LLM_SETS).
    "llm": ("http", set(LLM_SETS)),
    # What wrk and ab can both be told (the CLI module's list: checked here to be rows).
    "crosscheck": ("http", names_of("http") - _CROSSCHECK_ONLY),
}


def test_crosschecks_flags_are_rows_of_the_table() -> None:
    assert names_of("http") >= _CROSSCHECK_ONLY


@pytest.mark.parametrize("command", sorted(LEFT_OUT))
def test_every_cli_load_flag_is_a_row_of_the_table(command: str) -> None:
    load, left_out = LEFT_OUT[command]
    parser = subcommands()[command]
    flags = {a.dest: a for a in parser._actions if a.dest in {o.name for o in LOAD_OPTIONS}}
    expected = {o.name for o in options_of(load) if o.on_cli} - left_out
    assert set(flags) == expected
    for option in options_of(load):
        if option.name in flags:
            action = flags[option.name]
            assert option.cli_flag in action.option_strings, option.name
            assert action.default is None, option.name  # the library's default applies


def test_the_llm_commands_own_flags_are_the_llm_rows() -> None:
    parser = subcommands()["llm"]
    flags = {a.dest: a for a in parser._actions if a.dest in {o.name for o in LLM_OPTIONS}}
    assert set(flags) == {o.name for o in LLM_OPTIONS}
    for option in LLM_OPTIONS:
        action = flags[option.name]
        assert action.option_strings == [option.cli_flag], option.name
        assert action.default is None, option.name  # the library's default applies
        assert action.required == option.required, option.name


def test_a_flag_is_the_option_name_with_dashes() -> None:
    for option in (*LOAD_OPTIONS, *LLM_OPTIONS):
        dashed = option.name.replace("_", "-")
        if option.name == "headers":
            assert option.cli_flag == "--header"  # one header a flag, as curl's
        elif option.name == "feeders":
            assert option.cli_flag == "--feeder"  # one feeder a flag, as headers
        elif option.name == "stages":
            assert option.cli_flag == "--stage"  # one stage a flag, as k6's
        elif option.name == "checks":
            assert option.cli_flag == "--check"  # one check a flag, as stages
        elif option.default is True:
            assert option.cli_flag == f"--no-{dashed}"
        else:
            assert option.cli_flag == f"--{dashed}"


def plugin_flags() -> set[str]:
    parser = pytest.Parser(_ispytest=True)
    from pytest_netbench._plugin.options import add_options

    add_options(parser)
    return {name for opt in parser.getgroup("netbench").options for name in opt.names()}


# The subcommand each shared flag is checked on (every loading subcommand has it).
SHARED_ON = {
    "json": "http",
    "plot": "http",
    "html": "http",
    "cluster": "http",
    "retries": "http",
    # The gate's flags: the plugin's session options, and netbench compare's.
    "markdown": "compare",
    "metrics": "compare",
    "alpha": "compare",
    "storage": "compare",
}


@pytest.mark.parametrize("flag", SHARED_FLAGS, ids=lambda f: f.name)
def test_a_shared_flag_is_built_from_its_row_on_both_faces(flag: SharedFlag) -> None:
    parser = subcommands()[SHARED_ON[flag.name]]
    cli = {s: a for a in parser._actions for s in a.option_strings}
    assert cli[flag.cli_flag].metavar == flag.metavar
    assert flag.plugin_flag in plugin_flags()


def test_stored_runs_default_to_one_folder_on_both_faces() -> None:
    from pytest_netbench._compare.storage import DEFAULT_ROOT

    storage = SHARED_FLAGS[[f.name for f in SHARED_FLAGS].index("storage")]
    assert storage.default == DEFAULT_ROOT
    cli = {s: a for a in subcommands()["compare"]._actions for s in a.option_strings}
    assert cli["--storage"].default == DEFAULT_ROOT


# The ``compare`` subcommand's flags are the plugin's ``--netbench-compare-...`` ones, or
# ``--netbench-`` + the same name where the plugin uses it outside comparisons too.
COMPARE = {
    "--metrics": "--netbench-metrics",
    "--fail": "--netbench-compare-fail",
    "--alpha": "--netbench-alpha",
}


@pytest.mark.parametrize(("cli", "plugin"), sorted(COMPARE.items()))
def test_compare_flags_match_the_plugins(cli: str, plugin: str) -> None:
    parser = subcommands()["compare"]
    assert cli in {s for a in parser._actions for s in a.option_strings}
    assert plugin in plugin_flags()


@pytest.mark.parametrize(
    ("call", "suggestion"),
    [
        (lambda: pytest_netbench.http_load("http://127.0.0.1:9/", conections=5), "connections"),
        (lambda: pytest_netbench.http_spec("http://127.0.0.1:9/", keep_alive=False), "keepalive"),
        (lambda: pytest_netbench.echo_load("127.0.0.1", 9, payload_byte=64), "payload_bytes"),
        (
            lambda: pytest_netbench.sweep("http://127.0.0.1:9/", rates="1", stop_p99=5),
            "stop_p99_ms",
        ),
        (lambda: pytest_netbench.capacity("http://127.0.0.1:9/", max_step=3), "max_steps"),
    ],
)
def test_a_misspelt_option_is_answered_with_the_closest_name_before_any_socket(
    call: Callable[[], object], suggestion: str
) -> None:
    # Port 9 on loopback: nothing listens, and the check comes before any socket anyway.
    with pytest.raises(SpecError, match=f"did you mean '{suggestion}'"):
        call()


def test_an_option_of_the_other_load_kind_says_so() -> None:
    with pytest.raises(
        SpecError, match="'framing' is an option of echo \\(raw TCP\\) loads, not of an HTTP load"
    ):
        pytest_netbench.http_spec("http://127.0.0.1:9/", framing="line")  # type: ignore[call-arg]


def test_an_echo_payload_given_as_a_size_points_to_payload_bytes() -> None:
    with pytest.raises(SpecError, match=r"payload must be bytes .*pass payload_bytes=32768"):
        pytest_netbench.echo_spec("127.0.0.1", 9, payload=32768)  # type: ignore[arg-type]
    assert pytest_netbench.echo_spec("127.0.0.1", 9, payload="ab").payload == b"ab"


def test_a_switch_that_defaults_to_on_says_what_turning_it_off_does() -> None:
    for option in LOAD_OPTIONS:
        assert (option.default is True) == bool(option.off_help), option.name


def docs_table(heading: str, columns: int) -> dict[str, list[str]]:
    """docs/options.md's table of ``columns`` under ``heading``: its rows by the option's
    name."""
    from pathlib import Path

    page = Path(__file__).parents[2] / "docs" / "options.md"
    rows: dict[str, list[str]] = {}
    inside = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip() == heading
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if inside and len(cells) == columns and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def check_row(option: LoadOption, cells: list[str]) -> None:
    if option.on_cli:
        assert f"`{option.cli_flag}`" in cells[1], option.name
    else:
        assert cells[1] == "(Python only)", option.name
    assert cells[-1] == option.help, option.name
    assert cells[3] == (option.unit or "—"), option.name


def test_the_docs_list_every_option_with_its_flag() -> None:
    rows = docs_table("Every load option", 6)
    assert set(rows) == {o.name for o in LOAD_OPTIONS}
    for option in LOAD_OPTIONS:
        check_row(option, rows[option.name])
        kinds = [k for k in ("http", "echo", "ws") if k in option.loads]
        assert rows[option.name][4] == " and ".join(
            [", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds
        )


def test_the_docs_list_the_llm_loads_own_options() -> None:
    rows = docs_table("An LLM load's own options", 5)
    assert set(rows) == {o.name for o in LLM_OPTIONS}
    for option in LLM_OPTIONS:
        check_row(option, rows[option.name])
        default = "(required)" if option.required else option.default
        assert rows[option.name][2] == ("—" if default is None else str(default)), option.name
