"""The base of every feeder, in a module of its own: a load's spec names it (a
:class:`~pytest_netbench._model.spec.LoadSpec` holds feeders), and a load without feeders
imports no feeder kind (``_model/feeders.py``; issue 35)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Feeder:
    """The base of every feeder: where the values of one ``${name}`` come from."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (what a stored result records of its load)."""
        # Each feeder is one of the kinds of _model/feeders.py, which is therefore loaded
        # (importing it here would be a cycle: its kinds are built on this base).
        describe: Any = sys.modules["pytest_netbench._model.feeders"].describe
        return dict(describe(self))
