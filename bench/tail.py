"""Where the slowest 1% of a latency run's records fell: in which seconds and partitions, and how many the
reader itself held back (the disk's share is added by bench.disk)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.stats import percentile

READER_PAUSE_MS = 20.0  # a reader's gap this long with records queued: the reader was held up, not the mirror


def tail_summary(stamps_ms: Sequence[float], latencies_ms: Sequence[float], partitions: Sequence[int],
                 reader_gaps_ms: Sequence[float] = (), worst: int = 5) -> dict:
    """Where the slowest 1% of records came from: how many distinct seconds (of their timestamps) and
    partitions they fall in, and the seconds holding most of them. A tail in a few seconds across all
    partitions is a pause of the whole pipeline; one spread over time is per-record noise. `start_ms`
    (epoch milliseconds of the first record's timestamp, where second 0 begins) lines the seconds up
    with other clocks: GC logs, flight recordings. `reader_gaps_ms`, per record: the reader's gap
    before the call that handed it over when records were queued (0 when that call woke a wait);
    `after_reader_pause` counts the slowest records handed over after a gap of `READER_PAUSE_MS` or
    more, and `reader_pause_max_ms` is the longest such gap."""
    if not latencies_ms:
        return {"records": 0, "seconds": 0, "partitions": 0, "worst_seconds": [], "after_reader_pause": 0,
                "reader_pause_max_ms": None}
    threshold = percentile(latencies_ms, 99)
    start = min(stamps_ms)
    gaps = reader_gaps_ms or [0.0] * len(latencies_ms)
    by_second: dict[int, list[float]] = {}
    slow_partitions = set()
    paused, longest = 0, 0.0
    for stamp, latency, partition, gap in zip(stamps_ms, latencies_ms, partitions, gaps, strict=True):
        if latency >= threshold:
            by_second.setdefault(int((stamp - start) // 1000), []).append(latency)
            slow_partitions.add(partition)
            if gap >= READER_PAUSE_MS:
                paused, longest = paused + 1, max(longest, gap)
    ranked = sorted(by_second.items(), key=lambda item: -len(item[1]))[:worst]
    return {"records": sum(len(v) for v in by_second.values()), "seconds": len(by_second), "start_ms": start,
            "span_seconds": int((max(stamps_ms) - start) // 1000) + 1, "partitions": len(slow_partitions),
            "slow_per_second": sorted([second, len(values)] for second, values in by_second.items()),
            "worst_seconds": [{"second": second, "records": len(values), "max_ms": round(max(values), 1)}
                              for second, values in ranked],
            "after_reader_pause": paused, "reader_pause_max_ms": round(longest, 1) if paused else None}
