"""The flags ``netbench`` and the pytest plugin share, declared once: ``--NAME`` on the
command line is ``--netbench-NAME`` in pytest, with the same metavar and meaning.

Imported by the plugin at start-up, so it imports nothing of the package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class SharedFlag:
    """A flag both faces have: ``--NAME`` on ``netbench`` and ``--netbench-NAME`` in pytest.
    ``help`` says ``{what}`` where each face names what it writes or runs, and
    ``{default}`` where each face says its default in its own words."""

    name: str
    metavar: str
    help: str
    # "path": a file or folder; "count": a whole number; "number": any number; "text": as typed.
    takes: Literal["path", "count", "number", "text"] = "path"
    # The value when the flag is not given, where both faces have the same one.
    default: str | None = None

    @property
    def value_type(self) -> type[int] | type[float] | type[str]:
        """What argparse and pytest turn the flag's text into."""
        return {"count": int, "number": float}.get(self.takes, str)

    @property
    def cli_flag(self) -> str:
        return f"--{self.name}"

    @property
    def plugin_flag(self) -> str:
        return f"--netbench-{self.name}"


# Where stored runs are kept, unless told otherwise (``_compare.storage`` holds the same).
STORAGE_ROOT = ".netbench"

SHARED_FLAGS: tuple[SharedFlag, ...] = (
    SharedFlag("json", "PATH", "write {what} as JSON here"),
    SharedFlag("markdown", "PATH", "write {what} as Markdown here"),
    SharedFlag(
        "metrics",
        "LIST",
        "metrics shown {what}, e.g. rps,p99_ms,errors_total (default {default})",
        takes="text",
    ),
    SharedFlag(
        "alpha",
        "A",
        "false-alarm rate of the gate per test, all its gated metrics together (default"
        " {default}; a lower one needs more trials, see docs/gating.md)",
        takes="number",
    ),
    SharedFlag(
        "storage",
        "DIR",
        "where stored runs are kept{what} (default {default})",
        default=STORAGE_ROOT,
    ),
    SharedFlag(
        "plot",
        "DIR",
        "draw PNG pictures of {what} into DIR: each load's latency spectrum and timeline,"
        " sweeps, cold starts, matrices (needs matplotlib; docs/plots.md)",
    ),
    SharedFlag(
        "html",
        "PATH",
        "write one self-contained HTML report of {what} here (docs/html-report.md)",
    ),
    SharedFlag(
        "cluster",
        "ADDRESS",
        "run each load's worker shares on this Dask scheduler's workers, one share per"
        " worker (tcp://host:8786; needs pytest-netbench[distributed]; docs/distributed.md)",
        takes="text",
    ),
    SharedFlag(
        "retries",
        "N",
        "run a load again, up to N times, while only the generator made it invalid (its"
        " CPU, schedule or fds) [{default}]",
        takes="count",
    ),
)
SHARED_BY_NAME: dict[str, SharedFlag] = {flag.name: flag for flag in SHARED_FLAGS}


def shared_help(name: str, *, what: str = "", default: object = None) -> str:
    """A shared flag's help as one face words it."""
    return SHARED_BY_NAME[name].help.format(what=what, default=default).replace("%", "%%")
