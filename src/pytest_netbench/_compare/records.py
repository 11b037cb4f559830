"""The stored-run format: a record per measured load or experiment, the session JSON
around them, and reading it back.

One format serves ``--netbench-json``, stored baselines (``.netbench/``) and comparisons,
so a file written by any of them can be compared against any other. Each record keeps the
wall-clock start and end of its measured window, which is how a test proves that load
windows under ``pytest -n N`` did not overlap.

Records of both kinds share the session's ``records`` list, told apart by ``kind``: a
load (:class:`Record`: the result kept, and the runs discarded before it because the
generator spoiled them) or an experiment (:class:`ExperimentRecord`: a sweep, capacity
search or cold start, kept whole as its ``to_dict()``). A file written before kinds
existed holds loads only, and reads as such.
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
from typing import Any, Literal, get_args

from pytest_netbench._errors import NetbenchError
from pytest_netbench._host.environment import Environment
from pytest_netbench._model import LoadResult

SCHEMA = "pytest-netbench-session/1"
ExperimentKind = Literal["sweep", "capacity", "cold_start", "crosscheck"]
EXPERIMENT_KINDS: tuple[ExperimentKind, ...] = get_args(ExperimentKind)


class ResultFileError(NetbenchError):
    """A results file could not be read: missing, not JSON, or not a netbench session."""


@dataclass(frozen=True, slots=True)
class Record:
    """One load measured inside one test: what the plugin collects and the JSON stores."""

    nodeid: str
    function: str
    params: Mapping[str, object]
    result: LoadResult
    trial: int = 0
    started: float | None = None  # wall-clock (epoch seconds) of the measured window
    ended: float | None = None
    label: str = ""  # tells apart several loads made by the same test
    # Runs of the same load thrown away before ``result`` because only the generator was to
    # blame (schedule lag, its CPU, its fds): shown, stored, never compared.
    discarded: tuple[LoadResult, ...] = ()
    # The test's own matrix columns (``@pytest.mark.netbench(metrics=[...])``); empty: the
    # session's (--netbench-metrics).
    columns: tuple[str, ...] = ()

    @property
    def kind(self) -> Literal["load"]:
        return "load"

    @property
    def attempts(self) -> int:
        return len(self.discarded) + 1


@dataclass(frozen=True, slots=True)
class ExperimentRecord:
    """One experiment run inside one test: its kind and the whole of its ``to_dict()``."""

    nodeid: str
    function: str
    params: Mapping[str, object]
    kind: ExperimentKind
    data: Mapping[str, Any]
    started: float | None = None  # wall-clock of the experiment's first and last load
    ended: float | None = None
    label: str = ""


@dataclass(frozen=True, slots=True)
class Session:
    """A loaded session file."""

    records: tuple[Record, ...]
    environment: Mapping[str, Any] = field(default_factory=dict)
    created: float | None = None
    name: str = ""
    path: Path | None = None
    experiments: tuple[ExperimentRecord, ...] = ()

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


def record_to_dict(record: Record | ExperimentRecord) -> dict[str, Any]:
    common = {
        "kind": record.kind,
        "nodeid": record.nodeid,
        "function": record.function,
        "params": {k: _json_param(v) for k, v in record.params.items()},
        "label": record.label,
        "started": record.started,
        "ended": record.ended,
    }
    if isinstance(record, ExperimentRecord):
        return {**common, "experiment": dict(record.data)}
    return {
        **common,
        "trial": record.trial,
        "result": record.result.to_dict(),
        "attempts": record.attempts,
        "discarded_causes": discard_counts(record.discarded),
        "discarded": [r.to_dict() for r in record.discarded],
        "columns": list(record.columns),
    }


def discard_counts(discarded: Iterable[LoadResult]) -> dict[str, int]:
    """How many discarded runs each invalid cause accounts for (a run may have several)."""
    counts: dict[str, int] = {}
    for result in discarded:
        for cause in dict.fromkeys(result.invalid_causes):
            counts[cause] = counts.get(cause, 0) + 1
    return dict(sorted(counts.items()))


def without_nan(value: Any) -> Any:
    """NaN (a timeline second with no ok response, missing figures) as JSON null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_nan(v) for v in value]
    return value


def result_from_dict(data: Mapping[str, Any]) -> LoadResult:
    """A result read back from session JSON (where NaN was written as null)."""
    # Timeline rows are the one place the model's from_dict expects a float and JSON
    # has null (written by without_nan); put NaN back before rebuilding.
    rows = [
        {k: math.nan if v is None and k.endswith("_ms") else v for k, v in row.items()}
        for row in data.get("timeline") or ()
    ]
    return LoadResult.from_dict({**data, "timeline": rows})


def record_from_dict(data: Mapping[str, Any]) -> Record | ExperimentRecord:
    kind = data.get("kind", "load")
    if kind in EXPERIMENT_KINDS:
        return ExperimentRecord(
            nodeid=str(data["nodeid"]),
            function=str(data["function"]),
            params=dict(data.get("params") or {}),
            kind=kind,
            data=dict(data["experiment"]),
            started=data.get("started"),
            ended=data.get("ended"),
            label=str(data.get("label", "")),
        )
    if kind != "load":
        raise ValueError(f"unknown record kind {kind!r}")
    return Record(
        nodeid=str(data["nodeid"]),
        function=str(data["function"]),
        params=dict(data.get("params") or {}),
        result=result_from_dict(data["result"]),
        trial=int(data.get("trial", 0)),
        started=data.get("started"),
        ended=data.get("ended"),
        label=str(data.get("label", "")),
        discarded=tuple(result_from_dict(r) for r in data.get("discarded") or ()),
        columns=tuple(str(c) for c in data.get("columns") or ()),
    )


def split_records(
    records: Iterable[Record | ExperimentRecord],
) -> tuple[list[Record], list[ExperimentRecord]]:
    """Loads and experiments, each in the order given."""
    loads: list[Record] = []
    experiments: list[ExperimentRecord] = []
    for record in records:
        if isinstance(record, ExperimentRecord):
            experiments.append(record)
        else:
            loads.append(record)
    return loads, experiments


def session_to_dict(
    records: Iterable[Record],
    environment: Environment | Mapping[str, Any] | None = None,
    *,
    name: str = "",
    created: float | None = None,
    experiments: Iterable[ExperimentRecord] = (),
) -> dict[str, Any]:
    env = environment.to_dict() if isinstance(environment, Environment) else environment
    everything: list[Record | ExperimentRecord] = [*records, *experiments]
    return {
        "schema": SCHEMA,
        "name": name,
        "created": time.time() if created is None else created,
        "environment": dict(env or {}),
        "records": [record_to_dict(r) for r in everything],
    }


def session_from_dict(data: Mapping[str, Any], *, path: Path | None = None) -> Session:
    where = f" in {path}" if path else ""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise ResultFileError(
            f"not a pytest-netbench session file{where} (expected schema {SCHEMA!r}); "
            "pass a file written by --netbench-json or --netbench-save"
        )
    try:
        loads, experiments = split_records(record_from_dict(r) for r in data.get("records", ()))
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultFileError(f"damaged record{where}: {exc!r}") from None
    return Session(
        records=tuple(loads),
        environment=dict(data.get("environment") or {}),
        created=data.get("created"),
        name=str(data.get("name", "")),
        path=path,
        experiments=tuple(experiments),
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
    experiments: Iterable[ExperimentRecord] = (),
) -> Path:
    """Write ``records`` (and ``experiments``) with the environment to ``path`` (parents
    created)."""
    payload = session_to_dict(records, environment, name=name, experiments=experiments)
    return write_json_atomically(path, payload)


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
