"""Shared by every test directory: the engine loop matrix, one consistency check for any
LoadResult, and a guard that turns a hung load into a failing test."""

from __future__ import annotations

import fcntl
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_netbench import ERROR_KINDS, LoadResult
from pytest_netbench._servers import build

# The suite starts hundreds of Python processes (the netbench command, Python servers,
# pytester's subprocess runs, spawned workers, Dask's), each importing the package afresh.
# Under PYTHONDONTWRITEBYTECODE=1 each one compiled every module it imports from source
# again: a third of a CLI test's CPU (issue 29). The children cache their bytecode outside
# the source tree instead, which leaves the tree as clean as the variable asked for; a
# PYTHONPYCACHEPREFIX already set is kept as it is.
if os.environ.get("PYTHONDONTWRITEBYTECODE") and "PYTHONPYCACHEPREFIX" not in os.environ:
    os.environ["PYTHONPYCACHEPREFIX"] = str(
        Path(tempfile.gettempdir()) / f"netbench-tests-pycache-{os.getuid()}"
    )
    del os.environ["PYTHONDONTWRITEBYTECODE"]

# The catalog's compiled servers (Go, Rust, C) are built once into the user's cache, found
# from HOME. pytester points HOME at each test's own directory, so a plugin test that named
# a Go server built it again from nothing there, Go's standard library with it: 20-40 s a
# test (issue 29). The cache is named by its variable instead, for every process of the
# suite; a test about the cache itself sets its own (tests/servers/test_catalog_build.py).
os.environ.setdefault(build.CACHE_ENV, str(build.cache_root()))

# pytester's in-process runs drop every module first imported inside them, and numpy
# (under matplotlib) cannot be imported twice in one process: a plugin test that plotted
# would break every later import of matplotlib. Load the plotting stack before any run.
try:
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401
except ImportError:  # plots are optional; their own tests say what is missing
    pass

# The pytest runs of plugin tests (pytester's, some 250 of them) load every plugin installed
# here; hypothesis's imports all of hypothesis as it registers, and anyio's all of anyio:
# 1.0 s of CPU of a 1.4 s start, which none of those runs uses (issue 29). pytester clears
# PYTEST_ADDOPTS as it is set up, so it is given back after that, with the two turned off.
INNER_RUNS_WITHOUT = ("hypothesispytest", "anyio")


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTEST_ADDOPTS", " ".join(f"-p no:{p}" for p in INNER_RUNS_WITHOUT))
    return pytester


LOOPS = ("uvloop", "asyncio", "trio")


@pytest.fixture(params=LOOPS)
def loop(request: pytest.FixtureRequest) -> str:
    """Tests that take ``loop`` run once per engine loop (the conformance matrix)."""
    name: str = request.param
    return name


def assert_consistent(result: LoadResult) -> LoadResult:
    """The counting rules every run must keep, whatever the server did."""
    assert result.sent == result.ok + result.errors_total + result.in_flight, result
    assert set(result.errors) <= set(ERROR_KINDS)
    assert all(n >= 0 for n in result.errors.values())
    assert result.in_flight >= 0
    # Open loop: every measured request unanswered at the end (in flight, or never sent)
    # is in the corrected figures at a lower bound, and only those are.
    assert result.latency.count == result.ok + result.generator.lower_bounds
    unanswered = result.in_flight + result.generator.unsent if result.mode == "open" else 0
    assert result.generator.lower_bounds == unanswered
    # Every measured response or failure lands in exactly one timeline second.
    assert sum(row.ok for row in result.timeline) == result.ok
    assert sum(row.errors for row in result.timeline) == result.errors_total
    if result.spec is not None and result.spec.kind == "http":
        # Every answer has a status: ok, a status error, or (checks) a verify error.
        answered = result.ok + result.errors["status"] + result.errors["verify"]
        assert sum(result.status_codes.values()) == answered
        for check in result.checks.values():  # each check tested every answer (no mix)
            assert result.spec.mix or check.total == answered
    if result.spec is not None and result.spec.requests is not None:
        assert result.in_flight == 0  # a request-count run waits for every answer
    return result


@pytest.fixture
def consistent() -> Callable[[LoadResult], LoadResult]:
    """``consistent(result)`` asserts the invariants and returns the result."""
    return assert_consistent


# Far above what any bounded test takes on a quiet machine (a few seconds), so that a
# 2-core machine busy with other work (CI runners are) does not pass for a hang.
HANG_LIMIT_S = float(os.environ.get("NETBENCH_TEST_HANG_LIMIT_S", "60"))
_hung: list[str] = []


@pytest.fixture
def hang_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """Turn a hung load into a failing test instead of a hung suite.

    After the limit, SIGINT is raised in the main thread: trio and asyncio.Runner both turn
    it into a clean KeyboardInterrupt (unlike an exception thrown from a signal handler into
    their internals), and ``pytest_runtest_call`` below turns that into a test failure.
    """

    def expire(signum: int, frame: object) -> None:
        _hung.append(request.node.nodeid)
        signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGALRM, expire)
    # A suite started with SIGINT ignored (nohup, `cmd &`) would ignore the raise too.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, HANG_LIMIT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        signal.signal(signal.SIGINT, previous_int)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        return (yield)
    except KeyboardInterrupt:
        if item.nodeid not in _hung:
            raise
        _hung.remove(item.nodeid)
        raise TimeoutError(f"still running after {HANG_LIMIT_S:.0f} s: the load hung") from None


# Under pytest-xdist (the README runs ``-n 3``), a test marked ``alone`` runs with no other test
# of the suite beside it: one that asserts timing arithmetic or watches CPU use would
# otherwise share the two cores with whatever loads the other workers run. Two locks shared
# by the workers: every test holds the room (shared; ``alone``: exclusive) while it runs,
# and enters through a gate held only while taking the room, except by an ``alone`` test,
# which keeps it until done, so that a waiting ``alone`` test is not starved by the other
# workers' next tests. Without xdist the locks are not taken.
ALONE = pytest.mark.alone
# Whole modules (or folders) of tests that measure: timing against set delays, a rate the
# generator must keep, CPU a server or the machine spends, a search for capacity. A test
# elsewhere that needs it says so with ``@pytest.mark.alone``.
ALONE_PATHS = (
    "experiment/",  # capacity searches, sweeps, cold starts, crosschecks: rates kept
    "distributed/test_netns_cluster.py",  # a generator saturated on purpose, and only it
    "servers/test_host_contention.py",  # what else runs on the machine
    "servers/test_sampling.py",
    "servers/test_cpu_sets.py",
    "plugin/test_profile_ab.py",  # a gate on CPU per request
    "plugin/test_sequential_gate.py",
    "plugin/test_experiments.py",
    "plugin/test_plugin_crosscheck.py",
    "plugin/test_xdist.py",  # its own two workers, their load windows timed apart
    "integration/test_cli_experiments.py",
    "integration/test_server_profiles.py",  # perf and py-spy sample a busy server
    "engine/test_windows.py",  # timing arithmetic against set delays and stalls
    "engine/test_phases.py",
    "engine/test_timeline_resolution.py",
    "engine/test_precise_timer.py",
    "engine/test_open_loop_stalls.py",
    "engine/test_start_instant.py",
    "engine/test_pool_growth_loops.py",
    "engine/test_ramps.py",
    "engine/test_crosscheck_warmup.py",
)
_TESTS = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "alone: under pytest-xdist, no other test runs beside this one"
    )
    # xdist hands each worker a quarter of its share of the tests at once, in order: the
    # first worker would get every test that runs alone and the second a block of others
    # to run beside them (see below). Two at a time keep both workers on the same part of
    # the order. A --maxschedchunk given on the command line is kept.
    if getattr(config.option, "numprocesses", None) and config.option.maxschedchunk is None:
        config.option.maxschedchunk = 2


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        try:
            where = item.path.relative_to(_TESTS).as_posix()
        except ValueError:
            continue  # a pytester run's own tests
        if where.startswith(ALONE_PATHS):
            item.add_marker(ALONE)
    if hasattr(config, "workerinput"):
        # Under xdist the tests that run alone go first, one after another, and the rest
        # after them, side by side. Interleaved, each of the ~300 would wait for the other
        # worker's test of the moment to end, while that worker then waited for it: most
        # of those tests wait on timers, so the machine idled through both waits.
        items.sort(key=lambda item: item.get_closest_marker("alone") is None)


class _Turnstile:
    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.gate = open(folder / "gate", "a")  # noqa: SIM115  # held for the session
        self.room = open(folder / "room", "a")  # noqa: SIM115

    def enter(self, alone: bool) -> None:
        fcntl.flock(self.gate, fcntl.LOCK_EX)
        fcntl.flock(self.room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def leave(self, alone: bool) -> None:
        fcntl.flock(self.room, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(self.gate, fcntl.LOCK_UN)


_turnstile: list[_Turnstile] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    workerinput = getattr(item.config, "workerinput", None)
    if not isinstance(workerinput, dict):
        return (yield)
    if not _turnstile:
        run = workerinput["testrunuid"]
        _turnstile.append(_Turnstile(Path(tempfile.gettempdir()) / f"netbench-suite-{run}"))
    turnstile = _turnstile[0]
    alone = item.get_closest_marker("alone") is not None
    turnstile.enter(alone)
    try:
        return (yield)
    finally:
        turnstile.leave(alone)
