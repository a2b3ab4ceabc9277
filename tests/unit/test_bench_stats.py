"""The benchmark's arithmetic: percentiles, medians, ranges and ratios."""

from __future__ import annotations

import pytest

from bench.latency import latency_summary
from bench.stats import median, percentile, ratio, spread


def test_percentiles_interpolate_between_closest_ranks():
    values = [40, 10, 30, 20]  # order does not matter
    assert percentile(values, 0) == 10
    assert percentile(values, 100) == 40
    assert percentile(values, 50) == 25
    assert percentile(values, 99) == pytest.approx(39.7)
    assert percentile([7], 99) == 7


def test_percentile_of_a_thousand_latencies():
    values = list(range(1, 1001))  # 1..1000 ms
    assert percentile(values, 50) == pytest.approx(500.5)
    assert percentile(values, 95) == pytest.approx(950.05)
    assert percentile(values, 99) == pytest.approx(990.01)


def test_percentile_refuses_nonsense():
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile([1], 101)


def test_median_odd_and_even():
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5


def test_spread_and_ratio():
    assert spread([90.0, 110.0, 100.0]) == {"median": 100.0, "min": 90.0, "max": 110.0}
    assert spread([]) is None
    assert ratio(120, 100) == 1.2
    assert ratio(None, 100) is None
    assert ratio(5, 0) is None
    assert ratio(5, None) is None


def test_latency_summary_counts_the_missing():
    summary = latency_summary([float(v) for v in range(1, 101)], expected=110)
    assert summary["records"] == 100
    assert summary["missing"] == 10
    assert summary["p50_ms"] == 50.5
    assert summary["p99_ms"] == 99.0
    assert summary["max_ms"] == 100.0
    empty = latency_summary([], expected=300)
    assert empty["missing"] == 300 and empty["p99_ms"] is None


def test_crossing_time_interpolates_between_polls():
    from bench.stats import crossing_time

    samples = [(0.0, 0), (1.0, 0), (2.0, 100), (3.0, 300)]
    assert crossing_time(samples, 50) == 1.5
    assert crossing_time(samples, 200) == 2.5
    assert crossing_time(samples, 100) == 2.0
    assert crossing_time(samples, 301) is None
    assert crossing_time([(4.0, 500)], 10) == 4.0, "reached at the first sample"


def test_steady_rate_is_the_rate_from_ten_to_ninety_percent():
    from bench.stats import steady_rate

    # a slow start (nothing for 5 s), then 1,000 records/s, then a slow tail
    samples = [(0.0, 0), (5.0, 0), *((5.0 + i, i * 1000) for i in range(1, 10)), (20.0, 10_000)]
    assert steady_rate(samples, 10_000) == pytest.approx(1000.0)
    assert steady_rate(samples[:5], 10_000) is None, "90% never reached"
    assert steady_rate([(1.0, 10_000)], 10_000) is None, "both crossings in one poll: no window"


def test_paired_ratios_pair_repetitions():
    from bench.stats import paired_ratios

    assert paired_ratios({1: 100.0, 2: 120.0, 3: 90.0}, {1: 50.0, 3: 90.0, 4: 10.0}) == [2.0, 1.0]
    assert paired_ratios({1: 1.0}, {1: 0.0}) == []
    assert paired_ratios({}, {1: 1.0}) == []
