"""Metrics of a mirror (`/mirrors/{name}/metrics/`), link health and the status additions, on an in-memory Redis."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from mirrorcore import channel, series
from mirrors.models import Cluster, Connector, Deployment, Mirror
from mirrors.services import metrics, mirrors, observed
from mirrors.services.mirrors import create_mirror
from mirrors.services.status import checkpoint_groups
from tests.fakes import DownRedis

pytestmark = pytest.mark.django_db


@pytest.fixture
def mirror(db) -> Mirror:
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m1", source=east, target=west)
    Mirror.objects.filter(pk=mirror.pk).update(created_at=timezone.now() - timedelta(hours=1))
    return Mirror.objects.get(pk=mirror.pk)


def beat(fake, at, latency=12, name="m1"):
    series.append(fake, name, "heartbeat", {"flow": "east->west", "latency_ms": latency,
                                            "emitted_at": int(at * 1000) - latency}, at=at)


def live(fake, mirror, **connectors):
    states = {"source": "RUNNING", "heartbeat": "RUNNING", "checkpoint": "RUNNING"}
    status_doc = {"generation": mirror.generation, "connectors": {
        kind: {"state": state, "error": None, "tasks": [], "restart": 0} | connectors.get(kind, {})
        for kind, state in states.items()}}
    channel.publish_status(fake, mirror.name, status_doc)


def set_heartbeat(mirror, **fields):
    Connector.objects.filter(mirror=mirror, kind="heartbeat").update(**fields)


# -- the metrics endpoint ------------------------------------------------------------------

def test_metrics_default_to_the_last_15_minutes(api, fake_redis, mirror):
    now = time.time()
    for ago in (1200, 600, 30, 1):
        beat(fake_redis, now - ago, latency=ago)
    body = api.get("/api/v1/mirrors/m1/metrics/?series=heartbeat").json()
    assert body["mirror"] == "m1" and body["series"] == "heartbeat"
    assert [p["latency_ms"] for p in body["points"]] == [600, 30, 1]
    assert body["points"][-1]["flow"] == "east->west"
    assert body["points"][-1]["at"] == pytest.approx(now - 1, abs=0.01)
    assert body["until"] - body["since"] == 900


def test_metrics_window_and_limit(api, fake_redis, mirror):
    base = 1_700_000_000
    for i in range(10):
        series.append(fake_redis, "m1", "lag", {"records": i, "seconds": 0, "partitions": []}, at=base + i)
    url = f"/api/v1/mirrors/m1/metrics/?series=lag&since={base + 2}&until={base + 7.5}"
    assert [p["records"] for p in api.get(url).json()["points"]] == [2, 3, 4, 5, 6, 7]
    assert [p["records"] for p in api.get(url + "&limit=2").json()["points"]] == [6, 7]
    assert api.get(f"/api/v1/mirrors/m1/metrics/?series=checkpoint&since={base}").json()["points"] == []


@pytest.mark.parametrize(("query", "field", "reason"), [
    ("", "series", "required"),
    ("series=latency", "series", 'unknown series "latency": use one of heartbeat, lag, checkpoint'),
    ("series=lag&since=yesterday", "since", "valid number"),
    ("series=lag&since=1700000000000", "since", "not milliseconds"),
    ("series=lag&since=-1", "since", "greater than or equal to 0"),
    ("series=lag&since=20&until=10", "since", "must not be after until"),
    ("series=lag&limit=0", "limit", "greater than or equal to 1"),
    ("series=lag&limit=ten", "limit", "valid integer"),
    ("series=lag&limit=1000000", "limit", "less than or equal to 50000"),
])
def test_bad_metrics_queries_are_400s_naming_the_field(api, fake_redis, mirror, query, field, reason):
    response = api.get(f"/api/v1/mirrors/m1/metrics/?{query}")
    assert response.status_code == 400
    assert reason in response.json()[field][0]


def test_metrics_of_an_unknown_mirror_is_404(api, fake_redis, mirror):
    assert api.get("/api/v1/mirrors/nope/metrics/?series=lag").status_code == 404


def test_metrics_without_redis_is_503(api, mirror, monkeypatch):
    monkeypatch.setattr(metrics, "get_redis", DownRedis)
    response = api.get("/api/v1/mirrors/m1/metrics/?series=lag")
    assert response.status_code == 503
    assert "cannot read the lag series" in response.json()["detail"]


def test_metrics_need_authentication(fake_redis, mirror, client):
    assert client.get("/api/v1/mirrors/m1/metrics/?series=lag").status_code == 401


def test_deleting_a_mirror_deletes_its_series(api, fake_redis, mirror, django_capture_on_commit_callbacks):
    beat(fake_redis, time.time())
    series.append(fake_redis, "m1", "lag", {"records": 0})
    series.append(fake_redis, "other", "lag", {"records": 0})
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete("/api/v1/mirrors/m1/").status_code == 204
    assert list(fake_redis.streams) == [series.series_key("other", "lag")]


def test_deleting_a_mirror_tolerates_redis_being_away(api, mirror, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(mirrors, "get_redis", DownRedis)
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete("/api/v1/mirrors/m1/").status_code == 204
    assert not Mirror.objects.exists()


# -- link health ---------------------------------------------------------------------------

def published_link_health(mirror: Mirror, now: float | None = None) -> dict:
    """Link health with the live status the mirror's application published (if any)."""
    return metrics.link_health(mirror, observed.live_status(mirror), now)


def test_a_recent_heartbeat_is_healthy(fake_redis, mirror):
    now = time.time()
    beat(fake_redis, now - 2, latency=35)
    health = published_link_health(mirror, now=now)
    assert health == {"state": "healthy", "reason": "last heartbeat 2.0 s ago", "last_heartbeat_at": pytest.approx(
        now - 2, abs=0.01), "latency_ms": 35, "unhealthy_after_seconds": 10.0}


def test_silence_beyond_the_limit_is_unhealthy_and_names_the_paused_source(fake_redis, mirror):
    now = time.time()
    beat(fake_redis, now - 14)
    live(fake_redis, mirror, source={"state": "PAUSED"})
    health = published_link_health(mirror, now=now)
    assert health["state"] == "unhealthy"
    assert health["reason"] == "no heartbeat from east for 14 s (limit 10 s); the source connector is PAUSED"
    assert health["latency_ms"] == 12


def test_the_limit_comes_from_the_heartbeat_connector(fake_redis, mirror):
    now = time.time()
    beat(fake_redis, now - 14)
    set_heartbeat(mirror, config={"link.unhealthy.after.seconds": "30"})
    live(fake_redis, mirror)
    health = published_link_health(mirror, now=now)
    assert health["state"] == "healthy" and health["unhealthy_after_seconds"] == 30.0


def test_no_status_and_no_heartbeat_ever(fake_redis, mirror):
    health = published_link_health(mirror)
    assert health["state"] == "unhealthy"
    assert health["reason"] == ("no heartbeat from east yet (limit 10 s); the application reports no status; "
                                "the source connector is UNASSIGNED; the heartbeat connector is UNASSIGNED")
    assert health["last_heartbeat_at"] is None and health["latency_ms"] is None


def test_a_fresh_submission_waits_for_its_first_heartbeat(fake_redis, mirror):
    now = time.time()
    beat(fake_redis, now - 3600)  # from an earlier run
    Deployment.objects.create(mirror_name="m1", state="running", submitted_at=timezone.now() - timedelta(seconds=4))
    assert published_link_health(mirror, now=now)["reason"] == "waiting for the first heartbeat"
    assert published_link_health(mirror, now=now)["state"] == "unknown"
    assert published_link_health(mirror, now=now + 20)["state"] == "unhealthy"


def test_a_new_mirror_waits_for_its_first_heartbeat(fake_redis, mirror):
    Mirror.objects.filter(pk=mirror.pk).update(created_at=timezone.now())
    mirror.refresh_from_db()
    assert published_link_health(mirror)["state"] == "unknown"


@pytest.mark.parametrize(("policy", "config", "reason"), [
    ("legacy", {}, "legacy replication policy"),
    ("default", {"emit.heartbeats.enabled": "false"}, "emit.heartbeats.enabled=false"),
    ("identity", {"emit.heartbeats.enabled": "False"}, "emit.heartbeats.enabled=false"),
])
def test_heartbeats_off_is_unknown(fake_redis, mirror, policy, config, reason):
    Mirror.objects.filter(pk=mirror.pk).update(replication_policy=policy)
    set_heartbeat(mirror, config=config)
    mirror.refresh_from_db()
    health = published_link_health(mirror)
    assert health["state"] == "unknown" and reason in health["reason"]


@pytest.mark.parametrize("desired", ["paused", "stopped"])
def test_a_heartbeat_connector_held_still_says_so(fake_redis, mirror, desired):
    now = time.time()
    set_heartbeat(mirror, desired_state=desired)
    beat(fake_redis, now - 1)
    health = published_link_health(mirror, now=now)
    assert health["state"] == "healthy" and f"the heartbeat connector is {desired}" in health["reason"]
    health = published_link_health(mirror, now=now + 60)
    assert health["state"] == "unhealthy"
    assert health["reason"] == f"the heartbeat connector is {desired}: no heartbeats are emitted from east"


def test_a_heartbeat_connector_that_cannot_time_the_link_says_why(fake_redis, mirror):
    detail = "cannot write heartbeats on 'east' (denied): the link's latency is not measured"
    live(fake_redis, mirror, heartbeat={"detail": detail})
    health = published_link_health(mirror)
    assert health == health | {"state": "unknown", "reason": detail}


def test_link_health_without_redis_is_unknown(mirror, monkeypatch):
    monkeypatch.setattr(metrics, "get_redis", DownRedis)
    health = metrics.link_health(mirror, None)
    assert health["state"] == "unknown" and health["reason"].startswith("cannot read heartbeats: ")


# -- the status document -------------------------------------------------------------------

def test_status_shows_link_checkpoints_and_lag(api, fake_redis, mirror):
    now = time.time()
    beat(fake_redis, now - 1)
    lag = {"records": 42, "seconds": 3.5, "partitions": [
        {"topic": "orders", "partition": 0, "remote_topic": "east.orders", "records": 42, "seconds": 3.5}]}
    series.append(fake_redis, "m1", "lag", {"records": 0, "seconds": 0, "partitions": []}, at=now - 4)
    series.append(fake_redis, "m1", "lag", lag, at=now - 2)
    partition = {"topic": "orders", "partition": 0, "remote_topic": "east.orders", "committed_offset": 100,
                 "translated_offset": 99, "checkpoint_at": now - 5, "reprocess": 1, "target_offset": None,
                 "note": None}
    group = {"group": "g", "target_state": "EMPTY", "target_members": 0, "sync": "synced", "sync_note": None,
             "last_sync_at": now - 5, "partitions": [partition, partition | {"partition": 1, "checkpoint_at": None,
                                                                              "translated_offset": None}]}
    live(fake_redis, mirror, checkpoint={"detail": None, "groups": [group],
                                         "metrics": {"checkpoints": 1, "group_offset_syncs": 1, "groups": 1}})
    body = api.get("/api/v1/mirrors/m1/status/").json()
    assert body["link"]["state"] == "healthy"
    assert body["lag"] == lag | {"at": pytest.approx(now - 2, abs=0.01)}
    [shown] = body["checkpoints"]
    assert {k: v for k, v in shown.items() if k != "partitions"} == {k: v for k, v in group.items()
                                                                     if k != "partitions"}
    ages = [p.pop("checkpoint_age_seconds") for p in shown["partitions"]]
    assert ages[0] == pytest.approx(5, abs=1) and ages[1] is None
    assert shown["partitions"] == group["partitions"], "everything else passes through"
    assert {"name", "generation", "application", "connectors", "progress"} <= set(body)


def test_status_without_a_running_application(api, fake_redis, mirror):
    body = api.get("/api/v1/mirrors/m1/status/").json()
    assert body["checkpoints"] is None and body["lag"] is None and body["progress"] is None
    assert body["link"]["state"] == "unhealthy"


def test_checkpoint_groups_of_a_connector_without_groups():
    assert checkpoint_groups({"connectors": {"checkpoint": {"state": "RUNNING"}}}) == []
    assert checkpoint_groups({"connectors": {}}) == []
    assert checkpoint_groups(None) is None
