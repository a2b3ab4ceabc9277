"""The metric history in the database (mirrors/services/rollup.py): minute aggregation, idempotence,
resuming, retention, the Celery task (hours: test_rollup_hours.py)."""

from __future__ import annotations

import time

import pytest

from mirrorcore import series
from mirrors import tasks
from mirrors.models import Cluster, MetricHour, MetricMinute
from mirrors.services import rollup
from mirrors.services.mirrors import create_mirror, delete_mirror
from tests.fakes import DownRedis, FakeRedis
from tests.metric_history import H0, T0, TASKS_2, lag, record_minutes, stored, two_cluster_mirror


def test_a_minute_aggregates_every_series():
    data = rollup.minute_data({
        "heartbeat": [{"flow": "east->west", "latency_ms": 10}, {"flow": "east->west", "latency_ms": 30},
                      {"flow": "north->east", "latency_ms": 5}],
        "lag": [lag(30, 4.0, [("a", 0, 10, 4.0), ("a", 1, 20, None)]),
                lag(25, 6.5, [("a", 0, 5, 6.5), ("b", 2, 20, 1)]), lag(0, 0.2, [])],
        "throughput": [{"records_per_s": 10, "bytes_per_s": 100, "records": 10, "bytes": 100,
                        "topics": {"a": 10, "b": None, "c": None}},
                       {"records_per_s": 20, "bytes_per_s": 300, "records": 50, "bytes": 700, "topics": {"c": 4}},
                       {"records_per_s": 0, "bytes_per_s": 200, "records": 50, "bytes": 700}],
        "checkpoint": [{"groups": [{"group": "g", "partitions": 2, "checkpoints": 2, "reprocess": 40}]},
                       {"groups": [{"group": "g", "partitions": 2, "checkpoints": 1, "reprocess": 7},
                                   {"group": "h", "partitions": 1, "checkpoints": 0, "reprocess": None}]}],
        "tasks": [{"RUNNING": 3, "at": 1.0}, {"RUNNING": 1, "FAILED": 2, "at": 2.0}],
    })
    assert data["heartbeat"] == {"east->west": {"mean": 20.0, "max": 30, "n": 2},
                                 "north->east": {"mean": 5.0, "max": 5, "n": 1}}
    assert data["lag"] == {"records": 30, "seconds": 6.5, "n": 3, "topics": {
        "a": {"records": 30, "seconds": 6.5, "partitions": {"0": {"records": 10, "seconds": 6.5},
                                                            "1": {"records": 20, "seconds": None}}},
        "b": {"records": 20, "seconds": 1, "partitions": {"2": {"records": 20, "seconds": 1}}}}}
    # a topic missing from a sample was at 0; an unknown rate (None) is left out of the mean
    assert data["throughput"] == {"records_per_s": 10.0, "bytes_per_s": 200.0, "n": 3, "records": 50, "bytes": 700,
                                  "topics": {"a": 3.333, "b": None, "c": 2.0}}
    assert data["checkpoint"] == {"groups": {"g": {"reprocess": 40, "checkpoints": 3},
                                             "h": {"reprocess": None, "checkpoints": 0}}}
    assert data["tasks"] == {"FAILED": 2, "RUNNING": 3}


def test_series_without_points_are_left_out_and_partitions_are_capped_worst_first(monkeypatch):
    assert rollup.minute_data({"heartbeat": [], "lag": [lag(0, 0, [])]}) == {
        "lag": {"records": 0, "seconds": 0, "n": 1, "topics": {}}}
    monkeypatch.setattr(rollup, "MAX_PARTITIONS", 2)
    data = rollup.minute_data({"lag": [lag(6, 1, [("a", 0, 1, 1), ("a", 1, 3, 1), ("a", 2, 2, 1)])]})
    assert set(data["lag"]["topics"]["a"]["partitions"]) == {"1", "2"}


@pytest.fixture
def fake() -> FakeRedis:
    return FakeRedis()


@pytest.fixture
def mirror(db):
    return two_cluster_mirror()


def test_complete_minutes_are_rolled_up_once_and_a_second_run_changes_nothing(fake, mirror):
    record_minutes(fake, T0, 4)  # minutes T0 .. T0+180; the last one is still going at `now`
    now = T0 + 190
    assert rollup.rollup_mirror(fake, "m1", now) == 3
    rows = stored()
    assert sorted(rows) == [T0, T0 + 60, T0 + 120]
    assert rows[T0]["lag"] == {"records": 40, "seconds": 1, "n": 3, "topics": {}}
    assert rows[T0 + 60]["tasks"] == {"RUNNING": 2}
    assert rollup.rollup_mirror(fake, "m1", now) == 0
    assert stored() == rows
    # a minute is complete a few seconds after its end (points are appended as they happen)
    assert rollup.rollup_mirror(fake, "m1", T0 + 240 + rollup.SLACK_SECONDS - 1) == 0
    assert rollup.rollup_mirror(fake, "m1", T0 + 240 + rollup.SLACK_SECONDS) == 1
    assert sorted(stored()) == [T0, T0 + 60, T0 + 120, T0 + 180]


def test_two_runs_at_once_write_the_same_rows(fake, mirror):
    record_minutes(fake, T0, 3)
    start, end = rollup.pending("m1", T0 + 130)
    assert (start, end) == (rollup.minute_of(T0 + 130 - series.DEFAULT_RETENTION_SECONDS) + 60, T0 + 120)
    assert rollup.store_minutes(fake, "m1", start, end) == 2  # one run
    first = stored()
    MetricMinute.objects.filter(minute=rollup.as_datetime(T0)).update(data={"stale": True})
    assert rollup.store_minutes(fake, "m1", start, end) == 2  # the other, having computed the same range: upserts
    assert stored() == first
    assert MetricMinute.objects.count() == 2


def test_a_minute_before_the_newest_stored_one_is_not_rolled_again(fake, mirror):
    record_minutes(fake, T0, 2)
    MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(T0), data={"kept": True})
    assert rollup.rollup_mirror(fake, "m1", T0 + 130) == 1
    assert stored()[T0] == {"kept": True}
    assert stored()[T0 + 60]["tasks"] == {"RUNNING": 2}


def test_resumes_from_the_newest_stored_minute_and_never_further_back_than_redis_keeps(fake, mirror):
    record_minutes(fake, T0, 2)
    assert rollup.rollup_mirror(fake, "m1", T0 + 130) == 2
    record_minutes(fake, T0 + 600, 1)
    assert rollup.rollup_mirror(fake, "m1", T0 + 700) == 1
    assert sorted(stored()) == [T0, T0 + 60, T0 + 600]
    # seven hours later: only what Redis can still hold (6 h) is read, from its second minute on
    much_later = T0 + 7 * 3600
    record_minutes(fake, much_later - 6 * 3600 - 60, 3)
    assert rollup.rollup_mirror(fake, "m1", much_later) == 1
    oldest_read = rollup.minute_of(much_later - series.DEFAULT_RETENTION_SECONDS) + 60
    assert max(stored()) == oldest_read


def test_run_rolls_every_mirror_and_deletes_rows_past_the_retention(fake, mirror):
    west, east = Cluster.objects.get(alias="west"), Cluster.objects.get(alias="east")
    create_mirror(name="m2", source=west, target=east)
    record_minutes(fake, T0, 2)
    record_minutes(fake, T0, 1, name="m2")
    old = MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(T0 - 3 * 86400), data={})
    kept = MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(T0 + 130 - 86400 + 10), data={})
    orphan = MetricMinute.objects.create(mirror_name="gone", minute=rollup.as_datetime(T0), data={})
    result = rollup.run(fake, retention_days=1, now=T0 + 130)
    # the old minute is merged into its hour first (past the 48 h of minutes), then that hour goes too
    assert result == {"minutes": 2 + 1, "hours": 1, "compacted": 1, "deleted": 2, "error": None}
    assert not MetricHour.objects.exists()
    assert not MetricMinute.objects.filter(pk__in=[old.pk, orphan.pk]).exists()
    assert MetricMinute.objects.filter(pk=kept.pk).exists()
    assert sorted(stored("m2")) == [T0]


def test_redis_away_skips_the_rollup_but_not_the_retention(mirror):
    MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(T0 - 40 * 86400), data={})
    result = rollup.run(DownRedis(), retention_days=30, now=T0)
    assert result["minutes"] == 0 and result["deleted"] == 1
    assert "Connection refused" in result["error"]


def test_the_celery_task_uses_the_retention_settings(fake, mirror, monkeypatch, settings):
    settings.METRICS_RETENTION_DAYS = 2
    settings.METRICS_MINUTE_RETENTION_HOURS = 25
    monkeypatch.setattr(tasks, "get_redis", lambda: fake)
    MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(1_000_000_000), data={})
    hour_ago = rollup.hour_of(time.time() - 27 * 3600)  # past 25 h of minutes, within 2 days
    MetricMinute.objects.create(mirror_name="m1", minute=rollup.as_datetime(hour_ago + 60), data=TASKS_2)
    series.append(fake, "m1", "tasks", {"RUNNING": 1}, at=rollup.minute_of(time.time()) - 90)
    result = tasks.rollup_metrics()
    assert result == {"minutes": 1, "hours": 2, "compacted": 2, "deleted": 1, "error": None}
    assert [(int(h.hour.timestamp()), h.data) for h in MetricHour.objects.all()] == [(hour_ago, TASKS_2)]


def test_deleting_a_mirror_deletes_its_rows(fake, mirror, monkeypatch):
    from mirrors.services import mirrors as mirror_service

    monkeypatch.setattr(mirror_service, "get_redis", lambda: fake)
    for name in ("m1", "other"):
        MetricMinute.objects.create(mirror_name=name, minute=rollup.as_datetime(T0), data={})
        MetricHour.objects.create(mirror_name=name, hour=rollup.as_datetime(H0), data={})
    delete_mirror(mirror)
    assert list(MetricMinute.objects.values_list("mirror_name", flat=True)) == ["other"]
    assert list(MetricHour.objects.values_list("mirror_name", flat=True)) == ["other"]
