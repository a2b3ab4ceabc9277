"""The MirrorMaker 2 properties file the benchmark generates (dedicated mode, one flow)."""

from __future__ import annotations

import javaproperties

from bench.candidates.mm2 import INTERNAL_REPLICATION_FACTORS, mm2_properties
from mirrorcore.registry import (
    MICRO_BATCH_CONSUMER_DEFAULTS,
    MICRO_BATCH_PRODUCER_DEFAULTS,
    PRODUCER_DEFAULTS,
    REAL_TIME_CONSUMER_DEFAULTS,
)


def _parse(text: str) -> dict[str, str]:
    return javaproperties.loads(text)


def test_one_enabled_flow_with_topics_and_tasks():
    props = _parse(mm2_properties("mm1t2", "127.0.0.1:9001", "west", "127.0.0.1:9002", "bench", 4))
    assert props["clusters"] == "mm1t2, west"
    assert props["mm1t2.bootstrap.servers"] == "127.0.0.1:9001"
    assert props["west.bootstrap.servers"] == "127.0.0.1:9002"
    assert props["mm1t2->west.enabled"] == "true"
    assert props["mm1t2->west.topics"] == "bench"
    assert props["tasks.max"] == props["mm1t2->west.tasks.max"] == "4"
    assert props["sync.topic.acls.enabled"] == "false"
    assert "west->mm1t2.enabled" not in props


def test_replication_factor_one_for_every_internal_topic():
    props = _parse(mm2_properties("a", "h:1", "b", "h:2", "t", 1))
    for name in INTERNAL_REPLICATION_FACTORS:
        assert props[name] == "1", name
    assert {"offset.storage.replication.factor", "status.storage.replication.factor",
            "config.storage.replication.factor", "offset-syncs.topic.replication.factor"} <= set(props)


def test_mirrorplanes_producer_settings_go_to_the_target_clusters_producer():
    props = _parse(mm2_properties("a", "h:1", "west", "h:2", "t", 2, PRODUCER_DEFAULTS))
    assert props["west.producer.acks"] == "all"
    assert props["west.producer.enable.idempotence"] == "true"
    assert props["west.producer.batch.size"] == PRODUCER_DEFAULTS["batch.size"]
    assert props["west.producer.linger.ms"] == PRODUCER_DEFAULTS["linger.ms"]
    assert props["west.producer.compression.type"] == "none"
    assert not any(key.startswith("a.producer.") for key in props)


def test_mirrorplanes_consumer_settings_go_to_the_source_clusters_consumer_larger_polls_for_a_backlog_only():
    from bench.candidates.mm2 import consumer_settings

    props = _parse(mm2_properties("a", "h:1", "west", "h:2", "t", 2, PRODUCER_DEFAULTS, consumer_settings()))
    assert props["a.consumer.max.poll.records"] == MICRO_BATCH_CONSUMER_DEFAULTS["max.poll.records"]
    assert not any(key.startswith("west.consumer.") for key in props)
    assert consumer_settings(steady=True) == REAL_TIME_CONSUMER_DEFAULTS
    assert "max.poll.records" not in consumer_settings(steady=True)


# The worker's log as MM2 writes it with the benchmark's layout ("[%d] %p %m (%c)%n"): each client's
# configuration is one multi-line message, one tab-indented `key = value` a line.
LOG = """[2030-01-01 10:00:00,001] INFO Kafka MirrorMaker initializing ... (org.apache.kafka.connect.mirror.MirrorMaker)
[2030-01-01 10:00:01,002] INFO ProducerConfig values:
\tacks = -1
\tbatch.size = 16384
\tclient.id = producer-1
\tcompression.type = none
 (org.apache.kafka.common.config.AbstractConfig)
[2030-01-01 10:00:02,003] INFO ConsumerConfig values:
\tclient.id = consumer-mm1t2-1
\tfetch.min.bytes = 1
 (org.apache.kafka.common.config.AbstractConfig)
[2030-01-01 10:00:03,004] INFO ProducerConfig values:
\tacks = -1
\tbatch.size = 262144
\tclient.id = connector-producer-MirrorSourceConnector-0
\tcompression.type = lz4
\tenable.idempotence = true
\tlinger.ms = 5
\tssl.key.password = null
\tvalue.serializer = class org.apache.kafka.common.serialization.ByteArraySerializer
 (org.apache.kafka.common.config.AbstractConfig)
[2030-01-01 10:00:03,005] INFO ProducerConfig values:
\tacks = -1
\tbatch.size = 262144
\tclient.id = connector-producer-MirrorSourceConnector-1
\tlinger.ms = 5
 (org.apache.kafka.common.config.AbstractConfig)
[2030-01-01 10:00:03,006] INFO ConsumerConfig values:
\tclient.id = a->west|MirrorSourceConnector-0|replication-consumer
\tmax.poll.records = 10000
\tfetch.min.bytes = 1
 (org.apache.kafka.common.config.AbstractConfig)
[2030-01-01 10:00:04,006] WARN something else (org.apache.kafka.connect.runtime.Worker)
"""


def test_producer_configs_are_read_from_the_log():
    from bench.candidates.mm2 import producer_configs

    configs = producer_configs(LOG)
    assert [c["client.id"] for c in configs] == ["producer-1", "connector-producer-MirrorSourceConnector-0",
                                                 "connector-producer-MirrorSourceConnector-1"]
    task = configs[1]
    assert task["batch.size"] == "262144" and task["compression.type"] == "lz4" and task["acks"] == "-1"
    assert task["ssl.key.password"] == "null"
    assert task["value.serializer"] == "class org.apache.kafka.common.serialization.ByteArraySerializer"
    assert "fetch.min.bytes" not in task, "the consumer's dump is not a producer's"


def test_task_producers_give_the_effective_task_count():
    from bench.candidates.mm2 import producer_configs, task_producers

    tasks = task_producers(producer_configs(LOG))
    assert sorted(tasks) == [0, 1]
    assert tasks[0]["linger.ms"] == "5"
    assert task_producers(producer_configs("no dumps here")) == {}


def test_task_consumers_give_the_consumer_settings_in_effect():
    from bench.candidates.mm2 import consumer_configs, task_consumers

    configs = consumer_configs(LOG)
    assert [c["client.id"] for c in configs] == ["consumer-mm1t2-1",
                                                 "a->west|MirrorSourceConnector-0|replication-consumer"]
    tasks = task_consumers(configs)
    assert sorted(tasks) == [0]
    assert tasks[0]["max.poll.records"] == "10000"


def test_the_runs_compression_goes_to_mm2s_producer():
    from bench.candidates.mm2 import producer_settings

    settings = producer_settings("zstd")
    assert settings["compression.type"] == "zstd"
    assert settings["acks"] == PRODUCER_DEFAULTS["acks"]
    props = _parse(mm2_properties("a", "h:1", "west", "h:2", "t", 2, settings))
    assert props["west.producer.compression.type"] == "zstd"


def test_the_benchmarks_producer_settings_go_over_the_defaults_and_the_runs_compression_over_them():
    from bench.candidates.mm2 import producer_settings

    settings = producer_settings("lz4", (("linger.ms", "0"), ("compression.type", "gzip")))
    assert settings["linger.ms"] == "0" and settings["compression.type"] == "lz4"
    assert settings["batch.size"] == MICRO_BATCH_PRODUCER_DEFAULTS["batch.size"]


def test_mm2_batches_as_mirrorplane_does_a_backlog_in_a_backfill_and_steady_traffic_in_a_latency_run():
    from bench.candidates.mm2 import producer_settings

    backlog, steady = producer_settings("none"), producer_settings("none", steady=True)
    assert backlog == PRODUCER_DEFAULTS | MICRO_BATCH_PRODUCER_DEFAULTS
    assert steady == PRODUCER_DEFAULTS
    assert int(backlog["linger.ms"]) > int(steady["linger.ms"])
