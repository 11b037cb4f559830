"""The keep-alive steady state compiled (``compiled_steady.c``; issue 35).

Optional: where the package was installed without a C compiler, the module is missing and
``fused_http`` runs the whole path in Python (``fused_http.SteadyReader`` is ``None``)."""

from collections import deque
from collections.abc import Callable
from typing import Any

class SteadyReader:
    """A plain fused connection's ``data_received`` (see ``compiled_steady.c``)."""

    measure: int
    @property
    def answered_at(self) -> int: ...
    def __init__(
        self,
        fallback: Callable[[bytes], None],
        pending: deque[int],
        slots: list[int],
        record: Callable[[int], object],
        request: bytes | None,
        measure: int,
        *,
        run: object | None = None,
        next_ready: Callable[[], bytes] | None = None,
        intended: deque[int] | None = None,
        uncorrected: Callable[[int], object] | None = None,
        idle: list[Any] | None = None,
        backlog: deque[int] | None = None,
        connection: object | None = None,
    ) -> None: ...
    def __call__(self, data: bytes) -> None: ...
    def arm(self, write: Callable[[bytes], object]) -> None: ...
    def disarm(self) -> None: ...
    def take_counts(self) -> tuple[int, int]: ...
    @property
    def armed(self) -> bool: ...
    @property
    def responses(self) -> int: ...

def count_steady(data: bytes) -> int: ...
