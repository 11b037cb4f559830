"""Stored runs: ``.netbench/<machine-key>/<NNNN>_<name>.json``, as pytest-benchmark does.

Runs are numbered per machine key so "latest" needs no clock, and kept per machine because
figures from another CPU or Python are not a fair baseline. A run can still be compared
with a file from anywhere by passing its path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_netbench._compare.records import (
    ExperimentRecord,
    Record,
    Session,
    load_session_json,
    session_to_dict,
    write_json_atomically,
)
from pytest_netbench._errors import NetbenchError
from pytest_netbench._host.environment import Environment, collect_environment

DEFAULT_ROOT = ".netbench"
_FILE_RE = re.compile(r"^(\d{4,})_(.*)\.json$")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_NAME = 80


class StorageError(NetbenchError):
    """A stored run could not be found, named, or written."""


@dataclass(frozen=True, slots=True)
class StoredRun:
    number: int
    name: str
    machine_key: str
    path: Path

    @property
    def label(self) -> str:
        return f"{self.number:04d}_{self.name}"


def safe_name(name: str) -> str:
    """A run name usable in a file name; refuses names with nothing usable in them."""
    cleaned = _NAME_UNSAFE.sub("_", name.strip()).strip("._")[:_MAX_NAME]
    if not cleaned:
        raise StorageError(
            f"run name {name!r} has no usable characters; use letters, digits, '.', '_' or '-'"
        )
    return cleaned


class Storage:
    """The ``.netbench`` directory of one project, seen from one machine."""

    def __init__(
        self,
        root: str | os.PathLike[str] = DEFAULT_ROOT,
        *,
        machine_key: str | None = None,
    ) -> None:
        self.root = Path(root)
        self._machine_key = machine_key

    @property
    def machine_key(self) -> str:
        if self._machine_key is None:
            self._machine_key = collect_environment().machine_key
        return self._machine_key

    @property
    def machine_dir(self) -> Path:
        return self.root / self.machine_key

    def runs(self, machine_key: str | None = None) -> list[StoredRun]:
        """Stored runs of one machine key (this machine by default), oldest first."""
        key = machine_key or self.machine_key
        folder = self.root / key
        if not folder.is_dir():
            return []
        found = []
        for entry in folder.iterdir():
            match = _FILE_RE.match(entry.name)
            if match and entry.is_file():
                found.append(StoredRun(int(match.group(1)), match.group(2), key, entry))
        return sorted(found, key=lambda run: run.number)

    def other_machine_keys(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(
            p.name for p in self.root.iterdir() if p.is_dir() and p.name != self.machine_key
        )

    def save(
        self,
        records: Iterable[Record],
        name: str,
        environment: Environment | Mapping[str, Any] | None = None,
        *,
        amend: Callable[[dict[str, Any]], None] | None = None,
        experiments: Iterable[ExperimentRecord] = (),
    ) -> StoredRun:
        """Store a run (its loads and experiments) as the next number under this machine's
        key; ``amend`` may add fields to the session document before it is written."""
        clean = safe_name(name)
        payload = session_to_dict(
            records,
            environment if environment is not None else collect_environment(),
            name=clean,
            experiments=experiments,
        )
        payload["environment"].setdefault("machine_key", self.machine_key)
        if amend is not None:
            amend(payload)
        self.machine_dir.mkdir(parents=True, exist_ok=True)
        number = (self.runs()[-1].number + 1) if self.runs() else 1
        while True:
            path = self.machine_dir / f"{number:04d}_{clean}.json"
            try:
                # Claim the number first so two savers never write the same file.
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                number += 1
                continue
            os.close(fd)
            break
        write_json_atomically(path, payload)
        return StoredRun(number, clean, self.machine_key, path)

    def find(self, ref: str | None = None) -> StoredRun:
        """A run by number (``3`` / ``0003``), name (latest of that name), ``NNNN_name``, or
        the latest when ``ref`` is None or empty."""
        runs = self.runs()
        if not runs:
            raise StorageError(self._nothing_stored_message())
        if not ref:
            return runs[-1]
        ref = ref.strip()
        if ref.isdigit():
            for run in runs:
                if run.number == int(ref):
                    return run
        for run in reversed(runs):
            if ref in (run.name, run.label, run.path.name):
                return run
        available = ", ".join(run.label for run in runs[-10:])
        raise StorageError(
            f"no stored run {ref!r} under {self.machine_dir}; available: {available}"
        )

    def load(self, ref: str | None = None) -> Session:
        """A stored session; ``ref`` may also be a path to any session JSON file."""
        if ref and (ref.endswith(".json") or os.sep in ref) and Path(ref).is_file():
            return load_session_json(ref)
        run = self.find(ref)
        session = load_session_json(run.path)
        return Session(
            records=session.records,
            environment=session.environment,
            created=session.created,
            name=session.name or run.name,
            path=run.path,
            experiments=session.experiments,
        )

    def _nothing_stored_message(self) -> str:
        message = (
            f"no stored runs for this machine ({self.machine_key}) under {self.root}; "
            "store one first with --netbench-save NAME"
        )
        others = self.other_machine_keys()
        if others:
            message += (
                f". Runs from other machines exist ({', '.join(others[:5])}); their figures are "
                "not a fair baseline here, but you can pass a run's file path to compare anyway"
            )
        return message
