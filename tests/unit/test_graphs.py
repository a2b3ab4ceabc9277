"""The dashboard's graphs (mirrors/services/graphs.py) from a fake Redis, MetricMinute and MetricHour rows:
downsampling, top topics, drill-down to partitions, gaps, the hourly ranges, and why a graph is empty."""

from __future__ import annotations

import itertools

import pytest

from mirrorcore import channel, series
from mirrors.choices import ApplicationState
from mirrors.models import Cluster, Deployment, MetricHour, MetricMinute
from mirrors.services import graphs, rollup
from mirrors.services.mirrors import create_mirror, update_mirror
from tests.fakes import FakeRedis

pytestmark = pytest.mark.django_db

NOW = 1_700_003_600.0
HOUR = 3600


@pytest.fixture
def fake(fake_redis) -> FakeRedis:
    return fake_redis


@pytest.fixture
def mirror(db):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m1", source=east, target=west)


def running(fake, mirror, **connectors) -> None:
    """The application's live status: every connector RUNNING unless given."""
    partitions = [{"topic": "orders", "partition": p, "last_upstream_offset": 9} for p in range(3)]
    base = {"source": {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"}], "topics": ["orders"],
                       "partitions": partitions},
            "checkpoint": {"state": "RUNNING", "tasks": [], "metrics": {"groups": 1}},
            "heartbeat": {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"}]}}
    channel.publish_status(fake, mirror.name, {"mirror": mirror.name, "generation": mirror.generation,
                                               "connectors": base | connectors})


def add(fake, name: str, point: dict, at: float) -> None:
    series.append(fake, "m1", name, point, at=at, retention_seconds=10**9)


def lag(partitions: list[tuple[str, int, int]], seconds: float = 1.0) -> dict:
    parts = [{"topic": t, "partition": p, "remote_topic": f"east.{t}", "records": r, "seconds": seconds}
             for t, p, r in partitions]
    return {"records": sum(r for _, _, r in partitions), "seconds": seconds if parts else 0.2, "idle": not parts,
            "partitions": parts}


def get(mirror, range_key="1h", topic=None) -> dict:
    return graphs.mirror_graphs(mirror, range_key, topic, now=NOW)


def test_the_document_has_every_graph_with_title_unit_and_traces(fake, mirror):
    running(fake, mirror)
    add(fake, "heartbeat", {"flow": "east->west", "latency_ms": 12, "emitted_at": 0}, NOW - 5)
    doc = get(mirror, "15m")
    assert {k: doc[k] for k in ("mirror", "range", "since", "until", "resolution", "topic")} == {
        "mirror": "m1", "range": "15m", "since": NOW - 900, "until": NOW, "resolution": "raw", "topic": None}
    assert list(doc["graphs"]) == ["heartbeat", "lag_records", "lag_seconds", "throughput_records",
                                   "throughput_bytes", "checkpoint", "tasks"]
    heartbeat = doc["graphs"]["heartbeat"]
    assert heartbeat == {"title": "Heartbeat latency: emission to arrival on west", "unit": "ms",
                         "traces": [{"name": "east->west", "x": [NOW - 5], "y": [12]}], "empty": None,
                         "scale": "linear"}
    assert doc["graphs"]["checkpoint"]["title"] == "Checkpoint progress: records behind per group"
    for graph in doc["graphs"].values():
        assert set(graph) == {"title", "unit", "traces", "empty", "scale"}


def test_a_new_mirrors_slow_first_heartbeats_put_the_graph_on_a_log_axis(fake, mirror):
    running(fake, mirror)
    for i, latency in enumerate([6000, 2500, 900] + [11, 10, 12] * 30):
        add(fake, "heartbeat", {"flow": "east->west", "latency_ms": latency}, NOW - 300 + i)
    assert get(mirror, "15m")["graphs"]["heartbeat"]["scale"] == "log"
    later = NOW + 300  # 15 minutes on, the start-up points are out of the range
    for i in range(60):
        add(fake, "heartbeat", {"flow": "east->west", "latency_ms": 10 + i % 5}, later - 60 + i)
    assert graphs.mirror_graphs(mirror, "15m", None, now=later + 620)["graphs"]["heartbeat"]["scale"] == "linear"


@pytest.mark.parametrize(("values", "scale"), [
    ([10, 11, 12, 9, 250], "log"),  # 25 times the median
    ([10, 11, 12, 9, 150], "linear"),
    ([0, 10, 5000], "linear"),  # a zero has no place on a log axis
    ([], "linear"),
])
def test_a_log_axis_only_for_positive_points_spread_over_more_than_twenty_times_their_median(values, scale):
    assert graphs.y_scale(values) == scale


def test_an_hour_of_heartbeats_is_downsampled_to_at_most_300_points_by_mean(fake, mirror):
    running(fake, mirror)
    for i in range(3600):  # one a second, alternating 10 and 30 ms
        add(fake, "heartbeat", {"flow": "east->west", "latency_ms": 10 if i % 2 else 30}, NOW - 3600 + i)
    trace = get(mirror)["graphs"]["heartbeat"]["traces"][0]
    assert 250 <= len(trace["x"]) <= 300
    assert None not in trace["y"]
    assert all(10 < y < 30 for y in trace["y"])  # each bucket a mean of 10s and 30s
    assert abs(sum(trace["y"]) / len(trace["y"]) - 20) < 0.5
    assert trace["x"] == sorted(trace["x"]) and trace["x"][0] >= NOW - 3600 and trace["x"][-1] <= NOW


def test_lag_is_downsampled_by_max_so_a_spike_survives(fake, mirror):
    running(fake, mirror)
    for i in range(1800):  # every 2 s
        records = 5000 if i == 1000 else 0
        add(fake, "lag", lag([("orders", 0, records)] if records else []), NOW - 3600 + 2 * i)
    graph = get(mirror)["graphs"]["lag_records"]
    total = graph["traces"][0]
    assert total["name"] == "total" and len(total["x"]) <= 300
    assert max(total["y"]) == 5000 and total["y"].count(5000) == 1
    assert [t["name"] for t in graph["traces"]] == ["total", "orders"]


def test_an_idle_mirror_shows_a_flat_zero_lag_not_an_empty_graph(fake, mirror):
    running(fake, mirror)
    for i in range(10):
        add(fake, "lag", lag([]), NOW - 20 + 2 * i)
    records = get(mirror, "15m")["graphs"]["lag_records"]
    assert records["empty"] is None
    assert records["traces"] == [{"name": "total", "x": [NOW - 20 + 2 * i for i in range(10)], "y": [0] * 10}]
    assert get(mirror, "15m")["graphs"]["lag_seconds"]["traces"][0]["y"] == [0.2] * 10  # the heartbeat latency


def test_lag_per_topic_keeps_the_eight_worst_with_zeros_where_a_topic_caught_up(fake, mirror):
    running(fake, mirror)
    add(fake, "lag", lag([(f"t{i}", 0, 10 * (i + 1)) for i in range(10)]), NOW - 10)
    add(fake, "lag", lag([("t0", 0, 1)]), NOW - 8)
    graph = get(mirror, "15m")["graphs"]["lag_records"]
    names = [t["name"] for t in graph["traces"]]
    assert names == ["total", "t9", "t8", "t7", "t6", "t5", "t4", "t3", "t2"]
    assert graph["traces"][0]["y"] == [550, 1]
    assert graph["traces"][1]["y"] == [100, 0]


def test_lag_seconds_total_is_the_max_and_topics_by_their_oldest_record(fake, mirror):
    running(fake, mirror)
    point = lag([("a", 0, 5), ("b", 0, 7)])
    point["partitions"][0]["seconds"], point["partitions"][1]["seconds"], point["seconds"] = 3.0, 8.5, 8.5
    add(fake, "lag", point, NOW - 4)
    graph = get(mirror, "15m")["graphs"]["lag_seconds"]
    assert graph["unit"] == "s"
    assert [(t["name"], t["y"]) for t in graph["traces"]] == [("total", [8.5]), ("b", [8.5]), ("a", [3.0])]


def test_drill_down_to_a_topic_gives_its_total_and_every_partition(fake, mirror):
    running(fake, mirror)  # orders has partitions 0, 1, 2 (from the live status)
    add(fake, "lag", lag([("orders", 1, 40), ("other", 0, 99)]), NOW - 6)
    add(fake, "lag", lag([("orders", 1, 10), ("orders", 2, 5)]), NOW - 4)
    add(fake, "lag", lag([]), NOW - 2)
    doc = get(mirror, "15m", topic="orders")
    assert doc["topic"] == "orders"
    graph = doc["graphs"]["lag_records"]
    assert graph["title"].endswith("topic orders")
    assert [(t["name"], t["y"]) for t in graph["traces"]] == [
        ("orders total", [40, 15, 0]), ("partition 0", [0, 0, 0]), ("partition 1", [40, 10, 0]),
        ("partition 2", [0, 5, 0])]


def test_a_topic_the_mirror_does_not_replicate_is_said_so(fake, mirror):
    running(fake, mirror)
    add(fake, "lag", lag([]), NOW - 2)
    graph = get(mirror, "15m", topic="nope")["graphs"]["lag_records"]
    assert graph["traces"] == []
    assert graph["empty"] == "This mirror does not replicate topic 'nope' (it replicates: orders)."


def test_a_silence_in_the_recording_breaks_the_line(fake, mirror):
    running(fake, mirror)
    for at in [NOW - 600, NOW - 598, NOW - 596, NOW - 100, NOW - 98]:
        add(fake, "tasks", {"RUNNING": 2}, at)
    trace = get(mirror, "15m")["graphs"]["tasks"]["traces"][0]
    assert trace["y"] == [2, 2, 2, None, 2, 2]
    assert trace["x"][3] == (NOW - 596 + NOW - 100) / 2


def test_throughput_total_and_per_topic_and_bytes(fake, mirror):
    running(fake, mirror)
    add(fake, "throughput", {"records_per_s": 100, "bytes_per_s": 1000, "records": 200, "bytes": 2000,
                             "topics": {"orders": 80, "pay": 20}}, NOW - 4)
    add(fake, "throughput", {"records_per_s": 50, "bytes_per_s": 500, "records": 300, "bytes": 3000,
                             "topics": {"orders": 50}}, NOW - 2)
    doc = get(mirror, "15m")
    assert [(t["name"], t["y"]) for t in doc["graphs"]["throughput_records"]["traces"]] == [
        ("total", [100, 50]), ("orders", [80, 50]), ("pay", [20, 0])]
    assert [(t["name"], t["y"]) for t in doc["graphs"]["throughput_bytes"]["traces"]] == [("total", [1000, 500])]
    assert [t["name"] for t in get(mirror, "15m", topic="orders")["graphs"]["throughput_records"]["traces"]] == [
        "total", "orders"]


def test_checkpoint_traces_per_group_and_tasks_per_state(fake, mirror):
    running(fake, mirror)
    add(fake, "checkpoint", {"groups": [{"group": "billing", "partitions": 3, "checkpoints": 3, "reprocess": 90}]},
        NOW - 120)
    add(fake, "checkpoint", {"groups": [{"group": "billing", "partitions": 3, "checkpoints": 1, "reprocess": 12},
                                        {"group": "audit", "partitions": 1, "checkpoints": 1, "reprocess": 0}]},
        NOW - 60)
    add(fake, "tasks", {"RUNNING": 3}, NOW - 4)
    add(fake, "tasks", {"RUNNING": 2, "FAILED": 1}, NOW - 2)
    doc = get(mirror, "15m")
    assert [(t["name"], t["y"]) for t in doc["graphs"]["checkpoint"]["traces"]] == [
        ("audit", [0]), ("billing", [90, 12])]
    assert [(t["name"], t["y"]) for t in doc["graphs"]["tasks"]["traces"]] == [
        ("RUNNING", [3, 2]), ("FAILED", [0, 1])]


def test_24h_reads_minutes_from_the_database_and_the_tail_from_redis(fake, mirror):
    running(fake, mirror)
    start = rollup.minute_of(NOW - 24 * HOUR) + 60
    rows = [MetricMinute(mirror_name="m1", minute=rollup.as_datetime(m),
                         data=rollup.minute_data({"lag": [lag([("orders", 0, 7)] if m % 3600 == 0 else [])],
                                                  "tasks": [{"RUNNING": 1}]}))
            for m in range(start, rollup.minute_of(NOW) - 120, 60)]
    MetricMinute.objects.bulk_create(rows)
    for at in range(int(NOW) - 150, int(NOW), 10):  # two minutes not rolled up yet, the current one included
        add(fake, "lag", lag([("orders", 0, 3)]), at)
    doc = get(mirror, "24h")
    assert doc["resolution"] == "1m"
    total = doc["graphs"]["lag_records"]["traces"][0]
    assert 250 <= len(total["x"]) <= 300  # 5-minute buckets
    assert set(total["y"]) == {0, 7, 3}  # max per bucket: the hourly spikes survive
    assert total["y"][-1] == 3
    tasks = doc["graphs"]["tasks"]["traces"][0]
    assert tasks["name"] == "RUNNING" and set(tasks["y"]) == {1}  # no tasks point in the tail: the rows only


def test_empty_graphs_say_the_application_is_not_running(fake, mirror):
    doc = get(mirror, "15m")
    for key, graph in doc["graphs"].items():
        assert graph["traces"] == [], key
        assert graph["empty"] == "The mirror's application is not running, so nothing was recorded in the last " \
                                 "15 minutes.", key
    Deployment.objects.create(mirror_name="m1", state=ApplicationState.BACKOFF,
                              last_error="driver exited with 1\nTraceback ...")
    assert get(mirror)["graphs"]["tasks"]["empty"] == (
        "The mirror's application is not running: it stopped and is submitted again after a backoff "
        "(last error: driver exited with 1).")


def test_old_points_are_still_shown_when_the_application_is_down(fake, mirror):
    add(fake, "tasks", {"RUNNING": 1}, NOW - 300)
    graph = get(mirror, "15m")["graphs"]["tasks"]
    assert graph["empty"] is None and graph["traces"][0]["y"] == [1]


def test_empty_graphs_say_why_while_the_application_runs(fake, mirror):
    running(fake, mirror, checkpoint={"state": "RUNNING", "tasks": [], "metrics": {"groups": 0}})
    graphs_ = get(mirror, "15m")["graphs"]
    assert graphs_["heartbeat"]["empty"] == "No heartbeat arrived in the last 15 minutes yet: one is emitted every 1 s."
    assert graphs_["lag_records"]["empty"] == (
        "No lag sample in the last 15 minutes yet: the application takes one every 2 s.")
    assert graphs_["throughput_bytes"]["empty"] == (
        "No throughput sample in the last 15 minutes yet: the application takes one every 2 s.")
    assert graphs_["checkpoint"]["empty"] == (
        "No consumer group on east matches the checkpoint connector's groups "
        "('.*', excluding 'console-consumer-.*, connect-.*, __.*').")


def test_heartbeats_off_and_paused_connectors_are_named(fake, mirror):
    running(fake, mirror)
    update_mirror(mirror, connectors={"heartbeat": {"config": {"emit.heartbeats.enabled": "false"}}})
    mirror.refresh_from_db()
    running(fake, mirror)
    assert get(mirror)["graphs"]["heartbeat"]["empty"] == (
        "No heartbeat latency: heartbeats are off (emit.heartbeats.enabled=false on the heartbeat connector).")
    update_mirror(mirror, connectors={"heartbeat": {"config": {}}, "checkpoint": {"state": "paused"}})
    mirror.refresh_from_db()
    running(fake, mirror)
    assert get(mirror)["graphs"]["checkpoint"]["empty"] == (
        "The checkpoint connector is paused, so no checkpoints are emitted.")


def test_checkpoints_off_and_groups_without_replicated_offsets(fake, mirror):
    running(fake, mirror)
    add(fake, "checkpoint", {"groups": []}, NOW - 30)
    assert get(mirror, "15m")["graphs"]["checkpoint"]["empty"] == (
        "None of the 1 consumer groups matching the checkpoint connector's groups has committed offsets on a "
        "replicated topic yet.")
    update_mirror(mirror, connectors={"checkpoint": {"config": {"emit.checkpoints.enabled": "false"}}})
    mirror.refresh_from_db()
    assert get(mirror, "15m")["graphs"]["checkpoint"]["empty"] == (
        "Checkpoints are off (emit.checkpoints.enabled=false on the checkpoint connector).")


def test_no_topic_matching_yet_explains_the_empty_lag(fake, mirror):
    running(fake, mirror, source={"state": "RUNNING", "tasks": [], "topics": [], "partitions": []})
    assert get(mirror, "15m")["graphs"]["lag_seconds"]["empty"] == (
        "No topic on east matches the mirror's topics ('.*') yet, so there is no lag to measure.")


def test_a_failed_source_connector_explains_the_empty_lag_and_throughput(fake, mirror):
    reason = "source 'east' and target 'west' are one Kafka cluster (cluster id abc): a mirror needs two"
    running(fake, mirror, source={"state": "FAILED", "error": reason, "tasks": [], "topics": [], "partitions": []})
    graphs = get(mirror, "15m")["graphs"]
    assert graphs["lag_seconds"]["empty"] == (
        f"The source connector failed, so no topic is replicated and there is no lag to measure: {reason}.")
    assert graphs["throughput_records"]["empty"] == (
        f"The source connector failed, so no records are replicated: {reason}.")


def test_a_paused_source_connector_explains_the_empty_lag(fake, mirror):
    update_mirror(mirror, connectors={"source": {"state": "paused"}})
    mirror.refresh_from_db()
    running(fake, mirror, source={"state": "PAUSED", "tasks": [], "topics": [], "partitions": []})
    assert get(mirror, "15m")["graphs"]["lag_records"]["empty"] == (
        "The source connector is paused, so no topic is replicated and there is no lag to measure.")


def hour_row(at: int, data: dict) -> MetricHour:
    return MetricHour(mirror_name="m1", hour=rollup.as_datetime(at), data=data)


def lag_bucket(records: int) -> dict:
    return rollup.minute_data({"lag": [lag([("orders", 0, records)] if records else [])],
                               "tasks": [{"RUNNING": 1}]})


def test_7d_reads_hours_then_the_minutes_not_compacted_yet_merged_per_hour(fake, mirror):
    running(fake, mirror)
    current = rollup.hour_of(NOW)
    first = rollup.hour_of(NOW - 7 * 24 * HOUR) + HOUR  # the first hour starting in the range
    compacted_until = current - 48 * HOUR
    gap = range(first + 24 * HOUR, first + 29 * HOUR, HOUR)  # five hours without a row: the mirror was off
    MetricHour.objects.bulk_create([hour_row(h, lag_bucket(h // HOUR % 5)) for h in range(first - 3 * HOUR,
                                                                                          compacted_until, HOUR)
                                    if h not in gap])
    MetricMinute.objects.bulk_create([  # every 20 minutes of the last 48 h
        MetricMinute(mirror_name="m1", minute=rollup.as_datetime(m), data=lag_bucket(m // 60 % 7))
        for m in range(compacted_until, current + HOUR, 1200) if m < NOW - 120])
    for at in range(int(NOW) - 50, int(NOW), 10):  # the current minute, not rolled up yet
        add(fake, "lag", lag([("orders", 0, 99)]), at)
    doc = get(mirror, "7d")
    assert doc["resolution"] == "1h" and doc["until"] - doc["since"] == 7 * 24 * HOUR
    total = doc["graphs"]["lag_records"]["traces"][0]
    hours = list(total["x"])
    null_at = total["y"].index(None)
    assert total["y"].count(None) == 1 and hours[null_at] == (first + 23 * HOUR + first + 29 * HOUR) / 2
    del hours[null_at]
    expected = [h for h in range(first, current + HOUR, HOUR) if h not in gap]
    assert hours == expected  # one point per hour, at its start, the current hour included
    ys = [y for y in total["y"] if y is not None]
    assert ys[:3] == [first // HOUR % 5, (first // HOUR + 1) % 5, (first // HOUR + 2) % 5]  # the hour rows
    # the last complete hour: its minutes, merged (max)
    assert ys[-2] == max(m // 60 % 7 for m in range(current - HOUR, current, 1200))
    assert ys[-1] == 99  # the current hour: stored minutes and the Redis tail
    assert doc["graphs"]["tasks"]["traces"][0]["y"][-1] == 1


def test_30d_is_downsampled_to_3_hour_buckets_keeping_the_lag_spikes(fake, mirror):
    running(fake, mirror)
    first = rollup.hour_of(NOW - 30 * 24 * HOUR) + HOUR
    spike = first + 300 * HOUR
    MetricHour.objects.bulk_create([hour_row(h, lag_bucket(5000 if h == spike else 1))
                                    for h in range(first, rollup.hour_of(NOW), HOUR)])
    doc = get(mirror, "30d")
    assert doc["resolution"] == "1h"
    total = doc["graphs"]["lag_records"]["traces"][0]
    assert 200 <= len(total["x"]) <= 300 and None not in total["y"]  # 3-hour buckets, no break
    assert total["y"].count(5000) == 1 and set(total["y"]) == {1, 5000}
    spacings = {b - a for a, b in itertools.pairwise(total["x"][1:-1])}  # the first and last bucket: partial
    assert spacings == {3 * HOUR}


def test_hourly_ranges_say_why_they_are_empty(fake, mirror):
    assert get(mirror, "30d")["graphs"]["tasks"]["empty"] == (
        "The mirror's application is not running, so nothing was recorded in the last 30 days.")
    running(fake, mirror)
    graphs_ = get(mirror, "7d")["graphs"]
    assert graphs_["lag_records"]["empty"] == (
        "No lag sample in the last 7 days yet: the application takes one every 2 s.")
    assert graphs_["heartbeat"]["empty"] == "No heartbeat arrived in the last 7 days yet: one is emitted every 1 s."
