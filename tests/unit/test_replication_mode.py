"""Choosing between micro-batches and Spark's real-time mode, and reading a checkpoint's offsets."""

from __future__ import annotations

import pytest

from spark_runtime import copy_progress, real_time
from spark_runtime import replication_mode as rm
from spark_runtime.checkpoint_store import parse_offsets_entry
from spark_runtime.copy_progress import CopyProgress


def test_forced_modes():
    assert rm.decide(rm.MICRO_BATCH, 3, 8, 0, 100).mode == rm.MICRO_BATCH
    assert rm.decide(rm.REAL_TIME, 3, 8, 10**9, 100).mode == rm.REAL_TIME


def test_real_time_forced_without_a_slot_per_partition_names_both_counts():
    with pytest.raises(rm.ModeError, match="5 partitions, 2 task slots"):
        rm.decide(rm.REAL_TIME, 5, 2, 0, 100)


def test_auto_needs_a_slot_per_partition():
    decision = rm.decide(rm.AUTO, 5, 4, 0, 100)
    assert decision.mode == rm.MICRO_BATCH and "5 partitions" in decision.reason


def test_auto_copies_a_backlog_in_micro_batches_and_a_trickle_in_real_time():
    assert rm.decide(rm.AUTO, 3, 4, 101, 100).mode == rm.MICRO_BATCH
    assert rm.decide(rm.AUTO, 3, 4, 100, 100).mode == rm.REAL_TIME


def test_a_running_real_time_query_absorbs_a_burst_up_to_the_fall_back_factor():
    limit = 100
    assert rm.decide(rm.AUTO, 3, 4, limit * rm.FALL_BACK_FACTOR, limit, current=rm.REAL_TIME).mode == rm.REAL_TIME
    assert rm.decide(rm.AUTO, 3, 4, limit * rm.FALL_BACK_FACTOR + 1, limit, current=rm.REAL_TIME).mode \
        == rm.MICRO_BATCH


def test_auto_stays_with_micro_batches_when_tasks_run_on_executors():
    decision = rm.decide(rm.AUTO, 3, 4, 0, 100, local=False)
    assert decision.mode == rm.MICRO_BATCH and "per epoch" in decision.reason
    assert rm.decide(rm.REAL_TIME, 3, 4, 0, 100, local=False).mode == rm.REAL_TIME


def test_an_unknown_backlog_keeps_the_running_mode():
    assert rm.decide(rm.AUTO, 3, 4, None, 100, current=rm.REAL_TIME).mode == rm.REAL_TIME
    assert rm.decide(rm.AUTO, 3, 4, None, 100).mode == rm.MICRO_BATCH


@pytest.mark.parametrize("value", ["fast", "realtime", ""])
def test_a_setting_outside_the_three_is_refused(value):
    if value == "":
        assert rm.parse_setting(value) == rm.AUTO
        return
    with pytest.raises(rm.ModeError, match="auto, micro-batch, real-time"):
        rm.parse_setting(value)


def test_offsets_entry_gives_the_next_offset_per_partition():
    entry = 'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{}}\n{"orders":{"0":5,"1":7},"heartbeats":{"0":2}}'
    assert parse_offsets_entry(entry) == {("orders", 0): 5, ("orders", 1): 7, ("heartbeats", 0): 2}
    assert parse_offsets_entry("v1\n{}") == {}


def test_real_time_counters_add_only_their_growth(monkeypatch):
    clock = iter([100.0, 102.0])
    monkeypatch.setattr(copy_progress.time, "time", lambda: next(clock))
    progress = CopyProgress(lambda topic: f"east.{topic}")
    progress.absorb_real_time(["P\torders\t0\t9\t19\t10\t100"])
    progress.absorb_real_time(["P\torders\t0\t14\t24\t15\t150", "P\torders\t1\t-1\t-1\t0\t0"])
    metrics, partitions = progress.report()
    assert (metrics["records"], metrics["bytes"]) == (15, 150)
    assert partitions == [{"topic": "orders", "partition": 0, "remote_topic": "east.orders",
                           "last_upstream_offset": 14, "last_downstream_offset": 24, "records": 15, "bytes": 150,
                           "rate": {"records_per_s": 2.5, "bytes_per_s": 25.0, "at": 102.0}}]
    assert progress.next_offsets() == {("orders", 0): 15}


def test_the_real_time_epoch_is_the_flush_interval_and_at_least_sparks_minimum():
    assert real_time.epoch_ms(real_time.DEFAULT_EPOCH_MS, driver_commits=False) == 60_000
    assert real_time.epoch_ms(10_000, driver_commits=False) == 10_000
    assert real_time.epoch_ms(1_000, driver_commits=False) == real_time.MIN_EPOCH_MS


def test_with_the_driver_committing_positions_the_epoch_is_long():
    assert real_time.epoch_ms(real_time.DEFAULT_EPOCH_MS, driver_commits=True) == real_time.DRIVER_COMMITS_EPOCH_MS
    assert real_time.epoch_ms(3_600_000, driver_commits=True) == 3_600_000


def test_batches_count_records_bytes_and_the_rate_per_partition(monkeypatch):
    monkeypatch.setattr(copy_progress.time, "time", lambda: 50.0)
    progress = CopyProgress(lambda topic: f"east.{topic}")
    progress.record_batch(0, ["P\torders\t0\t0\t9\t9\t10\t1000", "P\torders\t1\t0\t3\t3\t4\t400"], 0.5)
    progress.record_batch(1, ["P\torders\t0\t10\t29\t29\t20\t2000"], 2.0)
    _, partitions = progress.report()
    by_partition = {p["partition"]: p for p in partitions}
    assert (by_partition[0]["records"], by_partition[0]["bytes"]) == (30, 3000)
    assert by_partition[0]["rate"] == {"records_per_s": 10.0, "bytes_per_s": 1000.0, "at": 50.0}
    assert by_partition[1]["rate"] == {"records_per_s": 8.0, "bytes_per_s": 800.0, "at": 50.0}


def test_after_real_time_mode_fell_behind_micro_batches_stay_while_records_arrive_faster_than_it_copied():
    capacity = 47_000.0
    stay = rm.decide(rm.AUTO, 2, 2, 30_000, 50_000, current=rm.MICRO_BATCH, arriving=49_500, capacity=capacity)
    assert stay.mode == rm.MICRO_BATCH
    assert stay.reason == ("49,500 records/s arriving; real-time mode fell behind copying 47,000/s: micro-batches "
                           "until they arrive at 37,600/s or less")
    back = rm.decide(rm.AUTO, 2, 2, 30_000, 50_000, current=rm.MICRO_BATCH, arriving=37_600, capacity=capacity)
    assert back.mode == rm.REAL_TIME
    # Without a capacity (never fell behind, or forgotten) or a known arrival rate: the backlog decides.
    assert rm.decide(rm.AUTO, 2, 2, 30_000, 50_000, current=rm.MICRO_BATCH, arriving=49_500).mode == rm.REAL_TIME
    assert rm.decide(rm.AUTO, 2, 2, 30_000, 50_000, current=rm.MICRO_BATCH, capacity=capacity).mode == rm.REAL_TIME
    # A running real-time query is judged by its backlog only.
    assert rm.decide(rm.AUTO, 2, 2, 30_000, 50_000, current=rm.REAL_TIME, arriving=49_500,
                     capacity=capacity).mode == rm.REAL_TIME


def test_rates_between_two_mode_checks():
    earlier = rm.Rates(at=100.0, written=1_000, copied=900)
    assert rm.Rates(at=105.0, written=251_000, copied=235_900).since(earlier) == (50_000.0, 47_000.0)
    assert rm.Rates(at=100.0, written=2_000, copied=900).since(earlier) is None  # no time passed
    assert rm.Rates(at=105.0, written=10, copied=900).since(earlier) is None  # the source's ends went back
