"""Asked of a Python interpreter: what it is, and which of some modules it has installed.

Other interpreters run this file by its path: Debian's system ``pypy3``, a ``.venv-pypy``,
any ``python=`` a user names. They may not have pytest_netbench installed, so this module
imports nothing from the package and keeps to Python 3.9 syntax (Debian's PyPy is 3.9).
The interpreter running the tests calls :func:`describe` in process instead.

Usage: ``python interpreter_probe.py [MODULE[=DISTRIBUTION] ...]``; prints one JSON object:
``implementation``, ``python_version``, ``implementation_version`` and ``modules``
(module -> installed version, ``"?"`` when the version is unknown; missing ones absent).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
from collections.abc import Mapping


def describe(modules: Mapping[str, str]) -> dict[str, object]:
    """This interpreter, and which of ``modules`` (module -> distribution name) it has."""
    version = sys.implementation.version
    return {
        "implementation": sys.implementation.name,
        "python_version": platform.python_version(),
        "implementation_version": f"{version.major}.{version.minor}.{version.micro}",
        "modules": installed_versions(modules),
    }


def installed_versions(modules: Mapping[str, str]) -> dict[str, str]:
    """Installed version of each importable module of ``modules`` (found, not imported)."""
    found: dict[str, str] = {}
    for module, distribution in modules.items():
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except (ImportError, ValueError):
            continue
        try:
            found[module] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            found[module] = "?"
    return found


def parse_modules(args: list[str]) -> dict[str, str]:
    """``["twisted=Twisted", "trio"]`` -> ``{"twisted": "Twisted", "trio": "trio"}``."""
    pairs = (arg.partition("=") for arg in args)
    return {module: distribution or module for module, _, distribution in pairs}


def main(args: list[str]) -> None:
    print(json.dumps(describe(parse_modules(args))))


if __name__ == "__main__":
    # Run by path, this file's folder comes first on sys.path: a module there must not
    # pass for one installed for this interpreter.
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    main(sys.argv[1:])
