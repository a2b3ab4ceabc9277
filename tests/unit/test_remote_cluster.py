"""MM2's MirrorClient from topic names (upstream clusters, hops) and the checkpoint fold of translateOffsets."""

import logging

import pytest

from mirrorcore.formats import Checkpoint
from mirrorcore.policy import ReplicationPolicy
from mirrorcore.remote_cluster import heartbeat_topics, latest_checkpoints, replication_hops, upstream_clusters

DEFAULT = ReplicationPolicy()
IDENTITY = ReplicationPolicy("identity")
LEGACY = ReplicationPolicy("legacy")
DASH = ReplicationPolicy("default", "--")

# A cluster C fed by B (directly) and by A (directly, and through B), plus unrelated topics.
TOPICS = ["heartbeats", "B.heartbeats", "A.heartbeats", "B.A.heartbeats", "orders", "A.orders",
          "A.checkpoints.internal", "mm2-offset-syncs.C.internal", "__consumer_offsets"]


def test_heartbeat_topics_are_those_whose_original_topic_is_heartbeats():
    assert heartbeat_topics(TOPICS, DEFAULT) == {"heartbeats", "B.heartbeats", "A.heartbeats", "B.A.heartbeats"}
    assert heartbeat_topics(["heartbeats-old", "A.heartbeats.v2", "A.myheartbeats"], DEFAULT) == set()


def test_upstream_clusters_walk_every_heartbeat_topic_chain():
    assert upstream_clusters(TOPICS, DEFAULT) == {"A", "B"}
    assert upstream_clusters(["D.C.B.A.heartbeats"], DEFAULT) == {"A", "B", "C", "D"}


def test_no_heartbeat_topics_means_no_upstream_clusters():
    assert upstream_clusters(["orders", "A.orders", "heartbeats"], DEFAULT) == set()
    assert upstream_clusters([], DEFAULT) == set()


@pytest.mark.parametrize(("alias", "hops"), [("B", 1), ("A", 1), ("X", -1), ("heartbeats", -1)])
def test_hops_are_the_shortest_way_in(alias, hops):
    assert replication_hops(TOPICS, DEFAULT, alias) == hops


def test_hops_count_the_position_in_a_chain():
    topics = ["D.C.B.A.heartbeats", "D.A.heartbeats"]
    assert [replication_hops(topics, DEFAULT, alias) for alias in "DCBA"] == [1, 2, 3, 2]


def test_a_cycle_in_a_name_stops_the_walk():
    topics = ["A.B.A.C.heartbeats"]
    assert upstream_clusters(topics, DEFAULT) == {"A", "B"}
    assert replication_hops(topics, DEFAULT, "B") == 2
    assert replication_hops(topics, DEFAULT, "C") == -1, "MM2 gives up at the repeated source"


def test_custom_separator():
    topics = ["B--A--heartbeats", "B.heartbeats"]
    assert upstream_clusters(topics, DASH) == {"A", "B"}
    assert replication_hops(topics, DASH, "A") == 2
    assert replication_hops(topics, DASH, "B.heartbeats") == -1


def test_identity_policy_still_names_heartbeats_by_source():
    topics = ["orders", "A.heartbeats", "B.A.heartbeats", "A.orders"]
    assert upstream_clusters(topics, IDENTITY) == {"A", "B"}
    assert replication_hops(topics, IDENTITY, "A") == 1


def test_legacy_policy_knows_no_upstream():
    assert upstream_clusters(TOPICS, LEGACY) == set()
    assert replication_hops(TOPICS, LEGACY, "A") == -1


def _record(offset, checkpoint):
    return offset, checkpoint.key(), checkpoint.value()


def test_latest_checkpoint_per_partition_of_the_group_wins():
    records = [
        _record(0, Checkpoint("g", "A.orders", 0, 10, 8)),
        _record(1, Checkpoint("g", "A.orders", 1, 5, 5)),
        _record(2, Checkpoint("other", "A.orders", 0, 99, 97)),
        _record(3, Checkpoint("g", "A.orders", 0, 20, 18)),
        _record(4, Checkpoint("g", "A.payments", 0, 1, 1)),
        _record(5, Checkpoint("g2", "A.orders", 0, 30, 28)),
    ]
    assert latest_checkpoints(records, "g") == {("A.orders", 0): 18, ("A.orders", 1): 5, ("A.payments", 0): 1}
    assert latest_checkpoints(records, "nobody") == {}


def test_undecodable_records_are_logged_and_skipped(caplog):
    records = [
        _record(0, Checkpoint("g", "A.orders", 0, 10, 8)),
        (1, None, None),
        (2, b"\x00", b"garbage"),
        (3, Checkpoint("g", "A.orders", 0, 0, 0).key(), None),
        _record(4, Checkpoint("g", "A.orders", 1, 3, 3)),
    ]
    with caplog.at_level(logging.WARNING, logger="mirrorcore.remote_cluster"):
        assert latest_checkpoints(records, "g", "A.checkpoints.internal") == {("A.orders", 0): 8, ("A.orders", 1): 3}
    assert [r.getMessage().split(":")[0] for r in caplog.records] == [
        f"skipping undecodable record at A.checkpoints.internal-0@{offset}" for offset in (1, 2, 3)]
