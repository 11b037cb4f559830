"""The checks of a load's ``stages=`` (a ramp), before any socket exists.

Part of :mod:`pytest_netbench._input.spec` (which calls these): each stage read from the forms
users write (``Stage(30, 100)``, ``("30s", 100)``, k6's ``{"duration": "30s", "target":
100}``, the CLI's ``30s:100``), and the options a ramp contradicts refused, each refusal
saying what to write instead. What a k6 user expects holds: the stages' durations add up
to the load's duration (so ``duration``/``requests`` are refused beside them, as k6 refuses
``duration`` with ``stages``), and the ramp starts from ``rate=`` in open loop (k6's
``startRate``) or ``connections=`` in closed loop (k6's ``startVUs``; 0 when not given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_netbench._errors import SpecError
from pytest_netbench._input.durations import parse_duration
from pytest_netbench._model.stages import Stage

_FORMS = "Stage(30, 100), ('30s', 100) or {'duration': '30s', 'target': 100}"


def parse_stage_text(text: str) -> Stage:
    """The CLI's ``DURATION:TARGET`` (k6's ``--stage 30s:100``)."""
    duration, sep, target = text.partition(":")
    if not sep:
        raise SpecError(f"stage {text!r} must look like DURATION:TARGET, e.g. 30s:100")
    try:
        value = float(target)
    except ValueError:
        raise SpecError(
            f"stage {text!r}: the target {target!r} is not a number (DURATION:TARGET, e.g. 30s:100)"
        ) from None
    return _checked_stage(parse_duration(duration), value, where=f"stage {text!r}")


def checked_stages(stages: object) -> tuple[Stage, ...]:
    """The stages in the forms users write, checked; () without any."""
    if stages is None:
        return ()
    if isinstance(stages, (str, bytes, Stage, Mapping)) or not isinstance(stages, Sequence):
        raise SpecError(f"stages must be a list of stages ({_FORMS}), got {stages!r}")
    if not stages:
        raise SpecError("stages is empty: give at least one stage, or drop stages")
    return tuple(_one_stage(entry, index) for index, entry in enumerate(stages, start=1))


def _one_stage(entry: object, index: int) -> Stage:
    where = f"stage {index}"
    duration: Any
    target: Any
    if isinstance(entry, Stage):
        duration, target = entry.duration_s, entry.target
    elif isinstance(entry, Mapping):
        if set(entry) != {"duration", "target"}:
            raise SpecError(
                f"{where} {dict(entry)!r}: k6's form has exactly the keys 'duration' and 'target'"
            )
        duration, target = entry["duration"], entry["target"]
    elif isinstance(entry, Sequence) and not isinstance(entry, (str, bytes)) and len(entry) == 2:
        duration, target = entry
    else:
        raise SpecError(f"{where} must be {_FORMS}, got {entry!r}")
    if isinstance(duration, str):
        duration = parse_duration(duration)
    return _checked_stage(duration, target, where=where)


def _checked_stage(duration: object, target: object, *, where: str) -> Stage:
    if isinstance(duration, bool) or not isinstance(duration, (int, float)):
        raise SpecError(
            f"{where}: the duration must be seconds or text like '30s', got {duration!r}"
        )
    if not (math.isfinite(duration) and duration > 0):
        raise SpecError(f"{where}: the duration must be > 0, got {duration!r}")
    if isinstance(target, bool) or not isinstance(target, (int, float)):
        raise SpecError(f"{where}: the target must be a number, got {target!r}")
    if not (math.isfinite(target) and target >= 0):
        raise SpecError(f"{where}: the target must be >= 0, got {target!r}")
    return Stage(float(duration), float(target))


def check_ramp(
    stages: tuple[Stage, ...],
    o: Mapping[str, Any],
    *,
    connections_given: bool,
    connect_first: bool,
) -> None:
    """Refuse what a ramp contradicts, and a ramp that would send nothing."""
    if not stages:
        return
    if o["duration"] is not None:
        raise SpecError(
            "stages set the duration (the stages' durations add up to it): drop duration,"
            " or drop stages"
        )
    if o["requests"] is not None:
        raise SpecError("stages run for their durations: drop requests, or drop stages")
    if connect_first:
        raise SpecError(
            "connect_first opens a fixed count of connections before the window, but stages"
            " move the count: drop connect_first"
        )
    open_loop = o["rate"] is not None
    start = float(o["rate"]) if open_loop else float(o["connections"] if connections_given else 0)
    what = "rate" if open_loop else "connections"
    if max(start, *(stage.target for stage in stages)) <= 0:
        raise SpecError(
            f"every stage's target is 0 and the ramp starts at {what}=0: it would send"
            " nothing; give a stage a target above 0"
        )
    if o["warmup"] and start <= 0:
        raise SpecError(
            f"the warm-up holds the ramp's start ({what}=0), so it would send nothing: start"
            f" the ramp higher ({what}=...) or drop warmup"
        )
    if not open_loop and o["max_connections"] is not None:
        raise SpecError(
            "max_connections bounds an open loop's pool; a closed loop's stages set its"
            " connections: drop max_connections, or give rate= for a ramp of the rate"
        )


def ramp_start(o: Mapping[str, Any], *, connections_given: bool) -> dict[str, Any]:
    """The spec fields a ramp starts from: the rate (0 allowed), or the connections (0
    when not given, as a ramp usually starts from nothing)."""
    if o["rate"] is not None:
        return {"rate": float(o["rate"])}
    return {"connections": int(o["connections"]) if connections_given else 0}
