"""A server's command line: checked when the server is described, named, filled in with
its host, port and interpreter when it starts, and its exit told in words."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Sequence

from pytest_netbench._errors import SpecError


def describe_exit(returncode: int) -> str:
    """``exited with code 3`` or ``was killed by signal SIGSEGV``."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by signal {name}"
    return f"exited with code {returncode}"


def check_command(command: object) -> list[str]:
    if isinstance(command, (str, bytes)):
        raise SpecError(
            f"command must be an argument list such as ['{{python}}', 'app.py', '--port', "
            f"'{{port}}'], not a shell string ({command!r}); use shlex.split() if you have one"
        )
    if not isinstance(command, Sequence) or not command:
        raise SpecError(f"command must be a non-empty list of arguments, got {command!r}")
    args: list[str] = []
    for arg in command:
        if isinstance(arg, os.PathLike):
            arg = os.fspath(arg)
        if not isinstance(arg, str):
            raise SpecError(f"every command argument must be a string, got {arg!r} in {command!r}")
        args.append(arg)
    return args


def check_port_pattern(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise SpecError(f"port_pattern {pattern!r} is not a valid regex: {exc}") from None
    if regex.groups < 1:
        raise SpecError(
            f"port_pattern {pattern!r} needs a group capturing the port, e.g. r'port=(\\d+)'"
        )
    return regex


def fill_in(text: str, host: str, port: str, python: str) -> str:
    # Plain replacement, not str.format: commands may hold literal braces.
    return text.replace("{host}", host).replace("{port}", port).replace("{python}", python)


def default_name(command: list[str]) -> str:
    first = command[0]
    if first == "{python}" and len(command) > 1:
        if command[1] == "-m" and len(command) > 2:
            return command[2]
        first = command[1]
    base = os.path.basename(first.rstrip("/")) or first
    return base[:-3] if base.endswith(".py") else base
