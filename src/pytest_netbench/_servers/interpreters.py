"""Which Python runs a Python server: this one, ``pypy3``, or any interpreter path.

The seeds compare CPython with PyPy, so a result must be able to say which interpreter
(and which version of it) served it; :func:`interpreter_info` answers that, and
:func:`resolve_python` turns a missing or broken interpreter into one clear error before
any server is started. The catalog asks the same probe which frameworks an interpreter
has, so one run of the interpreter answers both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_netbench._errors import InterpreterNotFound
from pytest_netbench._servers import interpreter_names, interpreter_probe

# Run by its path, not with -m: the interpreter asked may not have pytest_netbench.
_PROBE_SCRIPT = str(Path(interpreter_probe.__file__).resolve())
# One rule for every caller: a cold PyPy, or the first run of a fresh virtualenv that
# compiles its .pyc files, takes seconds on a loaded machine; 30 s still tells a hung
# interpreter from a slow one well inside a server's own start-up timeout.
_PROBE_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class InterpreterInfo:
    """A working interpreter: where it is and what it is."""

    path: str
    implementation: str  # "cpython", "pypy", ...
    python_version: str  # the language version, e.g. "3.9.16"
    implementation_version: str  # e.g. PyPy's own "7.3.11"
    # Installed version of each module asked about so far ("?" if unknown); missing absent.
    modules: Mapping[str, str] = field(default_factory=dict, compare=False)

    @property
    def version(self) -> tuple[int, ...]:
        """The language version as numbers, ``(3, 9, 16)``."""
        return tuple(int(n) for n in re.findall(r"\d+", self.python_version)[:3])

    @property
    def label(self) -> str:
        """``CPython 3.11.7`` or ``PyPy 7.3.11 (Python 3.9.16)``, for reports."""
        if self.implementation == "cpython":
            return f"CPython {self.python_version}"
        name = {"pypy": "PyPy", "graalpy": "GraalPy"}.get(self.implementation, self.implementation)
        return f"{name} {self.implementation_version} (Python {self.python_version})"


@dataclass(frozen=True, slots=True)
class _Probed:
    info: InterpreterInfo
    asked: Mapping[str, str]  # the modules the probe looked for


_cache: dict[str, _Probed] = {}
_cache_lock = threading.Lock()


def resolve_python(python: str | None) -> str:
    """An absolute path to a working interpreter for ``python``.

    ``None`` means the interpreter running this code. A bare name (``"pypy3"``,
    ``"python3.12"``) is looked up among the named interpreters (``NETBENCH_PYTHON``, the
    plugin's ``netbench_python``; see :mod:`.interpreter_names`), then on PATH; anything
    with a slash is taken as a path.
    The interpreter is run once (cached) so that a broken one fails here, clearly,
    rather than as a server that never becomes ready.
    """
    return interpreter_info(python).path


def interpreter_info(
    python: str | None, modules: Mapping[str, str] | None = None
) -> InterpreterInfo:
    """What ``python`` resolves to, and which of ``modules`` (module -> distribution) it has.

    Raises :class:`InterpreterNotFound` if it cannot run. One probe per interpreter is
    kept; a later call asking about modules the kept one did not cover probes again.
    """
    if python is not None and not isinstance(python, str):
        raise InterpreterNotFound(
            f"python must be an interpreter name or path such as 'pypy3', got {python!r}"
        )
    modules = modules or {}
    named = interpreter_names.lookup(python) if python is not None else None
    key = named.check() if named is not None else python or sys.executable
    with _cache_lock:
        known = _cache.get(key)
    if known is not None and all(m in known.asked for m in modules):
        return known.info
    asked = dict(known.asked) if known is not None else {}
    asked.update(modules)
    here = key == sys.executable
    info = _this_interpreter(asked) if here else _probe(key, _locate(key), asked)
    with _cache_lock:
        _cache[key] = _Probed(info, asked)
    return info


def _this_interpreter(modules: Mapping[str, str]) -> InterpreterInfo:
    return _info(sys.executable, interpreter_probe.describe(modules))


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
            f"install it (for PyPy: apt-get install pypy3), pass python=<path>, "
            f"{interpreter_names.how_to_name()}"
        )
    return found


def _probe(python: str, path: str, modules: Mapping[str, str]) -> InterpreterInfo:
    args = [f"{module}={distribution}" for module, distribution in sorted(modules.items())]
    try:
        probe = subprocess.run(
            [path, _PROBE_SCRIPT, *args],
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
        answer = json.loads(probe.stdout)
        return _info(path, answer)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise InterpreterNotFound(
            f"{python!r} ({path}) does not look like a Python interpreter: it printed "
            f"{probe.stdout[:80]!r} when asked for its version"
        ) from None


def _info(path: str, answer: dict[str, object]) -> InterpreterInfo:
    modules = answer["modules"]
    if not isinstance(modules, dict):
        raise TypeError(f"modules should be an object, got {modules!r}")
    return InterpreterInfo(
        path,
        str(answer["implementation"]),
        str(answer["python_version"]),
        str(answer["implementation_version"]),
        {str(k): str(v) for k, v in modules.items()},
    )
