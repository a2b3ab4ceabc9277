"""`GET /api/v1/mirrors/{name}/readiness/`: topics caught up, groups on the target, drained once producers stopped."""

from __future__ import annotations

import re
import time

import pytest

from mirrorcore import channel, series
from mirrorcore.admin import ClusterError
from mirrors.models import Cluster, Connector, Mirror
from mirrors.services import metrics, readiness
from mirrors.services.mirrors import create_mirror
from tests.fakes import DownRedis

pytestmark = pytest.mark.django_db

URL = "/api/v1/mirrors/m1/readiness/"
SYNC = {"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"}


@pytest.fixture
def mirror(db) -> Mirror:
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    mirror = create_mirror(name="m1", source=east, target=west, topics="t, u")
    Connector.objects.filter(mirror=mirror, kind="checkpoint").update(config=SYNC)
    return mirror


@pytest.fixture
def target(monkeypatch) -> dict:
    """The target's committed offsets per group, as `ConsumerGroups.committed` reads them; `asked` lists calls."""
    offsets: dict = {"asked": []}

    class Groups:
        def __init__(self, admin) -> None:
            pass

        def committed(self, group: str) -> dict:
            offsets["asked"].append(group)
            if offsets.get("down"):
                raise ClusterError("cluster 'west' (west:9092): KafkaError{code=_TRANSPORT}: Connection refused")
            return offsets.get(group, {})

    monkeypatch.setattr(readiness, "KafkaAdmin", lambda *args, **kwargs: None)
    monkeypatch.setattr(readiness, "ConsumerGroups", Groups)
    return offsets


def lag_history(fake, now: float, writes_until: float, lag: dict[tuple[str, int], int] | None = None,
                seconds: float = 60, source_ends: bool = True) -> None:
    """A point every 2 s for `seconds`; topic t's end offsets grow until `writes_until`, u's never move."""
    at = now - seconds
    while at <= now - 1:
        point = {"records": 0, "seconds": 0.01, "idle": True, "partitions": []}
        if source_ends:  # the mirror's own heartbeats are written all the time
            point["source_ends"] = {"t": 1000 + int(min(at, writes_until) * 10) % 100_000, "u": 50,
                                    "heartbeats": int(at)}
        series.append(fake, "m1", "lag", point, at=at)
        at += 2
    if lag:  # the newest point: these partitions still have records to replicate
        partitions = [{"topic": t, "partition": p, "remote_topic": f"east.{t}", "records": n, "seconds": 2.5}
                      for (t, p), n in lag.items()]
        series.append(fake, "m1", "lag", {"records": sum(lag.values()), "seconds": 2.5, "idle": False,
                                          "partitions": partitions,
                                          "source_ends": {"t": 1000 + int(writes_until * 10) % 100_000, "u": 50,
                                                          "heartbeats": int(now)}},
                      at=now - 0.5)


def live(fake, mirror: Mirror, groups: list[dict]) -> None:
    channel.publish_status(fake, "m1", {"generation": mirror.generation, "connectors": {
        "source": {"state": "RUNNING", "topics": ["heartbeats", "t", "u"]},
        "checkpoint": {"state": "RUNNING", "groups": groups}}})


def group(name: str = "billing", translated: tuple = (10, 20), sync: str = "synced", note: str | None = None) -> dict:
    return {"group": name, "sync": sync, "sync_note": note, "partitions": [
        {"topic": "t", "partition": p, "remote_topic": "east.t", "committed_offset": 100 + p,
         "translated_offset": offset, "checkpoint_at": time.time() - 1,
         "note": None if offset is not None else "no offset sync at or below offset 101 yet: not replicated that far"}
        for p, offset in enumerate(translated)]}


def test_drained_once_producers_stopped_and_every_topic_caught_up(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40, lag={("heartbeats", 0): 1})  # heartbeats never count
    live(fake_redis, mirror, [group()])
    target["billing"] = {("east.t", 0): 10, ("east.t", 1): 25}  # at or past the translated offsets
    response = api.get(URL)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mirror"] == "m1"
    assert body["topics"] == [
        {"topic": "t", "remote_topic": "east.t", "lag_records": 0, "lag_seconds": 0.0, "caught_up": True},
        {"topic": "u", "remote_topic": "east.u", "lag_records": 0, "lag_seconds": 0.0, "caught_up": True},
    ]
    assert body["groups"] == [{"group": "billing", "partitions": 2, "checkpointed_partitions": 2,
                               "synced_partitions": 2, "checkpointed": True, "on_target": True, "note": None}]
    assert 34 <= body["source_idle_seconds"] <= 42
    assert body["producers_stopped"] is True and body["drained"] is True
    assert re.fullmatch(r"Drained: nothing written on east for \d+ s and all 2 topics caught up on west; "
                        r"every group \(1\) is on west\.", body["summary"]), body["summary"]
    assert target["asked"] == ["billing"]


def test_producers_still_writing(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now)
    live(fake_redis, mirror, [group()])
    body = api.get(URL).json()
    assert body["producers_stopped"] is False and body["drained"] is False
    assert body["source_idle_seconds"] == 0
    assert "producers on east wrote 0 s ago (waiting for 30 s without a write)" in body["summary"]
    assert body["summary"].startswith("Not drained: ")


def test_idle_seconds_is_the_quiet_time_asked_for(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 20)
    live(fake_redis, mirror, [])
    assert api.get(URL).json()["producers_stopped"] is False
    body = api.get(URL + "?idle_seconds=10").json()
    assert body["producers_stopped"] is True and body["drained"] is True
    assert body["summary"].endswith("no consumer group has checkpoints.")


def test_stopped_producers_with_records_still_to_replicate(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40, lag={("t", 0): 3, ("t", 1): 2})
    live(fake_redis, mirror, [group()])
    target["billing"] = {("east.t", 0): 10, ("east.t", 1): 20}
    body = api.get(URL).json()
    assert body["producers_stopped"] is True and body["drained"] is False
    assert body["topics"][0] == {"topic": "t", "remote_topic": "east.t", "lag_records": 5, "lag_seconds": 2.5,
                                 "caught_up": False}
    assert body["topics"][1]["caught_up"] is True
    assert body["summary"] == ("Not drained: 1 of 2 topics still have 5 records to replicate; "
                               "every group (1) is on west.")


def test_groups_not_yet_on_the_target_are_named(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40)
    live(fake_redis, mirror, [
        group("billing", sync="skipped", note="group is active on 'west' (1 members, STABLE)"),
        group("audit", translated=(5, None), sync="synced"),
        group("done")])
    target.update({"billing": {("east.t", 0): 10}, "audit": {("east.t", 0): 5},
                   "done": {("east.t", 0): 10, ("east.t", 1): 20}})
    body = api.get(URL).json()
    rows = {g["group"]: g for g in body["groups"]}
    assert rows["billing"] | {"note": None} == {"group": "billing", "partitions": 2, "checkpointed_partitions": 2,
                                                "synced_partitions": 1, "checkpointed": True, "on_target": False,
                                                "note": None}
    assert rows["billing"]["note"] == ("1 checkpointed partitions are not yet committed on west: "
                                       "group is active on 'west' (1 members, STABLE)")
    assert rows["audit"]["checkpointed"] is False and rows["audit"]["on_target"] is True, \
        "every checkpointed partition is on the target"
    assert rows["audit"]["note"] == ("1 of 2 partitions have no checkpoint yet (no offset sync at or below offset 101 "
                                     "yet: not replicated that far)")
    assert rows["done"]["on_target"] is True and rows["done"]["note"] is None
    assert body["drained"] is True, "drained is about topics; the summary names the groups"
    assert body["summary"].endswith("; groups not yet on west: billing.")


def test_without_group_offset_sync_only_checkpoints_are_reported(api, fake_redis, mirror, target):
    Connector.objects.filter(mirror=mirror, kind="checkpoint").update(config={})
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40)
    live(fake_redis, mirror, [group(sync="off", note="sync.group.offsets.enabled=false")])
    body = api.get(URL).json()
    [row] = body["groups"]
    assert (row["checkpointed"], row["checkpointed_partitions"], row["synced_partitions"], row["on_target"]) == \
        (True, 2, None, False)
    assert row["note"].startswith("sync.group.offsets.enabled is off: the translated offsets are only checkpoints "
                                  "in east.checkpoints.internal on west")
    assert target["asked"] == [], "the target is not asked"
    assert body["summary"].endswith("groups not yet on west: billing.")


def test_without_a_recent_lag_sample_nothing_is_claimed(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now - 120, writes_until=now - 300)
    body = api.get(URL).json()
    assert body["source_idle_seconds"] is None
    assert body["producers_stopped"] is False and body["drained"] is False
    assert body["groups"] == [] and body["topics"] == []
    assert body["summary"].startswith("Not drained: no lag sample in the last 15 s")


def test_an_application_without_source_ends_cannot_tell(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40, source_ends=False)
    live(fake_redis, mirror, [])
    body = api.get(URL).json()
    assert body["source_idle_seconds"] is None and body["drained"] is False
    assert [t["topic"] for t in body["topics"]] == ["t", "u"], "the topics the application reports"
    assert "the application does not report source end offsets yet" in body["summary"]


def test_groups_are_unknown_while_the_application_is_silent(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40)
    body = api.get(URL).json()
    assert body["groups"] == [] and body["drained"] is True
    assert body["summary"].endswith("consumer groups are unknown while the application reports no status.")


def test_an_unreachable_target_is_503_with_the_reason(api, fake_redis, mirror, target):
    now = time.time()
    lag_history(fake_redis, now, writes_until=now - 40)
    live(fake_redis, mirror, [group()])
    target["down"] = True
    response = api.get(URL + "?timeout=1")
    assert response.status_code == 503
    assert "cluster 'west' (west:9092)" in response.json()["detail"]
    assert "Connection refused" in response.json()["detail"]


def test_without_redis_it_is_503(api, mirror, monkeypatch):
    monkeypatch.setattr(metrics, "get_redis", DownRedis)
    response = api.get(URL)
    assert response.status_code == 503
    assert response.json()["detail"].startswith("cannot read the lag series: ")


@pytest.mark.parametrize(("query", "field", "reason"), [
    ("idle_seconds=soon", "idle_seconds", "A valid number is required."),
    ("idle_seconds=0", "idle_seconds", "greater than or equal to 1"),
    ("idle_seconds=-5", "idle_seconds", "greater than or equal to 1"),
    ("idle_seconds=86400", "idle_seconds", "less than or equal to 3600"),
    ("idle_seconds=nan", "idle_seconds", "A valid number is required."),
    ("timeout=0.1", "timeout", "greater than or equal to 0.5"),
])
def test_bad_queries_are_400s_naming_the_field(api, fake_redis, mirror, query, field, reason):
    response = api.get(f"{URL}?{query}")
    assert response.status_code == 400
    assert reason in response.json()[field][0]


def test_unknown_mirror_is_404(api, fake_redis, mirror):
    assert api.get("/api/v1/mirrors/nope/readiness/").status_code == 404


def test_a_viewer_may_read_it(api_as, fake_redis, mirror, client):
    assert api_as("viewer").get(URL).status_code == 200
    assert client.get(URL).status_code == 401


# -- the pure parts ----------------------------------------------------------------------------

def test_unchanged_for_counts_back_to_the_last_change():
    points = [{"at": 0, "source_ends": {"t": 1}}, {"at": 2, "source_ends": {"t": 2}},
              {"at": 4, "source_ends": {"t": 2}}, {"at": 6, "source_ends": {"t": 2}}]
    assert readiness.unchanged_for(points, now=7) == 4
    assert readiness.unchanged_for(points[:2], now=7) == 0
    assert readiness.unchanged_for(points, now=60) is None, "no fresh point"
    assert readiness.unchanged_for([{"at": 4}, *points[2:]], now=7) == 2, "a point without the sums breaks the run"
    assert readiness.unchanged_for([], now=0) is None
    beating = [{"at": at, "source_ends": {"t": 2, "heartbeats": at}} for at in (0, 2, 4, 6)]
    assert readiness.unchanged_for(beating, now=7) == 0
    assert readiness.unchanged_for(beating, now=7, keep=lambda topic: topic != "heartbeats") == 6
