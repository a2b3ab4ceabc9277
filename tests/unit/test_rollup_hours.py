"""The metric history's hours (mirrors/services/rollup.py): merging minutes into hours, compaction past
the minute retention, retention of hours, and the minute retention's setting."""

from __future__ import annotations

import runpy
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from mirrors.models import Cluster, MetricHour, MetricMinute
from mirrors.services import rollup
from mirrors.services.mirrors import create_mirror
from tests.fakes import FakeRedis
from tests.metric_history import H0, HOUR, lag, record_minutes, stored, two_cluster_mirror


@pytest.fixture
def fake() -> FakeRedis:
    return FakeRedis()


@pytest.fixture
def mirror(db):
    return two_cluster_mirror()


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
