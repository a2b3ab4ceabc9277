"""Medians, percentiles and ranges: the arithmetic of the report."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, not {q}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def spread(values: Sequence[float]) -> dict[str, float] | None:
    """`{"median", "min", "max"}` of the values, None when there are none."""
    if not values:
        return None
    return {"median": median(values), "min": min(values), "max": max(values)}


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """numerator / denominator, None when either is missing or the denominator is 0."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def crossing_time(samples: Sequence[tuple[float, int]], level: float) -> float | None:
    """When a growing count first reached `level`, interpolated linearly between the two samples
    (seconds, count) around it; None if it never did."""
    previous: tuple[float, int] | None = None
    for seconds, count in samples:
        if count >= level:
            if previous is None or count == previous[1]:
                return seconds
            before_seconds, before_count = previous
            return before_seconds + (seconds - before_seconds) * (level - before_count) / (count - before_count)
        previous = (seconds, count)
    return None


def steady_rate(samples: Sequence[tuple[float, int]], expected: int, low: float = 0.1,
                high: float = 0.9) -> float | None:
    """Records/s while the target went from `low` to `high` of `expected` records (10% to 90%):
    the copy's rate without its start-up and its tail. None when the window was not observed."""
    start, end = crossing_time(samples, expected * low), crossing_time(samples, expected * high)
    if start is None or end is None or end <= start:
        return None
    return expected * (high - low) / (end - start)


def paired_ratios(numerators: dict[int, float], denominators: dict[int, float]) -> list[float]:
    """numerator / denominator of every repetition both have (keyed by repetition)."""
    return [numerators[key] / denominators[key] for key in sorted(numerators)
            if key in denominators and denominators[key] and numerators[key] is not None]
