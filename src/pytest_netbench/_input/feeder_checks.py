"""The checks of a load's feeders and the request templates they fill, before any socket
exists: a load with feeders' (``_input/feeders.py`` calls these, and checks a load without).

Part of :mod:`pytest_netbench._input.spec`: each feeder's arguments, its file
(there, readable, with the columns its placeholders name), every placeholder naming a
feeder and a field it has, every feeder used, and the first request of each kind rendered
from the feeders' first values and parsed as HTTP. Each refusal says what to write instead.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import pickle
from collections.abc import Collection, Mapping
from typing import Any

from pytest_netbench._errors import FeederExhausted, SpecError
from pytest_netbench._model import LoadSpec
from pytest_netbench._model.feeders import (
    ON_ENDS,
    ROW_ORDERS,
    Call,
    Choice,
    Count,
    CsvRows,
    Feeder,
    JsonLines,
    RandInt,
    Uuid4,
    maker_name,
)
from pytest_netbench._proto import feeding
from pytest_netbench._proto import rows as rows_proto
from pytest_netbench._proto import source as source_proto
from pytest_netbench._proto.templates import (
    RequestTemplate,
    Slot,
    TemplateError,
    request_problem,
    request_template,
)

_MAKERS = "feeders.count(), feeders.randint(...), feeders.choice(...), feeders.uuid4(), "
_MAKERS += "feeders.csv(...), feeders.jsonl(...) or feeders.call(...)"


def checked_feeders(feeders: Mapping[str, Feeder] | None) -> tuple[tuple[str, Feeder], ...]:
    """The feeders as the spec holds them: (name, feeder) pairs, files by absolute path."""
    if feeders is None:
        return ()
    if not isinstance(feeders, Mapping):
        raise SpecError(
            f"feeders must be a dict of name -> feeder (feeders={{'id': feeders.count()}}),"
            f" got {feeders!r}"
        )
    out = []
    for name, feeder in feeders.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise SpecError(
                f"a feeder's name is a Python identifier (a placeholder writes it ${{name}}),"
                f" got {name!r}"
            )
        if not isinstance(feeder, Feeder):
            raise SpecError(f"feeder {name!r} must be made by {_MAKERS}; got {feeder!r}")
        out.append((name, _checked(name, feeder)))
    return tuple(out)


def _checked(name: str, feeder: Feeder) -> Feeder:
    what = f"feeder {name!r} ({maker_name(feeder)})"
    if isinstance(feeder, Count):
        _whole(what, start=feeder.start, step=feeder.step)
        if feeder.step == 0:
            raise SpecError(f"{what}: step must not be 0 (every value would be the same)")
    elif isinstance(feeder, RandInt):
        _whole(what, low=feeder.low, high=feeder.high)
        if feeder.low > feeder.high:
            raise SpecError(f"{what}: low ({feeder.low}) is above high ({feeder.high})")
    elif isinstance(feeder, Choice):
        _check_choice(what, feeder)
    elif isinstance(feeder, CsvRows | JsonLines):
        return _checked_file(what, feeder)
    elif isinstance(feeder, Call):
        _check_call(what, feeder)
    elif not isinstance(feeder, Uuid4):
        raise SpecError(f"{what}: an unknown kind of feeder; use {_MAKERS}")
    return feeder


def _whole(what: str, **values: object) -> None:
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(f"{what}: {key} must be a whole number, got {value!r}")


def _check_choice(what: str, feeder: Choice) -> None:
    values, weights = feeder.values, feeder.weights
    if not isinstance(values, tuple) or not values:
        raise SpecError(f"{what}: give a non-empty list of values, e.g. choice(['a', 'b'])")
    for value in values:
        if not isinstance(value, str | bytes | int | float):
            raise SpecError(f"{what}: a value must be text, bytes or a number, got {value!r}")
    if not isinstance(weights, tuple):
        raise SpecError(f"{what}: weights must be a list of numbers, got {weights!r}")
    if weights:
        if len(weights) != len(values):
            raise SpecError(f"{what}: {len(weights)} weights for {len(values)} values")
        for weight in weights:
            if (
                isinstance(weight, bool)
                or not isinstance(weight, int | float)
                or not (math.isfinite(weight) and weight >= 0)
            ):
                raise SpecError(f"{what}: a weight must be a number >= 0, got {weight!r}")
        if not sum(weights) > 0:
            raise SpecError(f"{what}: the weights add up to 0")


def _checked_file(what: str, feeder: CsvRows | JsonLines) -> Feeder:
    if feeder.order not in ROW_ORDERS:
        raise SpecError(
            f"{what}: order must be one of {', '.join(ROW_ORDERS)}, not {feeder.order!r}"
        )
    if feeder.on_end not in ON_ENDS:
        raise SpecError(
            f"{what}: on_end must be one of {', '.join(ON_ENDS)}, not {feeder.on_end!r}"
        )
    if feeder.order == "random" and feeder.on_end != "wrap":
        raise SpecError(
            f"{what}: order='random' draws a row at random each time and never runs out, so"
            " on_end does not apply: drop it, or use order='shuffle' (each row once a pass)"
        )
    path = os.path.abspath(feeder.path)
    if not os.path.isfile(path):
        raise SpecError(f"{what}: no file {feeder.path!r} (looked for {path})")
    if not os.access(path, os.R_OK):
        raise SpecError(f"{what}: {path} cannot be read")
    if isinstance(feeder, CsvRows):
        if not isinstance(feeder.delimiter, str) or len(feeder.delimiter) != 1:
            raise SpecError(f"{what}: delimiter must be one character, got {feeder.delimiter!r}")
        if feeder.delimiter in '"\r\n':
            raise SpecError(f"{what}: {feeder.delimiter!r} cannot be the delimiter")
        columns = feeder.columns
        if not isinstance(columns, tuple) or not all(isinstance(c, str) for c in columns):
            raise SpecError(f"{what}: columns must be a list of names, got {columns!r}")
    return dataclasses.replace(feeder, path=path)


def _check_call(what: str, feeder: Call) -> None:
    batch, on_end = feeder.batch, feeder.on_end
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise SpecError(f"{what}: batch must be a whole number >= 1, got {batch!r}")
    if on_end not in ("stop", "error"):
        raise SpecError(
            f"{what}: on_end must be 'stop' or 'error' (a function that returns fewer values"
            f" than asked has run out), got {on_end!r}"
        )
    try:
        function = feeding.load_function(feeder.function)
    except ValueError as exc:
        raise SpecError(f"{what}: {exc}") from None
    if not callable(function):
        raise SpecError(f"{what}: {function!r} is not callable")
    if not isinstance(feeder.function, str):
        try:
            pickle.dumps(function)
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            raise SpecError(
                f"{what}: the function must reach the load's worker processes: define it at"
                f" a module's top level, or give it as 'module:function' ({exc})"
            ) from None


def check_feeder_templates(spec: LoadSpec) -> None:
    """Every request template of an HTTP load with feeders, against its feeders."""
    names = source_proto.kind_names(spec)
    ints = {name for name, feeder in spec.feeders if feeding.int_valued(feeder)}
    templates = []
    for name, request in zip(names, source_proto.requests_by_kind(spec), strict=True):
        try:
            templates.append(request_template(spec, request, ints))
        except ValueError as exc:  # TemplateError, or what render_request refuses
            where = f" {name!r}" if request is not None else ""
            raise SpecError(f"cannot build the request{where}: {exc}") from None
    feeders = dict(spec.feeders)
    fields = source_proto.feeder_fields(templates)
    for template, name in zip(templates, names, strict=True):
        for slot in template.slots:
            _check_slot(slot, feeders, name)
    unused = [name for name in feeders if name not in fields]
    if unused:
        raise SpecError(
            f"feeder {unused[0]!r} is not used: no ${{{unused[0]}}} (or ${{{unused[0]}.field}})"
            " in the path, header values or body of any request; use it or drop it"
        )
    for name, feeder in spec.feeders:
        _check_fields(name, feeder, fields[name])
    _check_first_requests(spec, templates, names, fields)


def _check_slot(slot: Slot, feeders: Mapping[str, Feeder], kind: str) -> None:
    feeder = feeders.get(slot.feeder)
    if feeder is None:
        close = difflib.get_close_matches(slot.feeder, list(feeders), n=1, cutoff=0.6)
        hint = f"did you mean ${{{close[0]}}}?" if close else f"the feeders: {', '.join(feeders)}"
        raise SpecError(f"{slot.text} in {kind!r} names no feeder: {hint}")
    if isinstance(feeder, CsvRows) and slot.field is None:
        raise SpecError(
            f"{slot.text} in {kind!r}: feeder {slot.feeder!r} gives rows of a CSV file; name a"
            f" column: ${{{slot.feeder}.column}}"
        )
    if slot.field is not None and not isinstance(feeder, CsvRows | JsonLines | Call):
        raise SpecError(
            f"{slot.text} in {kind!r}: feeder {slot.feeder!r} ({maker_name(feeder)}) gives one"
            f" value, not rows with fields: write ${{{slot.feeder}}}"
        )


def _check_fields(name: str, feeder: Feeder, fields: Collection[str | None]) -> None:
    asked = [field for field in fields if field is not None]
    if isinstance(feeder, CsvRows):
        header, _ = rows_proto.header_and_start(feeder.path, True, not feeder.columns)
        columns = feeding.csv_names(header, feeder)
        _check_known(name, feeder.path, asked, columns, "column")
    elif isinstance(feeder, JsonLines) and asked:
        first, _ = rows_proto.header_and_start(feeder.path, False, False)
        try:
            row = json.loads(first)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested past the parser
            raise SpecError(
                f"feeder {name!r}: the first line of {feeder.path} is not JSON ({exc})"
            ) from None
        if not isinstance(row, dict):
            raise SpecError(
                f"feeder {name!r}: the first line of {feeder.path} is not a JSON object, so it"
                f" has no fields: write ${{{name}}} for the whole line"
            )
        _check_known(name, feeder.path, asked, list(row), "field")


def _check_known(name: str, path: str, asked: list[str], known: list[str], what: str) -> None:
    for field in asked:
        if field not in known:
            close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise SpecError(
                f"feeder {name!r}: {os.path.basename(path)} has no {what} {field!r} ({hint}its"
                f" {what}s: {', '.join(known) or 'none'}): ${{{name}.{field}}}"
            )


def _check_first_requests(
    spec: LoadSpec,
    templates: list[RequestTemplate],
    names: tuple[str, ...],
    fields: Mapping[str, tuple[str | None, ...]],
) -> None:
    """Each kind's request from each feeder's first values (the files' first rows; a
    function is not called here, its values are checked as they are rendered)."""
    first: dict[str, list[Any]] = {}
    for name, feeder in spec.feeders:
        try:
            first[name] = _first_values(name, feeder, fields[name], spec.seed)
        except FeederExhausted as exc:
            raise SpecError(str(exc)) from None
    for template, kind in zip(templates, names, strict=True):
        columns = [[first[slot.feeder][fields[slot.feeder].index(slot.field)]]
                   for slot in template.slots]  # fmt: skip
        try:
            request = template.render(columns, 1)[0]
        except TemplateError as exc:
            raise SpecError(f"{kind!r}, rendered from the feeders' first values: {exc}") from None
        problem = request_problem(request)
        if problem:
            raise SpecError(
                f"{kind!r} does not render valid HTTP from the feeders' first values"
                f" ({problem}): {request[:200]!r}"
            )


def _first_values(
    name: str, feeder: Feeder, fields: tuple[str | None, ...], seed: int
) -> list[Any]:
    if isinstance(feeder, Call):
        return [b"0" for _ in fields]
    if isinstance(feeder, CsvRows | JsonLines):
        feeder = dataclasses.replace(feeder, order="sequential", on_end="stop")
    values = feeding.values_for(name, feeder, fields, seed=seed, share=0, shares=1)
    try:
        columns = values.take(1)
    finally:
        values.close()
    if not columns[0]:
        path = getattr(feeder, "path", "")
        raise SpecError(f"feeder {name!r}: {path} has no rows")
    return [column[0] for column in columns]
