"""The MirrorMaker 2 properties file the benchmark generates (dedicated mode, one flow)."""

from __future__ import annotations

from bench.candidates.mm2 import INTERNAL_REPLICATION_FACTORS, mm2_properties
from spark_runtime.connectors.source import PRODUCER_DEFAULTS


def _parse(text: str) -> dict[str, str]:
    pairs = (line.split(" = ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    return dict(pairs)


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
