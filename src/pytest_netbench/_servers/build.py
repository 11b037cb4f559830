"""Build the compiled reference servers once, into a cache keyed by their source hash.

A build lands in ``<cache>/build/<name>-<hash>/``; the hash covers the sources and
the build commands, so editing either builds again while an unchanged server is
reused across runs. A file lock makes parallel pytest-xdist workers wait for one
build instead of racing; the build runs in a scratch directory that is renamed
into place only when it succeeded, so a half-built server is never picked up.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import filelock

from pytest_netbench._errors import BuildFailed, ToolchainMissing

CACHE_ENV = "PYTEST_NETBENCH_CACHE_DIR"
_BUILD_TIMEOUT_S = 600.0
_OUTPUT_TAIL_LINES = 60
_COMPLETE_MARKER = ".netbench-build-complete"


@dataclass(frozen=True, slots=True)
class BuildRecipe:
    """How to build one server: tools it needs and the commands to run.

    In ``steps``, ``{src}`` stands for ``source_dir`` and ``{out}`` for the build
    directory; ``artifact`` is the file (relative to ``{out}``) a good build leaves.
    """

    name: str
    source_dir: Path
    tools: tuple[str, ...]
    steps: tuple[tuple[str, ...], ...]
    artifact: str
    install_hint: str
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BuiltServer:
    """A finished build: where it lives and whether this call had to build it."""

    directory: Path
    artifact: Path
    built_now: bool
    build_s: float


def cache_root() -> Path:
    """``$PYTEST_NETBENCH_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-netbench``, else ~/.cache."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pytest-netbench"


def missing_tools(recipe: BuildRecipe) -> list[str]:
    """The tools of ``recipe`` not found on PATH."""
    return [tool for tool in recipe.tools if shutil.which(tool) is None]


def require_tools(recipe: BuildRecipe) -> None:
    """Raise :class:`ToolchainMissing` naming every missing tool and how to get it."""
    missing = missing_tools(recipe)
    if missing:
        raise ToolchainMissing(
            f"the {recipe.name!r} server needs {', '.join(missing)}, not found on PATH; "
            f"install it ({recipe.install_hint}) or skip this server"
        )


def source_hash(recipe: BuildRecipe) -> str:
    """A short digest of every source file and of the build commands."""
    digest = hashlib.sha256()
    digest.update(repr((recipe.steps, recipe.artifact, sorted(recipe.env.items()))).encode())
    for path in sorted(p for p in recipe.source_dir.rglob("*") if p.is_file()):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(recipe.source_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build_dir(recipe: BuildRecipe, root: Path | None = None) -> Path:
    """Where the build of the current sources of ``recipe`` lives (built or not)."""
    return (root or cache_root()) / "build" / f"{recipe.name}-{source_hash(recipe)}"


def is_built(recipe: BuildRecipe, root: Path | None = None) -> bool:
    return (build_dir(recipe, root) / _COMPLETE_MARKER).exists()


def ensure_built(
    recipe: BuildRecipe, *, root: Path | None = None, timeout: float = _BUILD_TIMEOUT_S
) -> BuiltServer:
    """Return the build of ``recipe``, building it first if this source hash has none."""
    target = build_dir(recipe, root)
    if (target / _COMPLETE_MARKER).exists():
        return BuiltServer(target, target / recipe.artifact, built_now=False, build_s=0.0)
    require_tools(recipe)
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(str(target) + ".lock")
    try:
        lock.acquire(timeout=timeout)
    except filelock.Timeout:
        raise BuildFailed(
            f"waited {timeout:.0f} s for another process building {recipe.name!r} "
            f"(lock {lock.lock_file}); if no build is running, delete that lock file"
        ) from None
    try:
        # Another worker may have finished the build while this one waited for the lock.
        if (target / _COMPLETE_MARKER).exists():
            return BuiltServer(target, target / recipe.artifact, built_now=False, build_s=0.0)
        started = time.monotonic()
        _build_into(recipe, target, timeout)
        return BuiltServer(
            target, target / recipe.artifact, built_now=True, build_s=time.monotonic() - started
        )
    finally:
        lock.release()


def _build_into(recipe: BuildRecipe, target: Path, timeout: float) -> None:
    scratch = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    env = {**os.environ, **recipe.env}
    try:
        for step in recipe.steps:
            argv = [
                arg.replace("{src}", str(recipe.source_dir)).replace("{out}", str(scratch))
                for arg in step
            ]
            _run_step(recipe, argv, scratch, env, timeout)
        if not (scratch / recipe.artifact).exists():
            raise BuildFailed(
                f"building {recipe.name!r} succeeded but left no {recipe.artifact!r} in "
                f"{scratch}; the build recipe and the sources in {recipe.source_dir} disagree"
            )
        (scratch / _COMPLETE_MARKER).write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))
        shutil.rmtree(target, ignore_errors=True)  # a leftover without the marker
        scratch.rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_step(
    recipe: BuildRecipe, argv: list[str], cwd: Path, env: Mapping[str, str], timeout: float
) -> None:
    command = " ".join(argv)
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise ToolchainMissing(
            f"the {recipe.name!r} server needs {argv[0]!r}, which cannot be run; "
            f"install it ({recipe.install_hint})"
        ) from None
    except subprocess.TimeoutExpired:
        raise BuildFailed(
            f"building {recipe.name!r} did not finish within {timeout:.0f} s: {command}"
        ) from None
    if done.returncode != 0:
        output = done.stdout.decode("utf-8", "replace").rstrip().splitlines()
        tail = "\n".join(output[-_OUTPUT_TAIL_LINES:]) or "(no output)"
        raise BuildFailed(
            f"building {recipe.name!r} failed: {command} exited with code {done.returncode}\n"
            f"--- build output ---\n{tail}\n--- end of build output ---\n"
            f"sources: {recipe.source_dir}; fix the sources or the toolchain and run again"
        )
