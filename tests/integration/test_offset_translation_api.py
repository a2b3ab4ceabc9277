"""`/offsets/translate/` and `/clusters/{alias}/replication/` against real brokers, with MM2 records written by hand."""

from __future__ import annotations

import time

import pytest

from controlplane.infra.processes import free_port
from mirrorcore.formats import Checkpoint
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record

pytestmark = pytest.mark.django_db


def register(api, alias: str, bootstrap: str) -> None:
    response = api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": bootstrap}, format="json")
    assert response.status_code == 201, response.content


def checkpoint(c: Checkpoint) -> Record:
    return Record(c.key(), c.value(), (), int(time.time() * 1000))


def test_translate_returns_the_latest_checkpoint_per_partition_of_the_group(api, devstack, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    source = f"east-{unique}"  # its own checkpoints topic: mirrors of other tests write east.checkpoints.internal
    register(api, source, east)
    register(api, "west", west)
    topic = f"{source}.checkpoints.internal"
    kafka_tools.create_topic(west, topic, 1)
    remote = f"{source}.orders"
    kafka_tools.produce(west, topic, {0: [
        checkpoint(Checkpoint("g", remote, 0, 10, 9)),
        checkpoint(Checkpoint("g", remote, 1, 4, 4)),
        checkpoint(Checkpoint("other", remote, 0, 50, 48)),
        Record(b"not a checkpoint", b"\x00", (), int(time.time() * 1000)),
        checkpoint(Checkpoint("g", remote, 0, 30, 27, "meta")),
        checkpoint(Checkpoint("g", f"{source}.audit", 2, 1, 1)),
    ]})

    started = time.monotonic()
    response = api.get("/api/v1/offsets/translate/", {"group": "g", "source": source, "target": "west"})
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.content
    assert response.json() == {
        "group": "g", "source": source, "target": "west", "checkpoints_topic": topic,
        "offsets": [{"topic": f"{source}.audit", "partition": 2, "offset": 1},
                    {"topic": remote, "partition": 0, "offset": 27},
                    {"topic": remote, "partition": 1, "offset": 4}]}
    other = api.get("/api/v1/offsets/translate/", {"group": "other", "source": source, "target": "west"}).json()
    assert other["offsets"] == [{"topic": remote, "partition": 0, "offset": 48}]
    nobody = api.get("/api/v1/offsets/translate/", {"group": "nobody", "source": source, "target": "west"}).json()
    assert nobody["offsets"] == []
    figures(f"translate over 6 checkpoint records: {elapsed * 1000:.0f} ms")


def test_translate_without_a_checkpoints_topic_is_empty(api, devstack, unique):
    register(api, f"east-{unique}", devstack.clusters["east"].bootstrap_servers)
    register(api, "west", devstack.clusters["west"].bootstrap_servers)
    response = api.get("/api/v1/offsets/translate/", {"group": "g", "source": f"east-{unique}", "target": "west"})
    assert response.status_code == 200 and response.json()["offsets"] == []


def test_translate_with_an_unreachable_target_is_503_within_the_timeout(api, devstack):
    register(api, "east", devstack.clusters["east"].bootstrap_servers)
    register(api, "gone", f"127.0.0.1:{free_port()}")
    started = time.monotonic()
    response = api.get("/api/v1/offsets/translate/", {"group": "g", "source": "east", "target": "gone",
                                                      "timeout": "3"})
    elapsed = time.monotonic() - started
    assert response.status_code == 503
    assert "gone" in response.json()["detail"]
    assert elapsed < 4.5


def test_replication_reads_upstream_clusters_and_hops_from_heartbeat_topics(api, devstack, unique):
    west = devstack.clusters["west"].bootstrap_servers
    register(api, "west", west)
    near, far = f"n{unique}", f"f{unique}"
    for topic in (f"{near}.heartbeats", f"{near}.{far}.heartbeats", f"{near}.orders-{unique}"):
        kafka_tools.create_topic(west, topic, 1)
    response = api.get("/api/v1/clusters/west/replication/", {"source": f"x{unique}"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert {near, far} <= set(body["upstream_clusters"])
    assert f"{near}.orders-{unique}" not in body["heartbeat_topics"]
    assert {body["hops"][near], body["hops"][far], body["hops"][f"x{unique}"]} == {1, 2, -1}
    assert (body["hops"][near], body["hops"][far], body["hops"][f"x{unique}"]) == (1, 2, -1)


def test_replication_of_an_unreachable_cluster_is_503(api):
    register(api, "gone", f"127.0.0.1:{free_port()}")
    started = time.monotonic()
    response = api.get("/api/v1/clusters/gone/replication/", {"timeout": "2"})
    assert response.status_code == 503 and "gone" in response.json()["detail"]
    assert time.monotonic() - started < 3.5
