"""Offset syncs: MM2's `mm2-offset-syncs.<target>.internal`, written by the source connector.

The JVM writer applies MM2's per-record rule (first record of a partition, a translation that
would be `offset.lag.max` or more behind, a skipped upstream offset, a truncated downstream) and
returns the syncs to emit with each partition's rule state, which this class carries to the next
batch. Like MM2's commit-time promotion of delayed syncs, the latest position of a partition is
also synced once `offset.flush.interval.ms` has passed since its last sync, so a consumer that has
caught up translates exactly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from confluent_kafka import Producer

from spark_runtime.admin import KafkaAdmin
from spark_runtime.config import MirrorConfig
from spark_runtime.formats import OffsetSync
from spark_runtime.topic_reader import PartitionReader

log = logging.getLogger(__name__)

LOCATIONS = ("source", "target")
DEFAULT_MAX_OFFSET_LAG = 100
DEFAULT_FLUSH_INTERVAL_MS = 10_000
READ_TIMEOUT_SECONDS = 60.0


class OffsetSyncs:
    def __init__(self, config: MirrorConfig, source_admin: KafkaAdmin, target_admin: KafkaAdmin,
                 clock: Callable[[], float] = time.monotonic) -> None:
        settings = config.connectors["source"]
        self.enabled = settings.get_bool("emit.offset-syncs.enabled", True)
        self.location = settings.get("offset-syncs.topic.location", "source")
        if self.location not in LOCATIONS:
            raise ValueError(f"offset-syncs.topic.location must be 'source' or 'target', not {self.location!r}")
        self.connection = config.source if self.location == "source" else config.target
        self.admin = source_admin if self.location == "source" else target_admin
        self.topic = config.policy.offset_syncs_topic(config.target.alias)
        self.replication_factor = settings.get_int("offset-syncs.topic.replication.factor", -1)
        self.max_offset_lag = settings.get_int("offset.lag.max", DEFAULT_MAX_OFFSET_LAG)
        self.flush_interval = settings.get_int("offset.flush.interval.ms", DEFAULT_FLUSH_INTERVAL_MS) / 1000
        self.clock = clock
        self.state: dict[str, str] = {}  # "topic\tpartition" -> "previous up\tprevious down\tlast synced down"
        self.last_sync_at: dict[str, float] = {}
        self.emitted = 0
        self.producer: Producer | None = None

    def start(self) -> None:
        if not self.enabled:
            return
        self.admin.create_topics({self.topic: 1}, self.replication_factor,
                                 {self.topic: {"cleanup.policy": "compact"}})
        self.producer = Producer(self.connection.librdkafka_config() | {"acks": "all", "linger.ms": "5"})

    def stop(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            producer.flush(10)

    def reset(self) -> None:
        """Forget every partition's rule state: the next record of each partition is synced, as
        after an MM2 task start (used when replication starts without a checkpoint)."""
        self.state.clear()
        self.last_sync_at.clear()

    def read_all(self, timeout: float = READ_TIMEOUT_SECONDS) -> list[OffsetSync]:
        """Every sync in the topic, oldest first, whoever wrote it (this connector or MM2); a
        topic that does not exist reads as empty. Raises if its end is not reached in time: an
        incomplete read could miss the latest syncs."""
        if self.topic not in self.admin.partition_counts([self.topic]):
            return []  # an assigned consumer would wait for a topic that may never come
        reader = PartitionReader(self.connection, self.topic, "offset-syncs-resume")
        try:
            records = reader.read_to_end(timeout)
            if not reader.caught_up:
                raise RuntimeError(f"reading the offset syncs in {self.topic!r} on {self.connection.alias!r} did "
                                   f"not reach its end within {timeout:g}s")
        finally:
            reader.close()
        syncs = []
        for record in records:
            try:
                syncs.append(OffsetSync.decode(record.key(), record.value()))
            except Exception:  # noqa: BLE001 - a foreign record in the topic is skipped, as MM2 does
                log.warning("skipping an undecodable offset sync at offset %s", record.offset())
        return syncs

    def absorb(self, lines: list[str]) -> list[OffsetSync]:
        """Take a batch's writer output ("S" and "T" lines), emit the syncs, return them."""
        syncs: list[OffsetSync] = []
        synced: set[str] = set()
        for line in lines:
            kind, topic, partition, *values = line.split("\t")
            key = f"{topic}\t{partition}"
            if kind == "S":
                syncs.append(OffsetSync(topic, int(partition), int(values[0]), int(values[1])))
                synced.add(key)
            elif kind == "T":
                self.state[key] = "\t".join(values)
        now = self.clock()
        for key in synced:
            self.last_sync_at[key] = now
        for key, state in self.state.items():
            upstream, downstream, last_synced = (int(v) for v in state.split("\t"))
            due = now - self.last_sync_at.get(key, 0.0) >= self.flush_interval
            if key not in synced and downstream != last_synced and upstream >= 0 and due:
                topic, partition = key.split("\t")
                syncs.append(OffsetSync(topic, int(partition), upstream, downstream))
                self.state[key] = f"{upstream}\t{downstream}\t{downstream}"
                self.last_sync_at[key] = now
        self._send(syncs)
        return syncs

    def _send(self, syncs: list[OffsetSync]) -> None:
        if not syncs or self.producer is None:
            return
        errors: list[str] = []

        def delivered(error, _message) -> None:
            if error is not None:
                errors.append(str(error))

        for sync in syncs:
            self.producer.produce(self.topic, key=sync.key(), value=sync.value(), on_delivery=delivered)
        remaining = self.producer.flush(30)
        if errors or remaining:
            raise RuntimeError(f"writing offset syncs to {self.topic!r} on {self.connection.alias!r} failed: "
                               f"{errors[0] if errors else f'{remaining} not delivered within 30s'}")
        self.emitted += len(syncs)
