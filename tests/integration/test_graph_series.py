"""The dashboard's graphs from a real running mirror: every series gets points (throughput and tasks come
from the application's sampler), and `rollup_metrics` turns complete minutes into MetricMinute rows that
the 24 h range returns."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from mirrors import tasks
from mirrors.models import MetricMinute
from mirrors.services import rollup
from tests.integration import kafka_tools
from tests.integration.test_connector_verbs import Traffic
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

GRAPHS = ["heartbeat", "lag_records", "lag_seconds", "throughput_records", "throughput_bytes", "checkpoint", "tasks"]


def commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    """A consumer group's committed offset on partition 0, as an application that read that far."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    finally:
        consumer.close()


def graphs(api, name: str, range_key: str, **query) -> dict:
    response = api.get(f"/api/v1/mirrors/{name}/graphs/", {"range": range_key, **query})
    assert response.status_code == 200, response.content
    return response.json()


def points(graph: dict) -> int:
    return sum(1 for trace in graph["traces"] for y in trace["y"] if y is not None)


def flowing(body: dict) -> bool:
    """Records replicated at some point of the range."""
    total = body["graphs"]["throughput_records"]["traces"][:1]
    return any(y for trace in total for y in trace["y"])


def throughput_names(body: dict) -> list[str]:
    """The throughput's traces: "total", then one per topic."""
    return [t["name"] for t in body["graphs"]["throughput_records"]["traces"]]


def wait_for_graphs(api, name: str, range_key: str, timeout: float, topic: str | None = None) -> dict:
    """Every graph has points, the throughput shows the traffic and, given `topic`, a trace of that topic.

    The total can lead the topic's trace by a sample: records count when they are sent, a partition's
    position once the target acknowledged one of its records."""
    deadline = time.monotonic() + timeout
    body: dict = {}
    while time.monotonic() < deadline:
        body = graphs(api, name, range_key)
        if (all(points(body["graphs"][key]) for key in GRAPHS) and flowing(body)
                and (topic is None or topic in throughput_names(body))):
            return body
        time.sleep(1)
    missing = {key: body["graphs"][key]["empty"] for key in GRAPHS if not points(body["graphs"][key])}
    raise AssertionError(f"graphs without points after {timeout} s ({range_key}): {missing}; flowing: "
                         f"{flowing(body)}; throughput traces: {throughput_names(body)}")


def test_graphs_get_points_from_a_running_mirror_and_minutes_are_rolled_up(api, devstack, control_plane, unique,
                                                                         figures):
    east = devstack.clusters["east"].bootstrap_servers
    topic, name, group = f"graphs-{unique}", f"graphs-{unique}", f"app-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    traffic = Traffic(east, topic)
    traffic.start()
    try:
        while traffic.sent < 200:
            time.sleep(0.1)
        commit(east, group, topic, 150)
        create_clusters(api, devstack)
        assert api.post("/api/v1/mirrors/", {
            "name": name, "source": "east", "target": "west", "topics": topic, "groups": group,
            "connectors": {"checkpoint": {"config": {"emit.checkpoints.interval.seconds": "2"}}},
        }, format="json").status_code == 201, "mirror not created"
        created = time.monotonic()
        wait_for_status(api, name, lambda s: topic in ((s["progress"] or {}).get("topics") or []), 120)
        raw = wait_for_graphs(api, name, "15m", 90, topic)
        all_points_after = time.monotonic() - created
    finally:
        traffic.stop()

    assert raw["resolution"] == "raw"
    g = raw["graphs"]
    assert g["heartbeat"]["traces"][0]["name"] == "east->west"
    assert g["lag_records"]["traces"][0]["name"] == "total"
    throughput = g["throughput_records"]["traces"]
    assert throughput[0]["name"] == "total" and max(y for y in throughput[0]["y"] if y is not None) > 0
    assert topic in throughput_names(raw)  # per topic, from the offsets replicated
    assert max(y for y in g["throughput_bytes"]["traces"][0]["y"] if y is not None) > 0
    assert [t["name"] for t in g["checkpoint"]["traces"]] == [group]
    running = next(t for t in g["tasks"]["traces"] if t["name"] == "RUNNING")
    assert max(running["y"]) >= 3  # source, checkpoint and heartbeat: one task each
    drill = graphs(api, name, "15m", topic=topic)["graphs"]["lag_records"]["traces"]
    assert [t["name"] for t in drill] == [f"{topic} total", "partition 0"]

    # Minutes are rolled up once complete (a few seconds after their end): wait for the minute in which the
    # last series to start had its first point (throughput starts with the first batch, after the others).
    first_at = max(min(x for trace in g[key]["traces"] for x in trace["x"]) for key in GRAPHS)
    complete_at = rollup.minute_of(first_at) + 60 + rollup.SLACK_SECONDS + 1
    time.sleep(max(0.0, complete_at - time.time()))
    result = tasks.rollup_metrics()
    assert result["error"] is None, result
    rows = list(MetricMinute.objects.filter(mirror_name=name).order_by("minute"))
    assert rows, f"no MetricMinute rows for {name} after {result}"
    merged = {key for row in rows for key in row.data}
    assert {"heartbeat", "lag", "throughput", "tasks", "checkpoint"} <= merged, merged
    tasks.rollup_metrics()  # again: the stored minutes stay as they are
    again = {row.minute: row.data for row in MetricMinute.objects.filter(mirror_name=name)}
    assert all(again[row.minute] == row.data for row in rows)

    day = wait_for_graphs(api, name, "24h", 10)
    assert day["resolution"] == "1m"
    minutes = {int(row.minute.timestamp()) for row in rows}
    assert minutes & set(day["graphs"]["tasks"]["traces"][0]["x"]), "the 24 h range does not show the stored minutes"
    week = wait_for_graphs(api, name, "7d", 10)  # the current hour, merged from its minutes
    assert week["resolution"] == "1h" and week["graphs"]["tasks"]["traces"], week["graphs"]["tasks"]
    figures(f"graphs: every graph has points {all_points_after:.1f} s after the mirror was created; "
            f"{len(rows)} minute(s) rolled up ({sorted(merged)}), shown in the 24 h and 7 d ranges")
    assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204
    assert not MetricMinute.objects.filter(mirror_name=name).exists()
