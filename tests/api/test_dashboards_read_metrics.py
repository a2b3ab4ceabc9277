"""Dashboards against `GET /metrics`: Strimzi's MirrorMaker 2 dashboard (published) and Mirrorplane's own.

Every metric a dashboard's queries name must be exported, for a mirror whose application reports
live status, with a sample that satisfies the query's label matchers and carries the labels it
groups by and names its lines by.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from controlplane import prometheus
from mirrors.models import Mirror
from mirrors.services import status
from mirrors.services.mirrors import create_mirror
from tests.api.prometheus_data import make_mirror, publish_running, samples, value
from tests.grafana_queries import Query, matches, queries

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
STRIMZI = ROOT / "tests" / "fixtures" / "published" / "strimzi-kafka-mirror-maker-2.json"
OURS = ROOT / "docs" / "grafana" / "mirrorplane.json"

@pytest.fixture
def exported(fake_redis, monkeypatch) -> list[tuple[str, dict[str, str]]]:
    """The samples of `/metrics` for mirror m1 with live status, a heartbeat and a lag point."""
    now = time.time()
    monkeypatch.setattr(prometheus.time, "time", lambda: now)
    monkeypatch.setattr(status.time, "time", lambda: now)
    mirror: Mirror = make_mirror()
    publish_running(fake_redis, mirror, now)
    response = Client().get("/metrics")
    assert response.status_code == 200
    return [(s.name, s.labels) for family in text_string_to_metric_families(response.content.decode())
            for s in family.samples]


def missing(query: Query, exported: list[tuple[str, dict[str, str]]], variables: dict[str, str]) -> list[str]:
    problems = []
    for selector in query.selectors:
        named = [labels for name, labels in exported if name == selector.metric]
        selected = [labels for labels in named if matches(labels, selector, variables)]
        if not named:
            problems.append(f"{query.where}: {selector.metric} is not exported")
        elif not selected:
            problems.append(f"{query.where}: no {selector.metric} sample matches {selector.matchers}")
        elif not any(query.labels <= set(labels) for labels in selected):
            problems.append(f"{query.where}: {selector.metric} lacks {sorted(query.labels - set(selected[0]))}")
    return problems


def test_strimzi_mirror_maker_2_dashboard_reads_every_kafka_metric(exported):
    dashboard = json.loads(STRIMZI.read_text())
    found = queries(dashboard, ("kafka_",))
    names = {s.metric for q in found for s in q.selectors}
    assert len(names) == 22, sorted(names)  # the parse still sees the whole dashboard
    variables = {"strimzi_mirror_maker_cluster_name": "m1", "kubernetes_namespace": "mirrorplane"}
    problems = [problem for query in found for problem in missing(query, exported, variables)]
    assert not problems, "\n".join(problems)


def test_mirrorplanes_dashboard_reads_only_exported_metrics(exported):
    dashboard = json.loads(OURS.read_text())
    found = queries(dashboard, ("kafka_", "mirrorplane_"))
    names = {s.metric for q in found for s in q.selectors}
    assert {"mirrorplane_connector_state", "mirrorplane_connector_task_state",
            "mirrorplane_connector_restarts_total", "kafka_connect_mirror_source_connector_replication_latency_ms",
            "kafka_connect_mirror_source_connector_records_lag"} <= names
    problems = [problem for query in found for problem in missing(query, exported, {"mirror": "m1"})]
    assert not problems, "\n".join(problems)


def test_scrape_reads_redis_in_one_round_trip_for_all_mirrors(fake_redis, monkeypatch):
    """Every mirror's live status, heartbeat points and lag points in one pipeline, as the overview reads them."""
    first = make_mirror()
    publish_running(fake_redis, first, time.time())
    for name in ("m2", "m3"):
        publish_running(fake_redis, create_mirror(name=name, source=first.source, target=first.target), time.time())
    calls = []
    for method in ("get", "xrevrange", "xrange", "pipeline"):
        original = getattr(fake_redis, method)
        monkeypatch.setattr(fake_redis, method, lambda *a, _m=method, _o=original, **k: calls.append(_m) or _o(*a, **k))
    parsed = samples(prometheus.exposition())
    assert calls == ["pipeline"]
    assert {labels for name, labels in parsed if name == "mirrorplane_mirror_generation"} == {
        (("mirror", name),) for name in ("m1", "m2", "m3")}
    assert value(parsed, "kafka_connect_mirror_source_connector_record_count", mirror="m3", source="east",
                 target="west") == 5000
