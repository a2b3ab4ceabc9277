"""`GET /api/v1/mirrors/{name}/graphs/`: the dashboard's graphs, its 400s, 404, 503 and roles."""

from __future__ import annotations

import time

import pytest

from mirrorcore import channel, series
from mirrors.models import Cluster, MetricHour, MetricMinute
from mirrors.roles import VIEWER
from mirrors.services import graphs, rollup
from mirrors.services.mirrors import create_mirror
from tests.fakes import DownRedis

pytestmark = pytest.mark.django_db

GRAPHS = ["heartbeat", "lag_records", "lag_seconds", "throughput_records", "throughput_bytes", "checkpoint", "tasks"]


@pytest.fixture
def mirror(db):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m1", source=east, target=west)


def test_graphs_of_a_running_mirror(api, fake_redis, mirror):
    now = time.time()
    channel.publish_status(fake_redis, "m1", {"generation": mirror.generation, "connectors": {
        "source": {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"}], "topics": ["orders"]}}})
    series.append(fake_redis, "m1", "heartbeat", {"flow": "east->west", "latency_ms": 15}, at=now - 3)
    series.append(fake_redis, "m1", "lag", {"records": 4, "seconds": 1.5, "partitions": [
        {"topic": "orders", "partition": 0, "remote_topic": "east.orders", "records": 4, "seconds": 1.5}]}, at=now - 2)
    series.append(fake_redis, "m1", "throughput", {"records_per_s": 10.0, "bytes_per_s": 99.0, "records": 20,
                                               "bytes": 198, "topics": {"orders": 10.0}}, at=now - 2)
    series.append(fake_redis, "m1", "tasks", {"RUNNING": 1}, at=now - 2)
    response = api.get("/api/v1/mirrors/m1/graphs/?range=1h")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mirror"] == "m1" and body["range"] == "1h" and body["resolution"] == "raw" and body["topic"] is None
    assert body["until"] - body["since"] == 3600 and abs(body["until"] - now) < 5
    assert list(body["graphs"]) == GRAPHS
    with_points = {key for key, g in body["graphs"].items() if g["traces"]}
    assert with_points == set(GRAPHS) - {"checkpoint"}
    at = int((now - 2) * 1000) / 1000  # streams keep milliseconds
    assert body["graphs"]["lag_records"]["traces"] == [{"name": "total", "x": [at], "y": [4]},
                                                       {"name": "orders", "x": [at], "y": [4]}]
    checkpoint = body["graphs"]["checkpoint"]
    assert checkpoint["traces"] == [] and "every 60 s" in checkpoint["empty"]
    drill = api.get("/api/v1/mirrors/m1/graphs/?range=15m&topic=orders").json()
    assert drill["topic"] == "orders"
    assert [t["name"] for t in drill["graphs"]["lag_records"]["traces"]] == ["orders total", "partition 0"]


def test_the_default_range_is_15_minutes(api, fake_redis, mirror):
    body = api.get("/api/v1/mirrors/m1/graphs/").json()
    assert body["range"] == "15m" and body["until"] - body["since"] == 900
    assert api.get("/api/v1/mirrors/m1/graphs/?range=&topic=").json()["range"] == "15m"  # empty: not given
    assert all(g["empty"] for g in body["graphs"].values())


def test_24h_reads_the_rolled_up_minutes(api, fake_redis, mirror):
    minute = rollup.minute_of(time.time()) - 600
    MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(minute),
                                data=rollup.minute_data({"tasks": [{"RUNNING": 3}]}))
    body = api.get("/api/v1/mirrors/m1/graphs/?range=24h").json()
    assert body["resolution"] == "1m"
    assert body["graphs"]["tasks"]["traces"] == [{"name": "RUNNING", "x": [minute], "y": [3]}]


@pytest.mark.parametrize("range_", ["7d", "30d"])
def test_7d_and_30d_read_the_hours_and_the_minutes_not_compacted_yet(api, fake_redis, mirror, range_):
    hour = rollup.hour_of(time.time())
    MetricHour.objects.bulk_create([  # 3 days ago and the hour before: compacted
        MetricHour(mirror_name="m1", hour=rollup.as_datetime(hour - h * 3600),
                   data=rollup.minute_data({"tasks": [{"RUNNING": h}]})) for h in (72, 73)])
    MetricMinute.objects.bulk_create([  # the last hour, not compacted yet: merged per hour (max for tasks)
        MetricMinute(mirror_name="m1", minute=rollup.as_datetime(hour - 3600 + m * 60),
                     data=rollup.minute_data({"tasks": [{"RUNNING": m % 4}]})) for m in range(60)])
    response = api.get(f"/api/v1/mirrors/m1/graphs/?range={range_}")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["range"] == range_ and body["resolution"] == "1h"
    assert body["until"] - body["since"] == {"7d": 7, "30d": 30}[range_] * 86400
    gap = (hour - 72 * 3600 + hour - 3600) / 2  # 70 hours without a point: a break
    assert body["graphs"]["tasks"]["traces"] == [
        {"name": "RUNNING", "x": [hour - 73 * 3600, hour - 72 * 3600, gap, hour - 3600], "y": [73, 72, None, 3]}]
    assert body["graphs"]["lag_records"]["empty"] == (
        f"The mirror's application is not running, so nothing was recorded in the last {range_[:-1]} days.")


@pytest.mark.parametrize(("query", "errors"), [
    ("range=2h", {"range": ["must be one of 15m, 1h, 24h, 7d, 30d"]}),
    ("range=24", {"range": ["must be one of 15m, 1h, 24h, 7d, 30d"]}),
    ("range=15M", {"range": ["must be one of 15m, 1h, 24h, 7d, 30d"]}),
    ("range=1d", {"range": ["must be one of 15m, 1h, 24h, 7d, 30d"]}),
    ("range=90d", {"range": ["must be one of 15m, 1h, 24h, 7d, 30d"]}),
    ("range=1h&topic=no%20spaces", {"topic": ["'no spaces' is not a Kafka topic name (letters, digits, '.', '_' "
                                              "and '-' only)"]}),
    (f"topic={'t' * 250}", {"topic": ["Ensure this field has no more than 249 characters."]}),
])
def test_bad_queries_are_400s_naming_the_field(api, fake_redis, mirror, query, errors):
    response = api.get(f"/api/v1/mirrors/m1/graphs/?{query}")
    assert response.status_code == 400
    assert response.json() == errors


def test_unknown_mirror_is_404(api, fake_redis, mirror):
    response = api.get("/api/v1/mirrors/nope/graphs/?range=1h")
    assert response.status_code == 404
    assert response.json() == {"detail": "no mirror named 'nope'"}


@pytest.mark.parametrize("range_", ["15m", "24h", "30d"])
def test_redis_down_is_503_with_the_reason(api, mirror, monkeypatch, range_):
    monkeypatch.setattr(graphs, "get_redis", DownRedis)
    response = api.get(f"/api/v1/mirrors/m1/graphs/?range={range_}")
    assert response.status_code == 503
    assert response.json()["detail"].startswith("cannot read the mirror's time series: Error 111")


def test_viewers_may_read_graphs_and_anonymous_callers_may_not(api_as, client, fake_redis, mirror):
    assert api_as(VIEWER).get("/api/v1/mirrors/m1/graphs/?range=1h").status_code == 200
    assert client.get("/api/v1/mirrors/m1/graphs/?range=1h").status_code == 401
    assert api_as(None).get("/api/v1/mirrors/m1/graphs/?range=1h").status_code == 403


def test_the_openapi_schema_documents_the_endpoint(api):
    schema = api.get("/api/v1/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/mirrors/{name}/graphs/"]["get"]
    assert {p["name"] for p in operation["parameters"]} >= {"name", "range", "topic"}
    range_ = next(p for p in operation["parameters"] if p["name"] == "range")
    assert range_["schema"]["enum"] == ["15m", "1h", "24h", "7d", "30d"]
    assert "7d and 30d: one point per hour" in range_["description"]
    assert {"200", "400", "404", "503"} <= set(operation["responses"])
