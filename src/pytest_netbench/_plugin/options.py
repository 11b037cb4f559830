"""Command-line and ini options of the plugin, parsed once into a frozen settings object.

Every value is checked here, at configure time, so a typo in ``--netbench-compare-fail``
stops the session with a usage error before a single server starts.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

from pytest_netbench._input.flags import SHARED_BY_NAME, STORAGE_ROOT, shared_help

if TYPE_CHECKING:
    from pytest_netbench._servers.interpreter_names import NamedInterpreter

DEFAULT_COLUMNS: tuple[str, ...] = ("rps", "p99_ms")
DEFAULT_SEQUENTIAL = "3:18"
ScopeName = Literal["function", "class", "module", "package", "session"]
SERVER_SCOPES: tuple[ScopeName, ...] = ("function", "class", "module", "package", "session")


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user asked the plugin to do in this session."""

    enabled: bool = False
    scale: float = 1.0
    trials: int = 1
    columns: tuple[str, ...] = DEFAULT_COLUMNS
    baseline_column: str | None = None
    json_path: str | None = None
    markdown_path: str | None = None
    benchmark_json_path: str | None = None
    plot_dir: str | None = None
    html_path: str | None = None
    # A Dask scheduler whose workers run every load's shares (``workers=N``), one each.
    cluster: str | None = None
    save_name: str | None = None
    compare_name: str | None = None  # "" = the latest stored run
    compare_fail: str | None = None
    # Sequential gate: (trials a side per batch, budget a side); None: fixed trials.
    sequential: tuple[int, int] | None = None
    # False alarms allowed per compared test, all its gated metrics together (one-sided);
    # None: the gate's default.
    alpha: float | None = None
    ab_refs: tuple[str, str] | None = None
    # A/B from a base checkout: each test's own server spec started twice, HEAD as the test
    # gives it, BASE from the same place under this directory (absolute); the checkout the
    # test runs in is pytest's rootdir (``ab_head_dir``).
    ab_base_dir: str | None = None
    ab_head_dir: str | None = None
    storage_dir: str = STORAGE_ROOT
    server_scope: ScopeName = "function"
    # Reruns of a load spoiled by the generator; None: the library's default.
    retries: int | None = None
    # Interpreters named for python= (ini netbench_python, NETBENCH_PYTHON, the flag).
    pythons: Mapping[str, NamedInterpreter] = field(default_factory=dict)
    # --netbench-profile: every load of a managed server gets a profiled run of its own.
    profile: bool = False

    @property
    def compare_requested(self) -> bool:
        return self.compare_name is not None

    @property
    def ab_mode(self) -> bool:
        """Whether each test's server is measured as two arms, BASE and HEAD."""
        return self.ab_refs is not None or self.ab_base_dir is not None


# How the plugin words the flags it shares with ``netbench`` (``_input.flags.SHARED_FLAGS``):
# what each writes or runs, and its default in the plugin's words.
_SHARED_WHAT = {
    "json": "every result",
    "markdown": "the matrices",
    "metrics": "in each matrix cell",
    "alpha": "",
    "storage": ": --netbench-save and --netbench-compare keep runs there",
    "plot": "the session",
    "html": "the session: environment, matrices, experiment tables, invalid results and"
    " comparison verdicts",
    "cluster": "",
    "retries": "",
}
_SHARED_DEFAULT_WORDS = {
    "retries": "2, or ini netbench_retries",
    "metrics": ",".join(DEFAULT_COLUMNS),
    "alpha": "0.01",
}


def _add_shared(
    group: pytest.OptionGroup, name: str, default: object = None, note: str = ""
) -> None:
    """A flag the CLI has as ``--NAME``, here ``--netbench-NAME``, from the one row;
    ``note``: what only the plugin does with it."""
    flag = SHARED_BY_NAME[name]
    default = default if default is not None else flag.default
    group.addoption(
        flag.plugin_flag,
        type=flag.value_type,
        default=default,
        metavar=flag.metavar,
        help=shared_help(
            name, what=_SHARED_WHAT[name], default=_SHARED_DEFAULT_WORDS.get(name, default)
        )
        + note,
    )


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("netbench", "performance tests of network servers (pytest-netbench)")
    group.addoption(
        "--netbench",
        action="store_true",
        default=False,
        help="run performance tests (without it they are skipped).",
    )
    group.addoption(
        "--netbench-profile",
        action="store_true",
        default=False,
        help="after each load of a managed server, run it once more with the server's"
        " process tree sampled (py-spy for Python, perf for native servers) and show its top"
        " functions; the profiled run is never the one judged (docs/profiles.md).",
    )
    group.addoption(
        "--netbench-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every load's duration, warm-up and request count by F (default 1).",
    )
    group.addoption(
        "--netbench-trials",
        type=int,
        default=1,
        metavar="N",
        help="repeat each load N times; the test gets the median trial (default 1).",
    )
    _add_shared(group, "retries")
    _add_shared(group, "metrics", default=",".join(DEFAULT_COLUMNS))
    group.addoption(
        "--netbench-baseline",
        default=None,
        metavar="VALUE",
        help="parameter value whose column (or row) the matrix ratios are relative to.",
    )
    _add_shared(group, "json")
    _add_shared(group, "markdown", note=" (also appended to $GITHUB_STEP_SUMMARY when set)")
    group.addoption(
        "--netbench-benchmark-json",
        default=None,
        metavar="PATH",
        help="write results in pytest-benchmark's JSON format.",
    )
    _add_shared(group, "plot")
    _add_shared(group, "html")
    _add_shared(group, "cluster")
    group.addoption(
        "--netbench-save",
        default=None,
        metavar="NAME",
        help="store this run under .netbench/<machine>/ as NAME.",
    )
    group.addoption(
        "--netbench-compare",
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="compare with a stored run (NAME, or the latest when omitted).",
    )
    group.addoption(
        "--netbench-compare-fail",
        default=None,
        metavar="SPEC",
        help="fail the session on a significant regression past a threshold, "
        "e.g. p99_ms:10%%,rps:5%% (with --netbench-compare or --netbench-ab).",
    )
    group.addoption(
        "--netbench-sequential",
        nargs="?",
        const=DEFAULT_SEQUENTIAL,
        default=None,
        metavar="BATCH:BUDGET",
        help="with --netbench-compare-fail: add trials BATCH at a time until the gate decides"
        f" or BUDGET trials a side are spent (default {DEFAULT_SEQUENTIAL}; error rates hold"
        " over every look, see docs/gating.md).",
    )
    _add_shared(group, "alpha")
    group.addoption(
        "--netbench-ab",
        nargs=2,
        default=None,
        metavar=("BASE", "HEAD"),
        help="A/B mode: measure two servers (catalog names or quoted commands with {port}) "
        "in interleaved trials in place of each test's `server`, and compare HEAD with BASE.",
    )
    group.addoption(
        "--netbench-ab-base-dir",
        default=None,
        metavar="PATH",
        help="A/B mode from a checkout of the base revision at PATH: each test's own server "
        "(its spec: command, cwd, env, ready check, cpus...) runs twice in interleaved "
        "trials, HEAD as the test gives it and BASE started from the same place under PATH "
        "(paths into this checkout, pytest's rootdir, point into PATH where it has them).",
    )
    _add_shared(group, "storage")
    group.addoption(
        "--netbench-python",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="name an interpreter for python=NAME (repeatable), e.g. "
        "pypy3=.venv-pypy/bin/pypy3; adds to ini netbench_python and NETBENCH_PYTHON.",
    )
    parser.addini(
        "netbench_python",
        type="linelist",
        default=[],
        help="interpreters for python=NAME, one NAME=PATH a line (relative to the ini file).",
    )
    parser.addini(
        "netbench_retries",
        default="",
        help="reruns of a load the generator made invalid (as --netbench-retries; default 2).",
    )
    parser.addini(
        "netbench_server_scope",
        default="function",
        help="scope of the `server` fixture: function, class, module, package or session.",
    )


def read_settings(config: pytest.Config) -> Settings:
    """Parse and check the options; bad values raise :class:`pytest.UsageError`."""
    opt = config.getoption
    scale = float(opt("--netbench-scale"))
    if not scale > 0:
        raise pytest.UsageError(f"--netbench-scale must be > 0 (got {scale}); try 0.1 or 2")
    trials = int(opt("--netbench-trials"))
    if trials < 1:
        raise pytest.UsageError(f"--netbench-trials must be at least 1 (got {trials})")
    columns = _parse_columns(str(opt("--netbench-metrics")))
    compare_fail = opt("--netbench-compare-fail")
    compare_name = opt("--netbench-compare")
    ab = opt("--netbench-ab")
    base_dir = _read_base_dir(opt("--netbench-ab-base-dir"), ab)
    if compare_fail is not None and compare_name is None and ab is None and base_dir is None:
        raise pytest.UsageError(
            "--netbench-compare-fail needs something to compare with:"
            " add --netbench-compare [NAME], --netbench-ab BASE HEAD or"
            " --netbench-ab-base-dir PATH"
        )
    if compare_fail is not None:
        _check_thresholds(str(compare_fail))
    sequential = _read_sequential(opt("--netbench-sequential"), compare_fail, trials)
    retries = _read_retries(opt("--netbench-retries"), str(config.getini("netbench_retries")))
    alpha = _read_alpha(opt("--netbench-alpha"), compare_fail)
    scope = str(config.getini("netbench_server_scope")).strip() or "function"
    if scope not in SERVER_SCOPES:
        raise pytest.UsageError(
            f"netbench_server_scope = {scope!r} is not a pytest scope;"
            f" use one of {', '.join(SERVER_SCOPES)}"
        )
    storage_dir = str(opt("--netbench-storage"))
    if opt("--netbench") and compare_name is not None and not hasattr(config, "workerinput"):
        _check_baseline(storage_dir, str(compare_name))
    return Settings(
        enabled=bool(opt("--netbench")),
        scale=scale,
        trials=trials,
        columns=columns,
        baseline_column=opt("--netbench-baseline"),
        json_path=opt("--netbench-json"),
        markdown_path=opt("--netbench-markdown"),
        benchmark_json_path=opt("--netbench-benchmark-json"),
        plot_dir=_check_plot_dir(opt("--netbench-plot")),
        html_path=opt("--netbench-html"),
        cluster=opt("--netbench-cluster"),
        save_name=opt("--netbench-save"),
        compare_name=compare_name,
        compare_fail=compare_fail,
        sequential=sequential,
        alpha=alpha,
        ab_refs=_parse_ab(ab),
        ab_base_dir=base_dir,
        ab_head_dir=str(config.rootpath) if base_dir is not None else None,
        storage_dir=storage_dir,
        server_scope=scope,
        retries=retries,
        pythons=_read_pythons(config),
        profile=bool(opt("--netbench-profile")),
    )


def _read_pythons(config: pytest.Config) -> dict[str, NamedInterpreter]:
    """The named interpreters: the ini's, then NETBENCH_PYTHON's, then the flag's win.

    Entries of the ini and the environment may name an interpreter only some machines have,
    so a missing file is reported when the name is used; one typed on the command line is
    checked now.
    """
    from pytest_netbench._errors import InterpreterNotFound, SpecError
    from pytest_netbench._servers import interpreter_names

    inifile = config.inipath
    base = inifile.parent if inifile is not None else config.rootpath
    where = f"netbench_python in {inifile}" if inifile is not None else "netbench_python"
    try:
        named = interpreter_names.parse_entries(
            config.getini("netbench_python"), base_dir=base, source=where
        )
        named.update(interpreter_names.from_environment())
        flagged = interpreter_names.parse_entries(
            config.getoption("--netbench-python"), base_dir=Path.cwd(), source="--netbench-python"
        )
        for entry in flagged.values():
            entry.check()
    except (SpecError, InterpreterNotFound) as exc:
        raise pytest.UsageError(str(exc)) from None
    named.update(flagged)
    return named


def _check_plot_dir(directory: str | None) -> str | None:
    """With --netbench-plot, stop before the first test rather than after the last one
    when matplotlib is missing."""
    if directory is not None:
        from pytest_netbench._report.plots.canvas import MISSING, matplotlib_installed

        if not matplotlib_installed():
            raise pytest.UsageError(f"--netbench-plot {directory}: {MISSING}")
    return directory


def _read_alpha(flag: float | None, compare_fail: str | None) -> float | None:
    if flag is None:
        return None
    from pytest_netbench._compare.family import DEFAULT_ALPHA

    if compare_fail is None:
        raise pytest.UsageError(
            "--netbench-alpha sets the gate's false-alarm rate: it needs"
            " --netbench-compare-fail with the thresholds to gate"
        )
    if not 0 < flag < 0.5:
        raise pytest.UsageError(
            f"--netbench-alpha must be between 0 and 0.5 (got {flag:g}); the default is"
            f" {DEFAULT_ALPHA:g}, one false alarm in {1 / DEFAULT_ALPHA:.0f} unchanged tests"
        )
    return float(flag)


def _read_retries(flag: int | None, ini: str) -> int | None:
    """The flag wins over the ini value; neither: None (the library's default)."""
    if flag is None and not ini.strip():
        return None
    source = "--netbench-retries" if flag is not None else "netbench_retries (ini)"
    try:
        retries = int(flag if flag is not None else ini.strip())
    except ValueError:
        raise pytest.UsageError(f"{source} must be a whole number >= 0, got {ini!r}") from None
    if retries < 0:
        raise pytest.UsageError(
            f"{source} must be >= 0 (got {retries}); 0 keeps the first run, invalid or not"
        )
    return retries


def _parse_columns(text: str) -> tuple[str, ...]:
    if text == ",".join(DEFAULT_COLUMNS):
        return DEFAULT_COLUMNS  # spares every plain pytest run the import below
    from pytest_netbench._compare.metrics import check_metrics
    from pytest_netbench._errors import SpecError

    try:
        return check_metrics(text.split(","))
    except SpecError as exc:
        raise pytest.UsageError(f"--netbench-metrics {text!r}: {exc}") from None


def _check_thresholds(text: str) -> None:
    from pytest_netbench._compare.gate import parse_thresholds

    try:
        parse_thresholds(text)
    except ValueError as exc:
        raise pytest.UsageError(f"--netbench-compare-fail {text!r}: {exc}") from None


def _check_baseline(storage_dir: str, ref: str) -> None:
    """The stored run to compare with must exist before the first load, not after the
    last: a CI job with a misspelt name would run every load for nothing. (An xdist
    worker leaves this to the controller, which stops before any worker starts.)"""
    from pytest_netbench._compare.storage import Storage
    from pytest_netbench._errors import NetbenchError

    flag = f"--netbench-compare {ref}" if ref else "--netbench-compare"
    try:
        Storage(storage_dir).load(ref or None)
    except (NetbenchError, OSError, ValueError) as exc:
        raise pytest.UsageError(f"{flag}: {exc}") from None


def _read_sequential(
    text: str | None, compare_fail: str | None, trials: int
) -> tuple[int, int] | None:
    """``BATCH:BUDGET`` -> (batch, budget); only with a gate to consult, instead of
    ``--netbench-trials``."""
    if text is None:
        return None
    if compare_fail is None:
        raise pytest.UsageError(
            "--netbench-sequential stops when the gate decides: add --netbench-compare-fail"
        )
    if trials != 1:
        raise pytest.UsageError(
            "--netbench-sequential sets the trials itself (BATCH:BUDGET); drop --netbench-trials"
        )
    batch, _, budget = text.partition(":")
    try:
        sizes = int(batch), int(budget)
    except ValueError:
        sizes = (0, 0)
    if not 2 <= sizes[0] <= sizes[1]:
        raise pytest.UsageError(
            f"--netbench-sequential {text!r}: write BATCH:BUDGET with 2 <= BATCH <= BUDGET,"
            f" e.g. {DEFAULT_SEQUENTIAL}"
        )
    return sizes


def _read_base_dir(value: str | None, ab: Any) -> str | None:
    """``--netbench-ab-base-dir PATH``: an existing directory, as an absolute path; not
    with ``--netbench-ab`` (one A/B at a time)."""
    if value is None:
        return None
    if ab is not None:
        raise pytest.UsageError(
            "--netbench-ab-base-dir and --netbench-ab are two ways to name the base: give one"
        )
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        raise pytest.UsageError(
            f"--netbench-ab-base-dir {value!r}: no such directory; give the base revision's"
            " checkout (e.g. actions/checkout with `path: base`)"
        )
    return str(path)


def _parse_ab(value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    base, head = (str(v).strip() for v in value)
    for ref in (base, head):
        if not ref:
            raise pytest.UsageError("--netbench-ab needs two non-empty servers: BASE HEAD")
        try:
            shlex.split(ref)
        except ValueError as exc:
            raise pytest.UsageError(f"--netbench-ab {ref!r}: cannot split command: {exc}") from None
    return base, head
