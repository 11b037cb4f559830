"""Which flow a session runs: one async function, or several by weight, as a Locust user
picks its next task by its ``@task(weight)``.

``flow({browse: 3, buy: 1}, url, ...)``: each session of each virtual user draws one of
them, three in four ``browse``, from the user's own seeded generator.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_netbench._errors import SpecError

# An async function of a client: an httpx.AsyncClient, or the lean client.
FlowFunction = Callable[[Any], Awaitable[Any]]
Flows = FlowFunction | Mapping[FlowFunction, int]


@dataclass(frozen=True, slots=True)
class FlowChoice:
    """The flows a load runs, their weights and the names their sessions are counted by."""

    flows: tuple[FlowFunction, ...]
    weights: tuple[int, ...]
    names: tuple[str, ...]

    @property
    def described(self) -> dict[str, int]:
        """Each flow as ``module:function`` (its qualified name) -> its weight, as reports
        name them."""
        return {
            f"{getattr(f, '__module__', None) or '?'}:{name}": weight
            for f, name, weight in zip(self.flows, self.names, self.weights, strict=True)
        }

    def draw(self, rng: random.Random) -> int:
        """The index of the flow the next session runs."""
        if len(self.flows) == 1:
            return 0
        return rng.choices(range(len(self.flows)), self.weights)[0]


def flow_choice(flows: Flows) -> FlowChoice:
    """The checked choice of ``flows``: an async function, or a mapping of them to whole
    positive weights. A :class:`SpecError` says what is wrong, before any socket."""
    if isinstance(flows, Mapping):
        if not flows:
            raise SpecError("flows by weight need at least one: {shopper: 3, browser: 1}")
        pairs = list(flows.items())
    else:
        pairs = [(flows, 1)]
    for function, weight in pairs:
        _check_async(function)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            raise SpecError(
                f"the weight of flow {_name(function)} must be a whole number of at least 1,"
                f" got {weight!r}"
            )
    names = tuple(_name(function) for function, _ in pairs)
    if len(set(names)) < len(names):
        raise SpecError(f"two flows have one name among {', '.join(names)}: name them apart")
    return FlowChoice(tuple(f for f, _ in pairs), tuple(w for _, w in pairs), names)


def _check_async(function: object) -> None:
    call = getattr(function, "__call__", None)  # noqa: B004 (an async __call__ too)
    if not (inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(call)):
        raise SpecError(
            f"a flow is an async function of a client, got {function!r}: write"
            " `async def shopper(client): await client.get('/')`"
        )


def _name(function: object) -> str:
    return str(getattr(function, "__qualname__", None) or type(function).__name__)
