"""The scale check: one mirror of many partitions (default 100 topics x 10), from creation until every
remote partition holds its source partition's records, with the application's memory.

Each source partition gets a few records before the mirror is created, so "replicating" is observable
per partition: a remote partition counts from the moment its end offset reaches its source's.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

from bench.candidates.base import Candidate, Environment, RunSpec
from bench.cluster import delete_topics
from bench.measure import ResourceSampler
from bench.stats import percentile

TOPIC_PREFIX = "scale-"
POLL_SECONDS = 0.5
TIMEOUT_SECONDS = 300.0


def topic_names(topics: int) -> list[str]:
    return [f"{TOPIC_PREFIX}{index:03d}" for index in range(topics)]


def create_topics(bootstrap: str, names: list[str], partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1) for name in names], operation_timeout=60)
    for future in futures.values():
        future.result(120)


def fill(bootstrap: str, names: list[str], partitions: int, records: int) -> None:
    """`records` small records into every partition of every topic."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
    for name in names:
        for partition in range(partitions):
            for index in range(records):
                producer.produce(name, key=f"{partition}-{index}".encode(), value=b"x" * 100, partition=partition)
        producer.poll(0)
    if producer.flush(120):
        raise RuntimeError("the scale topics could not be filled within 120 s")


class PartitionArrivals:
    """When each remote partition first held `expected` records, polled in one request per round."""

    def __init__(self, bootstrap: str, remote_names: list[str], partitions: int, expected: int) -> None:
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.partitions = [TopicPartition(name, p) for name in remote_names for p in range(partitions)]
        self.expected = expected
        self.arrived: dict[tuple[str, int], float] = {}

    def poll(self, elapsed: float) -> int:
        """Record the partitions complete now; returns how many are complete in all."""
        waiting = [tp for tp in self.partitions if (tp.topic, tp.partition) not in self.arrived]
        existing = set(self.admin.list_topics(timeout=10).topics)
        waiting = [tp for tp in waiting if tp.topic in existing]
        if waiting:
            futures = self.admin.list_offsets({tp: OffsetSpec.latest() for tp in waiting}, request_timeout=10)
            for tp, future in futures.items():
                try:
                    offset = future.result().offset
                except KafkaException:  # a partition without a leader yet is simply not complete
                    offset = -1
                if offset >= self.expected:
                    self.arrived[(tp.topic, tp.partition)] = elapsed
        return len(self.arrived)


def summary(arrivals: list[float], total: int) -> dict:
    if not arrivals:
        return {"partitions_complete": 0, "first_partition_seconds": None, "p50_partition_seconds": None,
                "all_partitions_seconds": None}
    return {
        "partitions_complete": len(arrivals),
        "first_partition_seconds": round(min(arrivals), 1),
        "p50_partition_seconds": round(percentile(arrivals, 50), 1),
        "all_partitions_seconds": round(max(arrivals), 1) if len(arrivals) == total else None,
    }


def measure_scale(candidate: Candidate, env: Environment, topics: int, partitions: int, records: int,
                  tasks: int, say: Callable[[str], None] = print) -> dict:
    names = topic_names(topics)
    total = topics * partitions
    spec = RunSpec(label="scale-mirrorplane", alias="mpscale", topic=f"{TOPIC_PREFIX}.*",
                   partitions=partitions, tasks=tasks)
    result: dict = {"candidate": candidate.name, "topics": topics, "partitions_per_topic": partitions,
                    "partitions": total, "records_per_partition": records, "tasks": tasks, "error": None}
    say(f"scale: creating {topics} topics x {partitions} partitions with {records} records each")
    create_topics(env.source, names, partitions)
    fill(env.source, names, partitions, records)
    candidate.prepare(spec)
    arrivals = PartitionArrivals(env.target, [f"{spec.alias}.{name}" for name in names], partitions, records)
    sampler = ResourceSampler({"candidate": candidate.process_groups})
    sampler.start()
    started = time.monotonic()
    try:
        candidate.start(spec)
        next_report = 10.0
        while (complete := arrivals.poll(time.monotonic() - started)) < total:
            elapsed = time.monotonic() - started
            if (why := candidate.failure()) or elapsed > TIMEOUT_SECONDS:
                result["error"] = why or f"{complete} of {total} partitions complete after {TIMEOUT_SECONDS:.0f} s"
                break
            if elapsed >= next_report:
                say(f"  {complete:,}/{total:,} partitions complete after {elapsed:.0f} s")
                next_report += 10.0
            time.sleep(POLL_SECONDS)
        usage = sampler.snapshot()["candidate"]
        result |= summary(list(arrivals.arrived.values()), total)
        result |= {"peak_rss_mb": usage["peak_rss_mb"], "cpu_seconds": usage["cpu_seconds"]}
        result["details"] = candidate.details()
    finally:
        sampler.stop()
        candidate.stop()
    delete_topics(env.target, f"{spec.alias}.")
    delete_topics(env.source, TOPIC_PREFIX)
    return result
