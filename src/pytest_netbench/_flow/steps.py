"""What a virtual user's client remembers of its session, whichever client it is (httpx
over the engine's transport, or the lean client): the step of its latest request, and the
request that failed, so the run can tell a session failed at a step from a flow's bug."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._public import publish

# ``client.get(url, extensions={"netbench_step": "login"})`` names a request's step.
STEP_EXTENSION = "netbench_step"
NO_STEP = "(no request)"
# The name ``with step("login"):`` gives the requests inside it (each user's task has its
# own context, so users never see each other's).
_CURRENT_STEP: ContextVar[str | None] = ContextVar("netbench_step", default=None)


@contextlib.contextmanager
def step(name: str) -> Iterator[None]:
    """Name the requests a flow makes inside the block, as k6's ``group`` and Locust's
    ``name=`` do: their figures are ``by_request[name]``::

        async def shopper(client):
            with step("login"):
                await client.post("/login", json={"user": "ann"})

    A request's own ``extensions={"netbench_step": ...}`` wins; blocks nest (the inner
    name counts)."""
    if not isinstance(name, str) or not name.strip():
        raise SpecError(f"a step's name is a non-empty string, got {name!r}")
    token = _CURRENT_STEP.set(name)
    try:
        yield
    finally:
        _CURRENT_STEP.reset(token)


def step_name(method: str, path: str, extensions: Mapping[str, Any] | None) -> str:
    """The step a request belongs to: the name it was given (its extension, else the
    ``step`` block it is in), else ``"METHOD /path"``."""
    given = extensions.get(STEP_EXTENSION) if extensions else None
    given = given or _CURRENT_STEP.get()
    return str(given) if given else f"{method} {path}"


@dataclass(slots=True)
class RequestFailure:
    """The request of a session that failed: the exception raised into the flow."""

    error: BaseException
    kind: str
    step: str


class SessionTrail:
    """The latest step and failed request of the session a user is running."""

    __slots__ = ("failure", "step")

    def __init__(self) -> None:
        self.step = NO_STEP
        self.failure: RequestFailure | None = None

    def new_session(self) -> None:
        self.step = NO_STEP
        self.failure = None


publish(globals())
