"""File names of the pictures: they say which test, which parameters, which load and
which kind of picture, in that order, and stay safe in a shell (no brackets, spaces or
slashes): ``test_hello.test_get-server=tornado-connections=50-latency.png``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_UNSAFE = re.compile(r"[^A-Za-z0-9._=+,-]+")


def safe_part(text: str) -> str:
    """``text`` with every run of other characters than letters, digits and ``._=+,-``
    as one ``_``."""
    return _UNSAFE.sub("_", text).strip("_") or "_"


def function_stem(function: str) -> str:
    """``tests/test_x.py::TestA::test_f`` -> ``test_x.TestA.test_f``; a name that is no
    test's node id (a command's, ``netbench http http://host/``) is kept whole, made safe:
    cut at its last ``/`` it would be empty, and its pictures would belong to no test."""
    module, separator, rest = function.partition("::")
    if not separator:
        return safe_part(function)
    module = module.rsplit("/", 1)[-1].removesuffix(".py")
    parts = [module, *rest.split("::")] if rest else [module]
    return ".".join(safe_part(p) for p in parts if p)


def record_stem(function: str, params: Mapping[str, str], trial: int | None = None) -> str:
    """The function's stem, then ``name=value`` per parameter, then ``trialN`` (1-based)
    when the test ran several trials."""
    parts = [function_stem(function)]
    parts += [safe_part(f"{name}={value}") for name, value in params.items()]
    if trial is not None:
        parts.append(f"trial{trial + 1}")
    return "-".join(parts)


class UniqueNames:
    """Hands out each file name once: a repeat gets ``-2``, ``-3`` before its suffix.
    Without a stem the kind alone names the file (``sweep.png``)."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, stem: str, kind: str) -> str:
        base = f"{stem}-{safe_part(kind)}" if stem else safe_part(kind)
        name = f"{base}.png"
        number = 1
        while name in self._taken:
            number += 1
            name = f"{base}-{number}.png"
        self._taken.add(name)
        return name
