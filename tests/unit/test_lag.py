"""Replication lag points (records and seconds per partition) from positions and end offsets."""

from __future__ import annotations

from spark_runtime.lag import Positions, lag_point, source_ends

PARTITIONS = [("t", 0), ("t", 1), ("u", 0)]
REMOTES = {"t": "east.t", "u": "east.u"}


def test_records_waiting_and_age_of_the_oldest():
    positions = Positions({("t", 0): 90, ("t", 1): 50, ("u", 0): 7}, PARTITIONS, REMOTES, fresh=False)
    point = lag_point(positions, {("t", 0): 100, ("t", 1): 50, ("u", 0): 7}, {}, {("t", 0): 1_000_000},
                      now=1_010.5, idle_latency_ms=300)
    assert point == {"records": 10, "seconds": 10.5, "idle": False, "partitions": [
        {"topic": "t", "partition": 0, "remote_topic": "east.t", "records": 10, "seconds": 10.5}],
        "source_ends": {"t": 150, "u": 7}}


def test_idle_link_reports_the_heartbeat_latency():
    positions = Positions(dict.fromkeys(PARTITIONS, 5), PARTITIONS, REMOTES, fresh=False)
    point = lag_point(positions, dict.fromkeys(PARTITIONS, 5), {}, {}, now=0, idle_latency_ms=420)
    assert point == {"records": 0, "seconds": 0.42, "idle": True, "partitions": [], "source_ends": {"t": 10, "u": 5}}


def test_unknown_position_counts_from_the_beginning_only_for_a_fresh_mirror():
    ends = {("t", 0): 100, ("t", 1): 100, ("u", 0): 100}
    starts = {("t", 1): 40, ("u", 0): 0}
    fresh = Positions({("t", 0): 100}, PARTITIONS, REMOTES, fresh=True)
    assert lag_point(fresh, ends, starts, {}, now=0, idle_latency_ms=None)["records"] == 160
    restarted = Positions({("t", 0): 100}, PARTITIONS, REMOTES, fresh=False)
    assert lag_point(restarted, ends, starts, {}, now=0, idle_latency_ms=None)["records"] == 0, \
        "a restarted application does not know yet: no spike"


def test_source_ends_sum_every_mirrored_partition_lagging_or_not():
    positions = Positions(dict.fromkeys(PARTITIONS, 0), PARTITIONS, REMOTES, fresh=False)
    idle = lag_point(positions, {("t", 0): 4, ("t", 1): 6, ("u", 0): 0}, {}, {}, now=0, idle_latency_ms=None)
    assert idle["source_ends"] == {"t": 10, "u": 0}
    caught_up = Positions({("t", 0): 4, ("t", 1): 6, ("u", 0): 0}, PARTITIONS, REMOTES, fresh=False)
    assert lag_point(caught_up, {("t", 0): 4, ("t", 1): 6, ("u", 0): 0}, {}, {}, now=0,
                     idle_latency_ms=None)["source_ends"] == {"t": 10, "u": 0}, "listed even without lag"


def test_source_ends_leave_out_partitions_without_an_answer():
    assert source_ends(PARTITIONS, {("t", 1): 3, ("u", 0): 9}) == {"t": 3, "u": 9}
    assert source_ends(PARTITIONS, {}) == {}


def test_a_partition_resumed_from_an_offset_sync_counts_from_its_resume_offset_not_its_beginning():
    ends = {("t", 0): 100, ("t", 1): 100, ("u", 0): 100}
    starts = {("t", 0): 0, ("t", 1): 0, ("u", 0): 0}
    # no checkpoint: t:0 resumes after its sync at 89, t:1 and u:0 start at their beginning
    resumed = Positions({("t", 0): 90}, PARTITIONS, REMOTES, fresh=True)
    point = lag_point(resumed, ends, starts, {}, now=0, idle_latency_ms=None)
    assert {(p["topic"], p["partition"]): p["records"] for p in point["partitions"]} == {
        ("t", 0): 10, ("t", 1): 100, ("u", 0): 100}
