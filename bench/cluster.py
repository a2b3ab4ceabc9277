"""The two clusters of a benchmark (the project's own launcher), its topics and the dataset.

The source is `east`, the target `west`. Every run gives the source its own alias, so the remote
topic `<alias>.<topic>` (and MM2's internal topics, named after the source alias) are new on the
target while all candidates copy the very same source records.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.infra.stack import Devstack

SOURCE, TARGET = "east", "west"
HEADER_KEY = "bench-seq"


@dataclass
class BenchClusters:
    stack: Devstack

    @classmethod
    def start(cls, root: Path) -> BenchClusters:
        shutil.rmtree(root, ignore_errors=True)
        stack = Devstack(root=root)
        stack.up([SOURCE, TARGET])
        return cls(stack)

    @property
    def source(self) -> str:
        return self.stack.clusters[SOURCE].bootstrap_servers

    @property
    def target(self) -> str:
        return self.stack.clusters[TARGET].bootstrap_servers

    @property
    def redis_url(self) -> str:
        return self.stack.redis_url

    def broker_groups(self) -> list[int]:
        return [cluster.pid for cluster in self.stack.clusters.values()]

    def down(self) -> list[str]:
        return self.stack.down()


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    """A topic that keeps its records whatever their age."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1, config={"retention.ms": "-1"})]).values():
        future.result(30)


def delete_topics(bootstrap: str, prefix: str) -> list[str]:
    """Delete every topic whose name starts with `prefix` (a run's remote and internal topics)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = [t for t in admin.list_topics(timeout=10).topics if t.startswith(prefix)]
    if topics:
        for future in admin.delete_topics(topics, operation_timeout=30).values():
            try:
                future.result(60)
            except KafkaException as error:
                if error.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise
    return topics


def record_key(index: int, size: int) -> bytes:
    """A fixed-size key, distinct for the first 10**size records."""
    return str(index).rjust(size, "0")[-size:].encode()


def dataset_payload_bytes(records: int, key_bytes: int, record_bytes: int) -> int:
    """Key, value and the one header (name and 8-byte value) of every record."""
    return records * (key_bytes + record_bytes + len(HEADER_KEY) + 8)


def load_dataset(bootstrap: str, topic: str, records: int, key_bytes: int, record_bytes: int, partitions: int,
                 progress: Callable[[str], None] = print) -> float:
    """Produce the dataset (random values, round-robin over partitions); returns the seconds it took."""
    producer = Producer({
        "bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
        "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 1_048_576,
        "compression.type": "none", "acks": "all", "enable.idempotence": True,
    })
    values = [os.urandom(record_bytes) for _ in range(256)]  # incompressible, like most real payloads
    started = time.monotonic()
    step = max(records // 10, 1)
    for index in range(records):
        while True:
            try:
                producer.produce(topic, key=record_key(index, key_bytes), value=values[index & 255],
                                 partition=index % partitions, headers=[(HEADER_KEY, index.to_bytes(8, "big"))])
                break
            except BufferError:
                producer.poll(0.05)
        if (index + 1) % step == 0:
            producer.poll(0)
            progress(f"  loaded {index + 1:,}/{records:,} records ({(index + 1) * 100 // records}%)")
    if producer.flush(300):
        raise RuntimeError("the dataset producer could not deliver every record within 300 s")
    return time.monotonic() - started


class EndOffsets:
    """Sum of a topic's end offsets, 0 while the topic does not exist yet (one long-lived client)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-watermarks",
                                  "enable.auto.commit": False})
        self.partitions: list[int] = []

    def total(self) -> int:
        try:
            if not self.partitions:
                metadata = self.consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if metadata is None or metadata.error or not metadata.partitions:
                    return 0
                self.partitions = sorted(metadata.partitions)
            return sum(self.consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=5)[1]
                       for p in self.partitions)
        except KafkaException as error:
            code = error.args[0].code()
            if code in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.LEADER_NOT_AVAILABLE,
                        KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError._TIMED_OUT):
                self.partitions = []
                return 0
            raise

    def close(self) -> None:
        self.consumer.close()


def wait_for_total(bootstrap: str, topic: str, expected: int, timeout: float) -> int:
    watcher = EndOffsets(bootstrap, topic)
    try:
        deadline = time.monotonic() + timeout
        while (total := watcher.total()) < expected and time.monotonic() < deadline:
            time.sleep(0.2)
        return total
    finally:
        watcher.close()


def say(text: str) -> None:
    print(f"[bench] {text}", file=sys.stdout, flush=True)
