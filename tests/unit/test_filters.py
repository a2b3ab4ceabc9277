"""Topic, group and config-property selection with MirrorMaker 2's semantics and defaults."""

import pytest

from mirrorcore.filters import (
    DEFAULT_GROUPS_EXCLUDE,
    DEFAULT_TOPICS_EXCLUDE,
    NameFilter,
    PatternError,
    TopicSelector,
    compile_patterns,
    config_property_filter,
)
from mirrorcore.policy import ReplicationPolicy

# -- compile_patterns -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "   ", ",", " , ,, "])
def test_empty_list_compiles_to_none(value):
    assert compile_patterns(value) is None


def test_comma_list_matches_any_element():
    pattern = compile_patterns("orders,payments.*,audit")
    assert pattern is not None
    for name in ["orders", "payments", "payments-eu", "audit"]:
        assert pattern.fullmatch(name), name
    assert not pattern.fullmatch("other")


def test_whitespace_around_elements_is_trimmed():
    pattern = compile_patterns("  orders ,\tpayments\n,  ")
    assert pattern is not None
    assert pattern.fullmatch("orders")
    assert pattern.fullmatch("payments")
    assert not pattern.fullmatch(" orders")


def test_elements_must_match_in_full_not_as_a_substring():
    pattern = compile_patterns("orders")
    assert pattern is not None
    assert pattern.fullmatch("orders")
    assert not pattern.fullmatch("orders-eu")
    assert not pattern.fullmatch("eu-orders")


def test_alternation_inside_an_element_stays_inside_it():
    # each element is grouped, so "a|b" and "c" combine to (?:a|b)|(?:c), all anchored
    pattern = compile_patterns("a|b, c")
    assert pattern is not None
    assert {n for n in ["a", "b", "c", "ab", "bc"] if pattern.fullmatch(n)} == {"a", "b", "c"}


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("orders, pay(ments", "pay(ments"),
        ("[unclosed", "[unclosed"),
        ("ok, *bad, (also", "*bad"),
    ],
)
def test_invalid_regex_raises_pattern_error_naming_the_element(value, bad):
    with pytest.raises(PatternError) as excinfo:
        compile_patterns(value)
    assert excinfo.value.pattern == bad
    assert repr(bad) in str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)


# -- NameFilter ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "topic",
    ["x.internal", "x-internal", "x.replica", "__consumer_offsets", "__transaction_state",
     "mm2-offsets.B.internal", "connect-configs-internal"],
)
def test_default_topic_filter_excludes_mm2_defaults(topic):
    assert NameFilter().exclude == DEFAULT_TOPICS_EXCLUDE
    assert not NameFilter().matches(topic)


@pytest.mark.parametrize("topic", ["orders", "A.orders", "x_internal", "internal", "x.replicas", "_single"])
def test_default_topic_filter_keeps_ordinary_topics(topic):
    assert NameFilter().matches(topic)


def test_include_list_limits_the_selection():
    selection = NameFilter("orders, pay.*")
    assert selection.matches("orders")
    assert selection.matches("payments")
    assert not selection.matches("audit")
    assert not selection.matches("orders2")


def test_exclude_wins_over_include():
    selection = NameFilter("orders.*", "orders-test, .*\\.internal")
    assert selection.matches("orders-prod")
    assert not selection.matches("orders-test")
    assert not selection.matches("orders.internal")


def test_empty_include_selects_nothing_and_empty_exclude_excludes_nothing():
    assert not NameFilter("", "").matches("orders")
    assert NameFilter(".*", "").matches("__consumer_offsets")


def test_invalid_filter_fails_at_construction():
    with pytest.raises(PatternError):
        NameFilter("(")
    with pytest.raises(PatternError):
        NameFilter(".*", "good, [bad")


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("billing", True),
        ("console-consumer-12345", False),
        ("connect-my-sink", False),
        ("__internal-group", False),
        ("my-connect-group", True),
    ],
)
def test_default_group_filter(group, expected):
    assert NameFilter(".*", DEFAULT_GROUPS_EXCLUDE).matches(group) is expected


# -- TopicSelector ------------------------------------------------------------------------


def selector(include=".*", target="C", separator="."):
    return TopicSelector(NameFilter(include), ReplicationPolicy("default", separator), target)


@pytest.mark.parametrize("topic", ["heartbeats", "A.heartbeats", "B.A.heartbeats"])
def test_heartbeats_are_replicated_even_if_not_in_the_topic_filter(topic):
    assert selector(include="orders").should_replicate(topic)


def test_heartbeats_are_replicated_with_an_empty_topic_filter():
    assert selector(include="").should_replicate("heartbeats")
    assert not selector(include="").should_replicate("orders")


def test_heartbeats_from_the_target_itself_are_a_cycle():
    assert not selector(include="orders", target="C").should_replicate("C.heartbeats")
    assert not selector(include=".*", target="C").should_replicate("B.C.heartbeats")


@pytest.mark.parametrize(
    "topic",
    ["__consumer_offsets", "A.checkpoints.internal", "mm2-offset-syncs.C.internal", "mm2-configs.C.internal",
     ".hidden", "connect-status-internal"],
)
def test_internal_topics_are_never_replicated_even_if_included(topic):
    assert not TopicSelector(NameFilter(".*", ""), ReplicationPolicy(), "C").should_replicate(topic)


@pytest.mark.parametrize("topic", ["C.orders", "B.C.orders", "A.B.C.orders"])
def test_cycles_are_never_replicated_even_if_included(topic):
    assert not selector(include=".*", target="C").should_replicate(topic)


def test_chain_a_b_c_replicates_remote_topics_onward():
    assert selector(target="C").should_replicate("B.A.t")
    assert selector(target="C").should_replicate("A.t")


def test_select_sorts_and_filters():
    topics = {"orders", "C.orders", "B.orders", "__consumer_offsets", "heartbeats", "audit", "x.internal"}
    assert selector(include="orders, B\\..*").select(topics) == ["B.orders", "heartbeats", "orders"]
    assert selector(include="orders").select(list(topics)) == ["heartbeats", "orders"]


def test_selector_with_other_separator():
    chosen = selector(target="C", separator="_")
    assert chosen.should_replicate("B_A_t")
    assert not chosen.should_replicate("B_C_t")
    assert chosen.should_replicate("B_A_heartbeats")


# -- config_property_filter ---------------------------------------------------------------


@pytest.mark.parametrize(
    "prop",
    [
        "min.insync.replicas",
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "unclean.leader.election.enable",
    ],
)
def test_config_property_filter_excludes_mm2_defaults(prop):
    assert not config_property_filter().matches(prop)


@pytest.mark.parametrize(
    "prop", ["retention.ms", "cleanup.policy", "compression.type", "segment.bytes", "max.message.bytes"]
)
def test_config_property_filter_keeps_other_properties(prop):
    assert config_property_filter().matches(prop)


def test_config_property_filter_dots_are_literal():
    # the defaults escape their dots: "minXinsyncXreplicas" is not excluded
    assert config_property_filter().matches("minXinsyncXreplicas")


def test_config_property_filter_with_custom_exclude():
    custom = config_property_filter("retention\\..*")
    assert not custom.matches("retention.ms")
    assert custom.matches("min.insync.replicas")
