"""A load's requests as one share sends them: (kind, ready bytes), a batch at a time.

A :class:`RequestSource` is built once per share from the checked spec. Its requests are
fixed bytes (one request, or the kinds of a mix, rendered once and handed out as the same
objects), or templates filled from feeders: each batch draws every feeder's values in
request order, renders each kind's requests with one ``bytes % tuple`` each
(``templates.py``), and interleaves them back in the mix's order. Nothing is formatted one
request at a time, and the sequence is the same whatever the batch sizes, the loop, or the
host: it depends only on the spec, its seed and the share.

:func:`preview` renders the first requests of a load for a person to read, as
``k6 inspect`` shows a script's options.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import compress, cycle, islice
from typing import TYPE_CHECKING, Any

from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadSpec, Request
from pytest_netbench._proto import http as http_proto
from pytest_netbench._proto.templates import RequestTemplate, TemplateError, request_template
from pytest_netbench._public import publish

# The feeders' values (and the file readers behind them) are a load with feeders' only: a
# load without imports neither (issue 35).
if TYPE_CHECKING:
    from pytest_netbench._proto.feeding import Columns, Values


def mix_sequence(spec: LoadSpec) -> tuple[int, ...]:
    """One period of a mix's order. ``cycle``: each kind in turn. ``weighted``: each kind
    as often as its weight says, spread as evenly as they go (smooth weighted round robin,
    as nginx balances upstreams), so a short run already holds the asked shares."""
    if spec.mix_order == "cycle":
        return tuple(range(len(spec.mix)))
    weights = [r.weight for r in spec.mix]
    common = math.gcd(*weights)
    weights = [w // common for w in weights]
    total = sum(weights)
    current = [0] * len(weights)
    order: list[int] = []
    for _ in range(total):
        for index, weight in enumerate(weights):
            current[index] += weight
        pick = current.index(max(current))
        current[pick] -= total
        order.append(pick)
    return tuple(order)


def requests_by_kind(spec: LoadSpec) -> tuple[Request | None, ...]:
    """The kinds of request a load sends: its mix's, or its one request (None)."""
    return spec.mix or (None,)


def kind_names(spec: LoadSpec) -> tuple[str, ...]:
    return tuple(r.name for r in spec.mix) or (f"{spec.method} {spec.target}",)


def request_templates(spec: LoadSpec) -> tuple[RequestTemplate, ...]:
    """Each kind's template (:class:`TemplateError` or ``ValueError`` says what is wrong)."""
    ints: set[str] = set()
    if spec.feeders:
        from pytest_netbench._proto.feeding import int_valued

        ints = {name for name, feeder in spec.feeders if int_valued(feeder)}
    return tuple(request_template(spec, request, ints) for request in requests_by_kind(spec))


def feeder_fields(templates: Sequence[RequestTemplate]) -> dict[str, tuple[str | None, ...]]:
    """The fields each feeder is asked for, in the order its slots first name them."""
    fields: dict[str, list[str | None]] = {}
    for template in templates:
        for slot in template.slots:
            asked = fields.setdefault(slot.feeder, [])
            if slot.field not in asked:
                asked.append(slot.field)
    return {name: tuple(asked) for name, asked in fields.items()}


class RequestSource:
    """The requests of share ``share`` of ``shares`` of a checked HTTP load.

    ``take(n)`` gives the kinds and bytes of its next ``n`` requests: fewer once a feeder
    with ``on_end="stop"`` has run out (``done`` is then true, and every later take is
    empty). ``names[kind]`` names each kind as ``LoadResult.by_request`` does.
    """

    def __init__(self, spec: LoadSpec, share: int = 0, shares: int = 1) -> None:
        self.names = kind_names(spec)
        self._cycle = cycle(mix_sequence(spec) if spec.mix else (0,))
        self.done = False
        self._fixed: list[bytes] = []
        self._values: dict[str, Values] = {}
        if not spec.feeders:
            self._fixed = [http_proto.render_spec_request(spec, r) for r in requests_by_kind(spec)]
            return
        self._templates = request_templates(spec)
        fields = feeder_fields(self._templates)
        # Per kind, per slot: the feeder and which of its columns.
        self._slot_columns = [
            [(slot.feeder, fields[slot.feeder].index(slot.field)) for slot in template.slots]
            for template in self._templates
        ]
        every = frozenset(range(len(self._templates)))
        self._users = {
            name: frozenset(k for k, t in enumerate(self._templates) if name in t.feeders)
            for name in fields
        }
        self._shared = {name for name, users in self._users.items() if users == every}
        from pytest_netbench._proto.feeding import values_for

        try:
            for name, feeder in spec.feeders:
                self._values[name] = values_for(
                    name, feeder, fields[name], seed=spec.seed, share=share, shares=shares
                )
        except BaseException:
            self.close()
            raise

    @property
    def varies(self) -> bool:
        """Whether its requests are rendered from templates (else: fixed bytes)."""
        return not self._fixed

    def take(self, n: int) -> tuple[list[int], list[bytes]]:
        if self.done or n <= 0:
            return [], []
        kinds = list(islice(self._cycle, n))
        if self._fixed:
            return kinds, list(map(self._fixed.__getitem__, kinds))
        return self._render(kinds)

    def _render(self, kinds: list[int]) -> tuple[list[int], list[bytes]]:
        n = len(kinds)
        drawn: dict[str, Columns] = {}
        cut = n
        for name, values in self._values.items():
            shared = name in self._shared
            users = self._users[name]
            demand = n if shared else sum(k in users for k in kinds)
            columns = values.take(demand)
            drawn[name] = columns
            got = len(columns[0])
            if got < demand:  # ran out ("stop"): the load ends before the first request short
                self.done = True
                cut = min(cut, got if shared else _nth_user(kinds, users, got))
        if cut < n:
            del kinds[cut:]
        rendered = []
        for kind, template in enumerate(self._templates):
            count = kinds.count(kind) if len(self._templates) > 1 else len(kinds)
            columns = [
                self._column(drawn[name][index], name, kind, kinds, count)
                for name, index in self._slot_columns[kind]
            ]
            try:
                rendered.append(template.render(columns, count))
            except TemplateError as exc:
                raise SpecError(f"{self.names[kind]}: {exc}") from None
        if len(rendered) == 1:
            return kinds, rendered[0]
        heads = [iter(r) for r in rendered]
        return kinds, list(map(next, map(heads.__getitem__, kinds)))

    def _column(
        self, column: list[Any], name: str, kind: int, kinds: list[int], count: int
    ) -> list[Any]:
        """The values of feeder ``name`` (one of its columns) that go to the requests of
        ``kind`` in this batch: the feeder's values are drawn in request order, and each
        request of a kind that uses it takes the next."""
        users = self._users[name]
        if len(users) == 1:
            return column[:count]
        of_users = [k for k in kinds if k in users] if name not in self._shared else kinds
        return list(compress(column, [k == kind for k in of_users]))

    def close(self) -> None:
        for values in self._values.values():
            values.close()


def _nth_user(kinds: list[int], users: frozenset[int], n: int) -> int:
    """The position in ``kinds`` of the request that is the ``n``-th (from 0) to use a
    feeder used by ``users``; past the end if there is none."""
    seen = 0
    for position, kind in enumerate(kinds):
        if kind in users:
            if seen == n:
                return position
            seen += 1
    return len(kinds)


def preview(spec: LoadSpec, n: int = 5, *, share: int = 0) -> list[tuple[str, bytes]]:
    """The first ``n`` requests share ``share`` of a load would send: (the kind's name, the
    request's bytes), rendered from its feeders as the engine renders them. Fewer than
    ``n`` when a feeder with ``on_end="stop"`` runs out first.

    ``spec`` is an HTTP load's checked spec (:func:`http_spec`): ``preview(http_spec(url,
    feeders=...))``. The feeders start afresh, so a preview takes nothing from a load."""
    if not isinstance(spec, LoadSpec) or spec.kind != "http":
        raise SpecError(f"preview takes an HTTP load's spec (http_spec(...)), got {spec!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise SpecError(f"n must be a whole number >= 0, got {n!r}")
    if isinstance(share, bool) or not isinstance(share, int) or not 0 <= share < spec.workers:
        raise SpecError(f"share must be 0..{spec.workers - 1} (the load's workers), got {share!r}")
    source = RequestSource(spec, share, spec.workers)
    try:
        kinds, data = source.take(n)
    finally:
        source.close()
    return [(source.names[kind], request) for kind, request in zip(kinds, data, strict=True)]


publish(globals())
