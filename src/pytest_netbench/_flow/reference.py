"""A flow named by reference, ``module:function`` or ``path/to/file.py:function``, as the
``netbench flow`` command takes it (and, later, as workers on other processes or hosts will
import it). Every way it can fail is a :class:`SpecError` saying what to do, before any
socket exists."""

from __future__ import annotations

import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType

from pytest_netbench._errors import SpecError
from pytest_netbench._flow.choice import FlowFunction

_HOW = "give the flow as module:function (e.g. shop_flows:shopper) or path/to/file.py:function"


def load_flow(reference: str) -> FlowFunction:
    """The async function ``reference`` names, imported (a module from the current
    directory first, as ``python -m`` finds it)."""
    module_name, sep, name = reference.rpartition(":")
    if not sep or not module_name or not name.isidentifier():
        raise SpecError(f"cannot read the flow {reference!r}: {_HOW}")
    module = _import(module_name)
    found = getattr(module, name, None)
    if found is None:
        flows = sorted(
            n
            for n, v in vars(module).items()
            if inspect.iscoroutinefunction(v) and v.__module__ == module.__name__
        )  # defined there, not imported (think)
        offer = f": its async functions are {', '.join(flows)}" if flows else ""
        raise SpecError(f"{module_name} has no {name!r}{offer}")
    if not inspect.iscoroutinefunction(found):
        raise SpecError(
            f"{reference} is not an async function: a flow is `async def {name}(client): ...`"
        )
    flow: FlowFunction = found
    return flow


def load_flows(references: str) -> FlowFunction | dict[FlowFunction, int]:
    """One flow (``module:function``), or several by weight, comma-separated:
    ``shop:browse=3,shop:buy=1`` (a weight left out is 1)."""
    parts = [part.strip() for part in references.split(",") if part.strip()]
    if len(parts) == 1 and "=" not in parts[0]:
        return load_flow(parts[0])
    weighted: dict[FlowFunction, int] = {}
    for part in parts:
        reference, sep, weight = part.partition("=")
        if sep and not weight.strip().isdigit():
            raise SpecError(
                f"the weight of flow {reference!r} must be a whole number, got {weight!r}:"
                " write shop:browse=3,shop:buy=1"
            )
        weighted[load_flow(reference.strip())] = int(weight) if sep else 1
    return weighted


def _import(module_name: str) -> ModuleType:
    if module_name.endswith(".py") or "/" in module_name:
        return _import_file(Path(module_name))
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")  # the current directory, as `python -m` puts it first
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise SpecError(
                f"cannot import the flow's module {module_name!r} ({exc}): run netbench from"
                " the directory holding it, or give its path: netbench flow ./flows.py:shopper"
            ) from None
        raise


def _import_file(path: Path) -> ModuleType:
    """A flow file, imported as the module its name makes, from its directory: put first
    on the path, which worker processes inherit, so they import it by that name too."""
    if not path.is_file() or path.suffix != ".py" or not path.stem.isidentifier():
        raise SpecError(f"no flow file {str(path)!r}: {_HOW}")
    directory = str(path.resolve().parent)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return importlib.import_module(path.stem)
