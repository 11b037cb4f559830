"""HdrHistogram glue: exact-to-3-digits latency distributions built in bulk.

Samples are counted per microsecond value first (``collections.Counter`` runs in C) and
only the distinct values reach ``record_value``, which costs about 2 µs a call in pure
Python: a second of traffic usually has far fewer distinct microsecond values than samples.
"""

from __future__ import annotations

import ctypes
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import accumulate, compress, repeat
from operator import add, floordiv

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # one hour
SIGNIFICANT_DIGITS = 3
_NS_PER_US = 1000
_NONZERO = re.compile(rb"[^\x00]")


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def count_microseconds(samples_ns: Iterable[int]) -> Counter[int]:
    """Bucket nanosecond samples by microsecond, at the histogram's resolution (sub-µs
    samples count as 1 µs; see :func:`histogram_floor`)."""
    # operator.floordiv over repeat() is the cheapest C-only way to divide each sample
    return _as_histogram_counts(Counter(map(floordiv, samples_ns, repeat(_NS_PER_US))))


def take_slots(slots: list[int]) -> Counter[int]:
    """The samples counted in ``slots`` (slot ``i``: how many were ``i`` whole
    microseconds), as :func:`count_microseconds` counts them, and the slots emptied.
    Counting a sample as it is recorded (a list index and an add) costs the hot path
    about what an append does, and spares the fold its work per sample: about 90 ns a
    value past 256 us (issue 35). The slots are read in C (``compress``, ``filter``)."""
    if not any(slots):
        return Counter()
    counts: Counter[int] = Counter(
        dict(zip(compress(range(len(slots)), slots), filter(None, slots), strict=True))
    )
    slots[:] = repeat(0, len(slots))
    return _as_histogram_counts(counts)


def _as_histogram_counts(counts: Counter[int]) -> Counter[int]:
    """Whole-microsecond counts as the histogram holds them: 0 counted as 1 µs, and values
    past its exact range together in their buckets."""
    zero = counts.pop(0, 0)
    if zero:
        counts[LOWEST_US] += zero
    if counts and max(counts) >= _EXACT_BELOW_US:
        return at_histogram_resolution(counts)
    return counts


# Below this many microseconds the histogram (3 significant digits: 2,048 sub-buckets)
# keeps every value; above it, each power of two is cut in 1,024 equal steps.
_EXACT_BELOW_US = 2048
_SUB_BUCKET_BITS = 11


def histogram_floor(value_us: int) -> int:
    """The lowest value the histogram holds in the same bucket as ``value_us`` (its
    ``get_lowest_equivalent_value``): counted there, a value changes no figure."""
    if value_us < _EXACT_BELOW_US:
        return value_us
    shift = value_us.bit_length() - _SUB_BUCKET_BITS
    return value_us >> shift << shift


def at_histogram_resolution(counts: Mapping[int, int]) -> Counter[int]:
    """``counts`` with values in one histogram bucket counted together. The keys of a long
    run's counters stay bounded (about 12,000 up to a second) where whole microseconds
    grow with every new value: a ten-minute soak's timeline held 18 MiB of them."""
    # Only the values from 2 ms up change, and a second's counters are mostly below with
    # an outlier or two above (issue 35): those are found by a comprehension and moved,
    # the rest copied in C. A Python loop over every value cost ~0.3 us a key (~1 ms a
    # bucket of 3,500). Moving in any order is right: a floor's floor is itself.
    out: Counter[int] = Counter(counts)
    seen = out.get
    for value_us in [value for value in counts if value >= _EXACT_BELOW_US]:
        count = out.pop(value_us)
        shift = value_us.bit_length() - _SUB_BUCKET_BITS
        value_us = value_us >> shift << shift
        out[value_us] = seen(value_us, 0) + count
    return out


def add_counts(into: Counter[int], counts: Mapping[int, int]) -> None:
    """``into.update(counts)`` for counts of microsecond values, done in C: Counter's own
    update is a Python loop over the keys once ``into`` holds any, and a run's fold makes
    several a second over a few thousand keys each (issue 35: ~0.6 -> 0.3 ms a bucket)."""
    if not into:
        dict.update(into, counts)
        return
    keys = counts.keys()  # a dict's keys and values run in the same order
    dict.update(
        into, zip(keys, map(add, counts.values(), map(into.get, keys, repeat(0))), strict=True)
    )


def histogram_from_counts(counts: Mapping[int, int]) -> HdrHistogram:
    """A histogram of ``counts`` (values clamped to its range), as ``record_value`` of each
    value and count would make it. hdrh's ``record_value`` is about 1.6 us of pure Python
    a call (its bucket through ``bin()``, five calls deep): 4.5 ms for a second's row of
    2,800 distinct values, once a second of every load (issue 35). So the slot is found
    here with ``int.bit_length`` (hdrh's ``_counts_index_for``, in one expression) and the
    counts added to the histogram's array directly; tests/unit/test_stats_histogram.py
    holds the two to the same histogram."""
    hist = new_histogram()
    if not counts:
        return hist
    slots = hist.counts
    unit = hist.unit_magnitude
    half_bits = hist.sub_bucket_half_count_magnitude
    half = hist.sub_bucket_half_count
    mask = hist.sub_bucket_mask
    for value_us, count in counts.items():
        value = LOWEST_US if value_us < LOWEST_US else min(value_us, HIGHEST_US)
        # the bucket: the power of two holding the value, past the first sub-bucket's
        bucket = (value | mask).bit_length() - unit - half_bits - 1
        slots[((bucket + 1) << half_bits) + (value >> (bucket + unit)) - half] += count
    hist.total_count = sum(counts.values())
    hist.min_value = min(max(min(counts), LOWEST_US), HIGHEST_US)
    hist.max_value = min(max(max(counts), LOWEST_US), HIGHEST_US)
    return hist


def encode_histogram(hist: HdrHistogram) -> str:
    encoded: bytes = hist.encode()
    return encoded.decode("ascii")


def decode_histogram(encoded: str) -> HdrHistogram:
    hist: HdrHistogram = HdrHistogram.decode(encoded.encode("ascii"))
    return hist


def counts_of_encoded(encoded: str) -> Counter[int]:
    """The µs values and counts of an encoded histogram (a timeline row's), each value at
    its bucket's highest equivalent as the histogram's own percentiles give it."""
    counts: Counter[int] = Counter()
    if not encoded:
        return counts
    hist = decode_histogram(encoded)
    for item in hist.get_recorded_iterator():
        counts[hist.get_highest_equivalent_value(item.value_iterated_to)] += (
            item.count_at_value_iterated_to
        )
    return counts


def mean_and_stdev_us(hist: HdrHistogram) -> tuple[float, float]:
    """Mean and standard deviation (µs) exactly as hdrh's ``get_mean_value`` and
    ``get_stddev`` give them (each value at the middle of its bucket), in one pass over the
    buckets that hold values. hdrh's own walk every bucket up to the maximum through a
    Python iterator, three times between them: about 0.1 s of CPU for every load summarized,
    however few its samples. The buckets that hold values are found in the counts' bytes
    by a regular expression (in C): a Python loop over the 50,000 counts of a histogram up
    to an hour costs 9 ms a call, four calls a summary (issue 35)."""
    total = hist.get_total_count()
    if not total:
        return 0.0, 0.0
    middles: list[tuple[int, int]] = []
    counts = hist.counts
    width = ctypes.sizeof(counts) // len(counts)
    # The scan covers the buckets from the minimum's to the maximum's only: the whole
    # array is 50,000 counts (400 KiB), copied and stripped four times a summary.
    first = hist.get_counts_array_index(hist.get_min_value())
    last = hist.get_counts_array_index(hist.get_max_value())
    raw = ctypes.string_at(ctypes.addressof(counts) + first * width, (last + 1 - first) * width)
    filled = dict.fromkeys(first + at.start() // width for at in _NONZERO.finditer(raw))
    for index in filled:
        count = counts[index]
        if count:
            value = hist.get_value_from_index(index)
            low = hist.get_lowest_equivalent_value(value)
            size = hist.get_highest_equivalent_value(value) - low + 1
            middles.append((low + (size >> 1), count))
    mean = float(sum(middle * count for middle, count in middles)) / total
    spread = sum((middle - mean) ** 2 * count for middle, count in middles)
    return mean, math.sqrt(spread / total)


def values_at_percentiles(hist: HdrHistogram, percentiles: Iterable[float]) -> dict[float, int]:
    """hdrh's ``get_percentile_to_value_dict`` for percentiles above 0 (each the highest
    value of the bucket where the counts reach it), with the running total of the counts
    summed and searched in C: hdrh's loop visits every bucket up to the percentile in
    Python, 4,000 of them for a load of one request answered in a millisecond, some 1 ms
    a summary's six percentiles (issue 35). tests/unit/test_stats_histogram.py holds the
    two to the same values."""
    total = hist.get_total_count()
    if not total:
        return {}
    last = hist.get_counts_array_index(hist.get_max_value())
    running = list(accumulate(hist.counts[: last + 1]))
    values: dict[float, int] = {}
    for percentile in percentiles:
        reached = bisect_left(running, hist.get_target_count_at_percentile(percentile))
        values[percentile] = hist.get_highest_equivalent_value(hist.get_value_from_index(reached))
    return values


def percentile_ms(hist: HdrHistogram, q: float) -> float:
    if hist.get_total_count() == 0:
        return math.nan
    return float(values_at_percentiles(hist, (q,))[q]) / 1000.0


def percentile_of_counts(counts: Mapping[int, int], q: float) -> float:
    """Exact percentile (ms) of a small µs-value counter, without building a histogram."""
    total = sum(counts.values())
    if total == 0:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * total))
    seen = 0
    for value_us in sorted(counts):
        seen += counts[value_us]
        if seen >= rank:
            return value_us / 1000.0
    return max(counts) / 1000.0
