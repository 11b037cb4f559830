"""Results in pytest-benchmark's JSON storage format, for its ``compare`` command and the
dashboards that read that format (e.g. github-action-benchmark).

Mapping (one pytest-benchmark "benchmark" per test and load label, trials merged):

* a round is one ok request, so ``rounds`` is the number of ok responses and
  ``min/max/mean/stddev/median/q1/q3/iqr/ld15iqr/hd15iqr/outliers/total`` describe the
  latency distribution in seconds, computed from the merged HdrHistograms;
* ``ops`` is the throughput (median requests/s over trials), not ``1 / mean``: with many
  connections in flight, ``1 / mean`` latency is not what a server sustains;
* ``extra_info`` carries the netbench figures (rps, p99_ms, errors_total, trials, url...);
  a load of a request mix adds ``by_request``: each kind's figures under the same names
  (medians over trials), in the mix's order. A kind is not a benchmark of its own:
  pytest-benchmark keeps one benchmark per test, and ``compare`` and the dashboards would
  count a kind's share of the load as a test.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from pytest_netbench._compare.records import Record, without_nan, write_json_atomically
from pytest_netbench._host.environment import Environment
from pytest_netbench._model import LoadResult
from pytest_netbench._stats.histogram import decode_histogram, mean_and_stdev_us, new_histogram

COMPAT_VERSION = "5.1.0"  # the storage layout version we write; read by pytest-benchmark 4-5
_US = 1e-6


def machine_info(environment: Environment | Mapping[str, Any] | None) -> dict[str, Any]:
    env = environment.to_dict() if isinstance(environment, Environment) else dict(environment or {})
    return {
        "node": env.get("hostname", platform.node()),
        "processor": platform.processor(),
        "machine": env.get("machine", platform.machine()),
        "python_compiler": env.get("python_compiler", platform.python_compiler()),
        "python_implementation": env.get("python_implementation", platform.python_implementation()),
        "python_implementation_version": env.get("python_version", platform.python_version()),
        "python_version": env.get("python_version", platform.python_version()),
        "python_build": list(platform.python_build()),
        "release": env.get("release", platform.release()),
        "system": env.get("system", platform.system()),
        "cpu": {
            "brand_raw": env.get("cpu_model", ""),
            "count": env.get("cores_logical", os.cpu_count() or 1),
            "arch_string_raw": env.get("machine", platform.machine()),
        },
        "netbench_machine_key": env.get("machine_key", ""),
    }


def commit_info(environment: Environment | Mapping[str, Any] | None) -> dict[str, Any]:
    env = environment.to_dict() if isinstance(environment, Environment) else dict(environment or {})
    git = env.get("git") or {}
    return {
        "id": git.get("commit", "unversioned"),
        "time": git.get("time") or None,
        "author_time": git.get("time") or None,
        "dirty": bool(git.get("dirty", False)),
        "project": git.get("project", ""),
        "branch": git.get("branch", "(unknown)"),
    }


def _merged_histogram(results: list[LoadResult]) -> HdrHistogram | None:
    merged = new_histogram()
    for result in results:
        if not result.latency_histogram:
            return None  # a trial without its histogram: fall back to the summaries
        merged.add(decode_histogram(result.latency_histogram))
    return merged if merged.get_total_count() else None


def _stats_from_histogram(hist: HdrHistogram) -> dict[str, Any]:
    count = int(hist.get_total_count())
    mean_us, stddev_us = mean_and_stdev_us(hist)
    mean, stddev = mean_us * _US, stddev_us * _US
    q1 = hist.get_value_at_percentile(25.0) * _US
    q3 = hist.get_value_at_percentile(75.0) * _US
    iqr = q3 - q1
    low_fence, high_fence = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    iqr_outliers = stddev_outliers = 0
    lowest_inside = highest_inside = math.nan
    for step in hist.get_recorded_iterator():
        value = hist.get_highest_equivalent_value(step.value_iterated_to) * _US
        n = int(step.count_added_in_this_iter_step)
        if value < low_fence or value > high_fence:
            iqr_outliers += n
        else:
            if math.isnan(lowest_inside):
                lowest_inside = value
            highest_inside = value
        if value < mean - stddev or value > mean + stddev:
            stddev_outliers += n
    return {
        "min": hist.get_min_value() * _US,
        "max": hist.get_max_value() * _US,
        "mean": mean,
        "stddev": stddev,
        "rounds": count,
        "median": hist.get_value_at_percentile(50.0) * _US,
        "iqr": iqr,
        "q1": q1,
        "q3": q3,
        "iqr_outliers": iqr_outliers,
        "stddev_outliers": stddev_outliers,
        "outliers": f"{stddev_outliers};{iqr_outliers}",
        "ld15iqr": lowest_inside,
        "hd15iqr": highest_inside,
        "total": mean * count,
    }


def _stats_from_summaries(results: list[LoadResult]) -> dict[str, Any]:
    # Without histograms only the summaries exist: use the median trial's figures, with
    # the quartiles approximated by min and p75 (there is no p25 in a summary).
    def med(attr: str) -> float:
        values = [getattr(r.latency, attr) for r in results]
        finite = [v for v in values if not math.isnan(v)]
        return statistics.median(finite) * 1e-3 if finite else 0.0

    count = sum(r.latency.count for r in results)
    q1, q3 = med("min_ms"), med("p75_ms")
    return {
        "min": med("min_ms"),
        "max": med("max_ms"),
        "mean": med("mean_ms"),
        "stddev": med("stdev_ms"),
        "rounds": count,
        "median": med("p50_ms"),
        "iqr": q3 - q1,
        "q1": q1,
        "q3": q3,
        "iqr_outliers": 0,
        "stddev_outliers": 0,
        "outliers": "0;0",
        "ld15iqr": q1,
        "hd15iqr": med("max_ms"),
        "total": med("mean_ms") * count,
    }


def _split_name(nodeid: str) -> tuple[str, str, str | None]:
    """(name, group, param) from a pytest node id such as ``t.py::test_x[a-1]``."""
    name = nodeid.rsplit("::", 1)[-1]
    param = name[name.index("[") + 1 : -1] if "[" in name and name.endswith("]") else None
    return name, name.split("[", 1)[0], param


def benchmark_entry(records: list[Record]) -> dict[str, Any]:
    """One pytest-benchmark entry from all trials of one test's load."""
    first = records[0]
    results = [r.result for r in records]
    hist = _merged_histogram(results)
    stats = _stats_from_histogram(hist) if hist is not None else _stats_from_summaries(results)
    rps = statistics.median(r.rps for r in results)
    stats["ops"] = rps
    stats["iterations"] = 1
    name, group, param = _split_name(first.nodeid)
    suffix = f"#{first.label}" if first.label else ""
    median_of = {
        attr: statistics.median(getattr(r, attr) for r in results)
        for attr in ("p50_ms", "p99_ms", "p999_ms", "errors_total", "rps_stdev")
    }
    return {
        "group": group,
        "name": name + suffix,
        "fullname": first.nodeid + suffix,
        "params": {
            k: v if isinstance(v, str | int | float | bool) else repr(v)
            for k, v in first.params.items()
        }
        or None,
        "param": param,
        "extra_info": {
            "netbench": True,
            "url": first.result.url,
            "mode": first.result.mode,
            "trials": len(records),
            "rps": rps,
            **median_of,
            "valid": all(r.valid for r in results),
            "ops_means": "requests per second (throughput), not 1/mean latency",
            **_by_request(results),
        },
        "options": {"timer": "netbench", "disable_gc": False, "warmup": False},
        "stats": {
            k: (0.0 if isinstance(v, float) and math.isnan(v) else v) for k, v in stats.items()
        },
    }


# A request kind's figures in ``extra_info["by_request"]``: the load's own names.
REQUEST_INFO_FIELDS: tuple[str, ...] = (
    "sent",
    "ok",
    "errors_total",
    "rps",
    "p50_ms",
    "p99_ms",
    "p999_ms",
)


def _by_request(results: list[LoadResult]) -> dict[str, Any]:
    """``{"by_request": {name: {figure: median over trials}}}`` for a mix; nothing without
    one. A latency figure of a kind with no ok response in any trial is NaN (null once
    written)."""
    names = list(dict.fromkeys(name for r in results for name in r.by_request))
    if not names:
        return {}
    kinds: dict[str, dict[str, float]] = {}
    for name in names:
        trials = [r.by_request[name] for r in results if name in r.by_request]
        kinds[name] = {
            field: _median(getattr(t, field) for t in trials) for field in REQUEST_INFO_FIELDS
        }
    return {"by_request": kinds}


def _median(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def benchmark_json(
    records: Iterable[Record], environment: Environment | Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The whole document, as pytest-benchmark's ``--benchmark-json`` would write it."""
    groups: dict[tuple[str, str], list[Record]] = {}
    for record in records:
        groups.setdefault((record.nodeid, record.label), []).append(record)
    document: dict[str, Any] = without_nan(
        {
            "machine_info": machine_info(environment),
            "commit_info": commit_info(environment),
            "benchmarks": [benchmark_entry(group) for group in groups.values()],
            "datetime": datetime.now(UTC).isoformat(),
            "version": COMPAT_VERSION,
        }
    )
    return document


def write_benchmark_json(
    path: str | os.PathLike[str],
    records: Iterable[Record],
    environment: Environment | Mapping[str, Any] | None = None,
) -> Path:
    return write_json_atomically(path, benchmark_json(records, environment))
