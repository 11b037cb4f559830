"""Per-worker recording: flat integer arrays on the hot path, folded once a second.

The engine appends nanosecond latencies of ok responses to ``array('q')`` buffers and
bumps plain counters; :meth:`Recorder.tick` folds the buffers into per-second and
whole-run microsecond counters, off the per-request path. :class:`WorkerOutcome` is the
picklable summary a worker process hands back for lossless merging.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

from pytest_netbench._model import ERROR_KINDS
from pytest_netbench._stats.histogram import count_microseconds, percentile_of_counts

# errnos that mean the generator, not the server, ran out of something
GENERATOR_FAULT_ERRNOS = frozenset({24, 23, 99, 105})  # EMFILE ENFILE EADDRNOTAVAIL ENOBUFS


@dataclass(slots=True)
class SecondRow:
    ok: int
    errors: int
    counts: Counter[int]

    @property
    def p99_ms(self) -> float:
        return percentile_of_counts(self.counts, 99.0)


@dataclass(slots=True)
class WorkerOutcome:
    """Everything one worker measured, in a form that merges without loss."""

    sent: int = 0
    in_flight: int = 0
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))
    status_codes: dict[int, int] = field(default_factory=dict)
    bytes_read: int = 0
    bytes_written: int = 0
    latency_counts: Counter[int] = field(default_factory=Counter)
    uncorrected_counts: Counter[int] = field(default_factory=Counter)
    lag_counts: Counter[int] = field(default_factory=Counter)
    seconds: list[SecondRow] = field(default_factory=list)
    window_start_ns: int = 0
    window_end_ns: int = 0
    cpu_s: float = 0.0
    busy_s: float = 0.0
    connections_opened: int = 0
    connections_peak: int = 0
    generator_faults: int = 0
    scheduled: int = 0
    unsent: int = 0
    late_sends: int = 0
    error_samples: dict[str, str] = field(default_factory=dict)
    loop: str = ""


class Recorder:
    """Mutable counters the engine writes into; one per worker, never shared."""

    __slots__ = (
        "_folded_errors",
        "bytes_read",
        "bytes_written",
        "error_samples",
        "errors",
        "generator_faults",
        "lags",
        "latencies",
        "measure_start_ns",
        "open_loop",
        "outcome",
        "sent",
        "status_200",
        "status_codes",
        "uncorrected",
    )

    def __init__(self, measure_start_ns: int, *, open_loop: bool) -> None:
        self.measure_start_ns = measure_start_ns
        self.open_loop = open_loop
        self.sent = 0
        self.errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
        self.error_samples: dict[str, str] = {}
        self.status_codes: dict[int, int] = {}
        # 200s counted apart by the fused keep-alive path (an int add, not a dict update);
        # finish() folds them into status_codes.
        self.status_200 = 0
        self.bytes_read = 0
        self.bytes_written = 0
        self.generator_faults = 0
        self.latencies: array[int] = array("q")
        self.uncorrected: array[int] = array("q")
        self.lags: array[int] = array("q")
        self.outcome = WorkerOutcome()
        self._folded_errors = 0

    def error(self, kind: str, detail: str, errno: int | None = None) -> None:
        """Count one measured failure; keep the first message of each kind as a sample."""
        self.errors[kind] += 1
        if kind not in self.error_samples:
            self.error_samples[kind] = detail[:200]
        if errno in GENERATOR_FAULT_ERRNOS:
            self.generator_faults += 1

    def reset_window(self) -> None:
        """Forget the bytes moved during warm-up. (Samples need no reset: only requests
        started inside the window are ever recorded, even if this runs a little late.)"""
        self.bytes_read = 0
        self.bytes_written = 0

    def tick(self) -> None:
        """Fold the last second's samples into the per-second and whole-run counters."""
        out = self.outcome
        counts = count_microseconds(self.latencies)
        ok = len(self.latencies)
        out.latency_counts.update(counts)
        if self.open_loop:
            out.uncorrected_counts.update(count_microseconds(self.uncorrected))
            out.lag_counts.update(count_microseconds(self.lags))
            del self.uncorrected[:]
            del self.lags[:]
        del self.latencies[:]
        errors_now = sum(self.errors.values())
        out.seconds.append(SecondRow(ok, errors_now - self._folded_errors, counts))
        self._folded_errors = errors_now

    def finish(self, *, in_flight: int, window_end_ns: int) -> WorkerOutcome:
        """Close the window: fold what is left (a partial last second) and return the outcome."""
        leftover_errors = sum(self.errors.values()) != self._folded_errors
        if self.latencies or self.uncorrected or self.lags or leftover_errors:
            self.tick()
        out = self.outcome
        out.sent = self.sent
        out.in_flight = in_flight
        out.errors = dict(self.errors)
        out.status_codes = dict(self.status_codes)
        if self.status_200:
            out.status_codes[200] = out.status_codes.get(200, 0) + self.status_200
        out.bytes_read = self.bytes_read
        out.bytes_written = self.bytes_written
        out.window_start_ns = self.measure_start_ns
        out.window_end_ns = window_end_ns
        out.generator_faults = self.generator_faults
        out.error_samples = dict(self.error_samples)
        return out
