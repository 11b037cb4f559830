"""What a virtual user's client remembers of its session, whichever client it is (httpx
over the engine's transport, or the lean client): the step of its latest request, and the
request that failed, so the run can tell a session failed at a step from a flow's bug."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# ``client.get(url, extensions={"netbench_step": "login"})`` names a request's step.
STEP_EXTENSION = "netbench_step"
NO_STEP = "(no request)"


def step_name(method: str, path: str, extensions: Mapping[str, Any] | None) -> str:
    """The step a request belongs to: the name it was given, else ``"METHOD /path"``."""
    given = extensions.get(STEP_EXTENSION) if extensions else None
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
