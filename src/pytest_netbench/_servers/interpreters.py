"""Which Python runs a Python server: this one, ``pypy3``, or any interpreter path.

The seeds compare CPython with PyPy, so a result must be able to say which interpreter
(and which version of it) served it; :func:`interpreter_info` answers that, and
:func:`resolve_python` turns a missing or broken interpreter into one clear error before
any server is started.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass

from pytest_netbench._errors import InterpreterNotFound

_PROBE_TIMEOUT_S = 20.0
# Run in the candidate interpreter, so it uses nothing beyond the standard library.
_PROBE_CODE = (
    "import sys, platform, json; "
    "print(json.dumps([sys.implementation.name, platform.python_version(), "
    "'.'.join(str(p) for p in sys.implementation.version[:3])]))"
)


@dataclass(frozen=True, slots=True)
class InterpreterInfo:
    """A working interpreter: where it is and what it is."""

    path: str
    implementation: str  # "cpython", "pypy", ...
    python_version: str  # the language version, e.g. "3.9.16"
    implementation_version: str  # e.g. PyPy's own "7.3.11"

    @property
    def label(self) -> str:
        """``CPython 3.11.7`` or ``PyPy 7.3.11 (Python 3.9.16)``, for reports."""
        if self.implementation == "cpython":
            return f"CPython {self.python_version}"
        name = {"pypy": "PyPy", "graalpy": "GraalPy"}.get(self.implementation, self.implementation)
        return f"{name} {self.implementation_version} (Python {self.python_version})"


def _running_interpreter() -> InterpreterInfo:
    version = sys.implementation.version
    return InterpreterInfo(
        path=sys.executable,
        implementation=sys.implementation.name,
        python_version=platform.python_version(),
        implementation_version=f"{version.major}.{version.minor}.{version.micro}",
    )


def resolve_python(python: str | None) -> str:
    """An absolute path to a working interpreter for ``python``.

    ``None`` means the interpreter running this code. A bare name (``"pypy3"``,
    ``"python3.12"``) is looked up on PATH; anything with a slash is taken as a path.
    The interpreter is run once (cached) so that a broken one fails here, clearly,
    rather than as a server that never becomes ready.
    """
    return interpreter_info(python).path


def interpreter_info(python: str | None) -> InterpreterInfo:
    """What ``python`` resolves to; raises :class:`InterpreterNotFound` if it cannot run."""
    if python is None or python == "" or python == sys.executable:
        return _running_interpreter()
    if not isinstance(python, str):
        raise InterpreterNotFound(
            f"python must be an interpreter name or path such as 'pypy3', got {python!r}"
        )
    return _probe_cached(python)


@functools.lru_cache(maxsize=32)
def _probe_cached(python: str) -> InterpreterInfo:
    return _probe(python, _locate(python))


def _locate(python: str) -> str:
    if os.sep in python:
        path = os.path.abspath(os.path.expanduser(python))
        if not os.path.exists(path):
            raise InterpreterNotFound(
                f"Python interpreter {python!r} does not exist; "
                "pass an existing interpreter path, or a name on PATH such as 'pypy3'"
            )
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise InterpreterNotFound(f"Python interpreter {python!r} is not an executable file")
        return path
    found = shutil.which(python)
    if found is None:
        raise InterpreterNotFound(
            f"Python interpreter {python!r} is not installed (not found on PATH); "
            f"install it (for PyPy: apt-get install pypy3) or pass python=<path>"
        )
    return found


def _probe(python: str, path: str) -> InterpreterInfo:
    try:
        probe = subprocess.run(
            [path, "-c", _PROBE_CODE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InterpreterNotFound(
            f"Python interpreter {python!r} ({path}) cannot run: {exc}"
        ) from None
    if probe.returncode != 0:
        detail = (probe.stderr or probe.stdout).decode(errors="replace").strip()[-500:]
        raise InterpreterNotFound(
            f"Python interpreter {python!r} ({path}) exited with code {probe.returncode} "
            f"when asked for its version: {detail or 'no output'}"
        )
    try:
        implementation, python_version, implementation_version = json.loads(probe.stdout)
    except ValueError:
        raise InterpreterNotFound(
            f"{python!r} ({path}) does not look like a Python interpreter: it printed "
            f"{probe.stdout[:80]!r} when asked for its version"
        ) from None
    return InterpreterInfo(path, implementation, python_version, implementation_version)
