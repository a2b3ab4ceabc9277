"""What a target cluster says about replication into it, as MM2's `MirrorClient`/`RemoteClusterUtils`.

- `translate_offsets`: a consumer group's offsets on this cluster, from the checkpoints an
  upstream flow left here (`<source>.checkpoints.internal`, partition 0 only, as MM2 reads it).
- `upstream_clusters`, `replication_hops`: from the names of the heartbeat topics alone.
- `read_topic`: every record of a small internal topic (e.g. Kafka Connect's offsets topic).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition

from mirrorcore.admin import (
    LEADER_MOVING_ERRORS,
    NO_ANSWER_ERRORS,
    ClusterError,
    describe_error,
    kafka_error,
    refused,
)
from mirrorcore.connection import ClusterConnection
from mirrorcore.formats import Checkpoint
from mirrorcore.policy import ReplicationPolicy

log = logging.getLogger(__name__)

_NO_TOPIC = frozenset({KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC})
_SLICE_SECONDS = 0.5
_RETRY_SECONDS = 0.1


class _TopicReader:
    """A group-less, assigned consumer of one partition that turns librdkafka's errors into ClusterErrors."""

    def __init__(self, connection: ClusterConnection, timeout: float) -> None:
        self.connection = connection
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.connect_error: KafkaError | None = None
        self.consumer = Consumer(connection.librdkafka_config() | {
            "group.id": f"mirrorplane-read-{uuid.uuid4().hex[:8]}",  # required, never joined or committed
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "auto.offset.reset": "earliest",
            "fetch.wait.max.ms": "100",
            "socket.connection.setup.timeout.ms": str(max(1000, int(timeout * 1000))),
            "error_cb": self._on_error,  # the reason comes back in the ClusterError ...
            "log_level": "2",  # ... rather than as a FAIL line on stderr per reconnection attempt
        })

    def _on_error(self, error: KafkaError) -> None:
        if error.code() != KafkaError._ALL_BROKERS_DOWN or self.connect_error is None:
            self.connect_error = error

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def fail(self, reason: str | BaseException) -> ClusterError:
        self.consumer.poll(0)  # serves error_cb: the real reason behind a timeout
        if isinstance(reason, BaseException):
            found = kafka_error(reason)
            if found is not None and found.code() in NO_ANSWER_ERRORS and self.connect_error is not None:
                reason = describe_error(KafkaException(self.connect_error))
            else:
                reason = describe_error(reason) or f"no answer within {self.timeout:g}s"
        return ClusterError(f"cluster {self.connection.alias!r} ({self.connection.bootstrap_servers}): {reason}")

    def topic_exists(self, topic: str) -> bool:
        return self.partitions(topic) is not None

    def partitions(self, topic: str) -> list[int] | None:
        """`topic`'s partitions (None: no such topic), asked in short slices so that a refused
        connection fails at once."""
        while True:
            try:
                metadata = self.consumer.list_topics(topic, timeout=min(_SLICE_SECONDS, self.remaining()) or 0.01)
            except KafkaException as error:
                self.consumer.poll(0)
                if refused(self.connect_error):
                    raise self.fail(describe_error(KafkaException(self.connect_error))) from None
                if self.remaining() <= 0:
                    raise self.fail(error) from None
                continue
            found = metadata.topics.get(topic)
            if found is None or (found.error is not None and found.error.code() in _NO_TOPIC):
                return None
            if found.error is not None:
                raise self.fail(f"reading {topic!r}: {found.error.name()}: {found.error.str()}")
            return sorted(found.partitions)

    def read(self, topic: str, partition: int = 0) -> list[Message]:
        """Every record of a partition from its beginning to its current end."""
        while True:
            try:
                low, high = self.consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                                timeout=max(self.remaining(), 0.01))
                break
            except KafkaException as error:
                # A topic created a moment ago may not have its leader yet (NOT_LEADER_FOR_PARTITION,
                # LEADER_NOT_AVAILABLE): asked again until the time is up.
                if not _retriable(error) or self.remaining() <= 0:
                    raise self.fail(error) from None
                time.sleep(_RETRY_SECONDS)
        if high <= low:
            return []
        self.consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        records: list[Message] = []
        last = -1
        while last < high - 1:
            if self.remaining() <= 0:
                raise self.fail(f"read {topic!r} up to offset {last + 1} of {high} within {self.timeout:g}s")
            for message in self.consumer.consume(10_000, timeout=min(_SLICE_SECONDS, self.remaining())):
                if message.partition() != partition:
                    continue  # fetched for a partition read before
                message_error, offset = message.error(), message.offset()
                if message_error is None:
                    assert offset is not None  # a record read from a partition has its offset
                    records.append(message)
                    last = offset
                elif message_error.code() == KafkaError._PARTITION_EOF:
                    last = high - 1  # nothing more to read (only control records were left)
                else:
                    raise self.fail(f"reading {topic!r}: {message_error.name()}: {message_error.str()}")
        return records

    def close(self) -> None:
        self.consumer.close()


def _retriable(error: KafkaException) -> bool:
    found = kafka_error(error)
    return found is not None and (found.code() in LEADER_MOVING_ERRORS or found.retriable())


def translate_offsets(connection: ClusterConnection, policy: ReplicationPolicy, source_alias: str, group: str,
                      timeout: float = 10.0) -> dict[tuple[str, int], int]:
    """`group`'s offsets on this (target) cluster per remote topic-partition, from the latest checkpoints
    of flow `source_alias` -> this cluster. No checkpoints topic: empty (as MM2). Unreachable: ClusterError.
    """
    topic = policy.checkpoints_topic(source_alias)
    reader = _TopicReader(connection, timeout)
    try:
        if not reader.topic_exists(topic):
            return {}
        records = reader.read(topic)
    finally:
        reader.close()
    return latest_checkpoints(((r.offset(), r.key(), r.value()) for r in records), group, topic)


def read_topic(connection: ClusterConnection, topic: str, timeout: float = 10.0
               ) -> list[tuple[bytes | None, bytes | None]] | None:
    """(key, value) of every record of `topic`, each partition in order; None when there is no such
    topic. Unreachable, or not read to its end within `timeout`: ClusterError."""
    reader = _TopicReader(connection, timeout)
    try:
        partitions = reader.partitions(topic)
        if partitions is None:
            return None
        return [(r.key(), r.value()) for partition in partitions for r in reader.read(topic, partition)]
    finally:
        reader.close()


def latest_checkpoints(records: Iterable[tuple[int | None, bytes | None, bytes | None]], group: str,
                       topic: str = "checkpoints") -> dict[tuple[str, int], int]:
    """The last downstream offset per topic-partition of `group`'s checkpoints among (offset, key, value)
    records in order; undecodable ones are logged and skipped."""
    offsets: dict[tuple[str, int], int] = {}
    for offset, key, value in records:
        try:
            checkpoint = Checkpoint.decode(key, value)
        except Exception as error:  # noqa: BLE001 - a foreign or damaged record is skipped, as MM2 logs it
            log.warning("skipping undecodable record at %s-0@%s: %s", topic, offset, error)
            continue
        if checkpoint.group == group:
            offsets[(checkpoint.topic, checkpoint.partition)] = checkpoint.downstream_offset
    return offsets


def _sources(topic: str, policy: ReplicationPolicy) -> list[str]:
    """The clusters a topic went through, nearest first (`B.A.heartbeats`: B, A); stops at a repeat."""
    sources: list[str] = []
    current: str | None = topic
    while current is not None:
        source = policy.topic_source(current)
        if source is None or source in sources:
            break
        sources.append(source)
        upstream = policy.upstream_topic(current)
        current = upstream if upstream != current else None
    return sources


def heartbeat_topics(topics: Iterable[str], policy: ReplicationPolicy) -> set[str]:
    return {topic for topic in topics if policy.is_heartbeats_topic(topic)}


def upstream_clusters(topics: Iterable[str], policy: ReplicationPolicy) -> set[str]:
    """Every cluster that replicates into this one, directly or not, by its heartbeat topics' names."""
    return {source for topic in heartbeat_topics(topics, policy) for source in _sources(topic, policy)}


def replication_hops(topics: Iterable[str], policy: ReplicationPolicy, source_alias: str) -> int:
    """The fewest hops from `source_alias` to this cluster over its heartbeat topics, or -1 if none leads here."""
    hops = [chain.index(source_alias) + 1 for chain in
            (_sources(topic, policy) for topic in heartbeat_topics(topics, policy)) if source_alias in chain]
    return min(hops, default=-1)
