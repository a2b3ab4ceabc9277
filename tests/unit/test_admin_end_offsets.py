"""End offsets of partitions whose leader is being elected (a topic created a moment ago): asked again
until answered, within the admin's timeout; other errors at once."""

from __future__ import annotations

import concurrent.futures
from types import SimpleNamespace

import pytest
from confluent_kafka import KafkaError, KafkaException

from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrorcore.connection import ClusterConnection


class Offsets:
    """list_offsets answering each request with the next planned outcome per partition."""

    def __init__(self, plans: dict[tuple[str, int], list[int]]) -> None:
        self.plans = plans
        self.requests: list[list[tuple[str, int]]] = []
        self.refreshed: list[str | None] = []  # topics whose metadata was asked for

    def list_offsets(self, request, request_timeout):
        self.requests.append(sorted((tp.topic, tp.partition) for tp in request))
        futures = {}
        for tp in request:
            outcome = self.plans[(tp.topic, tp.partition)].pop(0)
            future: concurrent.futures.Future = concurrent.futures.Future()
            if isinstance(outcome, KafkaError):
                future.set_exception(KafkaException(outcome))
            elif outcome < 0:
                future.set_exception(KafkaException(KafkaError(-outcome)))
            else:
                future.set_result(SimpleNamespace(offset=outcome))
            futures[tp] = future
        return futures

    def poll(self, timeout):
        return 0

    def list_topics(self, topic=None, timeout=None):
        self.refreshed.append(topic)


def admin_with(plans, timeout=5.0) -> tuple[KafkaAdmin, Offsets]:
    admin = KafkaAdmin(ClusterConnection("west", "127.0.0.1:1"), timeout=timeout)
    fake = Offsets(plans)
    admin.client = fake
    return admin, fake


def test_a_partition_without_a_leader_yet_is_asked_again():
    admin, fake = admin_with({("t", 0): [-KafkaError.NOT_LEADER_FOR_PARTITION, -KafkaError.LEADER_NOT_AVAILABLE, 7],
                              ("t", 1): [3]})
    assert admin.end_offsets([("t", 0), ("t", 1)]) == {("t", 0): 7, ("t", 1): 3}
    assert fake.requests == [[("t", 0), ("t", 1)], [("t", 0)], [("t", 0)]]


def test_a_leader_epoch_the_broker_does_not_know_yet_is_asked_again():
    """A broker that has not yet heard of a fresh partition's leader epoch answers
    UNKNOWN_LEADER_EPOCH for a moment after the topic is created."""
    admin, fake = admin_with({("t", 0): [-KafkaError.UNKNOWN_LEADER_EPOCH, -KafkaError.FENCED_LEADER_EPOCH,
                                         -KafkaError.REPLICA_NOT_AVAILABLE, -KafkaError.OFFSET_NOT_AVAILABLE, 0]})
    assert admin.end_offsets([("t", 0)]) == {("t", 0): 0}
    assert len(fake.requests) == 5


def test_no_leader_in_the_clients_metadata_yet_is_asked_again():
    """librdkafka fails the request itself, before asking a broker, while its metadata of a topic created
    a moment ago has no leader."""
    no_leaders = KafkaError(KafkaError._NOENT, "Failed to query partition leaders: No leaders found")
    admin, fake = admin_with({("t", 0): [no_leaders, no_leaders, 0], ("t", 1): [no_leaders, 0, 0]})
    assert admin.end_offsets([("t", 0), ("t", 1)]) == {("t", 0): 0, ("t", 1): 0}
    assert len(fake.requests) == 3
    assert fake.refreshed == ["t", "t"], "its metadata is asked for before each new try"


def test_a_leader_missing_beyond_the_timeout_is_the_clusters_error():
    admin, _ = admin_with({("t", 0): [-KafkaError.NOT_LEADER_FOR_PARTITION] * 100}, timeout=0.3)
    with pytest.raises(ClusterError, match=r"cluster 'west' .*NOT_LEADER_FOR_PARTITION"):
        admin.end_offsets([("t", 0)])


def test_other_errors_fail_at_once():
    admin, fake = admin_with({("t", 0): [-KafkaError.UNKNOWN_TOPIC_OR_PART, 1]})
    with pytest.raises(ClusterError, match="UNKNOWN_TOPIC_OR_PART"):
        admin.end_offsets([("t", 0)])
    assert len(fake.requests) == 1
