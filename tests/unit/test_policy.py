"""ReplicationPolicy: MM2's DefaultReplicationPolicy and IdentityReplicationPolicy naming rules."""

import pytest

from mirrorcore.policy import HEARTBEATS_TOPIC, ReplicationPolicy

DEFAULT = ReplicationPolicy()
IDENTITY = ReplicationPolicy("identity")


def test_defaults_are_mm2s():
    assert DEFAULT.kind == "default"
    assert DEFAULT.separator == "."
    assert DEFAULT.internal_separator == "."
    assert DEFAULT.heartbeats_topic() == HEARTBEATS_TOPIC == "heartbeats"


@pytest.mark.parametrize("kind", ["mm1", "Default", ""])
def test_unknown_policy_kind_is_rejected(kind):
    with pytest.raises(ValueError, match="unknown replication policy"):
        ReplicationPolicy(kind)


def test_empty_separator_is_rejected():
    with pytest.raises(ValueError, match="separator"):
        ReplicationPolicy("default", "")


@pytest.mark.parametrize(
    ("separator", "source", "topic", "remote"),
    [
        (".", "A", "orders", "A.orders"),
        (".", "us-west", "orders.v1", "us-west.orders.v1"),
        (".", "B", "A.orders", "B.A.orders"),
        ("_", "A", "orders", "A_orders"),
        ("--", "A", "orders", "A--orders"),
        ("--", "B", "A--orders", "B--A--orders"),
    ],
)
def test_format_remote_topic_prefixes_the_source_alias(separator, source, topic, remote):
    assert ReplicationPolicy("default", separator).format_remote_topic(source, topic) == remote


@pytest.mark.parametrize(
    ("separator", "topic", "source", "upstream", "original"),
    [
        (".", "orders", None, None, "orders"),
        (".", "A.orders", "A", "orders", "orders"),
        (".", "B.A.orders", "B", "A.orders", "orders"),
        (".", "C.B.A.orders", "C", "B.A.orders", "orders"),
        (".", "A_orders", None, None, "A_orders"),
        ("_", "A_orders", "A", "orders", "orders"),
        ("_", "B_A_orders", "B", "A_orders", "orders"),
        ("_", "A.orders", None, None, "A.orders"),
        ("--", "A--orders", "A", "orders", "orders"),
        ("--", "B--A--orders", "B", "A--orders", "orders"),
        ("--", "my-topic", None, None, "my-topic"),
        ("--", "A--my-topic", "A", "my-topic", "my-topic"),
    ],
)
def test_source_upstream_and_original_topic(separator, topic, source, upstream, original):
    policy = ReplicationPolicy("default", separator)
    assert policy.topic_source(topic) == source
    assert policy.upstream_topic(topic) == upstream
    assert policy.original_topic(topic) == original


@pytest.mark.parametrize("separator", [".", "_", "--"])
def test_format_then_read_back_round_trips(separator):
    policy = ReplicationPolicy("default", separator)
    remote = policy.format_remote_topic("B", policy.format_remote_topic("A", "orders"))
    assert policy.topic_source(remote) == "B"
    assert policy.upstream_topic(remote) == policy.format_remote_topic("A", "orders")
    assert policy.original_topic(remote) == "orders"


def test_identity_policy_keeps_names_and_knows_no_source():
    assert IDENTITY.format_remote_topic("A", "orders") == "orders"
    assert IDENTITY.topic_source("orders") is None
    assert IDENTITY.topic_source("A.orders") is None
    assert IDENTITY.upstream_topic("orders") == "orders"
    assert IDENTITY.original_topic("A.orders") == "A.orders"


def test_identity_policy_cannot_detect_cycles():
    assert not IDENTITY.is_cycle("orders", "B")
    assert not IDENTITY.is_cycle("B.orders", "B")


@pytest.mark.parametrize(
    ("separator", "internal_enabled", "checkpoints", "offset_syncs"),
    [
        (".", True, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
        (".", False, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
        ("_", True, "A_checkpoints_internal", "mm2-offset-syncs_B_internal"),
        ("_", False, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
        ("--", True, "A--checkpoints--internal", "mm2-offset-syncs--B--internal"),
        ("--", False, "A.checkpoints.internal", "mm2-offset-syncs.B.internal"),
    ],
)
def test_internal_topic_names(separator, internal_enabled, checkpoints, offset_syncs):
    policy = ReplicationPolicy("default", separator, internal_enabled)
    assert policy.internal_separator == (separator if internal_enabled else ".")
    assert policy.checkpoints_topic("A") == checkpoints
    assert policy.offset_syncs_topic("B") == offset_syncs


@pytest.mark.parametrize("separator", [".", "_", "--"])
@pytest.mark.parametrize("internal_enabled", [True, False])
def test_own_internal_topics_are_internal(separator, internal_enabled):
    policy = ReplicationPolicy("default", separator, internal_enabled)
    assert policy.is_mm2_internal_topic(policy.checkpoints_topic("A"))
    assert policy.is_mm2_internal_topic(policy.offset_syncs_topic("B"))
    assert policy.is_internal_topic(policy.checkpoints_topic("A"))
    assert policy.is_internal_topic(policy.offset_syncs_topic("B"))


@pytest.mark.parametrize(
    "topic",
    [
        "__consumer_offsets",
        "__transaction_state",
        ".hidden",
        "connect-offsets.internal",
        "connect-configs-internal",
        "mm2-offsets.B.internal",
        "mm2-configs.B.internal",
        "mm2-status.B.internal",
        "A.checkpoints.internal",
        "mm2-offset-syncs.B.internal",
        "B.A.checkpoints.internal",
    ],
)
def test_internal_topics(topic):
    assert DEFAULT.is_internal_topic(topic)


@pytest.mark.parametrize("topic", ["orders", "A.orders", "heartbeats", "A.heartbeats", "internal", "my_internal_x"])
def test_ordinary_topics_are_not_internal(topic):
    assert not DEFAULT.is_internal_topic(topic)


@pytest.mark.parametrize(
    ("separator", "topic", "expected"),
    [
        (".", "heartbeats", True),
        (".", "A.heartbeats", True),
        (".", "B.A.heartbeats", True),
        (".", "heartbeats2", False),
        (".", "A.heartbeats.x", False),
        (".", "my-heartbeats", False),
        (".", "A_heartbeats", False),
        ("_", "A_heartbeats", True),
        ("_", "B_A_heartbeats", True),
        ("--", "B--A--heartbeats", True),
    ],
)
def test_is_heartbeats_topic(separator, topic, expected):
    assert ReplicationPolicy("default", separator).is_heartbeats_topic(topic) is expected


def test_identity_policy_recognises_the_local_heartbeats_topic():
    assert IDENTITY.is_heartbeats_topic("heartbeats")
    assert not IDENTITY.is_heartbeats_topic("orders")


@pytest.mark.parametrize(
    ("topic", "target", "expected"),
    [
        # chain A -> B -> C: on the flow B->C, topics on B
        ("t", "C", False),
        ("A.t", "C", False),
        ("B.A.t", "C", False),
        ("C.x", "C", True),
        ("B.C.x", "C", True),
        ("A.B.C.x", "C", True),
        ("CC.x", "C", False),
        ("A.CC.x", "C", False),
        ("A.x.C", "C", False),
        # a topic of B itself going back to B
        ("B.t", "B", True),
        ("heartbeats", "B", False),
        ("B.heartbeats", "B", True),
        ("A.heartbeats", "B", False),
    ],
)
def test_is_cycle(topic, target, expected):
    assert DEFAULT.is_cycle(topic, target) is expected


@pytest.mark.parametrize(
    ("separator", "topic", "target", "expected"),
    [
        ("_", "B_A_t", "C", False),
        ("_", "B_C_x", "C", True),
        ("_", "C.x", "C", False),
        ("--", "B--C--x", "C", True),
        ("--", "B--A--t", "C", False),
    ],
)
def test_is_cycle_with_other_separators(separator, topic, target, expected):
    assert ReplicationPolicy("default", separator).is_cycle(topic, target) is expected


# Regressions found while writing these tests: MM2's DefaultReplicationPolicy treats any name ending
# in `<internal separator>internal` as MM2-internal, and IdentityReplicationPolicy still renames
# heartbeats so that a flow's heartbeats stay distinguishable (`A.heartbeats`).
@pytest.mark.parametrize("topic", ["orders_internal", "connect_internal", "mm2-offset-syncs_B_internal"])
def test_any_name_ending_in_separator_internal_is_mm2_internal(topic):
    from mirrorcore.filters import NameFilter, TopicSelector

    policy = ReplicationPolicy("default", "_")
    assert policy.is_mm2_internal_topic(topic)
    assert policy.is_internal_topic(topic)
    assert not TopicSelector(NameFilter(), policy, "C").should_replicate(topic)


def test_identity_policy_still_prefixes_heartbeats():
    policy = ReplicationPolicy("identity")
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert policy.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert policy.topic_source("A.heartbeats") == "A"
    assert policy.topic_source("orders") is None
    assert policy.is_heartbeats_topic("A.heartbeats")
    assert policy.is_cycle("B.heartbeats", "B")


def test_legacy_policy_keeps_every_name_and_cannot_tell_origins():
    policy = ReplicationPolicy("legacy")
    assert policy.format_remote_topic("A", "orders") == "orders"
    assert policy.format_remote_topic("A", "heartbeats") == "heartbeats"
    assert policy.topic_source("A.orders") is None
    assert not policy.is_cycle("B.orders", "B")
