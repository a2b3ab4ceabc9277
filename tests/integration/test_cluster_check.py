"""`POST /api/v1/clusters/{alias}/check/` against a real broker and against nothing."""

import time

import pytest

from controlplane.infra.processes import free_port

pytestmark = pytest.mark.django_db


def test_check_reports_brokers_and_controller(api, devstack):
    api.post("/api/v1/clusters/", {"alias": "east", "bootstrap_servers": devstack.clusters["east"].bootstrap_servers},
             format="json")
    body = api.post("/api/v1/clusters/east/check/").json()
    assert body["reachable"] is True
    assert body["brokers"] == 1 and body["controller"] == 1
    assert body["cluster_id"] == devstack.clusters["east"].cluster_id


def test_check_of_an_unreachable_cluster_returns_the_error_within_10s(api):
    api.post("/api/v1/clusters/", {"alias": "gone", "bootstrap_servers": f"127.0.0.1:{free_port()}"}, format="json")
    started = time.monotonic()
    body = api.post("/api/v1/clusters/gone/check/").json()
    elapsed = time.monotonic() - started
    assert body["reachable"] is False
    assert "gone" in body["error"] and body["error"]
    assert elapsed <= 10.5
