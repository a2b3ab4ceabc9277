"""Gauges Kafka Connect reports per source task, from the source connector's query and writer.

- `offset_commit_ms`: how long Spark took to commit the query's progress, its write-ahead log entry
  (`walCommit`) and its commit log entry (`commitOffsets`), or how long the driver took to commit a
  real-time query's positions (`committed`), averaged over the latest commits: what Connect's
  offset-commit-avg-time-ms measures for a task, the time to make its positions durable.
- `in_flight_records`: records handed to the producers and not yet acknowledged (Connect's
  source-record-active-count), and `producer_buffer_available_bytes`: the bytes free in the
  producers' buffers. Both are counted by the writer in the JVM its tasks run in, so they are
  known only when that is the driver's (local[N]); on a cluster they are left out.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from typing import Any

KEEP_COMMITS = 20  # the average's window, in commits
READ_EVERY_SECONDS = 2.0  # two calls into the JVM each time: not on every tick of the control loop


class TaskGauges:
    def __init__(self) -> None:
        self._commits: deque[float] = deque(maxlen=KEEP_COMMITS)  # milliseconds
        self._last_batch: int | None = None  # the query's latest batch counted
        self._client: dict[str, int] = {}
        self._next_read = 0.0

    def observe(self, spark: Any, query: Any, tasks_local: bool) -> None:
        """Read the query's latest progress and, with local tasks, the writer's producers."""
        if time.monotonic() < self._next_read:
            return
        self._next_read = time.monotonic() + READ_EVERY_SECONDS
        self._observe_commit(_last_progress(query))
        self._client = _client_gauges(spark) if tasks_local else {}

    def _observe_commit(self, progress: dict | None) -> None:
        if progress is None:
            return
        durations = progress.get("durationMs") or {}
        if "walCommit" not in durations and "commitOffsets" not in durations:
            return
        batch = int(progress.get("batchId", -1))
        if batch == self._last_batch:
            return
        self._last_batch = batch
        self._commits.append(float(durations.get("walCommit", 0)) + float(durations.get("commitOffsets", 0)))

    def committed(self, milliseconds: float) -> None:
        """The driver committed a real-time query's positions in `milliseconds`."""
        self._commits.append(milliseconds)

    def report(self) -> dict[str, float | int]:
        gauges: dict[str, float | int] = dict(self._client)
        if self._commits:
            gauges["offset_commit_ms"] = round(sum(self._commits) / len(self._commits), 1)
        return gauges


def _last_progress(query: Any) -> dict | None:
    try:
        progress = query.lastProgress if query is not None else None
    except Exception:  # noqa: BLE001 - the query may be stopping; the gauge waits for the next one
        return None
    return progress if isinstance(progress, dict) else None


def _client_gauges(spark: Any) -> dict[str, int]:
    in_flight, available = (int(value) for value in _writer_class(spark.sparkContext._jvm).clientGauges())
    gauges = {"in_flight_records": in_flight}
    if available >= 0:  # no producer yet: no buffer to tell of (not an exhausted one)
        gauges["producer_buffer_available_bytes"] = available
    return gauges


@functools.cache
def _writer_class(jvm: Any) -> Any:
    """Looked up once (see real_time._writer_class: each py4j lookup of a dotted name scans the jars)."""
    return jvm.io.mirrorplane.spark.KafkaMirrorWriter
