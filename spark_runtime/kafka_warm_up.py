"""A standby driver's first Kafka requests and Kafka queries, made before any mirror waits for them.

The first admin client of a JVM takes most of a second to answer its first request (measured 0.85 s,
against 0.05 s for the next): Kafka's protocol classes initialise, and its network, request and
response code runs for the first time. A mirror's query meets all of it between its start and its
first record: Spark's Kafka source lists offsets with an admin client, and its tasks start a consumer
and a producer. Then Spark generates and compiles the code of the query's row conversions (about 0.1 s
each, several per query), which it caches per JVM.

A standby does all of that against a cluster the control plane knows, read-only: the cluster's nodes
and topics, one partition's offsets, a few of its last records (the `heartbeats` topic when there is
one), a producer's metadata, then a micro-batch query of Spark's Kafka source and a real-time query of
the slot source (`source_reader`, as a mirror reads in either mode) over those records, whose rows are
dropped (`DiscardingWriter`, in the mirrors' real-time sink). Nothing is written or committed. A claim
stops it where it is (`claimed`).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from pathlib import Path
from typing import Any

from mirrorcore.connection import ClusterConnection
from mirrorcore.waiting import wait_until
from spark_runtime import real_time, source_reader
from spark_runtime.spark_query import describe_error, java_map

log = logging.getLogger(__name__)

TIMEOUT_MS = 5_000
QUERY_SECONDS = 10.0  # each warm-up query runs until it has read its records, or this long
RECORDS = 16
PREFERRED_TOPIC = "heartbeats"
_BYTES = "org.apache.kafka.common.serialization.ByteArray"


class KafkaWarmUp:
    def __init__(self, spark: Any, connection: ClusterConnection, folder: Path, claimed: threading.Event) -> None:
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self.connection = connection
        self.folder = folder
        self.claimed = claimed
        self.base = connection.java_properties() | {"client.id": "mirrorplane-standby"}
        self.done: list[str] = []
        self.topic: str | None = None
        self.end = 0  # the end offset of the topic's partition 0
        self.partitions = 1  # the topic's

    def run(self) -> str:
        """Run the warm-up; returns what was done, for the log. Errors end it early and are returned,
        never raised: the mirror's own clients report theirs."""
        try:
            self._admin_requests()
            if self.topic is not None:
                self._fetch()
                self._producer_metadata()
                self._queries()
        except Exception as error:  # noqa: BLE001 - py4j raises the JVM's errors under several types
            java = getattr(error, "java_exception", None)  # the Java exception behind py4j's error
            cause = describe_error(str(java.toString()) if java is not None else error)
            self.done.append("stopped: " + cause.replace("\n", "; "))
        return f"{self.connection.alias}: " + ", ".join(self.done)

    # -- clients -----------------------------------------------------------------------------

    def _admin_requests(self) -> None:
        """Nodes, topics and one partition's offsets, as Spark's Kafka source asks."""
        jvm, unit = self.jvm, self.jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        admin = jvm.org.apache.kafka.clients.admin.Admin.create(java_map(self.jvm, self.base))
        try:
            nodes = admin.describeCluster().nodes().get(TIMEOUT_MS, unit)
            self.done.append(f"{nodes.size()} nodes")
            names = sorted(str(name) for name in admin.listTopics().names().get(TIMEOUT_MS, unit))
            topics = [name for name in names if not name.startswith("__")]
            if not topics:
                return
            topic = PREFERRED_TOPIC if PREFERRED_TOPIC in topics else topics[0]
            described = admin.describeTopics(jvm.java.util.List.of(topic)).allTopicNames().get(TIMEOUT_MS, unit)
            self.partitions = int(described.get(topic).partitions().size())
            partition = jvm.org.apache.kafka.common.TopicPartition(topic, 0)
            latest = jvm.org.apache.kafka.clients.admin.OffsetSpec.latest()
            offsets = admin.listOffsets(jvm.java.util.Map.of(partition, latest)).all().get(TIMEOUT_MS, unit)
            self.topic, self.end = topic, int(offsets.get(partition).offset())
            self.done.append(f"offsets of {topic}")
        finally:
            admin.close(jvm.java.time.Duration.ZERO)

    def _first_offset(self) -> int:
        return max(0, self.end - RECORDS)

    def _fetch(self) -> None:
        """The partition's last records, read without a group (nothing committed)."""
        jvm = self.jvm
        consumer = jvm.org.apache.kafka.clients.consumer.KafkaConsumer(java_map(self.jvm, self.base | {
            "key.deserializer": f"{_BYTES}Deserializer", "value.deserializer": f"{_BYTES}Deserializer",
            "enable.auto.commit": "false", "max.poll.records": str(RECORDS),
        }))
        try:
            partition = jvm.org.apache.kafka.common.TopicPartition(self.topic, 0)
            consumer.assign(jvm.java.util.List.of(partition))
            consumer.seek(partition, self._first_offset())
            records = consumer.poll(jvm.java.time.Duration.ofMillis(TIMEOUT_MS // 5))
            self.done.append(f"{records.count()} records fetched")
        finally:
            consumer.close(jvm.java.time.Duration.ZERO)

    def _producer_metadata(self) -> None:
        """A producer's connection and its metadata of the topic; nothing is sent."""
        producer = self.jvm.org.apache.kafka.clients.producer.KafkaProducer(java_map(self.jvm, self.base | {
            "key.serializer": f"{_BYTES}Serializer", "value.serializer": f"{_BYTES}Serializer",
            "max.block.ms": str(TIMEOUT_MS),
        }))
        try:
            producer.partitionsFor(self.topic)
            self.done.append("producer metadata")
        finally:
            producer.close(self.jvm.java.time.Duration.ZERO)

    # -- queries -----------------------------------------------------------------------------

    def _queries(self) -> None:
        """A micro-batch query and a real-time one over the partition's last records, rows dropped.
        Nothing these throwaway queries log reaches the log a mirror will inherit: stopping a real-time
        query aborts its tasks, which Spark logs as errors."""
        context = self.spark.sparkContext
        context.setLogLevel("OFF")
        try:
            if not self.claimed.is_set():
                self._micro_batch_query()
            if not self.claimed.is_set():
                self._real_time_query()
        finally:
            self._until_no_job_runs()
            context.setLogLevel("WARN")

    def _until_no_job_runs(self, seconds: float = 5.0) -> None:
        """Until the stopped queries' jobs are gone (their tasks log as they end)."""
        tracker = self.spark.sparkContext.statusTracker()
        wait_until(lambda: not tracker.getActiveJobsIds(), seconds, interval=0.05)

    def _starting(self) -> str:
        """Partition 0 from its last records, the others from their ends (-1: the source's "latest");
        both sources read every partition of a topic they subscribe to."""
        return json.dumps({self.topic: {str(p): self._first_offset() if p == 0 else -1
                                        for p in range(self.partitions)}})

    def _chosen_topic(self) -> str:
        assert self.topic is not None  # the queries run only once the admin requests chose a topic
        return self.topic

    def _kafka_options(self) -> dict[str, str]:
        return source_reader.kafka_options({k: v for k, v in self.base.items() if k != "client.id"})

    def _micro_batch_query(self) -> None:
        checkpoint = self.folder / "warm-up-kafka-micro-batch"
        reader = source_reader.reader(self.spark, [self._chosen_topic()], self._starting(), self._kafka_options(),
                                      max_records=RECORDS)
        query = (reader.load().writeStream.format("noop").option("checkpointLocation", checkpoint.as_uri())
                 .start())
        try:
            self._until(lambda: (query.lastProgress or {}).get("batchId", -1) >= 0)
            self.done.append("a micro-batch query")
        finally:
            query.stop()
            shutil.rmtree(checkpoint, ignore_errors=True)

    def _real_time_query(self) -> None:
        jvm = self.jvm
        checkpoint = self.folder / "warm-up-kafka-real-time"
        writer = jvm.io.mirrorplane.spark.DiscardingWriter()
        trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime("5 seconds")
        before = jvm.io.mirrorplane.spark.DiscardingWriter.rows()
        reader = source_reader.reader(self.spark, [self._chosen_topic()], self._starting(), self._kafka_options(),
                                      slots=1)
        query = (real_time.write_stream(reader.load(), "warm-up", writer).trigger(trigger)
                 .option("checkpointLocation", checkpoint.as_uri()).start())
        try:
            if self.end > 0:
                self._until(lambda: jvm.io.mirrorplane.spark.DiscardingWriter.rows() > before)
            else:  # no record to read: its tasks start, which is most of it
                self._until(lambda: False, seconds=3.0)
            self.done.append("a real-time query of the slot source")
        finally:
            query.stop()
            shutil.rmtree(checkpoint, ignore_errors=True)

    def _until(self, condition: Any, seconds: float = QUERY_SECONDS) -> None:
        """Until `condition` holds, for at most `seconds`; a claim ends it at once."""
        wait_until(condition, seconds, interval=0.05, stop=self.claimed)

