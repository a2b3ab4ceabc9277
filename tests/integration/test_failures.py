"""Failures put the connector in FAILED with the cause; auto-restart applies."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient

from controlplane.infra.processes import free_port
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)


def test_unreachable_target_fails_with_the_reason_and_is_restarted(api, devstack, control_plane, unique, figures):
    create_clusters(api, devstack)
    api.post("/api/v1/clusters/", {"alias": "void", "bootstrap_servers": f"127.0.0.1:{free_port()}"}, format="json")
    name = f"void-{unique}"
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "void", "topics": "nothing",
                                         "connectors": {"heartbeat": {"state": "stopped"}}},
                    format="json").status_code == 201
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "FAILED", 120)
    error = status["connectors"]["source"]["error"]
    assert "void" in error and "transport" in error.lower(), error
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["restarts"] >= 1, 120)
    figures(f"unreachable target: FAILED with {error.splitlines()[0][:120]!r}; auto-restarted")
    assert status["application"]["restarts"] == 0, "a failed connector is restarted inside its application"


def test_a_mirror_into_another_alias_of_its_source_fails_every_connector_and_copies_nothing(
        api, devstack, control_plane, unique, figures):
    """`localhost` and `127.0.0.1` share no address, so the control plane accepts the pair; the application
    finds one cluster id on both sides before any connector writes."""
    east = devstack.clusters["east"].bootstrap_servers
    port = east.rsplit(":", 1)[1]
    topic, name, alias = f"self-{unique}", f"self-{unique}", f"east-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    kafka_tools.produce(east, topic, {0: [Record(b"k", b"v", (), 1_700_000_000_000)]})
    create_clusters(api, devstack)
    assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"localhost:{port}"},
                    format="json").status_code == 201
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": alias, "topics": topic},
                    format="json").status_code == 201
    try:
        status = wait_for_status(api, name, lambda s: all(
            c["state"] == "FAILED" for c in s["connectors"].values()), 120)
        for kind, connector in status["connectors"].items():
            assert f"source 'east' and target '{alias}' are one Kafka cluster (cluster id " in connector["error"], kind
        topics = AdminClient({"bootstrap.servers": east}).list_topics(timeout=10).topics
        assert f"east.{topic}" not in topics and "east.heartbeats" not in topics
        assert "east.checkpoints.internal" not in topics
        figures(f"one cluster under two aliases: all 3 connectors FAILED with "
                f"{status['connectors']['source']['error'][:90]!r}; no remote topic created")
    finally:
        assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204


def test_deleted_remote_topic_fails_then_auto_restart_recreates_it(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name = f"gone-{unique}", f"gone-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    kafka_tools.produce(east, topic, {0: [Record(b"before", b"v", (), 1_700_000_000_000)]})
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        # fail fast instead of Kafka's default 120 s delivery timeout
        "connectors": {"source": {"config": {"producer.override.max.block.ms": "3000",
                                             "producer.override.request.timeout.ms": "3000",
                                             "producer.override.delivery.timeout.ms": "8000"}}},
    }, format="json").status_code == 201
    wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= 1, 90)

    admin = AdminClient({"bootstrap.servers": west})
    for future in admin.delete_topics([f"east.{topic}"]).values():
        future.result(30)
    kafka_tools.produce(east, topic, {0: [Record(b"after", b"v", (), 1_700_000_000_001)]})
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "FAILED"
                             or s["connectors"]["source"]["restarts"] >= 1, 90)
    failed = status if status["connectors"]["source"]["state"] == "FAILED" else None
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["restarts"] >= 1
                             and s["connectors"]["source"]["state"] == "RUNNING", 90)
    received = kafka_tools.consume_all(west, f"east.{topic}", 1, timeout=60)
    assert [r.key for r in received[0]][-1] == b"after", "replication resumed on the recreated topic"
    if failed:
        figures(f"deleted remote topic: FAILED with {failed['connectors']['source']['error'].splitlines()[0][:160]!r}")
    assert status["connectors"]["source"]["error"] == ""
