"""`GET /metrics`: Prometheus exposition from the database, the live status and the newest series points."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from prometheus_client import CONTENT_TYPE_LATEST

from controlplane import prometheus
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import metrics, observed, status
from tests.api.prometheus_data import make_mirror, publish_running, samples, value
from tests.fakes import DownRedis

pytestmark = pytest.mark.django_db

REMOTE = {"REMOTE_ADDR": "10.1.2.3"}


@pytest.fixture(autouse=True)
def no_token(monkeypatch):
    monkeypatch.delenv(prometheus.TOKEN_ENV, raising=False)


@pytest.fixture
def mirror(db) -> Mirror:
    return make_mirror()


def test_metrics_have_mirror_maker_names(fake_redis, mirror, monkeypatch):
    now = time.time()
    monkeypatch.setattr(prometheus.time, "time", lambda: now)
    monkeypatch.setattr(status.time, "time", lambda: now)
    publish_running(fake_redis, mirror, now)
    Deployment.objects.filter(mirror_name="m1").update(restarts=2)
    Connector.objects.filter(mirror=mirror, kind="heartbeat").update(restarts=4)

    response = Client().get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"] == CONTENT_TYPE_LATEST
    parsed = samples(response.content)
    flow = {"mirror": "m1", "source": "east", "target": "west"}
    src = "kafka_connect_mirror_source_connector_"
    assert value(parsed, f"{src}record_count", **flow) == 5000
    assert value(parsed, f"{src}byte_count", **flow) == 640000
    assert value(parsed, f"{src}record_rate", **flow) == 2000
    assert value(parsed, f"{src}byte_rate", **flow) == 256000
    assert value(parsed, f"{src}replication_latency_ms", **flow) == 37
    assert value(parsed, f"{src}records_lag", **flow, topic="orders", partition="2") == 120
    assert value(parsed, f"{src}record_age_ms", **flow, topic="orders", partition="2") == 3500
    for caught_up in ("0", "1"):
        assert value(parsed, f"{src}records_lag", **flow, topic="orders", partition=caught_up) == 0
        assert value(parsed, f"{src}record_age_ms", **flow, topic="orders", partition=caught_up) == 0
    assert value(parsed, "kafka_connect_mirror_checkpoint_connector_checkpoint_latency_ms", **flow,
                 group="billing", topic="orders", partition="0") == pytest.approx(4000, abs=200)
    assert not any(name.endswith("checkpoint_latency_ms") and dict(labels).get("partition") == "1"
                   for name, labels in parsed), "a partition without a checkpoint has no latency"

    assert value(parsed, "mirrorplane_connector_state", mirror="m1", connector="source", state="RUNNING") == 1
    assert value(parsed, "mirrorplane_connector_state", mirror="m1", connector="source", state="FAILED") == 0
    assert value(parsed, "mirrorplane_connector_state", mirror="m1", connector="heartbeat", state="FAILED") == 1
    assert sum(v for (name, labels), v in parsed.items()
               if name == "mirrorplane_connector_state" and dict(labels)["connector"] == "checkpoint") == 1
    assert value(parsed, "mirrorplane_connector_tasks", mirror="m1", connector="source") == 2
    assert value(parsed, "mirrorplane_connector_task_state", mirror="m1", connector="heartbeat", state="FAILED") == 1
    assert value(parsed, "mirrorplane_connector_restarts_total", mirror="m1", connector="heartbeat") == 4
    assert value(parsed, "mirrorplane_application_restarts_total", mirror="m1") == 2
    assert value(parsed, "mirrorplane_application_state", mirror="m1", state="running") == 1
    assert value(parsed, "mirrorplane_mirror_generation", mirror="m1") == 1


def test_rates_fall_to_zero_without_recent_batches(fake_redis, mirror, monkeypatch):
    now = time.time()
    publish_running(fake_redis, mirror, now - 120)
    parsed = samples(prometheus.exposition(now=now))
    flow = {"mirror": "m1", "source": "east", "target": "west"}
    assert value(parsed, "kafka_connect_mirror_source_connector_byte_rate", **flow) == 0
    assert value(parsed, "kafka_connect_mirror_source_connector_record_count", **flow) == 5000


def test_a_mirror_without_a_running_application(fake_redis, mirror):
    parsed = samples(prometheus.exposition())
    assert value(parsed, "mirrorplane_application_state", mirror="m1", state="not_running") == 1
    assert value(parsed, "mirrorplane_application_restarts_total", mirror="m1") == 0
    assert value(parsed, "mirrorplane_connector_state", mirror="m1", connector="source", state="UNASSIGNED") == 1
    assert value(parsed, "mirrorplane_connector_tasks", mirror="m1", connector="source") == 0
    assert not any(name.startswith("kafka_connect_mirror_source_connector_record_count") for name, _ in parsed)


def test_stale_generation_status_is_ignored(fake_redis, mirror):
    publish_running(fake_redis, mirror, time.time())
    Mirror.objects.filter(pk=mirror.pk).update(generation=2)
    parsed = samples(prometheus.exposition())
    assert not any(name.endswith("_record_count") for name, _ in parsed)
    assert value(parsed, "mirrorplane_connector_state", mirror="m1", connector="heartbeat", state="UNASSIGNED") == 1


def test_metrics_render_when_redis_is_down(mirror, monkeypatch):
    for module in (metrics, observed):
        monkeypatch.setattr(module, "get_redis", lambda: DownRedis())
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert value(samples(response.content), "mirrorplane_mirror_generation", mirror="m1") == 1


def test_empty_without_mirrors(db):
    response = Client().get("/metrics")
    assert response.status_code == 200
    assert "mirrorplane_connector_state" in response.content.decode()


# -- access ------------------------------------------------------------------------------

def test_loopback_is_open_without_a_token_and_remote_is_not(fake_redis, mirror):
    assert Client().get("/metrics").status_code == 200
    response = Client().get("/metrics", **REMOTE)
    assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Bearer")


def test_bearer_token_when_configured(fake_redis, mirror, monkeypatch):
    monkeypatch.setenv(prometheus.TOKEN_ENV, "scrape-secret")
    assert Client().get("/metrics").status_code == 401, "with a token, loopback needs it too"
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong", **REMOTE).status_code == 401
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret", **REMOTE).status_code == 200


def test_signed_in_users_may_read(fake_redis, mirror, api, admin_user, monkeypatch):
    monkeypatch.setenv(prometheus.TOKEN_ENV, "scrape-secret")
    assert api.get("/metrics", **REMOTE).status_code == 200  # API token
    browser = Client()
    browser.force_login(admin_user)
    assert browser.get("/metrics", **REMOTE).status_code == 200  # session
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Token not-a-token", **REMOTE).status_code == 401


def test_only_get(fake_redis, mirror):
    assert Client().post("/metrics").status_code == 405
