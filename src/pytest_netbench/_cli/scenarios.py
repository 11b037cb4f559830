"""``netbench scenarios FILE.toml [URL]``: several named loads at once against one server,
from a TOML file as k6's ``options.scenarios``::

    url = "http://127.0.0.1:8080"          # or the URL argument

    [scenarios.browse]
    path = "/items"
    rate = 200
    duration = "10s"

    [scenarios.admin]
    path = "/admin/report"
    start = "2s"
    connections = 2
    duration = "5s"
    checks = ["status 200"]

Each table is a :class:`Scenario`: ``path``, ``start``, and any option of ``netbench
http`` by its Python name (seconds as a number or ``"10s"``); or, with
``flow = "module:function"``, a flow's virtual users (``users``, ``sessions``,
``client``... as ``netbench flow`` takes them). The report is all of them
together, each scenario a row of its per-request table; ``--threshold`` names one as
``by_request.admin.p99_ms``.
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path
from typing import Any

from pytest_netbench._cli.exit_codes import ExitCode
from pytest_netbench._cli.loads import load_status, print_report, read_thresholds
from pytest_netbench._errors import SpecError
from pytest_netbench._input.durations import parse_duration
from pytest_netbench._input.options import BY_NAME
from pytest_netbench._input.stages import parse_stage_text
from pytest_netbench._load.scenarios import (
    Scenario,
    ScenarioKind,
    ScenariosResult,
    run_scenarios,
)


def read_scenarios(file: Path, url: str | None) -> tuple[str, dict[str, ScenarioKind]]:
    """The file's scenarios and the URL they go to; a SpecError names what is wrong."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"cannot read {file}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{file}: not TOML: {exc}") from None
    target = url or data.get("url")
    if not isinstance(target, str):
        raise SpecError(f'{file}: give the server as url = "http://..." or on the command line')
    tables = data.get("scenarios")
    if not isinstance(tables, dict) or not tables:
        raise SpecError(f"{file}: no [scenarios.NAME] table")
    scenarios: dict[str, ScenarioKind] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise SpecError(f"{file}: scenarios.{name} is no table")
        options = {key: _value(file, name, key, value) for key, value in table.items()}
        start = options.pop("start", 0.0)
        if "flow" in options:  # a flow's virtual users: flow = "module:function"
            scenarios[name] = _flow_scenario(file, name, options, start)
            continue
        path = options.pop("path", "/")
        scenarios[name] = Scenario(path, start=start, **options)
    return target, scenarios


def _flow_scenario(file: Path, name: str, options: dict[str, Any], start: float) -> ScenarioKind:
    from pytest_netbench._flow.reference import load_flows
    from pytest_netbench._flow.scenario import FlowScenario

    reference = options.pop("flow")
    if not isinstance(reference, str):
        raise SpecError(f'{file}: scenarios.{name}.flow: write flow = "module:function"')
    client = options.pop("client", "httpx")
    return FlowScenario(load_flows(reference), start=start, client=client, **options)


def _value(file: Path, name: str, key: str, value: Any) -> Any:
    """A TOML value as the option takes it: durations in seconds, stages as Stage."""
    seconds = key == "start" or (key in BY_NAME and BY_NAME[key].takes == "seconds")
    try:
        if seconds and isinstance(value, str):
            return parse_duration(value)
        if key == "stages" and isinstance(value, list):
            return [parse_stage_text(v) if isinstance(v, str) else v for v in value]
    except (SpecError, ValueError) as exc:
        raise SpecError(f"{file}: scenarios.{name}.{key}: {exc}") from None
    return value


def run_scenarios_command(args: argparse.Namespace) -> ExitCode:
    url, scenarios = read_scenarios(args.file, args.url)
    thresholds = read_thresholds(args, requests=list(scenarios))
    from pytest_netbench._cli.live import CommandLive
    from pytest_netbench._cli.loads import sampled_server

    args.url = url  # the file's, when the command line gave none
    server = sampled_server(args)
    # Ctrl-C stops every scenario running (each marked interrupted), as it stops a load.
    with CommandLive(progress=False, quiet=args.quiet) as live:
        result = run_scenarios(url, scenarios, stop=live.stop, server=server)
    total = result.total
    verdict = thresholds.evaluate(total) if thresholds is not None else None
    if args.json is not None:
        import json

        args.json.write_text(json.dumps(result.to_dict(), indent=2, allow_nan=False))
    if not args.quiet:
        from pytest_netbench._report.summary import format_result

        print_report(total, _starts(result) + format_result(total, thresholds=verdict))
    if args.fail_invalid and not all(r.valid for r in result.by_scenario.values()):
        return ExitCode.INVALID
    return load_status(total, verdict, fail_invalid=args.fail_invalid)


def _starts(result: ScenariosResult) -> str:
    lines = ["Scenarios (all of them together below, each a row of the per-request table)"]
    for name, r in result.by_scenario.items():
        spec = r.spec
        shape = ""
        if spec is not None:
            unit = "user" if r.sessions is not None else "connection"
            many = "" if spec.connections == 1 else "s"
            shape = f"{spec.rate:g}/s" if spec.rate else f"{spec.connections} {unit}{many}"
        lines.append(
            f"  {name}: {r.mode} loop, {shape}, from {result.starts[name]:g} s for"
            f" {r.duration_s:.2f} s, {r.sent:,} sent, {r.ok:,} ok"
        )
    return "\n".join(lines) + "\n\n"
