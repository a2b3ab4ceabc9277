"""Consumer failover through checkpoints and group offset sync, on real clusters and real Spark."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.integration import kafka_tools, mm2_client
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 20_000
READ_BEFORE_FAILOVER = 5_000
PARTITIONS = 3
OFFSET_LAG_MAX = 100
FAST_CHECKPOINTS = {
    "emit.checkpoints.interval.seconds": "1",
    "sync.group.offsets.enabled": "true",
    "sync.group.offsets.interval.seconds": "1",
    "refresh.groups.interval.seconds": "1",
}


def consume(bootstrap: str, group: str, topic: str, limit: int | None, idle_seconds: float = 8.0) -> list[tuple]:
    """(partition, offset, value) of the records a member of `group` reads, up to `limit`; commits them."""
    return [(p, o, v) for _, p, o, v in kafka_tools.consume_in_group(bootstrap, group, [topic], limit, idle_seconds)]


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        offsets = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in offsets if tp.offset >= 0}


def group_status(status: dict, group: str) -> dict | None:
    return next((g for g in status.get("checkpoints") or [] if g["group"] == group), None)


def start_mirror(api, devstack, name: str, topic: str, policy: str, group: str, **checkpoint_config) -> None:
    create_clusters(api, devstack)
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic, "groups": group,
        "replication_policy": policy,
        "connectors": {"source": {"config": {"offset.lag.max": str(OFFSET_LAG_MAX)}},
                       "checkpoint": {"config": FAST_CHECKPOINTS | checkpoint_config}},
    }, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("policy", ["default", "identity"])
def test_consumer_fails_over_at_the_translated_offset(api, devstack, control_plane, unique, figures, policy):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name, group = f"orders-{unique}", f"failover-{unique}", f"billing-{unique}"
    remote = topic if policy == "identity" else f"east.{topic}"
    kafka_tools.create_topic(east, topic, PARTITIONS)
    kafka_tools.produce(east, topic, {p: [Record(f"k{i}".encode(), str(i).encode(), (), int(time.time() * 1000))
                                          for i in range(p, RECORDS, PARTITIONS)] for p in range(PARTITIONS)})
    start_mirror(api, devstack, name, topic, policy, group)
    wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= RECORDS, 120)

    before = consume(east, group, topic, READ_BEFORE_FAILOVER)
    assert len(before) == READ_BEFORE_FAILOVER
    source_offsets = committed(east, group, topic, PARTITIONS)
    committed_at = time.monotonic()

    def synced(status: dict) -> bool:
        entry = group_status(status, group)
        return bool(entry and entry["sync"] == "synced" and len(entry["partitions"]) == len(source_offsets)
                    and all(p["target_offset"] is not None and p["committed_offset"] == source_offsets[p["partition"]]
                            for p in entry["partitions"]))

    status = wait_for_status(api, name, synced, 60)
    sync_seconds = time.monotonic() - committed_at
    entry = group_status(status, group)
    target_offsets = committed(west, group, remote, PARTITIONS)
    assert target_offsets == {p["partition"]: p["translated_offset"] for p in entry["partitions"]}

    # MM2's own client (RemoteClusterUtils.translateOffsets) reads our checkpoints like our API does.
    props = mm2_client.IDENTITY_POLICY if policy == "identity" else {}
    java = mm2_client.translate_offsets(west, "east", group, **props)
    response = api.get("/api/v1/offsets/translate/", {"group": group, "source": "east", "target": "west"})
    assert response.status_code == 200, response.content
    ours = {(o["topic"], o["partition"]): o["offset"] for o in response.json()["offsets"]}
    assert java == ours == {(remote, p): o for p, o in target_offsets.items()}

    after = consume(west, group, remote, None)
    read_before = Counter(value for _, _, value in before)
    read_after = Counter(value for _, _, value in after)
    missed = {str(i).encode() for i in range(RECORDS)} - set(read_before) - set(read_after)
    reread = sum((read_before & read_after).values())
    reread_per_partition = Counter(p for p, _, value in after if value in read_before)
    assert not missed, f"{len(missed)} records missed after failover"
    assert all(n <= OFFSET_LAG_MAX for n in reread_per_partition.values()), reread_per_partition
    assert sum(p["reprocess"] for p in entry["partitions"]) == reread, "the status predicts the records re-read"
    figures(f"failover ({policy}): source commit {sorted(source_offsets.items())} -> target group "
            f"{sorted(target_offsets.items())} on {remote}, {sync_seconds:.1f} s after the commit "
            f"(RemoteClusterUtils.translateOffsets and our API agree: {sorted(java.values())}); "
            f"0 missed, {reread} re-read (per partition {dict(sorted(reread_per_partition.items()))}, "
            f"offset.lag.max={OFFSET_LAG_MAX})")


def test_group_active_on_target_is_not_overwritten(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name, group = f"active-{unique}", f"active-{unique}", f"dashboard-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    kafka_tools.produce(east, topic, {0: [Record(None, str(i).encode(), (), int(time.time() * 1000))
                                          for i in range(2_000)]})
    start_mirror(api, devstack, name, topic, "default", group)
    wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= 2_000, 120)

    # A member of the group stays connected on the target, without committing anything.
    stop = threading.Event()
    joined = threading.Event()

    def member() -> None:
        consumer = Consumer({"bootstrap.servers": west, "group.id": group, "enable.auto.commit": False,
                             "auto.offset.reset": "latest"})
        consumer.subscribe([f"east.{topic}"])
        try:
            while not stop.is_set():
                consumer.poll(0.2)
                if consumer.assignment():
                    joined.set()
        finally:
            consumer.close()

    thread = threading.Thread(target=member, daemon=True)
    thread.start()
    try:
        assert joined.wait(30), "the target member never got its assignment"
        assert len(consume(east, group, topic, 1_500)) == 1_500
        status = wait_for_status(api, name, lambda s: (group_status(s, group) or {}).get("sync") == "skipped", 60)
        note = group_status(status, group)["sync_note"]
        assert "active" in note and "1 members" in note, note
        time.sleep(3)  # several sync intervals pass
        assert committed(west, group, f"east.{topic}", 1) == {}, "an active group's offsets were written"
    finally:
        stop.set()
        thread.join(10)
    status = wait_for_status(api, name, lambda s: (group_status(s, group) or {}).get("sync") == "synced", 60)
    translated = group_status(status, group)["partitions"][0]["translated_offset"]
    assert committed(west, group, f"east.{topic}", 1) == {0: translated}
    figures(f"active target group: sync skipped with note {note!r}; synced to {translated} once the member left")
