"""`GET /metrics`: Prometheus text exposition of every mirror, with MirrorMaker 2-like metric names.

Collected at scrape time from the database (connectors, deployments) and, in one Redis round trip
for all mirrors, each application's live status and the newest points of its heartbeat and lag
series, read and trusted as the overview does (mirrors.services.observed); nothing is kept between
scrapes. The same readings also give the series Strimzi's dashboards query
(controlplane/prometheus_strimzi.py).

Access: a scraper sends `Authorization: Bearer $MIRRORPLANE_METRICS_TOKEN`; a signed-in user (session
or API token) may read it too. Without MIRRORPLANE_METRICS_TOKEN, unauthenticated scrapes are
accepted from loopback only (set the token when a proxy on this host forwards outside requests).
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Iterator
from typing import cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request
from rest_framework.settings import api_settings

from mirrors.choices import ApplicationState, ConnectorState
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import observed, status

from . import prometheus_strimzi as strimzi

log = logging.getLogger(__name__)

TOKEN_ENV = "MIRRORPLANE_METRICS_TOKEN"  # noqa: S105 - the name of the variable, not a secret
SOURCE = "kafka_connect_mirror_source_connector_"
CHECKPOINT = "kafka_connect_mirror_checkpoint_connector_"
# A batch older than this no longer counts towards the current rates (no new batch means no traffic).
RATE_WINDOW_SECONDS = strimzi.RATE_WINDOW_SECONDS
# Points read per mirror: enough to cover the statistics window (heartbeats every second, lag every 2 s).
HEARTBEAT_POINTS, LAG_POINTS = 30, 15


class MirrorCollector:
    """One consistent reading per scrape; `now` is fixed for tests."""

    def __init__(self, now: float | None = None) -> None:
        self.now = now

    def collect(self) -> Iterator[Metric]:
        now = time.time() if self.now is None else self.now
        flow = ["mirror", "source", "target"]
        tp = [*flow, "topic", "partition"]
        families = {
            "records": GaugeMetricFamily(f"{SOURCE}record_count", "Records replicated since the application "
                                         "started (its current configuration)", labels=flow),
            "bytes": GaugeMetricFamily(f"{SOURCE}byte_count", "Bytes replicated since the application started",
                                       labels=flow),
            "record_rate": GaugeMetricFamily(f"{SOURCE}record_rate", "Records per second of the latest batch "
                                             f"(0 when none in the last {RATE_WINDOW_SECONDS:g} s)", labels=flow),
            "byte_rate": GaugeMetricFamily(f"{SOURCE}byte_rate", "Bytes per second of the latest batch "
                                           f"(0 when none in the last {RATE_WINDOW_SECONDS:g} s)", labels=flow),
            "latency": GaugeMetricFamily(f"{SOURCE}replication_latency_ms", "Latency of the newest heartbeat "
                                         "from emission on the source to arrival on the target", labels=flow),
            "age": GaugeMetricFamily(f"{SOURCE}record_age_ms", "Age of the oldest record not yet replicated "
                                     "(newest lag sample; 0 when caught up)", labels=tp),
            "lag": GaugeMetricFamily(f"{SOURCE}records_lag", "Records not yet replicated (newest lag sample)",
                                     labels=tp),
            "checkpoint": GaugeMetricFamily(f"{CHECKPOINT}checkpoint_latency_ms", "Age of the newest checkpoint "
                                            "of a consumer group's partition",
                                            labels=[*flow, "group", "topic", "partition"]),
            "state": GaugeMetricFamily("mirrorplane_connector_state", "1 for the connector's current state",
                                       labels=["mirror", "connector", "state"]),
            "tasks": GaugeMetricFamily("mirrorplane_connector_tasks", "Tasks of the connector",
                                       labels=["mirror", "connector"]),
            "task_state": GaugeMetricFamily("mirrorplane_connector_task_state", "Tasks of the connector in each "
                                            "state", labels=["mirror", "connector", "state"]),
            "connector_restarts": CounterMetricFamily("mirrorplane_connector_restarts", "Automatic restarts of "
                                                      "the connector", labels=["mirror", "connector"]),
            "app_state": GaugeMetricFamily("mirrorplane_application_state", "1 for the Spark application's "
                                           "current state", labels=["mirror", "state"]),
            "app_restarts": CounterMetricFamily("mirrorplane_application_restarts", "Resubmissions of the "
                                                "mirror's Spark application after a failure", labels=["mirror"]),
            "generation": GaugeMetricFamily("mirrorplane_mirror_generation", "Configuration generation",
                                            labels=["mirror"]),
        }
        families |= {name: (CounterMetricFamily if family.counter else GaugeMetricFamily)(
            name, family.help, labels=family.labels) for name, family in strimzi.FAMILIES.items()}
        deployments = {d.mirror_name: d for d in Deployment.objects.all()}
        mirrors = list(Mirror.objects.select_related("source", "target").prefetch_related("connectors"))
        readings, _ = observed.read_all([m.name for m in mirrors], heartbeats=HEARTBEAT_POINTS, lags=LAG_POINTS)
        for mirror in mirrors:
            try:
                self._mirror(mirror, deployments.get(mirror.name), readings.get(mirror.name, observed.Reading()),
                             families, now)
            except Exception:  # one broken mirror must not hide the others
                log.exception("metrics of mirror %s", mirror.name)
        yield from families.values()

    def _mirror(self, mirror: Mirror, deployment: Deployment | None, reading: observed.Reading, f: dict,
                now: float) -> None:
        recorded = deployment.state if deployment else ApplicationState.NOT_RUNNING
        live = observed.trusted_live(reading.live, mirror.generation, recorded)
        app_state = observed.application_state(recorded, live)
        flow = [mirror.name, mirror.source.alias, mirror.target.alias]
        source = ((live or {}).get("connectors") or {}).get("source") or {}
        counters = source.get("metrics") or {}
        if live is not None:
            f["records"].add_metric(flow, counters.get("records", 0))
            f["bytes"].add_metric(flow, counters.get("bytes", 0))
            batch = counters.get("last_batch") or {}
            recent = batch.get("at") is not None and now - batch["at"] <= RATE_WINDOW_SECONDS
            seconds = batch.get("seconds") or 0
            f["record_rate"].add_metric(flow, batch.get("records", 0) / seconds if recent and seconds > 0 else 0.0)
            f["byte_rate"].add_metric(flow, batch.get("bytes", 0) / seconds if recent and seconds > 0 else 0.0)

        heartbeats = reading.heartbeats
        if heartbeats and heartbeats[-1].get("latency_ms") is not None:
            f["latency"].add_metric(flow, heartbeats[-1]["latency_ms"])

        lags = reading.lags
        if lags:
            # Only partitions with records to replicate are listed; the others replicated are at 0.
            partitions = {(p["topic"], int(p["partition"])): (0, 0.0) for p in source.get("partitions") or []}
            for p in lags[-1].get("partitions") or []:
                partitions[(p["topic"], int(p["partition"]))] = (p.get("records", 0), p.get("seconds", 0.0))
            for (topic, partition), (records, seconds) in sorted(partitions.items()):
                labels = [*flow, topic, str(partition)]
                f["lag"].add_metric(labels, records)
                f["age"].add_metric(labels, round((seconds or 0.0) * 1000, 1))

        groups = status.checkpoint_groups(live, now=now) or []
        for group in groups:
            for p in group.get("partitions") or []:
                if p.get("checkpoint_age_seconds") is not None:
                    f["checkpoint"].add_metric([*flow, group["group"], p["topic"], str(p["partition"])],
                                               round(p["checkpoint_age_seconds"] * 1000, 1))

        connectors = _connectors(mirror, live)
        for connector, now_state in connectors:
            for state in ConnectorState.values:
                f["state"].add_metric([mirror.name, connector.kind, state], 1.0 if state == now_state.state else 0.0)
            f["tasks"].add_metric([mirror.name, connector.kind], len(now_state.tasks))
            for state in ConnectorState.values:
                f["task_state"].add_metric([mirror.name, connector.kind, state],
                                           sum(1 for t in now_state.tasks if t.get("state") == state))
            f["connector_restarts"].add_metric([mirror.name, connector.kind], connector.restarts)

        for state in ApplicationState.values:
            f["app_state"].add_metric([mirror.name, state], 1.0 if state == app_state else 0.0)
        f["app_restarts"].add_metric([mirror.name], deployment.restarts if deployment else 0)
        f["generation"].add_metric([mirror.name], mirror.generation)

        mirror_reading = strimzi.MirrorReading(
            name=mirror.name, source=mirror.source.alias, target=mirror.target.alias, live=live,
            heartbeats=heartbeats, lags=lags, connectors=[r for _, r in connectors], application_state=app_state,
            checkpoint_groups=groups, namespace=settings.METRICS_NAMESPACE)
        for name, sample_labels, value in strimzi.mirror_samples(mirror_reading, now):
            f[name].add_metric([sample_labels[label] for label in strimzi.FAMILIES[name].labels], value)


def _connectors(mirror: Mirror, live: dict | None) -> list[tuple[Connector, strimzi.ConnectorReading]]:
    """Each connector with its current state and tasks, as the status document and the overview show them."""
    result = []
    for connector in mirror.connectors.all():
        state, _, tasks = observed.current_or_recorded(connector, live)
        result.append((connector, strimzi.ConnectorReading(connector.kind, state, tasks or [])))
    return result


def exposition(now: float | None = None) -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(MirrorCollector(now))
    return generate_latest(registry)


def _bearer_ok(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _signed_in(request: HttpRequest) -> bool:
    """A session user, or any of the API's authentication schemes (e.g. `Authorization: Token ...`)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return True
    wrapped = Request(request)
    # classes: api_settings imports the dotted paths of the setting (its stubs type them as the strings)
    for authentication in cast("list[type[BaseAuthentication]]", api_settings.DEFAULT_AUTHENTICATION_CLASSES):
        try:
            result = authentication().authenticate(wrapped)
        except exceptions.APIException:
            continue
        if result and getattr(result[0], "is_authenticated", False):
            return True
    return False


def _loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = os.environ.get(TOKEN_ENV, "").strip()
    allowed = _bearer_ok(request, token) or _signed_in(request) or (not token and _loopback(request))
    if not allowed:
        response = HttpResponse("authentication required: a bearer token (MIRRORPLANE_METRICS_TOKEN) or a user\n",
                                status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
