"""The package's version, in a module of its own so that any layer may read it (a Dask
worker's is compared with the caller's) without importing the package root."""

VERSION = "0.1.0"  # keep in step with pyproject.toml's [project] version
