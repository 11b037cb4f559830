"""The latency figures a load and each request kind of a mix answer alike (``r.p99_ms``,
``r.by_request["login"].p99_ms``), written once."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_netbench._model.sections import LatencySummary


class LatencyFigures:
    """Properties over a ``latency`` summary of ok responses, in milliseconds, and the
    throughput of ok responses. A class that holds them says what a missing figure
    means (``_latency_figure``: a :class:`NoLatency` that says why)."""

    __slots__ = ()

    if TYPE_CHECKING:
        latency: LatencySummary
        ok: int
        duration_s: float

        def _latency_figure(self, value: float) -> float: ...

    @property
    def rps(self) -> float:
        return self.ok / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def p50_ms(self) -> float:
        return self._latency_figure(self.latency.p50_ms)

    @property
    def p75_ms(self) -> float:
        return self._latency_figure(self.latency.p75_ms)

    @property
    def p90_ms(self) -> float:
        return self._latency_figure(self.latency.p90_ms)

    @property
    def p95_ms(self) -> float:
        return self._latency_figure(self.latency.p95_ms)

    @property
    def p99_ms(self) -> float:
        return self._latency_figure(self.latency.p99_ms)

    @property
    def p999_ms(self) -> float:
        return self._latency_figure(self.latency.p999_ms)

    @property
    def max_ms(self) -> float:
        return self._latency_figure(self.latency.max_ms)

    @property
    def mean_ms(self) -> float:
        return self._latency_figure(self.latency.mean_ms)

    @property
    def stdev_ms(self) -> float:
        return self._latency_figure(self.latency.stdev_ms)
