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
