"""A mirror created, changed or deleted queues a supervision pass at commit, without waiting for beat."""

import logging

import pytest
from kombu.exceptions import OperationalError

from mirrors import tasks

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


def test_create_change_and_delete_each_queue_one_pass_after_commit(api, clusters, queued,
                                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west"},
                        format="json").status_code == 201
    assert len(queued) == 1
    assert queued[0]["retry"] is False and queued[0]["expires"] >= 5
    with django_capture_on_commit_callbacks(execute=True):
        assert api.patch("/api/v1/mirrors/m1/", {"topics": "orders"}, format="json").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete("/api/v1/mirrors/m1/").status_code == 204
    assert len(queued) == 3


def test_a_refused_mirror_queues_nothing(api, clusters, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "east"},
                        format="json").status_code == 400
    assert queued == []


def test_a_broker_that_cannot_take_the_pass_only_logs(api, clusters, monkeypatch, caplog,
                                                      django_capture_on_commit_callbacks):
    def refuse(**options):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr(tasks.reconcile, "apply_async", refuse)
    with caplog.at_level(logging.WARNING, logger="mirrors.services.supervision"), \
            django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/v1/mirrors/", {"name": "m1", "source": "east", "target": "west"}, format="json")
    assert response.status_code == 201
    assert "supervision pass not queued (beat runs one within" in caplog.text
    assert "Connection refused" in caplog.text
