"""SIGKILL the Spark driver mid-backfill, three times: the supervisor resubmits it each time and no
record is lost."""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

PARTITIONS = 3
RECORDS = 150_000
KILLS = 3  # a single kill is the first of these; a kill of a resubmitted driver is the second and third


def test_killed_driver_is_resubmitted_and_nothing_is_lost(api, devstack, control_plane, unique, figures):
    records, kills = RECORDS, KILLS
    topic = f"backfill-{unique}"
    name = f"kill-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = kafka_tools.backfill(records, PARTITIONS)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        # small micro-batches, so kills land between and inside checkpoints mid-backfill
        "connectors": {"source": {"tasks_max": 2, "config": {"batch.max.records": "6000"}}},
    }, format="json")
    assert response.status_code == 201, response.content

    remote = f"east.{topic}"
    killed_at_counts, resubmit_seconds = [], []
    pid = wait_for_status(api, name, lambda s: s["application"]["pid"] is not None, 120)["application"]["pid"]
    for kill in range(kills):
        # The driver's pid is known before it passes the threshold, and it is killed the moment it does: a
        # resubmitted driver copies the rest of the backlog in about a second once it runs, faster than a
        # status request would notice.
        threshold = (kill + 1) * records // (kills + 3)
        deadline = time.monotonic() + 180
        while (copied := sum(kafka_tools.end_offsets(west, remote).values())) < threshold:
            assert time.monotonic() < deadline, "the backfill did not progress"
            time.sleep(0.05)
        assert copied < records, "the backfill finished before the kill: make batches smaller"
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()
        status = wait_for_status(api, name, lambda s, old=pid: s["application"]["pid"] not in (None, old), 60)
        pid = status["application"]["pid"]
        resubmit_seconds.append(time.monotonic() - killed_at)
        killed_at_counts.append(copied)
        assert status["application"]["restarts"] >= kill + 1
        assert "exited unexpectedly" in status["application"]["last_error"]

    # Done when the source connector reports every source offset written; duplicates make the
    # target longer than the source, so read it to its end offsets.
    last_offsets = {p: len(expected[p]) - 1 for p in range(PARTITIONS)}
    wait_for_status(api, name, lambda s: {
        p["partition"]: p["last_upstream_offset"] for p in (s["progress"] or {}).get("partitions", [])
        if p["topic"] == topic
    } == last_offsets, 300)
    target_end = kafka_tools.end_offsets(west, remote)
    total = sum(target_end.values())
    received = kafka_tools.consume_all(west, remote, total, timeout=180)
    duplicates = kafka_tools.duplicates_after_check(received, expected)
    figures(f"{kills} SIGKILL(s) at {killed_at_counts} of {records} records; resubmitted after "
            f"{', '.join(f'{s:.1f}' for s in resubmit_seconds)} s; {total} records on the target, "
            f"{duplicates} duplicates")
    assert sum(len(items) for items in received.values()) == total == records + duplicates
