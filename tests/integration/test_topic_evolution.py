"""Remote topics follow their source: new topics, added partitions, configuration changes;
`topic.creation.enable=false` never creates a topic and says why records are held back."""

from __future__ import annotations

import time

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewPartitions, ResourceType

from controlplane.infra import processes
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

REFRESH = 5


def records(count: int, prefix: str) -> list[Record]:
    return [Record(f"{prefix}-{i}".encode(), b"payload", (), 1_700_000_000_000 + i) for i in range(count)]


def topic_config(bootstrap: str, topic: str) -> dict[str, str]:
    """The properties set on the topic itself (not broker defaults)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)])
    entries = next(iter(future.values())).result(30)
    return {name: entry.value for name, entry in entries.items()
            if getattr(entry.source, "value", entry.source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def alter_source_config(bootstrap: str, topic: str, properties: dict[str, str]) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in properties.items()])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def test_new_topics_partitions_and_config_changes_reach_the_target(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    first, second = f"evolve-{unique}-a", f"evolve-{unique}-b"
    kafka_tools.create_topic(east, first, 2, {"retention.bytes": "1000000000"})
    kafka_tools.produce(east, first, {0: records(50, "a0")})
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {
        "name": f"evolve-{unique}", "source": "east", "target": "west", "topics": f"evolve-{unique}-.*",
        "connectors": {"source": {"config": {"refresh.topics.interval.seconds": str(REFRESH),
                                             "sync.topic.configs.interval.seconds": str(REFRESH)}}},
    }, format="json").status_code == 201
    wait_for_status(api, f"evolve-{unique}", lambda s: (s["progress"] or {}).get("records", 0) >= 50, 90)
    assert topic_config(west, f"east.{first}")["retention.bytes"] == "1000000000", "created with the source's configs"

    # a topic created after the mirror started
    started = time.monotonic()
    kafka_tools.create_topic(east, second, 3)
    kafka_tools.produce(east, second, {p: records(20, f"b{p}") for p in range(3)})
    # Real-time mode takes the new topic in by restarting its query, whose long-running tasks take a few
    # seconds to start under load.
    received = kafka_tools.consume_all(west, f"east.{second}", 60, timeout=REFRESH + 40)
    figures(f"new source topic replicated {time.monotonic() - started:.1f}s after creation (refresh {REFRESH}s)")
    assert sorted(received) == [0, 1, 2] and sum(len(r) for r in received.values()) == 60

    # a partition added to a mirrored topic
    started = time.monotonic()
    admin = AdminClient({"bootstrap.servers": east})
    for future in admin.create_partitions([NewPartitions(first, 3)]).values():
        future.result(30)
    kafka_tools.produce(east, first, {2: records(30, "a2")})
    assert processes.wait_until(
        lambda: kafka_tools.end_offsets(west, f"east.{first}").get(2) == 30, REFRESH + 40)
    figures(f"added partition replicated {time.monotonic() - started:.1f}s after it was added")

    # configuration changed on the source after mirroring began; excluded properties stay put
    started = time.monotonic()
    alter_source_config(east, first, {"retention.bytes": "2000000000", "min.insync.replicas": "1",
                                      "cleanup.policy": "compact,delete"})
    assert processes.wait_until(
        lambda: topic_config(west, f"east.{first}")["retention.bytes"] == "2000000000", REFRESH + 10)
    figures(f"topic config change synced {time.monotonic() - started:.1f}s after it was made")
    target = topic_config(west, f"east.{first}")
    assert target["cleanup.policy"] == "compact,delete"
    assert "min.insync.replicas" not in target, "excluded by MM2's default config.properties.exclude"


def test_topic_creation_disabled_holds_records_back_until_the_topic_exists(api, devstack, control_plane, unique):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name = f"held-{unique}", f"held-{unique}"
    kafka_tools.create_topic(east, topic, 2)
    kafka_tools.produce(east, topic, {0: records(10, "h")})
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        "connectors": {"source": {"config": {"topic.creation.enable": "false",
                                             "refresh.topics.interval.seconds": str(REFRESH)}}},
    }, format="json").status_code == 201
    status = wait_for_status(api, name, lambda s: (s["progress"] or {}).get("held_back_topics")
                             and s["connectors"]["source"]["state"] == "RUNNING", 90)
    reason = status["progress"]["held_back_topics"][topic]
    assert "topic.creation.enable=false" in reason and f"east.{topic}" in reason
    assert status["connectors"]["source"]["state"] == "RUNNING"
    time.sleep(REFRESH + 1)
    assert kafka_tools.end_offsets(west, f"east.{topic}") == {}, "never auto-created"

    kafka_tools.create_topic(west, f"east.{topic}", 2)
    received = kafka_tools.consume_all(west, f"east.{topic}", 10, timeout=REFRESH + 15)
    assert sum(len(r) for r in received.values()) == 10
    wait_for_status(api, name, lambda s: not s["progress"]["held_back_topics"], 15)
