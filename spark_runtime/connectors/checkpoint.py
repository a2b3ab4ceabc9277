"""The checkpoint connector: consumer-group offsets translated to the target, as MM2's.

Every `emit.checkpoints.interval.seconds` it reads the committed offsets of the selected groups
(`groups` / `groups.exclude`, refreshed every `refresh.groups.interval.seconds`) on the source,
translates those of replicated topics through the offset syncs, and writes MM2-format
checkpoints to `<source>.checkpoints.internal` on the target, which MM2's RemoteClusterUtils
reads. With `sync.group.offsets.enabled`, every `sync.group.offsets.interval.seconds` it also
commits the translated offsets to the same groups on the target, but only for a group with no
active member there and never behind the group's own target offset; a group skipped for that is
named in the status with the reason.

It moves a few records per interval, so it runs in the driver beside the streaming query.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from confluent_kafka import Producer

from mirrorcore import one_cluster
from mirrorcore.admin import KafkaAdmin
from mirrorcore.checkpoints import CheckpointLedger, OffsetSyncStore
from mirrorcore.config import MirrorConfig
from mirrorcore.filters import NameFilter
from mirrorcore.formats import Checkpoint, OffsetSync
from mirrorcore.groups import ConsumerGroups
from spark_runtime.connectors.base import Connector
from spark_runtime.offset_syncs import LOCATIONS
from spark_runtime.topic_reader import FOLLOWER, PartitionReader

log = logging.getLogger(__name__)


class CheckpointConnector(Connector):
    kind = "checkpoint"

    def __init__(self, config: MirrorConfig, source_admin: KafkaAdmin, target_admin: KafkaAdmin,
                 record_point: Callable[[dict, float], None] = lambda point, at: None) -> None:
        super().__init__()
        self.config = config
        self.settings = settings = config.connectors["checkpoint"]
        self.source_groups = ConsumerGroups(source_admin)
        self.target_groups = ConsumerGroups(target_admin)
        self.source_admin, self.target_admin = source_admin, target_admin
        self.record_point = record_point
        self.policy = config.policy
        self.selector = config.topic_selector
        self.group_filter = NameFilter(config.groups, config.groups_exclude)
        self.topic = self.policy.checkpoints_topic(config.source.alias)
        self.emit_interval = settings.get_float("emit.checkpoints.interval.seconds")
        self.sync_enabled = settings.get_bool("sync.group.offsets.enabled")
        self.sync_interval = settings.get_float("sync.group.offsets.interval.seconds")
        self.refresh_interval = settings.get_float("refresh.groups.interval.seconds")
        if not settings.get_bool("refresh.groups.enabled"):
            self.refresh_interval = float("inf")
        self.syncs = OffsetSyncStore()
        self.ledger = CheckpointLedger()
        self.groups: list[str] = []
        self.group_status: dict[str, dict] = {}
        self.metrics = {"checkpoints": 0, "group_offset_syncs": 0, "groups": 0, "offset_syncs_read": 0}
        self.producer: Producer | None = None
        self.sync_reader: PartitionReader | None = None
        self.next_refresh = self.next_emit = self.next_sync = 0.0
        self._delivery_errors: list[str] = []

    @property
    def off_reason(self) -> str | None:
        if self.config.legacy:
            return "checkpoints are off with the legacy replication policy (MM1 emulation)"
        if not self.settings.get_bool("emit.checkpoints.enabled"):
            return "emit.checkpoints.enabled=false"
        return None

    # -- lifecycle hooks ----------------------------------------------------------------

    def _start(self) -> None:
        if self.off_reason:
            return
        one_cluster.ensure_two_clusters(self.source_admin, self.target_admin)
        replication_factor = self.settings.get_int("checkpoints.topic.replication.factor")
        self.target_admin.create_topics({self.topic: 1}, replication_factor,
                                        {self.topic: {"cleanup.policy": "compact"}})
        self._restore_ledger()
        self.sync_reader = self._offset_sync_reader()
        self._absorb_syncs(self.sync_reader.read_to_end())
        self.producer = Producer(self.config.target.librdkafka_config() | {"acks": "all", "linger.ms": "5"}
                                 | self.settings.prefixed("producer.override."))
        self.next_refresh = self.next_emit = self.next_sync = 0.0

    def _halt(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            producer.flush(10)
        reader, self.sync_reader = self.sync_reader, None
        if reader is not None:
            reader.close()

    _guarded_cleanup = _halt

    def _tick(self) -> None:
        if self.producer is None or self.sync_reader is None:
            return
        now = time.monotonic()
        if now >= self.next_refresh:
            self.next_refresh = now + self.refresh_interval
            self._refresh_groups()
        if now >= self.next_emit:
            self.next_emit = now + self.emit_interval
            self._absorb_syncs(self.sync_reader.poll())
            self._emit_checkpoints()
        if self.sync_enabled and now >= self.next_sync:
            self.next_sync = now + self.sync_interval
            for group in sorted(self.group_status):
                self._sync_group(group)

    # -- inputs -------------------------------------------------------------------------

    def _offset_sync_reader(self) -> PartitionReader:
        location = self.config.connectors["source"].get("offset-syncs.topic.location")
        if location not in LOCATIONS:
            raise ValueError(f"offset-syncs.topic.location must be 'source' or 'target', not {location!r}")
        connection = self.config.source if location == "source" else self.config.target
        topic = self.policy.offset_syncs_topic(self.config.target.alias)
        return PartitionReader(connection, topic, f"{self.config.name}-offset-syncs",
                               FOLLOWER | self.settings.prefixed("consumer."))

    def _absorb_syncs(self, records: list) -> None:
        for record in records:
            try:
                self.syncs.add(OffsetSync.decode(record.key(), record.value()))
            except Exception:  # noqa: BLE001 - a foreign record in the topic is skipped, as MM2 does
                log.warning("skipping an undecodable offset sync at offset %s", record.offset())
        self.metrics["offset_syncs_read"] += len(records)

    def _restore_ledger(self) -> None:
        """Checkpoints already on the target: a restarted connector never emits behind them."""
        reader = PartitionReader(self.config.target, self.topic, f"{self.config.name}-checkpoints")
        try:
            for record in reader.read_to_end():
                try:
                    self.ledger.remember(Checkpoint.decode(record.key(), record.value()))
                except Exception:  # noqa: BLE001 - foreign records are skipped, as MM2 does
                    log.warning("skipping an undecodable checkpoint at offset %s", record.offset())
        finally:
            reader.close()

    def _refresh_groups(self) -> None:
        groups = [g for g in self.source_groups.names() if self.group_filter.matches(g)]
        if groups != self.groups:
            log.info("consumer groups to checkpoint: %s", groups)
        self.groups = groups
        self.metrics["groups"] = len(groups)
        for gone in set(self.group_status) - set(groups):
            del self.group_status[gone]

    # -- checkpoints --------------------------------------------------------------------

    def _emit_checkpoints(self) -> None:
        summary = []
        for group in self.groups:
            emitted = 0
            partitions = []
            for (topic, partition), committed in sorted(self.source_groups.committed(group).items()):
                if not self.selector.should_replicate(topic):
                    continue
                entry, checkpoint = self._translate(group, topic, partition, committed)
                if checkpoint is not None and self.ledger.is_news(checkpoint):
                    self._produce(checkpoint)
                    self.ledger.remember(checkpoint)
                    entry["checkpoint_at"] = time.time()
                    emitted += 1
                partitions.append(entry)
            if not partitions:  # the group reads no replicated topic
                self.group_status.pop(group, None)
                continue
            status = self.group_status.setdefault(group, _new_group_status(group, self.sync_enabled))
            previous = {(p["topic"], p["partition"]): p for p in status["partitions"]}
            for entry in partitions:
                entry["checkpoint_at"] = entry["checkpoint_at"] or previous.get(
                    (entry["topic"], entry["partition"]), {}).get("checkpoint_at")
                entry["target_offset"] = previous.get((entry["topic"], entry["partition"]), {}).get("target_offset")
            status["partitions"] = partitions
            summary.append({"group": group, "partitions": len(partitions), "checkpoints": emitted,
                            "reprocess": max((p["reprocess"] or 0 for p in partitions), default=0)})
        self._flush()
        self.record_point({"groups": summary}, time.time())

    def _translate(self, group: str, topic: str, partition: int, committed: int) -> tuple[dict, Checkpoint | None]:
        remote = self.policy.format_remote_topic(self.config.source.alias, topic)
        translation = self.syncs.translate(topic, partition, committed)
        entry = {"topic": topic, "partition": partition, "remote_topic": remote, "committed_offset": committed,
                 "translated_offset": None, "reprocess": None, "checkpoint_at": None, "target_offset": None,
                 "note": None}
        if translation is None:
            entry["note"] = f"no offset sync at or below offset {committed} yet: not replicated that far"
            return entry, None
        checkpoint = Checkpoint(group, remote, partition, committed, translation.downstream_offset)
        last = self.ledger.get(group, remote, partition)
        in_force = checkpoint if last is None or self.ledger.is_news(checkpoint) else last
        entry["translated_offset"], entry["reprocess"] = in_force.downstream_offset, translation.reprocess
        return entry, checkpoint

    def _running_producer(self) -> Producer:
        if self.producer is None:
            raise RuntimeError("the checkpoint connector is not running: it has no producer")
        return self.producer

    def _produce(self, checkpoint: Checkpoint) -> None:
        def delivered(error, _message) -> None:
            if error is not None:
                self._delivery_errors.append(str(error))

        self._running_producer().produce(self.topic, key=checkpoint.key(), value=checkpoint.value(),
                                         on_delivery=delivered)
        self.metrics["checkpoints"] += 1

    def _flush(self) -> None:
        remaining = self._running_producer().flush(30)
        if self._delivery_errors or remaining:
            error = self._delivery_errors[0] if self._delivery_errors else f"{remaining} not delivered within 30s"
            self._delivery_errors.clear()
            raise RuntimeError(f"writing checkpoints to {self.topic!r} on {self.config.target.alias!r} failed: {error}")

    # -- group offset sync --------------------------------------------------------------

    def _sync_group(self, group: str) -> None:
        status = self.group_status[group]
        wanted = {(c.topic, c.partition): c.downstream_offset for (g, _, _), c in self.ledger.last.items()
                  if g == group}
        if not wanted:
            status["sync"], status["sync_note"] = "pending", "no checkpoint for this group yet"
            return
        activity = self.target_groups.activity(group)
        status["target_state"], status["target_members"] = activity.state, activity.members
        if not activity.idle:
            status["sync"] = "skipped"
            status["sync_note"] = (f"group is active on {self.config.target.alias!r} ({activity.members} members, "
                                   f"{activity.state}): offsets are only written while it has no members")
            return
        current = self.target_groups.committed(group)
        existing = self.target_admin.partition_counts(sorted({topic for topic, _ in wanted}))
        commit = {tp: offset for tp, offset in wanted.items()
                  if tp[1] < existing.get(tp[0], 0) and offset > current.get(tp, -1)}
        try:
            self.target_groups.commit(group, commit)
        except RuntimeError as error:  # the group became active meanwhile: try again next interval
            status["sync"], status["sync_note"] = "skipped", str(error)
            return
        self.metrics["group_offset_syncs"] += len(commit)
        current |= commit
        for entry in status["partitions"]:
            entry["target_offset"] = current.get((entry["remote_topic"], entry["partition"]))
        behind = len(wanted) - len(commit)
        status["sync"], status["last_sync_at"] = "synced", time.time()
        status["sync_note"] = (f"{behind} partitions already at or past the translated offset on the target"
                               if behind else None)

    # -- status -------------------------------------------------------------------------

    def tasks(self) -> list[dict]:
        if self.state in {"UNASSIGNED", "STOPPED"} or self.off_reason or not self.groups:
            return []
        return [{"id": i, "state": self.state} for i in range(min(self.settings.tasks_max, len(self.groups)))]

    def status(self) -> dict:
        return super().status() | {
            "detail": self.off_reason,
            "metrics": dict(self.metrics),
            "groups": [self.group_status[g] for g in sorted(self.group_status)],
        }


def _new_group_status(group: str, sync_enabled: bool) -> dict:
    return {"group": group, "target_state": None, "target_members": None,
            "sync": "pending" if sync_enabled else "off",
            "sync_note": None if sync_enabled else "sync.group.offsets.enabled=false",
            "last_sync_at": None, "partitions": []}
