"""The one part of the build that pyproject.toml cannot yet state stably (its
``ext-modules`` table is experimental): the keep-alive steady state compiled (issue 35,
``src/pytest_netbench/_engine/asyncio_io/compiled_steady.c``). Optional: where it does not
build (no C compiler, no Python headers) the package installs and runs on its Python path
alone, at about a tenth more CPU a response (docs/linux-tuning.md says how to check)."""

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

setup(ext_modules=COMPILED if sys.platform.startswith("linux") else [])
