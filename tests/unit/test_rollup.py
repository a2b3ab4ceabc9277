"""The metric history in the database (mirrors/services/rollup.py): minute aggregation, merging minutes
into hours, idempotence, resuming, compaction past the minute retention, retention of hours."""

from __future__ import annotations

import runpy
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from mirrors import tasks
from mirrors.models import Cluster, MetricHour, MetricMinute
from mirrors.services import rollup
from mirrors.services.mirrors import create_mirror, delete_mirror
from spark_runtime import series
from tests.fakes import DownRedis, FakeRedis

T0 = 1_700_000_040  # a minute's start (divisible by 60)
H0 = 1_699_999_200  # an hour's start (divisible by 3600)
HOUR = 3600
TASKS_2 = {"tasks": {"RUNNING": 2}}


def lag(records: int, seconds: float, partitions: list[tuple[str, int, int, float | None]]) -> dict:
    return {"records": records, "seconds": seconds, "idle": not partitions,
            "partitions": [{"topic": t, "partition": p, "remote_topic": f"east.{t}", "records": r, "seconds": s}
                           for t, p, r, s in partitions]}


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
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m1", source=east, target=west)


def record_minutes(fake, start: int, minutes: int, name: str = "m1") -> None:
    """A lag point every 20 s and a tasks point every 30 s."""
    for at in range(start, start + minutes * 60, 20):
        series.append(fake, name, "lag", lag(at - start, 1, []), at=at, retention_seconds=10**9)
    for at in range(start, start + minutes * 60, 30):
        series.append(fake, name, "tasks", {"RUNNING": 2}, at=at, retention_seconds=10**9)


def stored(name: str = "m1") -> dict[int, dict]:
    return {int(row.minute.timestamp()): row.data for row in MetricMinute.objects.filter(mirror_name=name)}


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


# -- merging minutes into hours -----------------------------------------------------------

def test_merging_heartbeats_weights_the_means_by_their_samples_and_keeps_the_max():
    merged = rollup.merge([
        {"heartbeat": {"east->west": {"mean": 20.0, "max": 30, "n": 2}}},
        {"heartbeat": {"east->west": {"mean": 50.0, "max": 50, "n": 1}, "north->east": {"mean": 5.0, "max": 6,
                                                                                      "n": 4}}},
        {"tasks": {"RUNNING": 1}},  # no heartbeat in this minute: left out, not a zero
    ])
    assert merged["heartbeat"] == {"east->west": {"mean": 30.0, "max": 50, "n": 3},
                                   "north->east": {"mean": 5.0, "max": 6, "n": 4}}


def test_merging_lag_keeps_the_maxima_in_total_per_topic_and_per_partition():
    first = {"lag": {"records": 30, "seconds": 6.5, "n": 30, "topics": {
        "a": {"records": 30, "seconds": 6.5, "partitions": {"0": {"records": 10, "seconds": 6.5},
                                                            "1": {"records": 20, "seconds": None}}}}}}
    second = {"lag": {"records": 12, "seconds": 9.0, "n": 29, "topics": {
        "a": {"records": 12, "seconds": None, "partitions": {"1": {"records": 2, "seconds": 3.0},
                                                             "2": {"records": 12, "seconds": None}}},
        "b": {"records": 1, "seconds": 9.0, "partitions": {"0": {"records": 1, "seconds": 9.0}}}}}}
    idle = {"lag": {"records": 0, "seconds": 0.2, "n": 30, "topics": {}}}
    assert rollup.merge([first, second, idle])["lag"] == {"records": 30, "seconds": 9.0, "n": 89, "topics": {
        "a": {"records": 30, "seconds": 6.5, "partitions": {"0": {"records": 10, "seconds": 6.5},
                                                            "1": {"records": 20, "seconds": 3.0},
                                                            "2": {"records": 12, "seconds": None}}},
        "b": {"records": 1, "seconds": 9.0, "partitions": {"0": {"records": 1, "seconds": 9.0}}}}}
    assert rollup.merge([idle, idle])["lag"] == {"records": 0, "seconds": 0.2, "n": 60, "topics": {}}


def test_merging_lag_keeps_the_worst_partitions_of_each_topic(monkeypatch):
    monkeypatch.setattr(rollup, "MAX_PARTITIONS", 2)

    def minute(partitions: dict[str, int]) -> dict:
        return {"lag": {"records": sum(partitions.values()), "seconds": 1, "n": 1, "topics": {"a": {
            "records": sum(partitions.values()), "seconds": 1,
            "partitions": {p: {"records": r, "seconds": 1} for p, r in partitions.items()}}}}}

    merged = rollup.merge([minute({"0": 5, "1": 1}), minute({"2": 3, "3": 2}), minute({"1": 4})])
    assert merged["lag"]["topics"]["a"]["partitions"] == {"0": {"records": 5, "seconds": 1},
                                                          "1": {"records": 4, "seconds": 1}}


def test_merging_throughput_weights_the_rates_and_keeps_the_newest_counts():
    merged = rollup.merge([
        {"throughput": {"records_per_s": 10.0, "bytes_per_s": 100.0, "n": 30, "records": 300, "bytes": 3000,
                        "topics": {"a": 10.0, "b": None}}},
        {"throughput": {"records_per_s": 40.0, "bytes_per_s": 400.0, "n": 10, "records": 700, "bytes": 7000,
                        "topics": {"a": 20.0, "b": None, "c": 20.0}}},
        {"throughput": {"records_per_s": 0.0, "bytes_per_s": 0.0, "n": 20, "records": None, "bytes": None}},
    ])
    # a: (10*30 + 20*10 + 0*20) / 60; b: never known; c: 0 where absent; the counts: the newest known
    assert merged["throughput"] == {"records_per_s": 11.667, "bytes_per_s": 116.7, "n": 60, "records": 700,
                                    "bytes": 7000, "topics": {"a": 8.333, "b": None, "c": 3.333}}
    assert "topics" not in rollup.merge([{"throughput": {"records_per_s": 1.0, "bytes_per_s": 1.0, "n": 1,
                                                         "records": 1, "bytes": 1}}])["throughput"]


def test_merging_checkpoints_and_tasks():
    merged = rollup.merge([
        {"checkpoint": {"groups": {"g": {"reprocess": 40, "checkpoints": 3}, "h": {"reprocess": None,
                                                                                 "checkpoints": 0}}},
         "tasks": {"RUNNING": 3}},
        {"checkpoint": {"groups": {"g": {"reprocess": 7, "checkpoints": 2}, "h": {"reprocess": 5, "checkpoints": 1},
                                   "i": {"reprocess": 0, "checkpoints": 1}}},
         "tasks": {"RUNNING": 1, "FAILED": 2}},
        {"checkpoint": {"groups": {}}, "tasks": {}},
    ])
    assert merged["checkpoint"] == {"groups": {"g": {"reprocess": 40, "checkpoints": 5},
                                               "h": {"reprocess": 5, "checkpoints": 1},
                                               "i": {"reprocess": 0, "checkpoints": 1}}}
    assert merged["tasks"] == {"FAILED": 2, "RUNNING": 3}


def test_merging_nothing_one_bucket_or_series_without_data():
    assert rollup.merge([]) == {}
    assert rollup.merge([{}, {}]) == {}
    minute = rollup.minute_data({"heartbeat": [{"flow": "east->west", "latency_ms": 12}],
                                 "lag": [lag(3, 1.0, [("a", 0, 3, 1.0)])], "tasks": [{"RUNNING": 2}]})
    assert rollup.merge([minute]) == minute
    assert rollup.merge([{"tasks": {}}]) == {"tasks": {}}  # a series with points but no value stays present


def test_merged_minutes_equal_the_minute_of_all_their_points_and_merging_merges_is_merging_all():
    heartbeats = [{"flow": "east->west", "latency_ms": ms} for ms in (10, 20, 30, 40, 50, 60)]
    lags = [lag(r, s, [("a", r % 3, r, s)]) for r, s in ((5, 1.0), (9, 4.0), (2, 0.5), (7, 2.0), (0, 0.1), (1, 1))]
    rates = [{"records_per_s": r, "bytes_per_s": 10 * r, "records": 100 * i, "bytes": 1000 * i, "topics": {"a": r}}
             for i, r in enumerate((10, 20, 30, 40, 50, 60))]
    checkpoints = [{"groups": [{"group": "g", "checkpoints": 1, "reprocess": r}]} for r in (4, 8, 1, 0, 2, 3)]
    task_counts = [{"RUNNING": c} for c in (1, 3, 2, 2, 1, 0)]
    points = {"heartbeat": heartbeats, "lag": lags, "throughput": rates, "checkpoint": checkpoints,
              "tasks": task_counts}
    minutes = [rollup.minute_data({name: pts[i:i + 2] for name, pts in points.items()}) for i in (0, 2, 4)]
    assert rollup.merge(minutes) == rollup.minute_data(points)
    assert rollup.merge([rollup.merge(minutes[:2]), minutes[2]]) == rollup.merge(minutes)


# -- compaction: minutes past the minute retention into hours ------------------------------

def minute_row(name: str, at: int, data: dict) -> MetricMinute:
    return MetricMinute.objects.create(mirror_name=name, minute=rollup.as_datetime(at), data=data)


def tasks_minute(running: int) -> dict:
    return rollup.minute_data({"tasks": [{"RUNNING": running}], "lag": [lag(running * 10, running, [])]})


def hours(name: str = "m1") -> dict[int, dict]:
    return {int(row.hour.timestamp()): row.data for row in MetricHour.objects.filter(mirror_name=name)}


@pytest.fixture
def history(mirror):
    """Minutes of m1 and m2 in the hours H0 .. H0+2h and at H0+10h."""
    west, east = Cluster.objects.get(alias="west"), Cluster.objects.get(alias="east")
    create_mirror(name="m2", source=west, target=east)
    for i, at in enumerate(range(H0, H0 + HOUR, 600)):  # 6 minutes of H0
        minute_row("m1", at, tasks_minute(i + 1))
    minute_row("m2", H0 + 60, tasks_minute(9))
    minute_row("m1", H0 + HOUR + 120, tasks_minute(2))
    minute_row("m1", H0 + 2 * HOUR, tasks_minute(3))
    minute_row("m1", H0 + 10 * HOUR, tasks_minute(4))


def test_only_complete_hours_past_the_minute_retention_become_hours_and_their_minutes_go(history):
    now = H0 + 2 * HOUR + 1800 + 48 * HOUR  # 48 h ago was H0+2h30: that hour is not complete before it
    h0_minutes = [row.data for row in MetricMinute.objects.filter(mirror_name="m1", minute__lt=rollup.as_datetime(
        H0 + HOUR))]
    assert rollup.compact(48, now) == (3, 6 + 1 + 1)
    assert hours() == {H0: rollup.merge(h0_minutes), H0 + HOUR: tasks_minute(2)}
    assert hours()[H0]["tasks"] == {"RUNNING": 6} and hours()[H0]["lag"]["n"] == 6
    assert hours("m2") == {H0: tasks_minute(9)}
    assert sorted(stored()) == [H0 + 2 * HOUR, H0 + 10 * HOUR]  # the rest stays minutes
    assert not stored("m2")
    # an hour later, the next hour is complete before the cutoff
    assert rollup.compact(48, now + 1800) == (1, 1)
    assert sorted(hours()) == [H0, H0 + HOUR, H0 + 2 * HOUR] and sorted(stored()) == [H0 + 10 * HOUR]


def test_compacting_twice_or_at_once_gives_the_same_hours(history):
    now = H0 + 50 * HOUR
    first_hour = {int(row.minute.timestamp()): row.data
                  for row in MetricMinute.objects.filter(mirror_name="m1", minute__lt=rollup.as_datetime(H0 + HOUR))}
    assert rollup.compact(48, now) == (3, 8)
    written = {name: hours(name) for name in ("m1", "m2")}
    assert rollup.compact(48, now) == (0, 0)  # nothing left to merge: the hours stay
    assert {name: hours(name) for name in ("m1", "m2")} == written
    # another run that read the same minutes upserts the same row; one that finds them gone writes nothing
    for at, data in first_hour.items():
        minute_row("m1", at, data)
    MetricHour.objects.filter(mirror_name="m1", hour=rollup.as_datetime(H0)).update(data={"stale": True})
    assert rollup.compact_hour("m1", rollup.as_datetime(H0)) == len(first_hour) == 6
    assert hours()[H0] == written["m1"][H0]
    assert rollup.compact_hour("m1", rollup.as_datetime(H0)) == 0
    assert hours()[H0] == written["m1"][H0]
    assert MetricHour.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_two_compactions_at_once_write_each_hour_once_from_all_its_minutes(mirror):
    for hour in range(H0, H0 + 20 * HOUR, HOUR):
        for m in range(0, 60, 3):
            minute_row("m1", hour + m * 60, tasks_minute(hour // HOUR % 5 + m))
    expected = {hour: rollup.merge([tasks_minute(hour // HOUR % 5 + m) for m in range(0, 60, 3)])
                for hour in range(H0, H0 + 20 * HOUR, HOUR)}
    start = threading.Barrier(2)

    def compact() -> tuple[int, int]:
        try:
            start.wait()
            return rollup.compact(48, H0 + 70 * HOUR)
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        results = [future.result() for future in [pool.submit(compact), pool.submit(compact)]]
    assert sum(hours for hours, _ in results) == 20 and sum(minutes for _, minutes in results) == 20 * 20
    assert hours() == expected
    assert not MetricMinute.objects.exists()


def test_a_compaction_backlog_is_merged_oldest_first_a_bounded_number_of_hours_per_run(history):
    assert rollup.compact(48, H0 + 60 * HOUR, limit=2) == (2, 7)  # H0 of m1 and of m2
    assert sorted(hours()) == [H0] and sorted(hours("m2")) == [H0]
    assert rollup.compact(48, H0 + 60 * HOUR, limit=2) == (2, 2)
    assert sorted(hours()) == [H0, H0 + HOUR, H0 + 2 * HOUR]


def test_the_retention_applies_to_hours_and_rows_of_deleted_mirrors_go_from_both_tables(mirror):
    now = H0 + 31 * 24 * HOUR
    old = MetricHour.objects.create(mirror_name="m1", hour=rollup.as_datetime(now - 30 * 24 * HOUR - HOUR), data={})
    kept = MetricHour.objects.create(mirror_name="m1", hour=rollup.as_datetime(now - 30 * 24 * HOUR + HOUR), data={})
    MetricHour.objects.create(mirror_name="gone", hour=rollup.as_datetime(now - 2 * HOUR), data={})
    minute_row("gone", now - 120, {})
    minute_row("m1", now - 120, {})
    assert rollup.delete_expired(30, now) == 3
    assert list(MetricHour.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not MetricHour.objects.filter(pk=old.pk).exists()
    assert list(MetricMinute.objects.values_list("mirror_name", flat=True)) == ["m1"]
    assert rollup.delete_expired(0, now + 10**9) == 0  # no retention: kept forever


def test_a_run_rolls_up_compacts_and_applies_the_retention(fake, history):
    now = H0 + 50 * HOUR
    record_minutes(fake, rollup.minute_of(now) - 120, 1)
    result = rollup.run(fake, retention_days=30, minute_retention_hours=48, now=now)
    assert result == {"minutes": 1, "hours": 3, "compacted": 8, "deleted": 0, "error": None}
    assert sorted(stored()) == [H0 + 2 * HOUR, H0 + 10 * HOUR, rollup.minute_of(now) - 120]
    assert rollup.run(fake, retention_days=30, minute_retention_hours=48, now=now)["hours"] == 0


# -- the setting -------------------------------------------------------------------------

SETTINGS = Path(__file__).resolve().parents[2] / "controlplane" / "settings.py"
VARIABLE = "MIRRORPLANE_METRICS_MINUTE_RETENTION_HOURS"


def test_the_minute_retention_defaults_to_48_hours_and_takes_25_or_more(monkeypatch):
    monkeypatch.delenv(VARIABLE, raising=False)
    assert runpy.run_path(str(SETTINGS))["METRICS_MINUTE_RETENTION_HOURS"] == 48
    monkeypatch.setenv(VARIABLE, "25")
    assert runpy.run_path(str(SETTINGS))["METRICS_MINUTE_RETENTION_HOURS"] == 25
    monkeypatch.setenv(VARIABLE, "72.5")
    assert runpy.run_path(str(SETTINGS))["METRICS_MINUTE_RETENTION_HOURS"] == 72.5


@pytest.mark.parametrize("value", ["24.9", "0", "-48", "two days", "", "nan", "inf"])
def test_a_minute_retention_under_25_hours_or_not_a_number_refuses_to_start(monkeypatch, value):
    monkeypatch.setenv(VARIABLE, value)
    with pytest.raises(ImproperlyConfigured) as refused:
        runpy.run_path(str(SETTINGS))
    assert str(refused.value) == f"{VARIABLE} must be a number of hours >= 25, not {value!r}"
