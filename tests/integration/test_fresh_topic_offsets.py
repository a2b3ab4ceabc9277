"""A topic created a moment ago answers offset requests with leader-election errors for a while
(NOT_LEADER, LEADER_NOT_AVAILABLE, UNKNOWN_LEADER_EPOCH): the admin asks again instead of failing,
as a new mirror reads its fresh remote topics' ends right after creating them. Forty rounds of fresh
topics have been enough to meet UNKNOWN_LEADER_EPOCH on a single-broker cluster."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient

from mirrorcore.admin import KafkaAdmin
from mirrorcore.connection import ClusterConnection
from tests.integration import kafka_tools


def test_end_offsets_right_after_creating_topics(devstack, unique):
    west = devstack.clusters["west"].bootstrap_servers
    admin = KafkaAdmin(ClusterConnection("west", west))
    created: list[str] = []
    try:
        for round_ in range(40):
            topics = {f"fresh-{unique}-{round_}-{i}": 8 for i in range(3)}
            created += topics
            assert sorted(admin.create_topics(topics)) == sorted(topics)
            partitions = [(topic, p) for topic, count in topics.items() for p in range(count)]
            assert admin.end_offsets(partitions) == dict.fromkeys(partitions, 0)
            assert admin.end_offsets(partitions, earliest=True) == dict.fromkeys(partitions, 0)

        written = f"fresh-{unique}-written"
        created.append(written)
        admin.create_topics({written: 2})
        kafka_tools.produce(west, written, {0: [kafka_tools.Record(b"k", b"v", (), 1_700_000_000_000)] * 3})
        assert admin.end_offsets([(written, 0), (written, 1)]) == {(written, 0): 3, (written, 1): 0}
    finally:  # nearly a thousand partitions would stay on the session's cluster for every later test
        cleaner = AdminClient({"bootstrap.servers": west})  # held until its deletions are answered
        for future in cleaner.delete_topics(created).values():
            future.result(30)
