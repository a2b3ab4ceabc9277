"""The record writer's fallback, on real Spark and a real broker: a batch whose plan is not a scan of
Spark's Kafka source is written from its rows, with each record's partition, key, value, headers
and timestamp kept, and the same progress lines as the planned-range path."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from controlplane.infra import spark as spark_jars
from tests.integration import kafka_tools

ROWS = 200
SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
          "timestampType int, headers array<struct<key:string,value:binary>>")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("mirrorplane-writer-rows-test")
               .config("spark.jars", ",".join(str(jar) for jar in spark_jars.runtime_jars()))
               .config("spark.ui.enabled", "false")
               .getOrCreate())
    yield session
    session.sparkContext._jvm.io.mirrorplane.spark.KafkaMirrorWriter.reset()  # its cached producer
    session.stop()


def java_map(jvm, values: dict[str, str]):
    mapping = jvm.java.util.HashMap()
    for key, value in values.items():
        mapping.put(key, value)
    return mapping


def test_a_batch_that_is_not_a_kafka_scan_is_written_from_its_rows(spark, devstack, unique):
    west = devstack.clusters["west"].bootstrap_servers
    topic, remote = f"rows-{unique}", f"east.rows-{unique}"
    kafka_tools.create_topic(west, remote, 2)
    first_ms = 1_700_000_000_000
    rows = sorted([(f"k{i}".encode(), f"v{i}".encode(), topic, i % 2, 1000 + i // 2,
                    datetime.fromtimestamp((first_ms + i) / 1000, UTC), 0, [("trace", f"t{i}".encode())])
                   for i in range(ROWS)], key=lambda row: (row[3], row[4]))
    # A scan of local rows, not of Kafka: the rows are written. One Spark partition per source
    # partition, in offset order, as Spark's Kafka source would read them.
    batch = spark.createDataFrame(spark.sparkContext.parallelize(rows, 2), SCHEMA)
    jvm = spark.sparkContext._jvm

    lines = list(jvm.io.mirrorplane.spark.KafkaMirrorWriter.write(
        batch._jdf, java_map(jvm, {"bootstrap.servers": west, "acks": "all"}),
        java_map(jvm, {topic: remote}), 2, 100, java_map(jvm, {})))

    # P, topic, partition, first upstream, last upstream, last downstream, records, bytes
    progress = sorted(line.split("\t")[1:] for line in lines if line.startswith("P\t"))
    last = str(1000 + ROWS // 2 - 1)
    assert [(t, p, first, end, records) for t, p, first, end, _, records, _ in progress] == [
        (topic, "0", "1000", last, str(ROWS // 2)), (topic, "1", "1000", last, str(ROWS // 2))], lines
    written = kafka_tools.read_topic(west, remote)
    for partition in (0, 1):
        sent = [row for row in rows if row[3] == partition]
        received = [record for _, record in written[partition]]
        assert [(r.key, r.value, r.headers, r.timestamp) for r in received] == [
            (key, value, (("trace", headers[0][1]),), first_ms + i * 2 + partition)
            for i, (key, value, _, _, _, _, _, headers) in enumerate(sent)]
