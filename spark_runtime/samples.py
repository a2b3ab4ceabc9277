"""The `throughput` and `tasks` series: sampled from the connectors' status by the application loop.

Pure: the loop hands over the status it has just published (`{kind: connector status}`) and the
time, and records what comes back (see mirrorcore/series.py for the point shapes).

- Throughput is the change of the source connector's cumulative `metrics.records`/`bytes` over the
  time since the previous sample. Per topic it is how far the topic's last replicated offsets
  advanced per second (offsets, not records: a transaction marker counts too); None while one of its
  partitions has no earlier position (its first batch since the application started). The first
  sample only sets the baseline.
- Tasks are counted by state over every connector. A connector without tasks counts once in its
  own state only when FAILED (it failed before it had tasks, e.g. it could not list its topics,
  and an operator must see that); otherwise it adds nothing: a STOPPED or UNASSIGNED connector
  has no tasks (as in Kafka Connect) and a RUNNING or PAUSED one without tasks has nothing to do
  (no topic or group matches). `RUNNING` is always present, 0 included.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from mirrorcore.channel import FAILED, RUNNING
from mirrorcore.series import SAMPLE_SECONDS

Partition = tuple[str, int]


@dataclass(frozen=True)
class Totals:
    """The source connector's cumulative counters at one moment."""
    at: float
    records: int
    bytes: int
    next_offsets: dict[Partition, int] = field(default_factory=dict)


def totals(connectors: dict[str, dict], at: float) -> Totals:
    source = connectors.get("source") or {}
    metrics = source.get("metrics") or {}
    offsets = {(p["topic"], p["partition"]): p["last_upstream_offset"] + 1
               for p in source.get("partitions") or [] if p.get("last_upstream_offset") is not None}
    return Totals(at, int(metrics.get("records") or 0), int(metrics.get("bytes") or 0), offsets)


def throughput_point(previous: Totals, current: Totals) -> dict[str, Any] | None:
    """Rates between two samples; None when no time passed between them."""
    elapsed = current.at - previous.at
    if elapsed <= 0:
        return None
    point: dict[str, Any] = {
        "records_per_s": round(max(0, current.records - previous.records) / elapsed, 3),
        "bytes_per_s": round(max(0, current.bytes - previous.bytes) / elapsed, 1),
        "records": current.records,
        "bytes": current.bytes,
    }
    advanced: dict[str, int | None] = {}
    for tp, offset in current.next_offsets.items():
        before, sum_ = previous.next_offsets.get(tp), advanced.get(tp[0], 0)
        advanced[tp[0]] = None if before is None or sum_ is None else sum_ + max(0, offset - before)
    if advanced:
        point["topics"] = {topic: None if n is None else round(n / elapsed, 3) for topic, n in sorted(advanced.items())}
    return point


def tasks_point(connectors: dict[str, dict]) -> dict[str, int]:
    """Tasks of every connector by state (see the module docstring for connectors without tasks)."""
    counts: Counter[str] = Counter({RUNNING: 0})
    for status in connectors.values():
        tasks = status.get("tasks") or []
        for task in tasks:
            counts[task.get("state") or "UNASSIGNED"] += 1
        if not tasks and status.get("state") == FAILED:
            counts[FAILED] += 1
    return dict(sorted(counts.items()))


class Sampler:
    """Every `interval` seconds: a `tasks` point, and a `throughput` point from the second sample on."""

    def __init__(self, interval: float = SAMPLE_SECONDS) -> None:
        self.interval = interval
        self.previous: Totals | None = None
        self.last_at: float | None = None

    def sample(self, connectors: dict[str, dict], now: float) -> dict[str, dict]:
        """`{series name: point}` to record at `now`; empty until the interval has passed."""
        if self.last_at is not None and 0 <= now - self.last_at < self.interval:  # a clock set back samples at once
            return {}
        self.last_at = now
        points: dict[str, dict] = {"tasks": tasks_point(connectors)}
        current = totals(connectors, now)
        if self.previous is not None:
            throughput = throughput_point(self.previous, current)
            if throughput is not None:
                points["throughput"] = throughput
        self.previous = current
        return points
