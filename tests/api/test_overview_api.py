"""`GET /api/v1/overview/`: clusters, mirrors with their health, problems; cheap with 50 mirrors, alive
without Redis."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from mirrorcore import channel, series
from mirrors.models import Cluster, Connector, Deployment, Mirror
from mirrors.services import metrics, observed, overview
from mirrors.services.mirrors import create_mirror
from tests.fakes import DownRedis, FakeRedis

pytestmark = pytest.mark.django_db


class PipelinedFakeRedis(FakeRedis):
    """Counts round trips: each direct command, each executed pipeline."""

    def __init__(self):
        super().__init__()
        self.direct_calls = 0
        self.pipelines = 0

    def executed_pipeline(self) -> None:
        self.pipelines += 1

    def get(self, key):
        self.direct_calls += 1
        return super().get(key)

    def xrevrange(self, key, max="+", min="-", count=None):
        self.direct_calls += 1
        return super().xrevrange(key, max=max, min=min, count=count)


@pytest.fixture
def redis_fake(monkeypatch) -> PipelinedFakeRedis:
    fake = PipelinedFakeRedis()
    for module in (metrics, observed):
        monkeypatch.setattr(module, "get_redis", lambda: fake)
    return fake


@pytest.fixture
def clusters(db) -> dict[str, Cluster]:
    return {alias: Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092")
            for alias in ("east", "west", "north")}


def make_mirror(clusters, name="m1", source="east", target="west") -> Mirror:
    mirror = create_mirror(name=name, source=clusters[source], target=clusters[target], topics=f"t-{name}")
    Mirror.objects.filter(pk=mirror.pk).update(created_at=timezone.now() - timedelta(hours=1))
    return Mirror.objects.get(pk=mirror.pk)


def running(fake, mirror, now=None, lag_records=0, reported_ago=0.0, groups=None, **connectors) -> None:
    """A running application: deployment, connectors, live status, a recent heartbeat and lag point."""
    now = time.time() if now is None else now
    Deployment.objects.update_or_create(mirror_name=mirror.name, defaults={
        "state": "running", "pid": 4242, "submitted_at": timezone.now() - timedelta(minutes=10),
        "last_report_at": timezone.now()})
    reported = {kind: {"state": "RUNNING", "error": None, "tasks": [{"id": 0, "state": "RUNNING"}], "restart": 0}
                for kind in ("source", "checkpoint", "heartbeat")}
    for kind, fields in connectors.items():
        reported[kind] |= fields
    reported["checkpoint"]["groups"] = groups or []
    for kind, fields in reported.items():
        Connector.objects.filter(mirror=mirror, kind=kind).update(state=fields["state"], error=fields["error"] or "",
                                                                   tasks=fields["tasks"])
    fake.set(channel.status_key(mirror.name), json.dumps(
        {"generation": mirror.generation, "connectors": reported, "reported_at": now - reported_ago}))
    series.append(fake, mirror.name, "heartbeat", {"flow": "east->west", "latency_ms": 12,
                                                   "emitted_at": int(now * 1000) - 12}, at=now - 0.5)
    partitions = [{"topic": "t", "partition": 0, "remote_topic": "east.t", "records": lag_records, "seconds": 1.5}]
    series.append(fake, mirror.name, "lag", {"records": lag_records, "seconds": 1.5 if lag_records else 0.012,
                                             "idle": not lag_records, "partitions": partitions if lag_records else [],
                                             "source_ends": {"t": 100}}, at=now - 1)


def test_shapes_of_a_running_mirror(api, redis_fake, clusters):
    mirror = make_mirror(clusters)
    running(redis_fake, mirror, lag_records=7)
    response = api.get("/api/v1/overview/")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"generated_at", "clusters", "mirrors", "links", "problems", "counts"}
    assert body["generated_at"] == pytest.approx(time.time(), abs=5)
    assert body["clusters"] == [
        {"alias": "east", "bootstrap_servers": "east:9092", "mirrors_out": 1, "mirrors_in": 0},
        {"alias": "north", "bootstrap_servers": "north:9092", "mirrors_out": 0, "mirrors_in": 0},
        {"alias": "west", "bootstrap_servers": "west:9092", "mirrors_out": 0, "mirrors_in": 1},
    ]
    [row] = body["mirrors"]
    assert row == {
        "name": "m1", "source": "east", "target": "west", "health": "running",
        "reason": row["reason"], "application": "running", "link": "healthy", "latency_ms": 12,
        "lag_records": 7, "lag_seconds": 1.5, "url": "/mirrors/m1/",
        "connectors": {kind: {"state": "RUNNING", "desired_state": "running", "tasks": 1, "error": None}
                       for kind in ("checkpoint", "heartbeat", "source")},
    }
    assert row["reason"].startswith("replicating; last heartbeat 0.")
    assert body["problems"] == []
    assert body["counts"] == {"running": 1, "degraded": 0, "failed": 0, "paused": 0, "stopped": 0}


def test_every_health_is_counted(api, redis_fake, clusters):
    for name in ("ok", "paused", "stopped", "failed", "new"):
        make_mirror(clusters, name)
    for name in ("ok", "paused", "failed"):
        running(redis_fake, Mirror.objects.get(name=name))
    Connector.objects.filter(mirror__name="paused", kind="source").update(desired_state="paused")
    Connector.objects.filter(mirror__name="stopped").update(desired_state="stopped", state="STOPPED")
    Connector.objects.filter(mirror__name="failed", kind="source").update(state="FAILED", error="denied")
    running(redis_fake, Mirror.objects.get(name="failed"), source={"state": "FAILED", "error": "denied"})
    body = api.get("/api/v1/overview/").json()
    health = {row["name"]: (row["health"], row["reason"]) for row in body["mirrors"]}
    assert health == {
        "failed": ("failed", "the source connector failed: denied"),
        "new": ("degraded", health["new"][1]),
        "ok": ("running", health["ok"][1]),
        "paused": ("paused", "the source connector is paused"),
        "stopped": ("stopped", "every connector is stopped"),
    }
    assert health["new"][1].startswith("the application is not running"), health["new"]
    assert body["counts"] == {"running": 1, "degraded": 1, "failed": 1, "paused": 1, "stopped": 1}
    stopped = next(row for row in body["mirrors"] if row["name"] == "stopped")
    assert (stopped["latency_ms"], stopped["lag_records"]) == (None, None)
    assert [p for p in body["problems"] if p["mirror"] in ("stopped", "paused")] == [], "an operator's choice"


def test_problems_need_attention(api, redis_fake, clusters):
    now = time.time()
    for name in ("broken", "dead", "cut", "busy", "stale", "retrying"):
        make_mirror(clusters, name)
    running(redis_fake, Mirror.objects.get(name="broken"),
            checkpoint={"state": "FAILED", "error": "writing checkpoints to 'east.checkpoints.internal' failed"})
    Deployment.objects.create(mirror_name="dead", state="failed", last_error="the application exited unexpectedly:\n"
                              "(not restarted: 3 restarts reached the limit 3)")
    Deployment.objects.create(mirror_name="retrying", state="backoff", last_error="the application exited")
    cut = Mirror.objects.get(name="cut")
    running(redis_fake, cut)
    redis_fake.streams.pop(series.series_key("cut", "heartbeat"))
    series.append(redis_fake, "cut", "heartbeat", {"flow": "east->west", "latency_ms": 9}, at=now - 60)
    running(redis_fake, Mirror.objects.get(name="busy"), groups=[
        {"group": "billing", "sync": "skipped", "sync_note": "group is active on 'west' (1 members, STABLE): "
                                                              "offsets are only written while it has no members",
         "partitions": []},
        {"group": "fine", "sync": "synced", "sync_note": None, "partitions": []}])
    running(redis_fake, Mirror.objects.get(name="stale"), reported_ago=25)

    body = api.get("/api/v1/overview/").json()
    problems = {(p["mirror"], p["connector"], p["title"]): p for p in body["problems"]}
    assert set(problems) == {
        ("broken", "checkpoint", "checkpoint connector failed"),
        ("dead", None, "application failed"),
        ("retrying", None, "application restarting after a failure"),
        ("cut", None, "link east → west unhealthy"),
        ("busy", "checkpoint", "group 'billing' not synced to west"),
        ("stale", None, "application not reporting"),
    }
    assert problems[("broken", "checkpoint", "checkpoint connector failed")]["detail"].startswith("writing checkpoints")
    assert "3 restarts reached the limit 3" in problems[("dead", None, "application failed")]["detail"]
    assert "no heartbeat from east for 60 s (limit 10 s)" in problems[("cut", None, "link east → west unhealthy")][
        "detail"]
    assert "1 members, STABLE" in problems[("busy", "checkpoint", "group 'billing' not synced to west")]["detail"]
    assert problems[("stale", None, "application not reporting")]["detail"] == "the application last reported 25 s ago"
    assert all(p["url"] == f"/mirrors/{p['mirror']}/" for p in body["problems"])
    severities = [p["severity"] for p in body["problems"]]
    assert severities == sorted(severities, key=lambda s: s != "error"), "errors first"
    assert {p["mirror"] for p in body["problems"] if p["severity"] == "error"} == {"broken", "dead"}
    health = {row["name"]: row["health"] for row in body["mirrors"]}
    assert health == {"broken": "failed", "dead": "failed", "retrying": "degraded", "cut": "degraded",
                      "busy": "degraded", "stale": "degraded"}
    cut_row = next(row for row in body["mirrors"] if row["name"] == "cut")
    assert cut_row["link"] == "unhealthy" and cut_row["latency_ms"] is None, "a stale latency is not shown"


def test_an_old_lag_point_is_not_shown(api, redis_fake, clusters):
    mirror = make_mirror(clusters)
    running(redis_fake, mirror, now=time.time(), lag_records=3)
    redis_fake.streams.pop(series.series_key("m1", "lag"))
    series.append(redis_fake, "m1", "lag", {"records": 3, "seconds": 1.0, "partitions": []}, at=time.time() - 300)
    [row] = api.get("/api/v1/overview/").json()["mirrors"]
    assert (row["lag_records"], row["lag_seconds"]) == (None, None)


def test_without_redis_every_mirror_is_degraded_and_one_problem_says_why(api, clusters, monkeypatch):
    for name in ("a", "b"):
        mirror = make_mirror(clusters, name)
        Deployment.objects.create(mirror_name=mirror.name, state="running", pid=1, last_report_at=timezone.now())
        Connector.objects.filter(mirror=mirror).update(state="RUNNING")
    Connector.objects.filter(mirror__name="b").update(desired_state="stopped", state="STOPPED")
    for module in (metrics, observed):
        monkeypatch.setattr(module, "get_redis", DownRedis)
    response = api.get("/api/v1/overview/")
    assert response.status_code == 200, response.content
    body = response.json()
    rows = {row["name"]: row for row in body["mirrors"]}
    assert rows["a"]["health"] == "degraded"
    assert "Redis cannot be read" in rows["a"]["reason"] and "Connection refused" in rows["a"]["reason"]
    assert rows["b"]["health"] == "stopped"
    assert rows["a"]["connectors"]["source"]["state"] == "RUNNING", "the last recorded state"
    [redis_problem] = body["problems"]
    assert redis_problem["severity"] == "error" and redis_problem["title"] == "Redis cannot be read"
    assert redis_problem["url"] is None


@pytest.mark.parametrize("count", [1, 3, 8])
def test_mirrors_between_one_pair_of_clusters_share_one_link_and_one_label(api, redis_fake, clusters, count):
    """The topology draws one edge per pair and direction: its label summarises the mirrors, never one per mirror."""
    for i in range(count):
        running(redis_fake, make_mirror(clusters, f"m{i}"), lag_records=i)
    if count > 1:
        Connector.objects.filter(mirror__name="m1", kind="source").update(state="FAILED", error="denied")
        running(redis_fake, Mirror.objects.get(name="m1"), lag_records=1, source={"state": "FAILED", "error": "denied"})
    make_mirror(clusters, "back", source="west", target="east")
    body = api.get("/api/v1/overview/").json()
    assert [(link["source"], link["target"]) for link in body["links"]] == [("east", "west"), ("west", "east")]
    link = body["links"][0]
    assert link["count"] == count == len(link["mirrors"])
    total_lag = sum(range(count))
    if count == 1:
        assert (link["health"], link["url"], link["label"]) == ("running", "/mirrors/m0/", "m0\n12 ms · lag 0")
    else:
        assert link["health"] == "failed" and link["url"] is None
        assert link["counts"] == {"failed": 1, "running": count - 1}
        assert [m["name"] for m in link["mirrors"]] == ["m1", "m0", *(f"m{i}" for i in range(2, count))], \
            "worst first, then by name"
        assert link["label"] == f"{count} mirrors · 1 failed\nmax 12 ms · lag {total_lag}"
    assert link["lag_records"] == total_lag and link["latency_ms"] == 12
    assert body["links"][1]["label"] == "back" and body["links"][1]["count"] == 1


def test_empty(api, redis_fake):
    body = api.get("/api/v1/overview/").json()
    assert body["clusters"] == body["mirrors"] == body["links"] == body["problems"] == []
    assert set(body["counts"].values()) == {0}
    assert redis_fake.pipelines == 0


def test_a_constant_number_of_queries_and_one_redis_round_trip_for_50_mirrors(
        api, redis_fake, django_assert_max_num_queries, figures):
    aliases = [f"c{i}" for i in range(10)]
    clusters = {alias: Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092") for alias in aliases}

    def build(count: int) -> None:
        for i in range(Mirror.objects.count(), count):
            mirror = make_mirror(clusters, f"m{i}", aliases[i % 10], aliases[(i + 1 + i // 10) % 10])
            running(redis_fake, mirror, lag_records=i % 3,
                    groups=[{"group": f"g{i}", "sync": "skipped" if i % 7 == 0 else "synced", "sync_note": "busy",
                             "partitions": []}])

    build(5)
    with django_assert_max_num_queries(4) as few:
        overview.overview()
    build(50)
    redis_fake.direct_calls = redis_fake.pipelines = 0
    # The bounds are on this thread's CPU time: the unit and API tests run in a lowered session beside
    # the integration tests, where a wall-clock second can pass without the thread getting a core.
    with django_assert_max_num_queries(4) as many:
        started, cpu_started = time.perf_counter(), time.thread_time()
        body = overview.overview()
        elapsed, cpu = time.perf_counter() - started, time.thread_time() - cpu_started
    queries = [q["sql"] for q in many.captured_queries]  # now: a request resets the connection's query log
    assert len(queries) == len(few.captured_queries) == 4
    assert not any("metric" in sql.lower() for sql in queries), "the metric history is never read"
    assert (redis_fake.pipelines, redis_fake.direct_calls) == (1, 0), "one pipeline, nothing else"
    assert len(body["mirrors"]) == 50 and body["counts"]["running"] + body["counts"]["degraded"] == 50
    assert cpu < 1.0

    started, cpu_started = time.perf_counter(), time.thread_time()
    response = api.get("/api/v1/overview/")
    request_seconds, request_cpu = time.perf_counter() - started, time.thread_time() - cpu_started
    assert response.status_code == 200 and len(response.json()["mirrors"]) == 50
    assert request_cpu < 1.0
    figures(f"overview of 50 mirrors: {len(queries)} queries, 1 Redis pipeline, "
            f"{elapsed * 1000:.0f} ms in the service ({cpu * 1000:.0f} ms of CPU), "
            f"{request_seconds * 1000:.0f} ms for the request ({request_cpu * 1000:.0f} ms of CPU)")


@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
def test_every_role_may_read_the_overview(api_as, redis_fake, role):
    assert api_as(role).get("/api/v1/overview/").status_code == 200


def test_the_overview_needs_a_login(client, redis_fake):
    assert client.get("/api/v1/overview/").status_code == 401
