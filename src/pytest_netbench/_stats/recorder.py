"""Per-worker recording: flat integer arrays on the hot path, folded once per timeline row.

The engine appends nanosecond latencies of ok responses to flat integer arrays and
bumps plain counters; :meth:`Recorder.close_bucket` folds the buffers into the timeline
bucket that just ended and the whole-run microsecond counters, off the per-request path.
A bucket is a second by default (the loop's once-a-second :meth:`Recorder.tick`), or
``timeline_resolution_s`` long, closed by the run's own timer. A request mix keeps the
same figures per kind of request as well. :class:`WorkerOutcome` is the picklable summary
a worker process hands back for lossless merging.
"""

from __future__ import annotations

import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pytest_netbench._model import ERROR_KINDS
from pytest_netbench._stats.histogram import (
    LOWEST_US,
    add_counts,
    count_microseconds,
    percentile_of_counts,
    take_slots,
)
from pytest_netbench._stats.streams import StreamOutcome

# The typecode of the arrays the hot paths append a sample to per response (latencies, and
# open loop's uncorrected ones): unsigned, since CPython's array converts an int to a signed
# ``q`` through PyArg_Parse but to a ``Q`` directly, about 40 ns an append cheaper (issue 35).
# Every such sample is a later monotonic reading less an earlier one; a negative one would
# raise OverflowError rather than count.
SAMPLES = "Q"

# errnos that mean the generator, not the server, ran out of something
GENERATOR_FAULT_ERRNOS = frozenset({24, 23, 99, 105})  # EMFILE ENFILE EADDRNOTAVAIL ENOBUFS
ONE_SECOND_NS = 1_000_000_000
# Slots of Recorder.count_as_recorded: values up to 8 ms counted as recorded (a quiet
# connection per request answers in 1-2 ms); a slower one is appended. Each bucket's fold
# looks at every slot (~20 ns each, in C).
SLOTS_US = 8192
PHASES = ("connect", "tls", "wait", "receive")
# A WebSocket load's handshakes' wait and receive, kept apart from its messages' (which
# are no request's phases): the load's wait and receive (``merge``).
UPGRADE_WAIT, UPGRADE_RECEIVE = "upgrade_wait", "upgrade_receive"


def _phase_counts() -> dict[str, Counter[int]]:
    return {name: Counter() for name in PHASES}


class TimelineBucket:
    """One timeline row as one worker saw it: ok responses, failures, their latencies.

    A long run keeps a row a second for its whole length, so a row holds its latencies
    packed (:func:`pack_counts`: a few hundred bytes) rather than as a Counter (tens of
    KiB); ``counts`` unpacks them when asked (merging, a report, the live line)."""

    __slots__ = ("_packed", "connections", "errors", "ok")

    def __init__(
        self, ok: int, errors: int, counts: Mapping[int, int], connections: int | None = None
    ) -> None:
        self.ok = ok
        self.errors = errors
        self.connections = connections  # open or opening at the bucket's end
        self._packed = pack_counts(counts)

    @property
    def counts(self) -> Counter[int]:
        return unpack_counts(self._packed)

    @property
    def p99_ms(self) -> float:
        return percentile_of_counts(self.counts, 99.0)

    @property
    def p50_ms(self) -> float:
        return percentile_of_counts(self.counts, 50.0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TimelineBucket):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> tuple[int, int, int | None, bytes]:
        return (self.ok, self.errors, self.connections, self._packed)

    def __setstate__(self, state: tuple[int, int, int | None, bytes]) -> None:
        self.ok, self.errors, self.connections, self._packed = state

    def __repr__(self) -> str:
        return f"TimelineBucket(ok={self.ok}, errors={self.errors}, connections={self.connections})"


def pack_counts(counts: Mapping[int, int]) -> bytes:
    """Microsecond counts as compressed bytes: the sorted values' differences, then the
    counts, each in the narrowest unsigned integers that hold it (two type codes first).
    A soak at 200 requests a second keeps a row a second: 64-bit integers made each
    row about 1.8 KiB, and memory grew with them (issue 34)."""
    values = sorted(counts)
    deltas = [b - a for a, b in zip([0, *values], values, strict=False)]
    how_many = [counts[value] for value in values]
    delta_array = array(_narrowest(deltas), deltas)
    count_array = array(_narrowest(how_many), how_many)
    header = (delta_array.typecode + count_array.typecode).encode()
    return zlib.compress(header + delta_array.tobytes() + count_array.tobytes(), 6)


def _narrowest(numbers: list[int]) -> str:
    top = max(numbers, default=0)
    for code in "BHIQ":
        if top < 1 << (8 * array(code).itemsize):
            return code
    raise ValueError(f"a count or value of {top} does not fit in 64 bits")


def unpack_counts(packed: bytes) -> Counter[int]:
    raw = zlib.decompress(packed)
    delta_code, count_code = chr(raw[0]), chr(raw[1])
    deltas = array(delta_code)
    split = 2 + (len(raw) - 2) // (deltas.itemsize + array(count_code).itemsize) * deltas.itemsize
    deltas.frombytes(raw[2:split])
    how_many = array(count_code)
    how_many.frombytes(raw[split:])
    counts: Counter[int] = Counter()
    value = 0
    for delta, count in zip(deltas, how_many, strict=True):
        value += delta
        counts[value] = count
    return counts


@dataclass(slots=True)
class RequestOutcome:
    """One kind of request of a mix, as one worker saw it (merged like the totals)."""

    sent: int = 0
    in_flight: int = 0
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))
    status_codes: dict[int, int] = field(default_factory=dict)
    latency_counts: Counter[int] = field(default_factory=Counter)
    # Microsecond counts of wait and receive (connect and tls are the load's, not a kind's).
    phase_counts: dict[str, Counter[int]] = field(default_factory=_phase_counts)


class PhaseSamples:
    """Explicit wait and receive samples (ns) of ok responses, and beside each its
    ``basis``: the same response's ``now - start``, which the path that only records the
    latency appended for it too. A response the fast paths record without these came
    whole in one read: its wait is its ``now - start`` and its receive nothing
    (:func:`fold_phases`). A wait appended without a receive or a basis is one of an
    answer that came whole in the read that completed it, after a wait of its own (a
    connection per request: ``RawHttpConnection._answered``): its receive is nothing,
    counted by how many more waits than receives there are. Every explicit record
    appends one wait, so the waits count them. Such a wait may instead be counted in
    ``wait_slots`` as it is recorded (see :meth:`Recorder.count_as_recorded`)."""

    __slots__ = ("basis", "receives", "wait_slots", "waits")

    def __init__(self) -> None:
        self.basis: array[int] = array("q")
        self.waits: array[int] = array("q")
        self.receives: array[int] = array("q")
        self.wait_slots: list[int] | None = None

    def clear(self) -> None:
        del self.basis[:]
        del self.waits[:]
        del self.receives[:]


def fold_phases(
    into: dict[str, Counter[int]], samples: PhaseSamples, basis: Counter[int] | None
) -> None:
    """Fold one bucket's phase samples into ``into``. ``basis``: the microsecond counts of
    every ok response's ``now - start`` in the bucket (None: every response recorded its
    phases explicitly); those without explicit samples came whole in one read."""
    # Every response of the bucket recorded its phases (a connection per request, HTTP/2's
    # steady state): nothing came whole in one read, and the subtraction below, a Python
    # loop over every distinct value, would leave nothing. Each recording is an ok
    # response's, beside its latency in ``basis``, and appends one wait: as many waits as
    # ok responses means all of them. Else some came whole in one read, recorded by a
    # keep-alive fast path: those never share a recorder with the answers recorded without
    # a basis (a connection per request, see PhaseSamples), so each wait here has its basis.
    ok = sum(basis.values()) if basis is not None else 0
    slotted = take_slots(samples.wait_slots) if samples.wait_slots is not None else None
    explicit = len(samples.waits) + (sum(slotted.values()) if slotted else 0)
    if basis is not None and ok != explicit:
        # ``basis`` less the explicit ones, keeping the positive counts (``+``): only the
        # explicit samples' values can fall to zero or below, so only they are visited, not
        # every value of the second (a Python loop over thousands; issue 35).
        whole = Counter(basis)
        have = whole.get
        for value_us, count in count_microseconds(samples.basis).items():
            left = have(value_us, 0) - count
            if left > 0:
                whole[value_us] = left
            else:
                whole.pop(value_us, None)
        add_counts(into["wait"], whole)
        one_read = ok - len(samples.basis)
        if one_read > 0:
            into["receive"][LOWEST_US] += one_read
    add_counts(into["wait"], count_microseconds(samples.waits))
    if slotted:
        add_counts(into["wait"], slotted)
    receives = samples.receives
    without_receive = explicit - len(receives)
    if without_receive:  # (see PhaseSamples)
        into["receive"][LOWEST_US] += without_receive
    if receives.count(0) == len(receives):
        # Each answer came whole in the read that completed it (HTTP/2's steady state
        # records them so): counted at once, not through a Counter.
        if receives:
            into["receive"][LOWEST_US] += len(receives)
    else:
        add_counts(into["receive"], count_microseconds(receives))
    samples.clear()


class RequestCounters:
    """What the engine moves for one kind of request of a mix. Its ok latencies and
    statuses are counted here only (the totals add them up when folding); sends and
    failures are counted in the totals as well."""

    __slots__ = ("latencies", "outcome", "phases", "sent", "status_codes")

    def __init__(self) -> None:
        self.sent = 0
        self.phases = PhaseSamples()
        self.status_codes: dict[int, int] = {}
        self.latencies: array[int] = array(SAMPLES)
        self.outcome = RequestOutcome()


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
    # Open loop: requests unanswered when the run stopped, each at (stop - its due time), a
    # lower bound of its corrected latency (merged into the corrected histogram, not `ok`).
    lower_bound_counts: Counter[int] = field(default_factory=Counter)
    # One entry per timeline bucket: a second at the default resolution.
    seconds: list[TimelineBucket] = field(default_factory=list)
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
    sent_after_window: int = 0
    error_samples: dict[str, str] = field(default_factory=dict)
    loop: str = ""
    # A request mix: one entry per kind, in the mix's order (empty without a mix).
    by_request: list[RequestOutcome] = field(default_factory=list)
    # connect_first: the connections opened before the window (see _engine.connect_phase).
    connect_first: bool = False
    connections_ready: int = 0
    connect_failures: int = 0
    connect_failure_sample: str = ""
    connect_phase_ns: int = 0
    connect_counts: Counter[int] = field(default_factory=Counter)  # connect latency, us
    # Echo: connections open at the end that completed no exchange (None: not counted).
    connections_without_exchange: int | None = None
    # Where the share ran, on a cluster (host name, Dask worker address); empty locally.
    host: str = ""
    worker: str = ""
    # Why a share's outcome never came back (its worker was lost); its figures are empty.
    lost: str = ""
    # Its feeders ran out (on_end="stop"): the share ended there, not at its duration.
    feeders_ran_out: bool = False
    # A load with checks: the measured responses that failed each (in the order of the
    # load's distinct checks, ``_model.checks.check_slots``).
    check_failures: list[int] = field(default_factory=list)
    # Each request's phases, microsecond counts by phase name (see _model.phases).
    phase_counts: dict[str, Counter[int]] = field(default_factory=_phase_counts)
    waited_for_connection: int = 0
    # A streaming load's figures (``stream=``); None for whole answers.
    stream: StreamOutcome | None = None


class Recorder(PhaseSamples):
    """Mutable counters the engine writes into; one per worker, never shared. Its own
    phase samples are the load's (``phases`` is itself: no object more per run)."""

    __slots__ = (
        "_folded_errors",
        "bucket_ns",
        "by_request",
        "bytes_read",
        "bytes_written",
        "check_failures",
        "connect_slots",
        "connects",
        "count_connections",
        "error_samples",
        "errors",
        "generator_faults",
        "handshakes",
        "lags",
        "latencies",
        "latency_slots",
        "lower_bounds",
        "measure_start_ns",
        "open_loop",
        "outcome",
        "sent",
        "status_200",
        "status_codes",
        "uncorrected",
        "upgrade_receives",
        "upgrade_waits",
        "waited_for_connection",
    )

    def __init__(
        self,
        measure_start_ns: int,
        *,
        open_loop: bool,
        bucket_ns: int = ONE_SECOND_NS,
        request_kinds: int = 0,
        checks: int = 0,
    ) -> None:
        self.measure_start_ns = measure_start_ns
        self.open_loop = open_loop
        self.bucket_ns = bucket_ns
        # A mix: its ok latencies and statuses per kind only, its sends per kind as well.
        self.by_request = [RequestCounters() for _ in range(request_kinds)]
        self.sent = 0
        self.check_failures = [0] * checks
        self.errors: dict[str, int] = dict.fromkeys(ERROR_KINDS, 0)
        self.error_samples: dict[str, str] = {}
        self.status_codes: dict[int, int] = {}
        # 200s counted apart by the fused keep-alive path (an int add, not a dict update);
        # finish() folds them into status_codes.
        self.status_200 = 0
        self.bytes_read = 0
        self.bytes_written = 0
        self.generator_faults = 0
        self.latencies: array[int] = array(SAMPLES)
        # Ok latencies counted as recorded, by whole microseconds (count_as_recorded).
        self.latency_slots: list[int] | None = None
        self.uncorrected: array[int] = array(SAMPLES)
        self.lags: array[int] = array("q")
        # Open loop, filled once as the run stops (see RunAccounting.stop_counting).
        self.lower_bounds: array[int] = array("q")
        # Phases (see PhaseSamples, whose samples are this recorder's own), and the connect
        # and TLS handshake of each connection opened for a measured request.
        PhaseSamples.__init__(self)
        self.connects: array[int] = array("q")
        self.connect_slots: list[int] | None = None  # (see count_as_recorded)
        self.handshakes: array[int] = array("q")
        # A WebSocket load's opening handshakes (those connections'): the upgrade
        # answer's wait and receive, the load's phases in place of its messages'.
        self.upgrade_waits: array[int] = array("q")
        self.upgrade_receives: array[int] = array("q")
        self.waited_for_connection = 0  # open loop: measured requests that queued for one
        self.outcome = WorkerOutcome()
        self._folded_errors = 0
        # The run's count of its connections, read as each bucket closes (None: not kept).
        self.count_connections: Callable[[], int] | None = None

    @property
    def phases(self) -> PhaseSamples:
        """The load's explicit phase samples (a mix keeps them per kind)."""
        return self

    def error(
        self, error: str, detail: str, errno: int | None = None, request_kind: int = -1
    ) -> None:
        """Count one measured failure of the ``error`` kind (of the mix's ``request_kind``,
        if a mix); keep the first message of each error kind as a sample."""
        self.errors[error] += 1
        if request_kind >= 0:
            self.by_request[request_kind].outcome.errors[error] += 1
        if error not in self.error_samples:
            self.error_samples[error] = detail[:200]
        if errno in GENERATOR_FAULT_ERRNOS:
            self.generator_faults += 1

    def freeze_connections(self) -> None:
        """The run stops: a bucket still to close counts the connections held now, not
        the none left once they are torn down."""
        if self.count_connections is not None:
            held = self.count_connections()
            self.count_connections = lambda: held

    def reset_window(self) -> None:
        """Forget the bytes moved during warm-up. (Samples need no reset: only requests
        started inside the window are ever recorded, even if this runs a little late.)"""
        self.bytes_read = 0
        self.bytes_written = 0

    def count_as_recorded(self) -> tuple[list[int], list[int], list[int]]:
        """Slots in which a path counts ok latencies, waits (of answers that came whole
        in their read, without a basis: see PhaseSamples) and connects (without TLS) by
        whole microseconds as it records them, each slot a value below ``SLOTS_US`` (a
        value past it is appended as ever); the fold takes them (``take_slots``) with the
        arrays. A connection per request's known answers and renewals
        (``RawHttpConnection._answered``, ``RawSockets.renew_spent``): counting them at
        once costs about an append, and spares the fold 65-90 ns a sample (issue 35)."""
        if self.latency_slots is None or self.wait_slots is None or self.connect_slots is None:
            self.latency_slots, self.wait_slots = [0] * SLOTS_US, [0] * SLOTS_US
            self.connect_slots = [0] * SLOTS_US
        return self.latency_slots, self.wait_slots, self.connect_slots

    def ok_so_far(self) -> int:
        """Ok responses recorded up to now, folded or not (for progress reports)."""
        unfolded = len(self.latencies) + sum(len(k.latencies) for k in self.by_request)
        if self.latency_slots is not None:
            unfolded += sum(self.latency_slots)
        return sum(row.ok for row in self.outcome.seconds) + unfolded

    def tick(self) -> None:
        """The loop's once-a-second call: closes a bucket at the default resolution. At any
        other resolution the run closes its own buckets and this does nothing."""
        if self.bucket_ns == ONE_SECOND_NS:
            self.close_bucket()

    def close_bucket(self) -> None:
        """Fold the samples since the last bucket into a new timeline bucket and into the
        whole-run counters."""
        out = self.outcome
        counts = count_microseconds(self.latencies)
        ok = len(self.latencies)
        if self.latency_slots is not None:
            slotted = take_slots(self.latency_slots)
            if slotted:
                ok += sum(slotted.values())
                add_counts(counts, slotted)
        mix = bool(self.by_request)
        if not self.open_loop and not mix:
            fold_phases(out.phase_counts, self.phases, counts)
        for kind in self.by_request:
            kind_counts = count_microseconds(kind.latencies)
            # A mix's open loop records every kind's phases explicitly.
            fold_phases(
                kind.outcome.phase_counts, kind.phases, None if self.open_loop else kind_counts
            )
            if kind.latencies:
                add_counts(kind.outcome.latency_counts, kind_counts)
                add_counts(counts, kind_counts)
                ok += len(kind.latencies)
                del kind.latencies[:]
        add_counts(out.latency_counts, counts)  # in C: see add_counts
        add_counts(out.phase_counts["connect"], count_microseconds(self.connects))
        if self.connect_slots is not None:
            add_counts(out.phase_counts["connect"], take_slots(self.connect_slots))
        add_counts(out.phase_counts["tls"], count_microseconds(self.handshakes))
        del self.connects[:]
        del self.handshakes[:]
        if self.upgrade_waits:
            for name, samples in (
                (UPGRADE_WAIT, self.upgrade_waits),
                (UPGRADE_RECEIVE, self.upgrade_receives),
            ):
                out.phase_counts.setdefault(name, Counter()).update(count_microseconds(samples))
                del samples[:]
        if self.open_loop:
            uncorrected = count_microseconds(self.uncorrected)
            if not mix:
                fold_phases(out.phase_counts, self.phases, uncorrected)
            add_counts(out.uncorrected_counts, uncorrected)
            add_counts(out.lag_counts, count_microseconds(self.lags))
            del self.uncorrected[:]
            del self.lags[:]
        del self.latencies[:]
        errors_now = sum(self.errors.values())
        errors = errors_now - self._folded_errors
        self._folded_errors = errors_now
        live = self.count_connections() if self.count_connections is not None else None
        out.seconds.append(TimelineBucket(ok, errors, counts, live))

    def finish(
        self, *, in_flight: int, window_end_ns: int, in_flight_by_request: list[int] | None = None
    ) -> WorkerOutcome:
        """Close the window: fold what is left (a partial last bucket) and return the outcome.

        ``in_flight_by_request``: a mix's ``in_flight`` split by kind of request."""
        leftover_errors = sum(self.errors.values()) != self._folded_errors
        leftover = any(kind.latencies or kind.phases.waits for kind in self.by_request)
        leftover = leftover or bool(
            self.phases.waits or self.connects or self.handshakes or self.upgrade_waits
        )
        leftover = leftover or any(self.latency_slots or ()) or any(self.wait_slots or ())
        leftover = leftover or any(self.connect_slots or ())
        if self.latencies or self.uncorrected or self.lags or leftover_errors or leftover:
            self.close_bucket()
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
        out.lower_bound_counts = count_microseconds(self.lower_bounds)
        out.generator_faults = self.generator_faults
        out.error_samples = dict(self.error_samples)
        out.by_request = [kind.outcome for kind in self.by_request]
        out.check_failures = list(self.check_failures)
        out.waited_for_connection = self.waited_for_connection
        if self.by_request:  # a mix: the load's wait and receive are its kinds' together
            for kind in self.by_request:
                for name in ("wait", "receive"):
                    out.phase_counts[name].update(kind.outcome.phase_counts[name])
        for index, kind in enumerate(self.by_request):
            kind.outcome.sent = kind.sent
            kind.outcome.status_codes = dict(kind.status_codes)
            kind.outcome.in_flight = in_flight_by_request[index] if in_flight_by_request else 0
            # A mix counts statuses per kind only (one dict update per response, not two).
            for code, count in kind.status_codes.items():
                out.status_codes[code] = out.status_codes.get(code, 0) + count
        return out
