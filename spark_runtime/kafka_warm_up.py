"""A standby driver's first requests with Java Kafka clients, made before any mirror waits for them.

The first admin client of a JVM takes most of a second to answer its first request (measured 0.85 s,
against 0.05 s for the next): Kafka's protocol classes initialise, and its network, request and
response code runs for the first time. A mirror's query meets all of it between its start and its
first record: Spark's Kafka source lists offsets with an admin client, and its tasks start a consumer
and a producer. A standby runs the same clients against a cluster the control plane knows, read-only:
the cluster's nodes and topics, one partition's offsets, a few records of it (the `heartbeats` topic
when there is one), and a producer's metadata. The records are dropped; nothing is written or committed.
"""

from __future__ import annotations

import logging
from typing import Any

from mirrorcore.connection import ClusterConnection

log = logging.getLogger(__name__)

TIMEOUT_MS = 5_000
RECORDS = 16
PREFERRED_TOPIC = "heartbeats"
_BYTES = "org.apache.kafka.common.serialization.ByteArray"


def warm_clients(jvm: Any, connection: ClusterConnection) -> str:
    """Run the clients' first requests against `connection`; returns what was done, for the log.
    Errors end the warm-up early, and are returned, never raised: the mirror's clients report their own."""
    base = connection.java_properties() | {"client.id": "mirrorplane-standby"}
    done: list[str] = []
    try:
        topic = _admin_requests(jvm, base, done)
        if topic is not None:
            _fetch(jvm, base, topic, done)
            _producer_metadata(jvm, base, topic, done)
    except Exception as error:  # noqa: BLE001 - py4j raises the JVM's errors under several types
        done.append(f"stopped: {_reason(error)}")
    return f"{connection.alias}: " + ", ".join(done)


def _reason(error: Exception) -> str:
    """The Java exception behind a py4j error, on one line."""
    java = getattr(error, "java_exception", None)
    text = str(java.toString()) if java is not None else str(error)
    return (text.splitlines() or [""])[0][:300]


def _properties(jvm: Any, values: dict[str, str]) -> Any:
    properties = jvm.java.util.Properties()
    for key, value in values.items():
        properties.setProperty(key, value)
    return properties


def _admin_requests(jvm: Any, base: dict[str, str], done: list[str]) -> str | None:
    """Nodes, topics and one partition's offsets, as Spark's Kafka source asks; the topic read next."""
    unit = jvm.java.util.concurrent.TimeUnit.MILLISECONDS
    admin = jvm.org.apache.kafka.clients.admin.Admin.create(_properties(jvm, base))
    try:
        nodes = admin.describeCluster().nodes().get(TIMEOUT_MS, unit)
        done.append(f"{nodes.size()} nodes")
        names = sorted(str(name) for name in admin.listTopics().names().get(TIMEOUT_MS, unit))
        topics = [name for name in names if not name.startswith("__")]
        if not topics:
            return None
        topic = PREFERRED_TOPIC if PREFERRED_TOPIC in topics else topics[0]
        admin.describeTopics(jvm.java.util.List.of(topic)).allTopicNames().get(TIMEOUT_MS, unit)
        partition = jvm.org.apache.kafka.common.TopicPartition(topic, 0)
        latest = jvm.org.apache.kafka.clients.admin.OffsetSpec.latest()
        admin.listOffsets(jvm.java.util.Map.of(partition, latest)).all().get(TIMEOUT_MS, unit)
        done.append(f"offsets of {topic}")
        return topic
    finally:
        admin.close(jvm.java.time.Duration.ZERO)


def _fetch(jvm: Any, base: dict[str, str], topic: str, done: list[str]) -> None:
    """A few records of the topic's first partition, read without a group (nothing committed)."""
    consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(_properties(jvm, base | {
        "key.deserializer": f"{_BYTES}Deserializer", "value.deserializer": f"{_BYTES}Deserializer",
        "enable.auto.commit": "false", "max.poll.records": str(RECORDS),
    }))
    try:
        partition = jvm.org.apache.kafka.common.TopicPartition(topic, 0)
        consumer.assign(jvm.java.util.List.of(partition))
        consumer.seekToBeginning(jvm.java.util.List.of(partition))
        records = consumer.poll(jvm.java.time.Duration.ofMillis(TIMEOUT_MS // 5))
        done.append(f"{records.count()} records fetched")
    finally:
        consumer.close(jvm.java.time.Duration.ZERO)


def _producer_metadata(jvm: Any, base: dict[str, str], topic: str, done: list[str]) -> None:
    """A producer's connection and its metadata of the topic; nothing is sent."""
    producer = jvm.org.apache.kafka.clients.producer.KafkaProducer(_properties(jvm, base | {
        "key.serializer": f"{_BYTES}Serializer", "value.serializer": f"{_BYTES}Serializer",
        "max.block.ms": str(TIMEOUT_MS),
    }))
    try:
        producer.partitionsFor(topic)
        done.append("producer metadata")
    finally:
        producer.close(jvm.java.time.Duration.ZERO)
