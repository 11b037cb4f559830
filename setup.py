"""The one part of the build that pyproject.toml cannot yet state stably (its
``ext-modules`` table is experimental): the keep-alive steady state compiled (issue 35,
``src/pytest_netbench/_engine/asyncio_io/compiled_steady.c``). Optional: where it does not
build (no C compiler, no Python headers) the package installs and runs on its Python path
alone, at about a tenth more CPU a response (docs/linux-tuning.md says how to check)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "pytest_netbench._engine.asyncio_io.compiled_steady",
            ["src/pytest_netbench/_engine/asyncio_io/compiled_steady.c"],
            optional=True,
        )
    ]
)
