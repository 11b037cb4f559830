"""Interpreters named once: ``pypy3=.venv-pypy/bin/pypy3``, then ``python="pypy3"`` anywhere.

A server's ``python=`` takes a name or a path. A bare name is looked up here first, then on
PATH, so a project can point ``pypy3`` at the virtualenv that has its frameworks (Debian's
``pypy3`` on PATH has none) without anyone typing the path again. Names come from:

- the environment variable ``NETBENCH_PYTHON``: ``NAME=PATH`` entries separated by commas
  or newlines, relative paths taken from the current directory (the CLI and the Python API);
- the pytest plugin: the ini option ``netbench_python`` (one ``NAME=PATH`` a line, relative
  paths from the ini file's directory) and ``--netbench-python NAME=PATH``; it registers
  them for the session with :func:`register` and takes them back with :func:`unregister`.

Registered names win over the environment's. An entry whose file is missing is reported
when the name is used, naming the entry's source, so a shared config may name an
interpreter that only some machines have.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_netbench._errors import InterpreterNotFound, SpecError

ENV_VAR = "NETBENCH_PYTHON"
_NAME = re.compile(r"^[A-Za-z0-9_.+-]+$")
_EXAMPLE = "pypy3=.venv-pypy/bin/pypy3"


@dataclass(frozen=True, slots=True)
class NamedInterpreter:
    """One ``NAME=PATH`` entry: the name, the absolute path, and where it was written."""

    name: str
    path: str
    source: str  # e.g. "netbench_python in /repo/pyproject.toml", for error messages
    written: str  # the path as written in the entry

    def check(self) -> str:
        """The path, if it is an executable file; else :class:`InterpreterNotFound`."""
        where = f"python={self.name!r} is named by {self.source} as {self.written!r}"
        if not os.path.exists(self.path):
            raise InterpreterNotFound(
                f"{where}, but {self.path} does not exist; create that interpreter (in this "
                f"repository: bash scripts/bootstrap.sh) or fix the entry in {self.source}"
            )
        if os.path.isdir(self.path) or not os.access(self.path, os.X_OK):
            raise InterpreterNotFound(
                f"{where}, but {self.path} is not an executable file; point the entry in "
                f"{self.source} at the interpreter itself (e.g. ENV/bin/python)"
            )
        return self.path


# One layer per registration (a pytest session; pytester nests sessions), later ones win.
_layers: list[Mapping[str, NamedInterpreter]] = []
_lock = threading.Lock()


def parse_entries(
    entries: Iterable[str], *, base_dir: str | Path, source: str
) -> dict[str, NamedInterpreter]:
    """``NAME=PATH`` strings as named interpreters; relative paths are from ``base_dir``.

    A malformed entry raises :class:`SpecError` naming ``source`` and the form it takes.
    Blank entries are skipped; a name given twice keeps the last.
    """
    named: dict[str, NamedInterpreter] = {}
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        name, sep, written = (part.strip() for part in entry.partition("="))
        if not sep or not name or not written:
            raise SpecError(f"{source}: {entry!r} is not NAME=PATH; write e.g. {_EXAMPLE}")
        if not _NAME.match(name):
            raise SpecError(
                f"{source}: {name!r} cannot name an interpreter (letters, digits and ._+- "
                f"only, no slash); write e.g. {_EXAMPLE}"
            )
        path = os.path.expanduser(written)
        if not os.path.isabs(path):
            path = os.path.join(base_dir, path)
        named[name] = NamedInterpreter(name, os.path.normpath(path), source, written)
    return named


def from_environment(environ: Mapping[str, str] | None = None) -> dict[str, NamedInterpreter]:
    """The names ``NETBENCH_PYTHON`` gives (relative paths from the current directory)."""
    text = (os.environ if environ is None else environ).get(ENV_VAR, "")
    return parse_entries(
        re.split(r"[,\n]", text), base_dir=os.getcwd(), source=f"the environment variable {ENV_VAR}"
    )


def register(named: Mapping[str, NamedInterpreter]) -> None:
    """Make ``named`` known to every ``python=`` in this process (the plugin's session),
    over the names in force, until :func:`unregister` is given the same mapping."""
    with _lock:
        _layers.append(named)


def unregister(named: Mapping[str, NamedInterpreter]) -> None:
    with _lock:
        for index in range(len(_layers) - 1, -1, -1):
            if _layers[index] is named:
                del _layers[index]
                break


def known() -> dict[str, NamedInterpreter]:
    """Every name in force: the environment's, overridden by the registered ones."""
    try:
        named = from_environment()
    except SpecError as exc:
        raise InterpreterNotFound(str(exc)) from None
    with _lock:
        for layer in _layers:
            named.update(layer)
    return named


def lookup(python: str) -> NamedInterpreter | None:
    """The entry naming ``python``, if any (a path is never a name)."""
    if os.sep in python:
        return None
    return known().get(python)


def how_to_name() -> str:
    """The hint for an interpreter that is neither named nor on PATH."""
    return (
        f"or name it once: ini netbench_python = {_EXAMPLE}, --netbench-python {_EXAMPLE}, "
        f"or {ENV_VAR}={_EXAMPLE}"
    )
