"""The two clusters of a benchmark (the project's own launcher), its topics and the dataset.

The source is `east`, the target `west`. Every run gives the source its own alias, so the remote
topic `<alias>.<topic>` (and MM2's internal topics, named after the source alias) are new on the
target while all candidates copy the very same source records.
"""

from __future__ import annotations

import functools
import os
import shutil
import struct
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from devstack.stack import Devstack

SOURCE, TARGET = "east", "west"
HEADER_KEY = "bench-seq"


@dataclass
class BenchClusters:
    stack: Devstack

    @classmethod
    def start(cls, root: Path) -> BenchClusters:
        shutil.rmtree(root, ignore_errors=True)
        stack = Devstack(root=root, brokers_full_jit=True)  # brokers as in production, not tuned to start fast
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

    def log_dir(self, alias: str) -> Path:
        """Where the broker of `alias` keeps its partitions (`<topic>-<partition>/*.log`)."""
        return Path(self.stack.clusters[alias].home) / "data"

    def broker_jvm(self) -> str:
        """The JVM options the brokers run with (both clusters start alike)."""
        return " ".join(self.stack.clusters[SOURCE].jvm_options())

    def broker_groups(self) -> list[int]:
        return [cluster.pid for cluster in self.stack.clusters.values()]

    def services(self) -> dict[str, Callable[[], Iterable[int]]]:
        """The machine's shared services by name, each giving its process groups: both brokers and Redis
        (the control plane's broker and status channel; started by the harness, so nothing else uses it)."""
        clusters = self.stack.clusters
        pids = {"source_broker": clusters[SOURCE].pid, "target_broker": clusters[TARGET].pid}
        if self.stack.redis is not None and self.stack.redis.pid:
            pids["redis"] = self.stack.redis.pid
        return {name: functools.partial(tuple, [pid]) for name, pid in pids.items()}

    def down(self) -> list[str]:
        return self.stack.down()


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str] | None = None) -> None:
    """A topic that keeps its records whatever their age (and `config` besides)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    settings = {"retention.ms": "-1"} | (config or {})
    for future in admin.create_topics([NewTopic(topic, partitions, 1, config=settings)]).values():
        future.result(30)


def topic_config(bootstrap: str, topic: str, key: str, timeout: float = 30) -> str | None:
    """One configuration value of a topic (None when the topic or the key is missing, or when the
    broker does not answer within `timeout` seconds: a report is not worth losing a run over)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        futures = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)],
                                         request_timeout=timeout)
        entries = next(iter(futures.values())).result(timeout)
    except (KafkaException, TimeoutError):
        return None
    entry = entries.get(key)
    return None if entry is None else entry.value


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


def dataset_values(record_bytes: int, compression: str) -> list[bytes]:
    """The values the dataset cycles through. Uncompressed: random bytes (incompressible, like most
    real payloads), 256 of them. Compressed: half random, half zeros (about 2:1), and enough distinct
    values (up to 8,192 or 64 MB) that a producer batch holds no repeated value to compress away."""
    if compression == "none":
        return [os.urandom(record_bytes) for _ in range(256)]
    count = max(256, min(8192, 2**26 // record_bytes))
    half = record_bytes // 2
    return [os.urandom(half) + bytes(record_bytes - half) for _ in range(count)]


def load_dataset(bootstrap: str, topic: str, records: int, key_bytes: int, record_bytes: int, partitions: int,
                 progress: Callable[[str], None] = print, compression: str = "none") -> float:
    """Produce the dataset (round-robin over partitions, batches compressed with `compression`);
    returns the seconds it took."""
    producer = Producer({
        "bootstrap.servers": bootstrap, "linger.ms": 50, "batch.size": 1_000_000,
        "queue.buffering.max.messages": 2_000_000, "queue.buffering.max.kbytes": 1_048_576,
        "compression.type": compression, "acks": "all", "enable.idempotence": True,
        "message.max.bytes": 16_777_216,
    })
    values = dataset_values(record_bytes, compression)
    started = time.monotonic()
    step = max(records // 10, 1)
    for index in range(records):
        while True:
            try:
                producer.produce(topic, key=record_key(index, key_bytes), value=values[index % len(values)],
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


class Progress:
    """(seconds since the start, records on the target) every time the target's total is read."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int]] = []

    def add(self, seconds: float, total: int) -> None:
        if not self.samples or total != self.samples[-1][1]:
            self.samples.append((round(seconds, 3), total))


# Codec ids of a v2 record batch's attributes (bits 0-2), as Kafka's CompressionType numbers them.
CODEC_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
BATCH_HEADER = struct.Struct(">qiibIh")  # base offset, length, leader epoch, magic, crc, attributes
LOG_OVERHEAD = 12  # base offset and length precede every batch's `length` bytes


def batch_codec(header: bytes) -> tuple[int, str] | None:
    """(bytes of the whole batch, codec name) of the record batch starting with `header`, None when
    the header is incomplete or not a v2 batch (magic 2)."""
    if len(header) < BATCH_HEADER.size:
        return None
    _, length, _, magic, _, attributes = BATCH_HEADER.unpack_from(header)
    if magic != 2 or length <= 0:
        return None
    return LOG_OVERHEAD + length, CODEC_NAMES.get(attributes & 0x7, f"codec {attributes & 0x7}")


def segment_codecs(path: Path, max_batches: int = 2000) -> Counter:
    """How many of a log segment's first `max_batches` batches use each codec (headers only)."""
    codecs: Counter = Counter()
    with open(path, "rb") as segment:
        position = 0
        while sum(codecs.values()) < max_batches:
            segment.seek(position)
            found = batch_codec(segment.read(BATCH_HEADER.size))
            if found is None:
                break
            size, codec = found
            codecs[codec] += 1
            position += size
    return codecs


def topic_codecs(log_dir: Path, topic: str, max_batches: int = 2000) -> dict[str, int]:
    """Codecs of the batches a broker stored for a topic (the first segment file of each partition)."""
    total: Counter = Counter()
    for folder in sorted(log_dir.glob(f"{topic}-*")):
        if folder.name.rpartition("-")[0] != topic:
            continue
        for segment in sorted(folder.glob("*.log"))[:1]:
            total += segment_codecs(segment, max_batches)
    return dict(total)


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
