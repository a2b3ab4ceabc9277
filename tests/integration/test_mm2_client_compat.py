"""MirrorMaker 2's own Java client reads the checkpoint and heartbeat topics our encoders write.

The records come from mirrorcore/formats.py; the reader is `RemoteClusterUtils` from Maven
Central's connect-mirror-client (tests/integration/mm2_client.py runs it).
"""

from __future__ import annotations

import time

import pytest

from mirrorcore.formats import Checkpoint, Heartbeat
from tests.integration import kafka_tools, mm2_client
from tests.integration.kafka_tools import Record

SEPARATOR_UNDERSCORE = {"replication.policy.separator": "_"}


def write(bootstrap: str, topic: str, records: list[Checkpoint | Heartbeat], partition: int = 0) -> None:
    now = int(time.time() * 1000)
    kafka_tools.produce(bootstrap, topic, {partition: [Record(r.key(), r.value(), (), now) for r in records]})


def checkpoints(group: str, topic: str, offsets: dict[int, int]) -> list[Checkpoint]:
    """One checkpoint per partition; the upstream offset is arbitrary (MM2's client only returns downstream)."""
    return [Checkpoint(group, topic, p, upstream_offset=offset * 3, downstream_offset=offset, metadata=f"m{offset}")
            for p, offset in offsets.items()]


@pytest.mark.parametrize(("props", "checkpoints_topic", "remote_topic"), [
    pytest.param({}, "{alias}.checkpoints.internal", "{alias}.{topic}", id="default-policy"),
    pytest.param(mm2_client.IDENTITY_POLICY, "{alias}.checkpoints.internal", "{topic}", id="identity-policy"),
    pytest.param(SEPARATOR_UNDERSCORE, "{alias}_checkpoints_internal", "{alias}_{topic}", id="separator-underscore"),
])
def test_translate_offsets_returns_the_latest_checkpoint_per_partition_of_one_group(
        devstack, unique, props, checkpoints_topic, remote_topic):
    west = devstack.clusters["west"].bootstrap_servers
    alias = f"src{unique}"
    topic = checkpoints_topic.format(alias=alias)
    orders, payments = (remote_topic.format(alias=alias, topic=t) for t in (f"orders-{unique}", f"payments-{unique}"))
    group, other = f"billing-{unique}", f"billing-{unique}-2"
    kafka_tools.create_topic(west, topic, 1)
    write(west, topic, [
        *checkpoints(group, orders, {0: 10, 1: 20, 2: 30}),
        *checkpoints(other, orders, {0: 111, 1: 222}),
        *checkpoints(group, payments, {0: 5}),
        *checkpoints(group, orders, {1: 25}),  # a later checkpoint replaces the earlier one
        *checkpoints(other, payments, {3: 999}),
        *checkpoints(group, orders, {2: 37}),
    ])

    assert mm2_client.translate_offsets(west, alias, group, **props) == {
        (orders, 0): 10, (orders, 1): 25, (orders, 2): 37, (payments, 0): 5}
    assert mm2_client.translate_offsets(west, alias, other, **props) == {
        (orders, 0): 111, (orders, 1): 222, (payments, 3): 999}
    assert mm2_client.translate_offsets(west, alias, f"absent-{unique}", **props) == {}


def test_translate_offsets_reads_partition_0_of_the_checkpoints_topic_only(devstack, unique):
    west = devstack.clusters["west"].bootstrap_servers
    alias, group = f"src{unique}", f"g-{unique}"
    topic, orders = f"{alias}.checkpoints.internal", f"{alias}.orders"
    kafka_tools.create_topic(west, topic, 2)
    write(west, topic, checkpoints(group, orders, {0: 7}), partition=0)
    write(west, topic, checkpoints(group, orders, {0: 70, 1: 80}), partition=1)

    assert mm2_client.translate_offsets(west, alias, group) == {(orders, 0): 7}


def test_translate_offsets_skips_records_that_are_not_checkpoints(devstack, unique):
    west = devstack.clusters["west"].bootstrap_servers
    alias, group = f"src{unique}", f"g-{unique}"
    topic, orders = f"{alias}.checkpoints.internal", f"{alias}.orders"
    kafka_tools.create_topic(west, topic, 1)
    now = int(time.time() * 1000)
    first, second = checkpoints(group, orders, {0: 4, 1: 9})
    kafka_tools.produce(west, topic, {0: [
        Record(first.key(), first.value(), (), now),
        Record(b"garbage", b"\x00\x00\x01", (), now),  # truncated value: a SchemaException, logged and skipped
        Record(second.key()[:3], second.value(), (), now),  # truncated key
        Record(second.key(), second.value(), (), now),
    ]})

    assert mm2_client.translate_offsets(west, alias, group) == {(orders, 0): 4, (orders, 1): 9}


@pytest.mark.parametrize("props", [{}, mm2_client.IDENTITY_POLICY], ids=["default-policy", "identity-policy"])
def test_heartbeat_topics_give_upstream_clusters_and_replication_hops(devstack, unique, props):
    east = devstack.clusters["east"].bootstrap_servers
    near, relay, far = f"near{unique}", f"relay{unique}", f"far{unique}"
    for topic, source in ((f"{near}.heartbeats", near), (f"{relay}.{far}.heartbeats", far)):
        kafka_tools.create_topic(east, topic, 1)
        write(east, topic, [Heartbeat(source, relay if source == far else "east", int(time.time() * 1000))])

    assert {near, relay, far} <= mm2_client.upstream_clusters(east, **props)
    hops = {alias: mm2_client.replication_hops(east, alias, **props) for alias in (near, relay, far)}
    assert hops == {near: 1, relay: 1, far: 2}
    assert mm2_client.replication_hops(east, f"nowhere{unique}", **props) == -1
