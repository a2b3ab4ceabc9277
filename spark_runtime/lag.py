"""Replication lag of a mirror, sampled every couple of seconds in a background thread.

Per source partition: records not yet replicated (its end offset minus the next offset the
source connector will read) and time lag (age of the oldest unreplicated record; when nothing
is waiting, the latest heartbeat latency, which is how late an idle link is). Each point also
carries the source end offsets summed per topic, so a reader can tell when producers stopped
(migration readiness: unchanged sums over a while mean nothing is written any more).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import Consumer, TopicPartition

from mirrorcore.admin import KafkaAdmin
from mirrorcore.connection import ClusterConnection
from mirrorcore.series import SAMPLE_SECONDS

log = logging.getLogger(__name__)

MAX_TIMED_PARTITIONS = 100  # partitions whose oldest waiting record is looked up per sample
LOOKUP_SECONDS = 1.5  # a partition not answered by then has its age left out of this sample (None)

Partition = tuple[str, int]


@dataclass(frozen=True)
class Positions:
    """Where the source connector will read next.

    `fresh`: the query started without a checkpoint, so a partition missing from `next_offsets`
    starts at its beginning. A partition resumed after its latest offset sync is not missing: its
    start (sync + 1) is in `next_offsets` from the first moment, so its lag counts from there.
    """
    next_offsets: dict[Partition, int]
    partitions: list[Partition]
    remote_topics: dict[str, str]
    fresh: bool


def lag_point(positions: Positions, ends: dict[Partition, int], starts: dict[Partition, int],
              oldest_timestamps_ms: dict[Partition, int], now: float, idle_latency_ms: int | None) -> dict:
    """One `lag` series point (see mirrorcore/series.py); pure, for tests."""
    lagging = []
    total = 0
    worst = 0.0
    for tp in positions.partitions:
        position = positions.next_offsets.get(tp, starts.get(tp) if positions.fresh else None)
        if position is None or tp not in ends:
            continue
        records = max(0, ends[tp] - position)
        if not records:
            continue
        stamp = oldest_timestamps_ms.get(tp)
        seconds = round(max(0.0, now - stamp / 1000), 3) if stamp is not None else None
        total += records
        worst = max(worst, seconds or 0.0)
        lagging.append({"topic": tp[0], "partition": tp[1], "remote_topic": positions.remote_topics.get(tp[0]),
                        "records": records, "seconds": seconds})
    if not lagging and idle_latency_ms is not None:
        worst = idle_latency_ms / 1000
    return {"records": total, "seconds": round(worst, 3), "idle": not lagging, "partitions": lagging,
            "source_ends": source_ends(positions.partitions, ends)}


def source_ends(partitions: list[Partition], ends: dict[Partition, int]) -> dict[str, int]:
    """Sum of the end offsets per topic: it grows with every record written to the source."""
    sums: dict[str, int] = {}
    for tp in partitions:
        if tp in ends:
            sums[tp[0]] = sums.get(tp[0], 0) + ends[tp]
    return dict(sorted(sums.items()))


class LagSampler:
    def __init__(self, source: ClusterConnection, admin: KafkaAdmin, positions: Callable[[], Positions | None],
                 idle_latency_ms: Callable[[], int | None], record_point: Callable[[dict, float], None],
                 interval: float = SAMPLE_SECONDS) -> None:
        self.admin = admin
        self.positions = positions
        self.idle_latency_ms = idle_latency_ms
        self.record_point = record_point
        self.interval = interval
        self.last: dict | None = None
        self.error: str | None = None
        self._consumer = Consumer(source.librdkafka_config() | {
            "group.id": f"mirrorplane-lag-{uuid.uuid4().hex[:8]}", "enable.auto.commit": "false",
            "fetch.wait.max.ms": "50", "fetch.max.bytes": "1048576", "max.partition.fetch.bytes": "65536"})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lag-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._consumer.close()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sample()
                self.error = None
            except Exception as error:  # noqa: BLE001 - a failed sample is retried next interval
                self.error = str(error)
                log.warning("lag sample failed: %s", error)

    def sample(self) -> dict | None:
        positions = self.positions()
        if positions is None or not positions.partitions:
            return None
        ends = self.admin.end_offsets(positions.partitions)
        unknown = [tp for tp in positions.partitions if tp not in positions.next_offsets]
        starts = self.admin.end_offsets(unknown, earliest=True) if positions.fresh and unknown else {}
        known = {tp: positions.next_offsets.get(tp, starts.get(tp)) for tp in positions.partitions}
        waiting = {tp: offset for tp, offset in known.items() if offset is not None and ends.get(tp, 0) > offset}
        oldest = self._oldest_timestamps(waiting)
        now = time.time()
        point = lag_point(positions, ends, starts, oldest, now, self.idle_latency_ms())
        self.record_point(point, now)
        self.last = point | {"at": now}
        return point

    def _oldest_timestamps(self, waiting: dict[Partition, int]) -> dict[Partition, int]:
        """Timestamp of the first waiting record of the partitions furthest behind."""
        if not waiting:
            return {}
        chosen = sorted(waiting, key=lambda tp: -waiting[tp])[:MAX_TIMED_PARTITIONS]
        self._consumer.assign([TopicPartition(t, p, waiting[(t, p)]) for t, p in chosen])
        found: dict[Partition, int] = {}
        deadline = time.monotonic() + LOOKUP_SECONDS
        while len(found) < len(chosen) and time.monotonic() < deadline:
            for message in self._consumer.consume(len(chosen), timeout=0.2):
                topic, partition = message.topic(), message.partition()
                if message.error() is None and topic is not None and partition is not None:
                    found.setdefault((topic, partition), message.timestamp()[1])
        self._consumer.unassign()
        return found
