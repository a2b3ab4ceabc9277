"""Two aliases of one Kafka cluster: by shared bootstrap address, and by cluster id at a connector's start."""

from __future__ import annotations

import pytest

from mirrorcore import one_cluster
from mirrorcore.admin import ClusterError, ClusterInfo
from mirrorcore.connection import ClusterConnection


class DescribedAdmin:
    """Answers `describe` as KafkaAdmin does: a cluster id, or the ClusterError of an unreachable cluster."""

    def __init__(self, alias: str, cluster_id: str | None = None, error: str | None = None) -> None:
        self.connection = ClusterConnection(alias=alias, bootstrap_servers=f"{alias}:9092")
        self.cluster_id, self.error = cluster_id, error
        self.timeouts: list[float | None] = []

    def describe(self, timeout: float | None = None) -> ClusterInfo:
        self.timeouts.append(timeout)
        if self.error:
            raise ClusterError(self.error)
        return ClusterInfo(self.cluster_id, 1, 1)


@pytest.mark.parametrize(("source", "target", "shared"), [
    (["a:9092"], ["b:9092"], []),
    (["a:9092", "b:9092"], ["c:9092", "B:9092"], ["b:9092"]),
    (["a:9092"], ["a:9093"], []),
    (["Host.Example:1", "x:2"], ["x:2", "host.example:1"], ["Host.Example:1", "x:2"]),
    ([""], [""], []),
])
def test_shared_addresses_compare_host_without_case_and_port_exactly(source, target, shared):
    assert one_cluster.shared_addresses(source, target) == shared


def test_one_cluster_id_under_two_aliases_is_refused_with_both_named():
    source, target = DescribedAdmin("east", "Zx3"), DescribedAdmin("west", "Zx3")
    reason = one_cluster.same_cluster(source, target)
    assert reason is not None
    assert reason.startswith("source 'east' and target 'west' are one Kafka cluster (cluster id Zx3)")
    assert source.timeouts == target.timeouts == [one_cluster.DESCRIBE_TIMEOUT_SECONDS]
    with pytest.raises(ValueError, match="one Kafka cluster"):
        one_cluster.ensure_two_clusters(source, target)


@pytest.mark.parametrize("target", [
    DescribedAdmin("west", "Ab1"),
    DescribedAdmin("west", None),
    DescribedAdmin("west", error="cluster 'west' (west:9092): no answer within 2s"),
])
def test_distinct_unknown_or_unreachable_clusters_pass(target):
    assert one_cluster.same_cluster(DescribedAdmin("east", "Zx3"), target) is None
    one_cluster.ensure_two_clusters(DescribedAdmin("east", "Zx3"), target)


def test_an_unreachable_source_is_not_compared_and_the_target_not_asked():
    target = DescribedAdmin("west", "Zx3")
    assert one_cluster.same_cluster(DescribedAdmin("east", error="down"), target) is None
    assert target.timeouts == []
