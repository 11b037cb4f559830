"""What machine and software a run was measured on, and a storage key for "same machine".

Figures from different machines are not comparable, so stored baselines live under a key
derived from the things that change them most (CPU model, core count, OS, Python build);
the hostname is deliberately left out so identical CI runners share baselines.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import psutil

PACKAGES: tuple[tuple[str, str], ...] = (
    # (label, distribution name)
    ("pytest_netbench", "pytest-netbench"),
    ("httptools", "httptools"),
    ("uvloop", "uvloop"),
    ("hdrh", "hdrhistogram"),
    ("psutil", "psutil"),
    ("pytest", "pytest"),
    ("pytest_xdist", "pytest-xdist"),
    ("trio", "trio"),
)
_GIT_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class GitInfo:
    commit: str
    branch: str
    dirty: bool
    time: str  # committer date, ISO 8601
    project: str


@dataclass(frozen=True, slots=True)
class Environment:
    cpu_model: str
    cores_logical: int
    cores_physical: int | None
    cpu_freq_mhz: float | None
    memory_gb: float
    system: str
    release: str
    machine: str
    python_implementation: str
    python_version: str
    python_compiler: str
    hostname: str
    packages: dict[str, str | None] = field(default_factory=dict)
    git: GitInfo | None = None
    affinity: tuple[int, ...] | None = None

    @property
    def machine_key(self) -> str:
        return machine_key(self)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["affinity"] = list(self.affinity) if self.affinity is not None else None
        out["machine_key"] = self.machine_key
        return out

    def short(self) -> dict[str, str]:
        """The few facts worth a line in a report header."""
        git = f"{self.git.commit[:10]}{'+dirty' if self.git.dirty else ''}" if self.git else ""
        return {
            "cpu": f"{self.cpu_model} ({self.cores_logical} cores)",
            "python": f"{self.python_implementation} {self.python_version}",
            "platform": f"{self.system} {self.release} {self.machine}",
            "netbench": self.packages.get("pytest_netbench") or "",
            "commit": git,
        }


def cpu_model() -> str:
    """The CPU's marketing name; falls back to the architecture when the OS hides it."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        try:
            text = cpuinfo.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        for key in ("model name", "Hardware", "Processor", "cpu model"):
            match = re.search(rf"^{key}\s*:\s*(.+)$", text, re.MULTILINE)
            if match:
                return " ".join(match.group(1).split())
    if platform.system() == "Darwin":
        try:
            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown"


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for label, dist in PACKAGES:
        try:
            versions[label] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[label] = None
    return versions


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None  # no git binary, or a hung filesystem: commit info is optional
    return out.stdout.strip() if out.returncode == 0 else None


def git_info(cwd: str | os.PathLike[str] | None = None) -> GitInfo | None:
    """Commit, branch and dirtiness of the repository around ``cwd``; None outside git."""
    where = Path(cwd) if cwd is not None else Path.cwd()
    top = _git(["rev-parse", "--show-toplevel"], where)
    commit = _git(["rev-parse", "HEAD"], where)
    if not top or not commit:
        return None
    branch = _git(["rev-parse", "--abbrev-ref", "HEAD"], where) or ""
    status = _git(["status", "--porcelain", "--untracked-files=no"], where)
    when = _git(["show", "-s", "--format=%cI", "HEAD"], where) or ""
    return GitInfo(
        commit=commit,
        branch=branch,
        dirty=bool(status),
        time=when,
        project=Path(top).name,
    )


def _affinity() -> tuple[int, ...] | None:
    try:
        return tuple(sorted(psutil.Process().cpu_affinity() or []))
    except (AttributeError, OSError, psutil.Error):
        return None  # not supported on this OS


def collect_environment(cwd: str | os.PathLike[str] | None = None) -> Environment:
    """Gather everything once per session (it runs git, so not per test)."""
    freq = None
    try:
        current = psutil.cpu_freq()
        if current is not None and current.max:
            freq = float(current.max)
        elif current is not None:
            freq = float(current.current)
    except (OSError, NotImplementedError, FileNotFoundError):
        freq = None
    return Environment(
        cpu_model=cpu_model(),
        cores_logical=psutil.cpu_count(logical=True) or os.cpu_count() or 1,
        cores_physical=psutil.cpu_count(logical=False),
        cpu_freq_mhz=freq,
        memory_gb=round(psutil.virtual_memory().total / 2**30, 1),
        system=platform.system(),
        release=platform.release(),
        machine=platform.machine(),
        python_implementation=platform.python_implementation(),
        python_version=platform.python_version(),
        python_compiler=platform.python_compiler(),
        hostname=platform.node(),
        packages=package_versions(),
        git=git_info(cwd),
        affinity=_affinity(),
    )


def machine_key(env: Environment) -> str:
    """A stable, path-safe key: readable prefix plus a hash of what makes figures comparable.

    e.g. ``Linux-CPython-3.11-64bit-4c9e1a0b2d``. Python's patch version is left out on
    purpose: 3.11.8 and 3.11.9 figures compare fine; 3.11 and 3.12 often do not.
    """
    minor = ".".join(env.python_version.split(".")[:2])
    bits = "64bit" if platform.architecture()[0] == "64bit" else platform.architecture()[0]
    identity = json.dumps(
        [
            env.cpu_model,
            env.cores_logical,
            env.system,
            env.machine,
            env.python_implementation,
            minor,
        ],
        separators=(",", ":"),
    )
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:10]
    prefix = f"{env.system}-{env.python_implementation}-{minor}-{bits}"
    return re.sub(r"[^A-Za-z0-9._-]", "_", prefix) + "-" + digest
