"""Migration readiness (consumer-first) on a real running mirror: drained once producers stop."""

from __future__ import annotations

import time

import pytest

from tests.integration import kafka_tools
from tests.integration.test_checkpoints import FAST_CHECKPOINTS, committed, consume
from tests.integration.test_connector_verbs import Traffic
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

IDLE_SECONDS = 10
READ_ON_SOURCE = 1_000


def readiness(api, name: str) -> dict:
    response = api.get(f"/api/v1/mirrors/{name}/readiness/", {"idle_seconds": IDLE_SECONDS})
    assert response.status_code == 200, response.content
    return response.json()


def wait_for_readiness(api, name: str, predicate, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    body: dict = {}
    while time.monotonic() < deadline:
        body = readiness(api, name)
        if predicate(body):
            return body
        time.sleep(1)
    raise AssertionError(f"readiness condition not reached within {timeout}s; last: {body}")


def test_drained_after_producers_stop_with_the_group_on_the_target(api, devstack, control_plane, unique, figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name, group = f"migrate-{unique}", f"migrate-{unique}", f"app-{unique}"
    remote = f"east.{topic}"
    kafka_tools.create_topic(east, topic, 1)
    traffic = Traffic(east, topic)
    traffic.start()
    try:
        create_clusters(api, devstack)
        assert api.post("/api/v1/mirrors/", {
            "name": name, "source": "east", "target": "west", "topics": topic, "groups": group,
            "connectors": {"checkpoint": {"config": FAST_CHECKPOINTS}},
        }, format="json").status_code == 201
        wait_for_status(api, name, lambda s: topic in ((s["progress"] or {}).get("topics") or []), 120)

        # Producers still writing: never drained, whatever the lag.
        writing = wait_for_readiness(api, name, lambda b: b["source_idle_seconds"] is not None, 30)
        assert [t["topic"] for t in writing["topics"]] == [topic], "heartbeat topics are not the clients'"
        assert writing["producers_stopped"] is False and writing["drained"] is False
        assert writing["source_idle_seconds"] < IDLE_SECONDS
        assert "producers on east wrote" in writing["summary"]

        # The application's consumers read and commit on the source, as before a consumer-first migration.
        assert len(consume(east, group, topic, READ_ON_SOURCE)) == READ_ON_SOURCE
    finally:
        sent = traffic.stop()
    stopped_at = time.monotonic()

    def ready(body: dict) -> bool:
        groups = {g["group"]: g for g in body["groups"]}
        return body["drained"] and group in groups and groups[group]["on_target"]

    body = wait_for_readiness(api, name, ready, 120)
    ready_after = time.monotonic() - stopped_at
    assert body["producers_stopped"] is True and body["source_idle_seconds"] >= IDLE_SECONDS
    assert body["topics"] == [{"topic": topic, "remote_topic": remote, "lag_records": 0, "lag_seconds": 0.0,
                               "caught_up": True}]
    [row] = [g for g in body["groups"] if g["group"] == group]
    assert row == {"group": group, "partitions": 1, "checkpointed_partitions": 1, "synced_partitions": 1,
                   "checkpointed": True, "on_target": True, "note": None}
    assert body["summary"].startswith("Drained: nothing written on east for ")
    assert body["summary"].endswith("every group (1) is on west."), body["summary"]
    assert kafka_tools.end_offsets(west, remote) == {0: sent}, "everything written on the source is on the target"

    status = api.get(f"/api/v1/mirrors/{name}/status/").json()
    [checkpoint] = [g for g in status["checkpoints"] if g["group"] == group]
    translated = checkpoint["partitions"][0]["translated_offset"]
    # The sync may have moved on since the status was read (a later offset sync translates more exactly),
    # never past what the group read on the source: a consumer moved to the target misses nothing.
    on_target = committed(west, group, remote, 1)[0]
    assert translated <= on_target <= READ_ON_SOURCE, (translated, on_target)
    figures(f"readiness: {sent} records written; drained with group {group} on west (offset {on_target} for "
            f"{READ_ON_SOURCE} read on east) {ready_after:.1f} s after the producer stopped "
            f"(idle_seconds={IDLE_SECONDS})")
