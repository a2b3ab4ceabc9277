"""The dashboard forms' helpers against real Kafka clusters: topic preview and the unsaved cluster check."""

from __future__ import annotations

import time

import pytest

from controlplane.infra.processes import free_port
from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters

pytestmark = pytest.mark.django_db

ANSWER_WITHIN = 15.0


def timed(call):
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


def test_preview_lists_real_topics_with_their_remote_names(api, devstack, unique):
    east = devstack.clusters["east"].bootstrap_servers
    # the last came from west: a cycle for east -> west
    partitions = {f"orders-{unique}": 3, f"orders-{unique}-audit": 1, f"west.orders-{unique}": 2}
    for topic, count in partitions.items():
        kafka_tools.create_topic(east, topic, count)
    for topic in partitions:
        kafka_tools.wait_for_topic(east, topic, 30)  # created is not yet in every metadata answer
    create_clusters(api, devstack)

    response, elapsed = timed(lambda: api.post("/api/v1/mirrors/preview/", {
        "source": "east", "target": "west", "topics": f"orders-{unique}.*", "topics_exclude": ".*-audit",
        "separator": "_"}, format="json"))
    assert response.status_code == 200, response.content
    body = response.json()
    assert elapsed < ANSWER_WITHIN
    ours = {t["topic"]: t for t in body["topics"] if unique in t["topic"]}
    assert ours == {f"orders-{unique}": {"topic": f"orders-{unique}", "remote_topic": f"east_orders-{unique}",
                                         "partitions": 3}}
    reasons = {e["topic"]: e["reason"] for e in body["excluded"] if unique in e["topic"]}
    assert reasons == {f"orders-{unique}-audit": "excluded by topics.exclude '.*-audit'",
                       f"west.orders-{unique}": "not matched by topics"}  # `_` separator: not west's
    assert body["total"] >= 3 and "__consumer_offsets" not in {t["topic"] for t in body["topics"]}

    dotted = api.post("/api/v1/mirrors/preview/", {"source": "east", "target": "west",
                                                   "topics": f".*orders-{unique}"}, format="json").json()
    cycle = {e["topic"]: e["reason"] for e in dotted["excluded"]}[f"west.orders-{unique}"]
    assert "cycle" in cycle


def test_preview_of_an_unreachable_source_is_503_in_time(api, devstack, unique):
    api.post("/api/v1/clusters/", {"alias": f"gone-{unique}", "bootstrap_servers": f"127.0.0.1:{free_port()}"},
             format="json")
    response, elapsed = timed(lambda: api.post("/api/v1/mirrors/preview/", {"source": f"gone-{unique}"},
                                               format="json"))
    assert response.status_code == 503, response.content
    assert f"gone-{unique}" in response.json()["detail"] and elapsed < ANSWER_WITHIN


def test_unsaved_check_reaches_the_east_cluster(api, devstack, unique):
    response, elapsed = timed(lambda: api.post("/api/v1/clusters/check/", {
        "alias": f"new-{unique}", "bootstrap_servers": devstack.clusters["east"].bootstrap_servers}, format="json"))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reachable"] is True and body["brokers"] == 1 and body["error"] is None
    assert body["cluster_id"] == devstack.clusters["east"].cluster_id
    assert elapsed < ANSWER_WITHIN
    assert api.get(f"/api/v1/clusters/new-{unique}/").status_code == 404  # nothing saved


def test_unsaved_check_of_a_closed_port_gives_a_clear_error_in_time(api, unique):
    port = free_port()
    response, elapsed = timed(lambda: api.post("/api/v1/clusters/check/", {
        "alias": f"closed-{unique}", "bootstrap_servers": f"127.0.0.1:{port}"}, format="json"))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["reachable"] is False and body["brokers"] is None
    assert f"127.0.0.1:{port}" in body["error"] and "refused" in body["error"].lower(), body["error"]
    assert elapsed < ANSWER_WITHIN
