"""The checks of a load's feeders and request templates, before any socket exists.

Part of :mod:`pytest_netbench._input.spec` (which calls these). A load without feeders is
checked here (no placeholder in its paths); one with feeders by
:mod:`pytest_netbench._input.feeder_checks`, which only such a load imports, with the
feeders' kinds and the code that reads their files (issue 35).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_netbench._errors import SpecError
from pytest_netbench._model import LoadSpec
from pytest_netbench._proto import source as source_proto
from pytest_netbench._proto.templates import has_placeholder

if TYPE_CHECKING:
    from pytest_netbench._model.feeder_base import Feeder


def checked_feeders(feeders: Mapping[str, Feeder] | None) -> tuple[tuple[str, Feeder], ...]:
    """The feeders as the spec holds them: (name, feeder) pairs, files by absolute path."""
    if feeders is None:
        return ()
    from pytest_netbench._input.feeder_checks import checked_feeders as checked

    return checked(feeders)


def checked_seed(seed: object) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SpecError(f"seed must be a whole number, got {seed!r}")
    return seed


def check_templates(spec: LoadSpec) -> None:
    """Every request template of an HTTP load, against its feeders."""
    if spec.feeders:
        from pytest_netbench._input.feeder_checks import check_feeder_templates

        check_feeder_templates(spec)
        return
    for request in source_proto.requests_by_kind(spec):
        path = request.path if request is not None else spec.target
        if has_placeholder(path.encode("utf-8", "replace")):
            raise SpecError(
                f"the path {path!r} has a placeholder, but the load has no feeders: give"
                " feeders={'id': feeders.count()} (on the command line: --feeder"
                " id=count) (a literal '${' is written '$${')"
            )
