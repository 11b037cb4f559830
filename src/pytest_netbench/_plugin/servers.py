"""Turning what a test names -- a catalog name, a command, a spec -- into a running Server.

Servers that cannot run on this machine (a missing compiler or interpreter) skip the test
with the catalog's reason, so one comparison file runs everywhere and says what it left out.
In A/B mode with two commands the pair replaces the ``server`` parameter, so tests that
differ only in it are deselected down to one. In A/B mode from a base checkout each test's
own server is started twice, the base arm from the checkout (:func:`in_base_checkout`).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
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


def in_base_checkout(
    ref: object, server_kwargs: Mapping[str, Any], head_dir: str, base_dir: str
) -> tuple[object, dict[str, Any]]:
    """The same server as ``ref`` with ``server_kwargs``, started from the base checkout:
    its working directory (its ``cwd``, else the directory pytest runs in) taken at the
    same place under ``base_dir`` as it is under ``head_dir``, and each absolute path of
    its command and environment that points into ``head_dir`` pointed at the base's copy
    where the base has one (a script, ``PYTHONPATH=src``'s directory; an interpreter of a
    virtualenv the base lacks stays as it is). Every other setting is kept: ready check,
    CPUs, environment, port, timeouts. A catalog server, whose code is pytest-netbench's
    and not the checkout's, or a Server already built, is refused with a TypeError."""
    from pytest_netbench._servers.launcher import Server

    head, base = Path(head_dir), Path(base_dir)
    if isinstance(ref, Server):
        raise TypeError(
            "a Server instance cannot be started again from the base checkout; give the"
            " server as a spec (a command, a dict with 'command', or a ServerSpec)"
        )
    if _is_catalog_name(ref):
        raise TypeError(
            f"{describe(ref)!r} is a catalog server: its code is pytest-netbench's, not your"
            " checkout's, so --netbench-ab-base-dir would measure it twice; give your server's"
            " command (or --netbench-ab BASE HEAD)"
        )
    kwargs = dict(server_kwargs)
    own_cwd = ref.get("cwd") if isinstance(ref, Mapping) else getattr(ref, "cwd", None)
    cwd = kwargs.get("cwd", own_cwd)
    where = Path(os.path.abspath(os.fspath(cwd))) if cwd is not None else Path.cwd()
    try:
        inside = where.relative_to(head)
    except ValueError:
        raise TypeError(
            f"its working directory {str(where)!r} is outside the checkout pytest runs in"
            f" ({head_dir}), so it has no place in the base checkout {base_dir}"
        ) from None
    kwargs["cwd"] = str(base / inside)

    def moved(text: str) -> str:
        return _moved(text, head, base)

    if "env" in kwargs:
        kwargs["env"] = {k: moved(str(v)) for k, v in dict(kwargs["env"]).items()}
    if isinstance(ref, ServerSpec):
        based: object = dataclasses.replace(
            ref,
            command=tuple(moved(p) for p in ref.command),
            env={k: moved(v) for k, v in ref.env.items()},
        )
    elif isinstance(ref, Mapping):
        options = dict(ref)
        options["command"] = [moved(p) for p in _command_list(options["command"])]
        if "env" in options:
            options["env"] = {k: moved(str(v)) for k, v in dict(options["env"]).items()}
        based = options
    else:
        based = [moved(p) for p in _command_list(ref)]
    return based, kwargs


def _is_catalog_name(ref: object) -> bool:
    if isinstance(ref, str):
        return not _looks_like_command(ref)
    return isinstance(ref, Mapping) and not ref.get("command")


def _command_list(command: object) -> list[str]:
    if isinstance(command, str):
        return shlex.split(command)
    if isinstance(command, Sequence):
        return [str(p) for p in command]
    raise TypeError(f"cannot start a server from {command!r}: give a command list or string")


def _moved(text: str, head: Path, base: Path) -> str:
    """``text``, a command argument or an environment value, with each absolute path into
    ``head`` (not already into ``base``) pointed at ``base``'s copy, where it exists."""
    parts = text.split(os.pathsep)
    for index, part in enumerate(parts):
        if not os.path.isabs(part):
            continue
        path = Path(part)
        try:
            path.relative_to(base)
            continue  # already the base's
        except ValueError:
            pass
        try:
            inside = path.relative_to(head)
        except ValueError:
            continue
        if (base / inside).exists():
            parts[index] = str(base / inside)
    return os.pathsep.join(parts)


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
