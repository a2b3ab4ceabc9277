"""Failover of a mirror east -> west and failback through its reverse mirror, on real clusters and real Spark.

A consumer group reads part of a topic on east, fails over to west and goes on there; producers write on
west; the failback copies those records to east (`west.<topic>`), never east's records back to west or
west's back again, and the group goes on on east. Counted throughout: records skipped (must be 0) and
records read twice (reported).
"""

from __future__ import annotations

import time
from collections import Counter

import pytest
from confluent_kafka.admin import AdminClient

from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 3_000
READ_ON_EAST = 1_000
WRITTEN_ON_WEST = 500
READ_ON_WEST_BEFORE_FAILBACK = 200
IDLE_SECONDS = 5
SOURCE = {"offset.lag.max": "100", "offset.flush.interval.ms": "5000"}
CHECKPOINT = {"emit.checkpoints.interval.seconds": "1", "refresh.groups.interval.seconds": "1"}


def values(prefix: str, count: int) -> list[bytes]:
    return [f"{prefix}-{i}".encode() for i in range(count)]


def produce(bootstrap: str, topic: str, items: list[bytes]) -> None:
    now = int(time.time() * 1000)
    kafka_tools.produce(bootstrap, topic, {0: [Record(None, value, (), now) for value in items]})


def topics_on(bootstrap: str) -> set[str]:
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics)


def test_failover_and_failback_skip_nothing_and_never_loop(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name, group = f"fo-{unique}", f"fo-{unique}", f"shop-{unique}"
    remote, back_remote = f"east.{topic}", f"west.{topic}"
    kafka_tools.create_topic(east, topic, 1)
    written_on_east = values("east", RECORDS)
    produce(east, topic, written_on_east)
    create_clusters(api, devstack)
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic, "groups": group,
        "connectors": {"source": {"config": SOURCE}, "checkpoint": {"config": CHECKPOINT}}}, format="json")
    assert response.status_code == 201, response.content
    wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= RECORDS, 180)

    # The group reads part of the topic on east and commits; then it stops there (consumers first).
    on_east = kafka_tools.consume_in_group(east, group, [topic], READ_ON_EAST)
    assert len(on_east) == READ_ON_EAST

    started = time.monotonic()
    response = api.post(f"/api/v1/mirrors/{name}/failover/", {"timeout": 120, "idle_seconds": IDLE_SECONDS},
                        format="json")
    failover_seconds = time.monotonic() - started
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["drained"] is True and body["forced"] is False and body["source_connector"] == "stopped"
    assert body["pending"] == [], body
    [moved] = [g for g in body["groups"] if g["group"] == group]
    assert moved["status"] == "synced" and moved["direction"] == "forward"
    [row] = moved["offsets"]
    assert (row["topic"], row["to_topic"], row["committed_offset"]) == (topic, remote, READ_ON_EAST)
    assert row["offset"] <= READ_ON_EAST and row["reprocess"] == READ_ON_EAST - row["offset"]

    # The group goes on on west from the translated offset: nothing skipped, the re-read ones counted.
    on_west_remote = kafka_tools.consume_in_group(west, group, [remote], None)
    assert on_west_remote[0][2] == row["offset"], "consumers on west start where the failover said"
    read = Counter(v for *_, v in on_east) + Counter(v for *_, v in on_west_remote)
    skipped_over = [v for v in written_on_east if v not in read]
    reread_over = sum(n - 1 for n in read.values())
    assert skipped_over == []
    assert reread_over == row["reprocess"]

    # Producers move to west and write there; the group reads part of it.
    kafka_tools.create_topic(west, topic, 1)
    written_on_west = values("west", WRITTEN_ON_WEST)
    produce(west, topic, written_on_west)
    on_west_local = kafka_tools.consume_in_group(west, group, [topic], READ_ON_WEST_BEFORE_FAILBACK)
    assert len(on_west_local) == READ_ON_WEST_BEFORE_FAILBACK

    started = time.monotonic()
    response = api.post(f"/api/v1/mirrors/{name}/failback/")
    assert response.status_code == 200, response.content
    body = response.json()
    reverse = body["reverse_mirror"]
    assert (reverse["name"], reverse["source"], reverse["target"], reverse["created"]) == (
        f"{name}-failback", "west", "east", True)
    assert body["phase"] == "failed_back"

    # What was written on west reaches east in the reverse flow's remote topic, byte for byte.
    wait_for(lambda: kafka_tools.end_offsets(east, back_remote).get(0) == WRITTEN_ON_WEST
             if back_remote in topics_on(east) else False, 240, f"{back_remote} on east", poll=1.0)
    arrived = [r.value for _, r in kafka_tools.read_topic(east, back_remote)[0]]
    assert arrived == written_on_west
    failback_seconds = time.monotonic() - started

    # The group's offsets return to east once the reverse mirror has copied far enough (beat task).
    state = wait_for(lambda: (lambda b: b if not b["pending_back"] else None)(
        api.get(f"/api/v1/mirrors/{name}/failover/").json()), 120, "group back on east", poll=1.0)
    [returned] = [g for g in state["groups"] if g["group"] == group and g["direction"] == "back"]
    assert returned["status"] == "synced", returned

    # No loop: east's records never come back to west again, nor west's to east twice.
    time.sleep(5)
    assert f"west.east.{topic}" not in topics_on(east)
    assert f"east.west.{topic}" not in topics_on(west)
    assert kafka_tools.end_offsets(east, topic) == {0: RECORDS}, "nothing written into east's own topic"
    assert kafka_tools.end_offsets(west, remote) == {0: RECORDS}
    assert kafka_tools.end_offsets(east, back_remote) == {0: WRITTEN_ON_WEST}

    # The group goes on on east: the rest of what west wrote, nothing of east's own topic skipped.
    on_east_again = kafka_tools.consume_in_group(east, group, [topic, back_remote], None)
    by_topic = Counter(t for t, *_ in on_east_again)
    read_west = Counter(v for *_, v in on_west_local) + Counter(v for t, *_, v in on_east_again if t == back_remote)
    skipped_back = [v for v in written_on_west if v not in read_west]
    reread_back = sum(n - 1 for n in read_west.values()) + by_topic[topic]
    assert skipped_back == []
    assert all(v in read for t, *_, v in on_east_again if t == topic), "only east's records already read"
    figures(f"failover: group at {READ_ON_EAST} on east -> {row['offset']} on {remote} "
            f"({failover_seconds:.1f} s, drained); {len(skipped_over)} skipped, {reread_over} re-read; "
            f"failback: {WRITTEN_ON_WEST} records written on west on east in {back_remote} "
            f"{failback_seconds:.1f} s after the failback; group back on east: {len(skipped_back)} skipped, "
            f"{reread_back} re-read ({by_topic[topic]} of {topic}); no west.east.* / east.west.* topic")
