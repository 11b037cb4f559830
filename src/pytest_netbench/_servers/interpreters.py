"""Which Python runs a Python server: this one, ``pypy3``, or any interpreter path."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

from pytest_netbench._errors import InterpreterNotFound

_PROBE_TIMEOUT_S = 20.0


def resolve_python(python: str | None) -> str:
    """An absolute path to a working interpreter for ``python``.

    ``None`` means the interpreter running this code. A bare name (``"pypy3"``,
    ``"python3.12"``) is looked up on PATH; anything with a slash is taken as a path.
    The interpreter is run once (cached) so that a broken one fails here, clearly,
    rather than as a server that never becomes ready.
    """
    if python is None or python == "":
        return sys.executable
    if not isinstance(python, str):
        raise InterpreterNotFound(
            f"python must be an interpreter name or path such as 'pypy3', got {python!r}"
        )
    return _resolve_cached(python)[0]


@functools.lru_cache(maxsize=32)
def _resolve_cached(python: str) -> tuple[str, str]:
    if os.sep in python:
        path = os.path.abspath(os.path.expanduser(python))
        if not os.path.exists(path):
            raise InterpreterNotFound(
                f"Python interpreter {python!r} does not exist; "
                "pass an existing interpreter path, or a name on PATH such as 'pypy3'"
            )
        if not os.access(path, os.X_OK) or os.path.isdir(path):
            raise InterpreterNotFound(f"Python interpreter {python!r} is not an executable file")
    else:
        found = shutil.which(python)
        if found is None:
            raise InterpreterNotFound(
                f"Python interpreter {python!r} is not installed (not found on PATH); "
                f"install it (for PyPy: apt-get install pypy3) or pass python=<path>"
            )
        path = found
    return path, _implementation_of(python, path)


def _implementation_of(python: str, path: str) -> str:
    try:
        probe = subprocess.run(
            [path, "-c", "import sys; print(sys.implementation.name)"],
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
    return probe.stdout.decode(errors="replace").strip() or "unknown"


def implementation_name(python: str | None) -> str:
    """``cpython``, ``pypy``, ... of the interpreter ``python`` resolves to."""
    if python is None or python == "" or python == sys.executable:
        return sys.implementation.name
    return _resolve_cached(python)[1]
