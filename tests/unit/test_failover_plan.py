"""Failover and failback decisions: translations both ways, what is committed, refusals, the reverse mirror."""

from __future__ import annotations

import pytest

from mirrorcore.filters import NameFilter, TopicSelector
from mirrorcore.formats import OffsetSync
from mirrorcore.policy import ReplicationPolicy
from mirrors.services.failover_plan import (
    SyncIndex,
    back_rows,
    commit_plan,
    complete,
    failover_refusal,
    forward_rows,
    loop_reason,
    reverse_name,
)

POLICY = ReplicationPolicy("default", ".")
FORWARD = TopicSelector(NameFilter("orders, payments"), POLICY, "west")  # east -> west
REVERSE = TopicSelector(NameFilter("orders, payments"), POLICY, "east")  # west -> east
SYNCS = SyncIndex.of([OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 100, 100),
                      OffsetSync("orders", 0, 250, 250)])


def test_forward_rows_translate_with_mm2s_rule_and_skip_other_topics():
    rows = forward_rows({("orders", 0): 150, ("orders", 0 + 1): 5, ("audit", 0): 3, ("heartbeats", 0): 1},
                        SYNCS, FORWARD, lambda t: f"east.{t}")
    assert [(r["topic"], r["partition"], r["to_topic"], r["offset"], r["reprocess"]) for r in rows] == [
        ("orders", 0, "east.orders", 101, 49), ("orders", 1, "east.orders", None, None)]
    assert "no offset sync at or below 5" in rows[1]["note"]
    exact = forward_rows({("orders", 0): 250}, SYNCS, FORWARD, lambda t: f"east.{t}")
    assert (exact[0]["offset"], exact[0]["reprocess"]) == (250, 0)


@pytest.mark.parametrize(("downstream", "expected"), [(100, (100, 0)), (101, (101, 0)), (180, (101, 79)),
                                                      (250, (250, 0)), (260, (251, 9)), (0, (0, 0))])
def test_translate_back_never_skips(downstream, expected):
    assert SYNCS.translate_back("orders", 0, downstream) == expected


def test_translate_back_without_a_sync_below_is_unknown():
    index = SyncIndex.of([OffsetSync("orders", 0, 40, 10)])
    assert index.translate_back("orders", 0, 5) is None
    assert index.translate_back("orders", 1, 5) is None


def test_a_truncated_upstream_drops_the_later_history_both_ways():
    index = SyncIndex.of([OffsetSync("t", 0, 0, 0), OffsetSync("t", 0, 500, 500), OffsetSync("t", 0, 10, 600)])
    assert index.latest_upstream("t", 0) == 10
    assert index.translate_back("t", 0, 550) == (1, 549)


def test_back_rows_return_remote_topics_through_the_forward_syncs_and_local_ones_through_the_reverse():
    reverse = SyncIndex.of([OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 29, 29)])
    committed = {("east.orders", 0): 180, ("orders", 0): 30, ("orders", 1): 12, ("east.audit", 0): 4,
                 ("east.heartbeats", 0): 7, ("west.orders", 0): 3}
    rows = back_rows(committed, SYNCS, reverse, FORWARD, REVERSE, "east", "west")
    got = {(r["topic"], r["partition"]): (r["to_topic"], r["offset"], r["reprocess"]) for r in rows}
    assert got == {("east.orders", 0): ("orders", 101, 79), ("orders", 0): ("west.orders", 30, 0),
                   ("orders", 1): ("west.orders", None, None)}
    assert not complete(rows)
    assert "up to nothing of 12" in next(r["note"] for r in rows if r["partition"] == 1 and r["topic"] == "orders")


def test_back_rows_wait_until_the_reverse_mirror_copied_up_to_the_group():
    reverse = SyncIndex.of([OffsetSync("orders", 0, 0, 0), OffsetSync("orders", 0, 10, 10)])
    [row] = back_rows({("orders", 0): 30}, SYNCS, reverse, FORWARD, REVERSE, "east", "west")
    assert row["offset"] is None and "up to 11 of 30" in row["note"]


def test_the_reverse_selection_never_copies_the_sources_records_back():
    # On west: east's remote topics, west's own topics, the forward mirror's internal topics.
    on_west = ["east.orders", "orders", "east.heartbeats", "heartbeats", "east.checkpoints.internal",
               "mm2-offset-syncs.east.internal", "west.orders"]
    assert REVERSE.select(on_west) == ["heartbeats", "orders"]
    assert FORWARD.select(["orders", "west.orders", "west.east.orders", "heartbeats"]) == ["heartbeats", "orders"]


def test_commit_plan_only_moves_groups_forward_on_existing_partitions():
    rows = [{"to_topic": "t", "partition": 0, "offset": 50}, {"to_topic": "t", "partition": 1, "offset": 5},
            {"to_topic": "t", "partition": 2, "offset": 9}, {"to_topic": "t", "partition": 3, "offset": None}]
    assert commit_plan(rows, {("t", 1): 7}, {"t": 3}) == {("t", 0): 50, ("t", 2): 9}


@pytest.mark.parametrize(("desired", "state", "app", "phase", "key", "words"), [
    ("paused", "RUNNING", "running", None, "mirror", "is paused"),
    ("running", "PAUSED", "running", None, "mirror", "is paused"),
    ("running", "FAILED", "running", None, "mirror", "has failed"),
    ("running", "RUNNING", "failed", None, "mirror", "has failed"),
    ("stopped", "STOPPED", "not_running", "failed_over", "mirror", "failed over already"),
    ("stopped", "STOPPED", "running", "failed_back", "mirror", "has failed back and its source connector is stopped"),
])
def test_failover_refusals(desired, state, app, phase, key, words):
    refusal = failover_refusal("m", desired, state, app, phase)
    assert refusal is not None and words in refusal[key][0]


@pytest.mark.parametrize(("state", "phase"), [("RUNNING", None), ("RUNNING", "failed_back"), ("UNASSIGNED", None)])
def test_failover_allowed(state, phase):
    assert failover_refusal("m", "running", state, "running", phase) is None


def test_loops_and_names():
    assert loop_reason("default", "east", "west") is None
    assert "loop" in loop_reason("identity", "east", "west") and "west -> east" in loop_reason("legacy", "east", "west")
    assert reverse_name("m") == "m-failback"
    long = reverse_name("a" * 60)
    assert len(long) == 63 and long.endswith("-failback")
    assert reverse_name("a" * 53 + "-b" * 5).count("--") == 0
