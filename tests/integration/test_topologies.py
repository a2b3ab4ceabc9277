"""MM2 topologies on real clusters: active/active without loops, aggregation, and a chain."""

from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from tests.integration import kafka_tools, mm2_client
from tests.integration.test_mirror_end_to_end import wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)


def add_cluster(api, alias: str, bootstrap: str) -> None:
    assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": bootstrap},
                    format="json").status_code == 201


REFRESH_SECONDS = 5


def add_mirror(api, name: str, source: str, target: str, topics: str) -> None:
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": source, "target": target, "topics": topics,
        "connectors": {"source": {"config": {"refresh.topics.interval.seconds": str(REFRESH_SECONDS)}}},
    }, format="json")
    assert response.status_code == 201, response.content


def topics_of(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


class Traffic(threading.Thread):
    """Produces a numbered record to `topic` every 20 ms until stopped; counts what it produced."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 10})
        self.topic, self.sent, self.stopped = topic, 0, threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.producer.produce(self.topic, key=str(self.sent).encode(), value=b"x")
            self.sent += 1
            self.producer.poll(0)
            time.sleep(0.02)
        self.producer.flush(30)

    def stop(self) -> int:
        self.stopped.set()
        self.join(60)
        return self.sent


def test_active_active_never_loops(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic = f"aa-{unique}"
    for bootstrap in (east, west):
        kafka_tools.create_topic(bootstrap, topic, 2)
    add_cluster(api, "east", east)
    add_cluster(api, "west", west)
    # The filter matches remote names too (`west.aa-...`): only loop prevention keeps them home.
    pattern = f".*aa-{unique}"
    add_mirror(api, f"aa-ew-{unique}", "east", "west", pattern)
    add_mirror(api, f"aa-we-{unique}", "west", "east", pattern)

    traffic = [Traffic(east, topic), Traffic(west, topic)]
    for producer in traffic:
        producer.start()
    loops = {f"east.west.{topic}", f"west.east.{topic}", "east.west.heartbeats", "west.east.heartbeats"}
    # Watched until each mirror's remote topic exists and then for four topic refreshes, in which the
    # other mirror's filter matches that remote topic.
    started = time.monotonic()
    both_remote_at = None
    while both_remote_at is None or time.monotonic() < both_remote_at + 4 * REFRESH_SECONDS:
        names = topics_of(east) | topics_of(west)
        assert not names & loops, f"replication loop: {names & loops}"
        if both_remote_at is None and {f"east.{topic}", f"west.{topic}"} <= names:
            both_remote_at = time.monotonic()
        assert time.monotonic() - started < 120, "the two mirrors did not both create their remote topic"
        time.sleep(1)
    watched = time.monotonic() - started
    sent_east, sent_west = (producer.stop() for producer in traffic)

    on_west = kafka_tools.consume_all(west, f"east.{topic}", sent_east, timeout=60)
    on_east = kafka_tools.consume_all(east, f"west.{topic}", sent_west, timeout=60)
    assert sum(map(len, on_west.values())) == sent_east
    assert sum(map(len, on_east.values())) == sent_west
    assert {topic, f"west.{topic}", "west.heartbeats"} <= topics_of(east)
    assert {topic, f"east.{topic}", "east.heartbeats"} <= topics_of(west)
    assert not (topics_of(east) | topics_of(west)) & loops
    figures(f"active/active: {watched:.0f} s of traffic ({4 * REFRESH_SECONDS} s after both remote topics existed), "
            f"{sent_east} + {sent_west} records mirrored both ways, no loop")


def test_aggregation_and_chain(api, devstack, north, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic = f"agg-{unique}"
    for bootstrap in (east, west):
        kafka_tools.create_topic(bootstrap, topic, 1)
        kafka_tools.produce(bootstrap, topic, {0: [kafka_tools.Record(b"k", b"v", (), 1_700_000_000_000)] * 5})
    for alias, bootstrap in (("east", east), ("west", west), ("north", north)):
        add_cluster(api, alias, bootstrap)
    pattern = f".*agg-{unique}"
    add_mirror(api, f"agg-en-{unique}", "east", "north", pattern)  # aggregation: east and west into north
    add_mirror(api, f"agg-wn-{unique}", "west", "north", pattern)
    add_mirror(api, f"agg-ew-{unique}", "east", "west", pattern)   # chain: east -> west -> north

    expected = {f"east.{topic}": 5, f"west.{topic}": 5, f"west.east.{topic}": 5}
    started = time.monotonic()
    for remote, count in expected.items():
        received = kafka_tools.consume_all(north, remote, count, timeout=150)
        assert sum(map(len, received.values())) == count, remote
    figures(f"aggregation + chain: north has {sorted(expected)} after {time.monotonic() - started:.0f}s")
    assert f"east.west.{topic}" not in topics_of(north)

    # Heartbeats travel the chain too; MM2's own client and our API read the same topology from them.
    deadline = time.monotonic() + 60
    while "west.east.heartbeats" not in topics_of(north) and time.monotonic() < deadline:
        time.sleep(1)
    assert {"east.heartbeats", "west.heartbeats", "west.east.heartbeats"} <= topics_of(north)
    ours = api.get("/api/v1/clusters/north/replication/").json()
    java_upstream = mm2_client.upstream_clusters(north)
    java_hops = {alias: mm2_client.replication_hops(north, alias) for alias in ("east", "west")}
    assert {"east", "west"} <= set(ours["upstream_clusters"]) == java_upstream
    assert {alias: ours["hops"][alias] for alias in ("east", "west")} == java_hops == {"east": 1, "west": 1}
    figures(f"chain heartbeats: north's upstream clusters {sorted(java_upstream)}, hops {java_hops} "
            "(MirrorClient and our API agree)")
    for name in (f"agg-en-{unique}", f"agg-wn-{unique}", f"agg-ew-{unique}"):
        assert wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 30)
