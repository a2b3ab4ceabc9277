"""Test helpers that talk to real brokers with confluent-kafka."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from mirrorcore.waiting import wait_until


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes | None
    headers: tuple
    timestamp: int


def backfill(count: int, partitions: int, payload: bytes = b"x" * 200) -> dict[int, list[Record]]:
    """`count` records spread over `partitions`, keyed `<partition>-<n>`, with increasing timestamps."""
    return {p: [Record(f"{p}-{i}".encode(), payload, (), 1_700_000_000_000 + i)
                for i in range(count // partitions + (1 if p < count % partitions else 0))]
            for p in range(partitions)}


def duplicates_after_check(received: dict[int, list[Record]], expected: dict[int, list[Record]]) -> int:
    """Records copied more than once; asserts that every expected record arrived, in order, per partition."""
    duplicates = 0
    for partition, records in expected.items():
        keys = [record.key for record in received.get(partition, [])]
        unique_in_order = list(dict.fromkeys(keys))
        duplicates += len(keys) - len(unique_in_order)
        assert unique_in_order == [r.key for r in records], f"partition {partition} lost or reordered records"
    return duplicates


@dataclass(frozen=True)
class Arrived:
    """One partition's copy: the keys as received, duplicates included, and how many were duplicates."""

    keys: list[bytes | None]
    duplicates: int


def arrived_in_order(received: dict[int, list[tuple[int, Record]]],
                     expected: dict[int, list[bytes | None]]) -> dict[int, Arrived]:
    """Per partition of `expected` (its keys in order), what `read_topic` received; asserts that every expected
    record arrived, in order, duplicates aside."""
    arrived = {}
    for partition, keys_expected in expected.items():
        keys = [record.key for _, record in received.get(partition, [])]
        assert list(dict.fromkeys(keys)) == keys_expected, f"partition {partition}: records lost or reordered"
        arrived[partition] = Arrived(keys, len(keys) - len(keys_expected))
    return arrived


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str] | None = None) -> None:
    """A topic that keeps its records whatever their timestamps (unless `config` says otherwise)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive the futures
    futures = admin.create_topics([NewTopic(topic, partitions, 1, config={"retention.ms": "-1"} | (config or {}))])
    for future in futures.values():
        future.result(30)


def produce(bootstrap: str, topic: str, records: dict[int, list[Record]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True,
                         "queue.buffering.max.messages": 1_000_000})
    for partition, items in records.items():
        for record in items:
            while True:
                try:
                    producer.produce(topic, key=record.key, value=record.value, partition=partition,
                                     headers=list(record.headers), timestamp=record.timestamp)
                    break
                except BufferError:
                    producer.poll(0.1)
    assert producer.flush(60) == 0


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """End offset per partition; {} while the topic does not exist or has no leaders yet."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "mirrorplane-tests-watermarks"})
    try:
        metadata = consumer.list_topics(topic, timeout=10).topics.get(topic)
        if metadata is None or metadata.error:
            return {}
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in metadata.partitions}
    except KafkaException as error:
        if error.args[0].code() in (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                                    KafkaError.UNKNOWN_TOPIC_OR_PART):
            return {}
        raise
    finally:
        consumer.close()


def wait_for_topic(bootstrap: str, topic: str, timeout: float) -> dict[int, int]:
    """The end offsets of `topic` once it exists with leaders, looked for every 0.5 s."""
    found: dict[int, int] = {}

    def exists() -> bool:
        found.update(end_offsets(bootstrap, topic))
        return bool(found)

    if not wait_until(exists, timeout, interval=0.5):
        raise AssertionError(f"topic {topic} did not appear within {timeout}s")
    return found


def wait_for_first_record(bootstrap: str, topic: str, timeout: float, poll: float = 0.05) -> float:
    """The moment (time.monotonic) `topic` was first seen holding a record, watched every `poll` seconds."""
    if not wait_until(lambda: any(end_offsets(bootstrap, topic).values()), timeout, interval=poll):
        raise AssertionError(f"no record on {topic} within {timeout}s")
    return time.monotonic()


def consume_all(bootstrap: str, topic: str, expected: int, timeout: float) -> dict[int, list[Record]]:
    """Every record of `topic` from the beginning, per partition, until `expected` arrived or time ran out."""
    deadline = time.monotonic() + timeout
    partitions = wait_for_topic(bootstrap, topic, timeout)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"verify-{topic}-{time.time()}",
                         "enable.auto.commit": False, "fetch.max.bytes": 52428800})
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    received: dict[int, list[Record]] = defaultdict(list)
    count = 0
    try:
        while count < expected and time.monotonic() < deadline:
            for message in consumer.consume(10_000, timeout=0.5):
                if message.error():
                    continue
                received[message.partition()].append(
                    Record(message.key(), message.value(), tuple(message.headers() or ()), message.timestamp()[1]))
                count += 1
    finally:
        consumer.close()
    return dict(received)


def read_topic(bootstrap: str, topic: str, timeout: float = 30) -> dict[int, list[tuple[int, Record]]]:
    """Every record currently in `topic` (up to its end offsets), with its offset, per partition."""
    ends = wait_for_topic(bootstrap, topic, timeout)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}-{time.time()}",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
    records: dict[int, list[tuple[int, Record]]] = defaultdict(list)
    deadline = time.monotonic() + timeout
    try:
        while sum(len(r) for r in records.values()) < sum(ends.values()) and time.monotonic() < deadline:
            for message in consumer.consume(10_000, timeout=0.5):
                if message.error() or message.offset() >= ends[message.partition()]:
                    continue
                records[message.partition()].append((message.offset(), Record(
                    message.key(), message.value(), tuple(message.headers() or ()), message.timestamp()[1])))
    finally:
        consumer.close()
    return dict(records)


@contextmanager
def secured_clusters(tmp_path_factory, aliases: tuple[str, ...], **options) -> Iterator[list]:
    """Start one secured cluster per alias (see new_secured_cluster) and stop them all afterwards."""
    from devstack.kafka import new_secured_cluster

    clusters = [new_secured_cluster(alias, tmp_path_factory.mktemp(alias), **options) for alias in aliases]
    try:
        for cluster in clusters:
            cluster.start()
        yield clusters
    finally:
        for cluster in clusters:
            cluster.stop()


def consume_in_group(bootstrap: str, group: str, topics: list[str], limit: int | None,
                     idle_seconds: float = 8.0) -> list[tuple]:
    """(topic, partition, offset, value) of what one member of `group` reads, up to `limit`; commits it."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.subscribe(topics)
    seen: list[tuple] = []
    last = time.monotonic()
    try:
        while (limit is None or len(seen) < limit) and time.monotonic() - last < idle_seconds:
            wanted = 500 if limit is None else min(500, limit - len(seen))
            for message in consumer.consume(wanted, timeout=0.5):
                if message.error() is None:
                    seen.append((message.topic(), message.partition(), message.offset(), message.value()))
                    last = time.monotonic()
        positions: dict[tuple[str, int], int] = {}
        for topic, partition, offset, _ in seen:
            positions[(topic, partition)] = max(positions.get((topic, partition), -1), offset + 1)
        if positions:
            consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in positions.items()], asynchronous=False)
    finally:
        consumer.close()
    return seen
