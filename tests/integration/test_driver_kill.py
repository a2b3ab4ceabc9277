"""SIGKILL the Spark driver mid-backfill: the supervisor resubmits it and no record is lost."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 200_000
PARTITIONS = 3


def test_killed_driver_is_resubmitted_and_nothing_is_lost(api, devstack, control_plane, unique, figures):
    topic = f"backfill-{unique}"
    name = f"kill-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    payload = b"x" * 200
    expected = {p: [Record(f"{p}-{i}".encode(), payload, (), 1_700_000_000_000 + i)
                    for i in range(RECORDS // PARTITIONS + (1 if p < RECORDS % PARTITIONS else 0))]
                for p in range(PARTITIONS)}
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        # small micro-batches, so the kill lands between checkpoints mid-backfill
        "connectors": {"source": {"tasks_max": 2, "config": {"batch.max.records": "6000"}}},
    }, format="json")
    assert response.status_code == 201, response.content

    remote = f"east.{topic}"
    deadline = time.monotonic() + 120
    while sum(kafka_tools.end_offsets(west, remote).values()) < 20_000:
        assert time.monotonic() < deadline, "the backfill did not start"
        time.sleep(0.2)
    first = api.get(f"/api/v1/mirrors/{name}/status/").json()["application"]
    copied_at_kill = sum(kafka_tools.end_offsets(west, remote).values())
    assert copied_at_kill < RECORDS, "the backfill finished before the kill: make batches smaller"
    os.kill(first["pid"], signal.SIGKILL)
    killed_at = time.monotonic()

    status = wait_for_status(api, name, lambda s: s["application"]["pid"] not in (None, first["pid"]), 60)
    resubmitted_after = time.monotonic() - killed_at
    assert status["application"]["restarts"] >= 1
    assert "exited unexpectedly" in status["application"]["last_error"]

    # Done when the source connector reports every source offset written; duplicates make the
    # target longer than the source, so read it to its end offsets.
    last_offsets = {p: len(expected[p]) - 1 for p in range(PARTITIONS)}
    wait_for_status(api, name, lambda s: {
        p["partition"]: p["last_upstream_offset"] for p in (s["progress"] or {}).get("partitions", [])
    } == last_offsets, 240)
    target_end = kafka_tools.end_offsets(west, remote)
    total = sum(target_end.values())
    received = kafka_tools.consume_all(west, remote, total, timeout=120)
    duplicates = 0
    for partition in range(PARTITIONS):
        keys = [record.key for record in received.get(partition, [])]
        unique_in_order = list(dict.fromkeys(keys))
        duplicates += len(keys) - len(unique_in_order)
        assert unique_in_order == [r.key for r in expected[partition]], f"partition {partition} lost or reordered"
    figures(f"driver killed after {copied_at_kill} of {RECORDS} records; resubmitted after "
          f"{resubmitted_after:.1f}s; {total} records on the target, {duplicates} duplicates")
    assert sum(len(items) for items in received.values()) == total == RECORDS + duplicates
