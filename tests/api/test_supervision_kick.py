"""A mirror created, changed or deleted queues a supervision pass at commit, without waiting for beat."""

import logging
import socket
import time

import pytest

from mirrors import tasks
from mirrors.services import supervision

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    calls = []
    monkeypatch.setattr(tasks.reconcile, "apply_async", lambda **options: calls.append(options))
    return calls


@pytest.fixture
def clusters(api):
    for alias in ("east", "west"):
        assert api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": f"{alias}:9092"},
                        format="json").status_code == 201


def test_each_change_queues_one_pass_at_commit_and_a_no_op_patch_none(api, clusters, queued,
                                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west"},
                        format="json").status_code == 201
    assert len(queued) == 1
    assert queued[0]["retry"] is False and queued[0]["expires"] >= 5
    with django_capture_on_commit_callbacks(execute=True):
        assert api.patch("/api/v1/mirrors/m1/", {"topics": "orders"}, format="json").status_code == 200
    assert len(queued) == 2
    with django_capture_on_commit_callbacks(execute=True):  # the same again: nothing changed, nothing queued
        assert api.patch("/api/v1/mirrors/m1/", {"topics": "orders"}, format="json").status_code == 200
    assert len(queued) == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete("/api/v1/mirrors/m1/").status_code == 204
    assert len(queued) == 3


def test_a_refused_mirror_queues_nothing(api, clusters, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "east"},
                        format="json").status_code == 400
    assert queued == []


def test_a_broker_that_refuses_the_connection_only_logs_and_holds_the_request_briefly(
        api, clusters, monkeypatch, caplog, django_capture_on_commit_callbacks):
    with socket.socket() as probe:  # a port nothing listens on: the connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setitem(tasks.reconcile.app.conf, "broker_url", f"redis://127.0.0.1:{port}/0")
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="mirrors.services.supervision"), \
            django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west"}, format="json")
    elapsed = time.monotonic() - started
    assert response.status_code == 201
    assert "supervision pass not queued (beat runs one within" in caplog.text
    assert "Connection refused" in caplog.text
    assert elapsed < supervision.BROKER_CONNECT_SECONDS + 0.5, f"the request waited {elapsed:.1f} s for the broker"
