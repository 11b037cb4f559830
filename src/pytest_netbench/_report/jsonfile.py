"""The session JSON: the environment plus every record, and reading it back.

One format serves ``--netbench-json``, stored baselines (``.netbench/``) and comparisons,
so a file written by any of them can be compared against any other. Each record keeps the
wall-clock start and end of its measured window, which is how a test proves that load
windows under ``pytest -n N`` did not overlap.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_netbench._errors import NetbenchError
from pytest_netbench._model import LoadResult
from pytest_netbench._report.environment import Environment
from pytest_netbench._report.matrix import Record

SCHEMA = "pytest-netbench-session/1"


class ResultFileError(NetbenchError):
    """A results file could not be read: missing, not JSON, or not a netbench session."""


@dataclass(frozen=True, slots=True)
class Session:
    """A loaded session file."""

    records: tuple[Record, ...]
    environment: Mapping[str, Any] = field(default_factory=dict)
    created: float | None = None
    name: str = ""
    path: Path | None = None

    @property
    def machine_key(self) -> str:
        return str(self.environment.get("machine_key", ""))


def _json_param(value: object) -> object:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, list | tuple) and all(
        v is None or isinstance(v, bool | int | float | str) for v in value
    ):
        return list(value)
    return repr(value)  # objects, callables, ids: keep a readable, stable label


def record_to_dict(record: Record) -> dict[str, Any]:
    return {
        "nodeid": record.nodeid,
        "function": record.function,
        "params": {k: _json_param(v) for k, v in record.params.items()},
        "trial": record.trial,
        "label": record.label,
        "started": record.started,
        "ended": record.ended,
        "result": record.result.to_dict(),
    }


def without_nan(value: Any) -> Any:
    """NaN (a timeline second with no ok response, missing figures) as JSON null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_nan(v) for v in value]
    return value


def _result_from_dict(data: Mapping[str, Any]) -> LoadResult:
    # Timeline rows are the one place the model's from_dict expects a float and JSON
    # has null (written by without_nan); put NaN back before rebuilding.
    rows = [
        {**row, "p99_ms": math.nan if row.get("p99_ms") is None else row["p99_ms"]}
        for row in data.get("timeline") or ()
    ]
    return LoadResult.from_dict({**data, "timeline": rows})


def record_from_dict(data: Mapping[str, Any]) -> Record:
    return Record(
        nodeid=str(data["nodeid"]),
        function=str(data["function"]),
        params=dict(data.get("params") or {}),
        result=_result_from_dict(data["result"]),
        trial=int(data.get("trial", 0)),
        started=data.get("started"),
        ended=data.get("ended"),
        label=str(data.get("label", "")),
    )


def session_to_dict(
    records: Iterable[Record],
    environment: Environment | Mapping[str, Any] | None = None,
    *,
    name: str = "",
    created: float | None = None,
) -> dict[str, Any]:
    env = environment.to_dict() if isinstance(environment, Environment) else environment
    return {
        "schema": SCHEMA,
        "name": name,
        "created": time.time() if created is None else created,
        "environment": dict(env or {}),
        "records": [record_to_dict(r) for r in records],
    }


def session_from_dict(data: Mapping[str, Any], *, path: Path | None = None) -> Session:
    where = f" in {path}" if path else ""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise ResultFileError(
            f"not a pytest-netbench session file{where} (expected schema {SCHEMA!r}); "
            "pass a file written by --netbench-json or --netbench-save"
        )
    try:
        records = tuple(record_from_dict(r) for r in data.get("records", ()))
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultFileError(f"damaged record{where}: {exc!r}") from None
    return Session(
        records=records,
        environment=dict(data.get("environment") or {}),
        created=data.get("created"),
        name=str(data.get("name", "")),
        path=path,
    )


def write_json_atomically(path: str | os.PathLike[str], payload: Mapping[str, Any]) -> Path:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(without_nan(payload), handle, indent=2, allow_nan=False, default=str)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_session_json(
    path: str | os.PathLike[str],
    records: Iterable[Record],
    environment: Environment | Mapping[str, Any] | None = None,
    *,
    name: str = "",
) -> Path:
    """Write ``records`` with the environment to ``path`` (parents created)."""
    return write_json_atomically(path, session_to_dict(records, environment, name=name))


def load_session_json(path: str | os.PathLike[str]) -> Session:
    """Read a session file; raise ResultFileError with what was wrong."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultFileError(f"results file not found: {source}") from None
    except OSError as exc:
        raise ResultFileError(f"cannot read results file {source}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            f"results file {source} is not valid JSON (line {exc.lineno}: {exc.msg})"
        ) from None
    return session_from_dict(data, path=source)
