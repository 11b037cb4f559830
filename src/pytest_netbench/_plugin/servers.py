"""Turning what a test names -- a catalog name, a command, a spec -- into a running Server.

Servers that cannot run on this machine (a missing compiler or interpreter) skip the test
with the catalog's reason, so one comparison file runs everywhere and says what it left out.
In A/B mode the pair replaces the ``server`` parameter, so tests that differ only in it are
deselected down to one.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_netbench._servers.spec import ServerSpec

if TYPE_CHECKING:
    from pytest_netbench._servers.launcher import Server

_CATALOG_KEYS = ("app", "python", "backend")
_AB_REPLACED_PARAM = "server"  # in A/B mode the pair takes the place of this parameter


def describe(ref: object) -> str:
    """A short name for a server reference (for ids, matrices and messages)."""
    if isinstance(ref, ServerSpec):
        return ref.name
    if isinstance(ref, Mapping):
        return str(ref.get("name") or describe(ref.get("command", "?")))
    name = getattr(ref, "name", None)
    if isinstance(name, str) and name:
        return name
    if isinstance(ref, str):
        return ref
    if isinstance(ref, Sequence):
        return " ".join(str(p) for p in ref)
    return str(ref)


def start_server(ref: object, **kwargs: Any) -> Server:
    """Build and start the server ``ref`` names; skip the test when it cannot run here."""
    from pytest_netbench._errors import InterpreterNotFound, ToolchainMissing

    try:
        server = build_server(ref, **kwargs)
        if not server.running:  # a Server instance may come already started
            server.start()
    except (ToolchainMissing, InterpreterNotFound) as exc:
        pytest.skip(f"server {describe(ref)!r} cannot run here: {exc}")
    return server


def build_server(ref: object, **kwargs: Any) -> Server:
    """An unstarted Server for ``ref``; raises a clear TypeError for what it cannot use."""
    from pytest_netbench._servers.launcher import Server

    if isinstance(ref, Server):
        if kwargs:
            raise TypeError("a Server instance takes no extra keyword arguments")
        return ref
    if isinstance(ref, Mapping):
        options = dict(ref)
        target = options.pop("command", None) or options.pop("name", None)
        if target is None:
            raise TypeError(
                f"server mapping {dict(ref)!r} needs a 'command' (list) or a 'name' (catalog)"
            )
        options.update(kwargs)
        return build_server(target, **options)
    if isinstance(ref, ServerSpec):
        return Server.from_spec(ref, **kwargs)
    if isinstance(ref, str):
        if _looks_like_command(ref):
            return Server(shlex.split(ref), **kwargs)
        return _from_catalog(ref, kwargs)
    if isinstance(ref, Sequence) and ref and all(isinstance(p, str) for p in ref):
        return Server(list(ref), **kwargs)
    raise TypeError(
        f"cannot start a server from {ref!r}: give a catalog name ('tornado'), a command"
        " list (['./hello', '{port}']), a ServerSpec, or a dict with 'command' and Server options"
    )


def _looks_like_command(text: str) -> bool:
    return any(c in text for c in " /{") or text.startswith(".")


def _from_catalog(name: str, kwargs: dict[str, Any]) -> Server:
    from pytest_netbench._servers import catalog
    from pytest_netbench._servers.launcher import Server

    picked = {k: kwargs.pop(k) for k in _CATALOG_KEYS if k in kwargs}
    backend = picked.get("backend")
    if isinstance(backend, Server):
        # A proxy in front of a server the test started: its figures go beside the proxy's.
        picked["backend"] = f"{backend.host}:{backend.port}"
    spec = catalog.get(name, **picked)
    server = Server.from_spec(spec, **kwargs)
    server.backend = backend if isinstance(backend, Server) else None
    return server


def deselect_server_duplicates(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep one test per parameter set once the ``server`` parameter no longer matters."""
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or _AB_REPLACED_PARAM not in callspec.params:
            kept.append(item)
            continue
        others = tuple(
            sorted((k, repr(v)) for k, v in callspec.params.items() if k != _AB_REPLACED_PARAM)
        )
        key = (item.nodeid.split("[", 1)[0], others)
        if key in seen:
            dropped.append(item)
        else:
            seen.add(key)
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
