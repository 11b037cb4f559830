"""The one part of the build that pyproject.toml cannot yet state stably (its
``ext-modules`` table is experimental): the keep-alive steady state compiled (issue 35,
``src/pytest_netbench/_engine/asyncio_io/compiled_steady.c``). Optional: where it does not
build (no C compiler, no Python headers) the package installs and runs on its Python path
alone, at up to a fifth more CPU a response (docs/engine.md, the hot path, says how to
check which you have)."""

import platform
import sys

from setuptools import Extension, setup

# Linux only: its clock is time.monotonic_ns's there (CLOCK_MONOTONIC), not on macOS.
COMPILED = [
    Extension(
        "pytest_netbench._engine.asyncio_io.compiled_steady",
        ["src/pytest_netbench/_engine/asyncio_io/compiled_steady.c"],
        optional=True,
    )
]

# CPython only: it reaches into the object model as CPython lays it out (vectorcall).
BUILT_HERE = sys.platform.startswith("linux") and platform.python_implementation() == "CPython"

setup(ext_modules=COMPILED if BUILT_HERE else [])
