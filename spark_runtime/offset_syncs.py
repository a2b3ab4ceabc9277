"""Offset syncs: MM2's `mm2-offset-syncs.<target>.internal`, written by the source connector.

The JVM writes them (MicroBatchMirror, RealTimeMirrorWriter): MM2's per-record rule (first record
of a partition, a translation that would be `offset.lag.max` or more behind, a skipped upstream
offset, a truncated downstream) and, like MM2's commit-time promotion of delayed syncs, the latest
position of a partition once `offset.flush.interval.ms` has passed since its last sync, so a
consumer that has caught up translates exactly. This class holds the topic's settings, creates it,
reads it back for resume plans, and carries each partition's rule state from one micro-batch query
to the next.
"""

from __future__ import annotations

import logging

from mirrorcore.admin import KafkaAdmin
from mirrorcore.config import MirrorConfig
from mirrorcore.formats import OffsetSync
from spark_runtime.topic_reader import PartitionReader

log = logging.getLogger(__name__)

LOCATIONS = ("source", "target")
READ_TIMEOUT_SECONDS = 60.0


class OffsetSyncs:
    def __init__(self, config: MirrorConfig, source_admin: KafkaAdmin, target_admin: KafkaAdmin) -> None:
        settings = config.connectors["source"]
        self.enabled = settings.get_bool("emit.offset-syncs.enabled")
        self.location = settings.get("offset-syncs.topic.location")
        if self.location not in LOCATIONS:
            raise ValueError(f"offset-syncs.topic.location must be 'source' or 'target', not {self.location!r}")
        self.connection = config.source if self.location == "source" else config.target
        self.admin = source_admin if self.location == "source" else target_admin
        self.topic = config.policy.offset_syncs_topic(config.target.alias)
        self.replication_factor = settings.get_int("offset-syncs.topic.replication.factor")
        self.max_offset_lag = settings.get_int("offset.lag.max")
        self.flush_interval = settings.get_int("offset.flush.interval.ms") / 1000
        self.state: dict[str, str] = {}  # "topic\tpartition" -> "previous up\tprevious down\tlast synced down"
        self.emitted = 0  # by the micro-batch queries stopped in this application's life

    def start(self) -> None:
        if not self.enabled:
            return
        self.admin.create_topics({self.topic: 1}, self.replication_factor,
                                 {self.topic: {"cleanup.policy": "compact"}})

    def reset(self) -> None:
        """Forget every partition's rule state: the next record of each partition is synced, as
        after an MM2 task start (used when replication starts without a checkpoint)."""
        self.state.clear()

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
