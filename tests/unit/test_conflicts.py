"""Two mirrors must never write the same remote topic (decided before either exists)."""

from __future__ import annotations

import pytest

from mirrors.services.conflicts import Flow, conflicts, overlapping


def flow(name: str, source: str = "east", target: str = "west", policy: str = "default", topics: str = ".*",
         exclude: str = "", separator: str = ".") -> Flow:
    return Flow(name, source, target, policy, separator, topics, exclude)


@pytest.mark.parametrize(("a", "b", "meet"), [
    ("orders", "orders", True),
    ("orders", "payments", False),
    ("orders.*", "payments.*", False),
    ("orders.*", "orders-eu", True),
    (".*", "payments", True),
    ("orders, audit", "audit", True),
    (r"orders\.eu", "orders.eu", True),
    ("ord.*", "orders.*", True),
    ("a?b", "b", True),
])
def test_filters_overlap_conservatively(a, b, meet):
    assert (overlapping(a, "", b, "") is not None) == meet


def test_exclusions_separate_literal_names():
    assert overlapping(".*", "orders", "orders", "") is None


def test_default_policy_conflicts_only_within_the_same_pair():
    assert conflicts(flow("new"), [flow("old")])
    assert not conflicts(flow("new"), [flow("old", source="north")]), "north.t and east.t differ"
    assert not conflicts(flow("new"), [flow("old", target="north")])
    assert not conflicts(flow("new", topics="orders"), [flow("old", topics="payments")])
    assert not conflicts(flow("new", separator="_"), [flow("old")])


def test_identity_conflicts_across_sources_into_one_target():
    [reason] = conflicts(flow("new", policy="identity", topics="orders"),
                         [flow("old", source="north", policy="identity")])
    assert "mirror 'old' (north -> west) may also write the same topic names on 'west'" in reason
    assert "'orders'" in reason
    assert not conflicts(flow("new", policy="identity"), [flow("old", policy="default")])


def test_a_mirror_does_not_conflict_with_itself():
    assert not conflicts(flow("m"), [flow("m")])
