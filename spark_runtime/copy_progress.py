"""What the source connector has copied: each partition's latest positions and the running totals.

Fed by the writer's summaries after each micro-batch, or, in real-time mode, by reading the
counters of the tasks running in the driver's JVM (local[N]) every tick.

Each partition also carries what was copied from it since the application started (`records`,
`bytes`) and the rate of its latest update (`rate`: records and bytes per second over the batch, or
over the time since the previous real-time tick, and `at`, when it was measured).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class CopyProgress:
    def __init__(self, remote_topic: Callable[[str], str]) -> None:
        self.remote_topic = remote_topic
        self.metrics: dict = {"records": 0, "bytes": 0, "batches": 0, "last_batch": None}
        self.partitions: dict[str, dict] = {}  # "topic:partition" -> offsets
        self._real_time_totals: dict[str, tuple[int, int]] = {}  # records, bytes per partition, as last read
        self._copied: dict[str, dict] = {}  # "topic:partition" -> records, bytes since start and the latest rate
        self._last_tick: float | None = None
        self._lock = threading.Lock()

    def record_batch(self, batch_id: int, summaries: list[str], seconds: float) -> None:
        """A micro-batch's "P" lines: topic, partition, first, last upstream, last downstream, records, bytes."""
        records = bytes_ = 0
        now = time.time()
        with self._lock:
            for line in summaries:
                _, topic, partition, _first, last, downstream, count, size = line.split("\t")
                records += int(count)
                bytes_ += int(size)
                self._place(topic, int(partition), int(last), int(downstream))
                self._count(f"{topic}:{partition}", int(count), int(size), seconds, now)
            self._add(records, bytes_)
            self.metrics["batches"] += 1
            self.metrics["last_batch"] = {"id": batch_id, "records": records, "bytes": bytes_,
                                          "seconds": round(seconds, 3), "at": time.time()}

    def absorb_real_time(self, lines: list[str]) -> None:
        """Real-time tasks' "P" lines: topic, partition, last upstream, last downstream, and the
        records and bytes they sent since the JVM started (so only the growth is added)."""
        records = bytes_ = 0
        now = time.time()
        with self._lock:
            elapsed = None if self._last_tick is None else now - self._last_tick
            self._last_tick = now
            for line in lines:
                _, topic, partition, last, downstream, count, size = line.split("\t")
                key = f"{topic}:{partition}"
                seen = self._real_time_totals.get(key, (0, 0))
                self._real_time_totals[key] = (int(count), int(size))
                grown = (max(0, int(count) - seen[0]), max(0, int(size) - seen[1]))
                records += grown[0]
                bytes_ += grown[1]
                if int(last) >= 0:
                    self._place(topic, int(partition), int(last), int(downstream))
                    self._count(key, *grown, elapsed, now)
            self._add(records, bytes_)

    def next_offsets(self) -> dict[tuple[str, int], int]:
        with self._lock:
            return {(p["topic"], p["partition"]): p["last_upstream_offset"] + 1 for p in self.partitions.values()}

    def report(self) -> tuple[dict, list[dict]]:
        """The metrics and the partitions, for the status."""
        with self._lock:
            partitions = [p | self._copied.get(key, {}) for key, p in self.partitions.items()]
            return dict(self.metrics), sorted(partitions, key=lambda p: (p["topic"], p["partition"]))

    def _place(self, topic: str, partition: int, last: int, downstream: int) -> None:
        self.partitions[f"{topic}:{partition}"] = {
            "topic": topic, "partition": partition, "remote_topic": self.remote_topic(topic),
            "last_upstream_offset": last, "last_downstream_offset": downstream,
        }

    def _count(self, key: str, records: int, bytes_: int, seconds: float | None, now: float) -> None:
        """Add a partition's copied records and bytes; its rate when the update spans a known time."""
        copied = self._copied.setdefault(key, {"records": 0, "bytes": 0, "rate": None})
        copied["records"] += records
        copied["bytes"] += bytes_
        if seconds is not None and seconds > 0:
            copied["rate"] = {"records_per_s": round(records / seconds, 3), "bytes_per_s": round(bytes_ / seconds, 1),
                              "at": round(now, 3)}

    def _add(self, records: int, bytes_: int) -> None:
        self.metrics["records"] += records
        self.metrics["bytes"] += bytes_
