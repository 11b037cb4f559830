"""One grammar for a length of time written as text, wherever one is typed: ``--duration``,
``--warmup``, ``--timeout`` and the other seconds of the command line, a stage's
``30s:100``, a mix file's stages. k6's forms: ``30s``, ``1m30s``, ``500ms``, ``2h``, ``1.5``
(a bare number is seconds), and ``1m 30s`` with spaces.
"""

from __future__ import annotations

import math
import re

from pytest_netbench._errors import SpecError

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
EXAMPLES = "30s, 1m30s, 500ms, 2h or 1.5 (seconds)"


def parse_duration(text: str) -> float:
    """Seconds in ``text`` (see the module's forms); a :class:`SpecError` saying the forms
    otherwise."""
    compact = text.strip().replace(" ", "")
    try:
        seconds = float(compact)
    except ValueError:
        parts = _PART.findall(compact)
        if not parts or "".join(number + unit for number, unit in parts) != compact:
            raise SpecError(f"{text!r} is not a duration: use e.g. {EXAMPLES}") from None
        seconds = sum(float(number) * _UNITS[unit] for number, unit in parts)
    if not math.isfinite(seconds) or seconds < 0:
        raise SpecError(f"{text!r} is not a duration: use e.g. {EXAMPLES}")
    return seconds
