"""Creating, changing and deleting mirrors; every change in one transaction."""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.db import transaction

from mirrorcore import series
from mirrors.choices import ConnectorKind
from mirrors.models import Cluster, Connector, MetricHour, MetricMinute, Mirror
from mirrors.services.redis_client import get_redis
from mirrors.services.supervision import reconcile_soon

log = logging.getLogger(__name__)

# Fields whose change needs the application restarted with a new configuration.
_CONFIG_FIELDS = ("source", "target", "topics", "topics_exclude", "groups", "groups_exclude",
                  "replication_policy", "separator", "spark")
_CONNECTOR_CONFIG_FIELDS = ("tasks_max", "config")


def connector_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """API shape of a connector ({tasks_max, state, auto_restart, config}) as model fields."""
    fields: dict[str, Any] = {}
    if "tasks_max" in spec:
        fields["tasks_max"] = spec["tasks_max"]
    if "state" in spec:
        fields["desired_state"] = spec["state"]
    if "config" in spec:
        fields["config"] = spec["config"]
    auto_restart = spec.get("auto_restart") or {}
    if "enabled" in auto_restart:
        fields["auto_restart_enabled"] = auto_restart["enabled"]
    if "max_restarts" in auto_restart:
        fields["max_restarts"] = auto_restart["max_restarts"]
    return fields


@transaction.atomic
def create_mirror(*, name: str, source: Cluster, target: Cluster, connectors: dict | None = None,
                  **fields: Any) -> Mirror:
    mirror = Mirror.objects.create(name=name, source=source, target=target, **fields)
    connectors = connectors or {}
    for kind in ConnectorKind.values:
        Connector.objects.create(mirror=mirror, kind=kind, **connector_fields(connectors.get(kind, {})))
    reconcile_soon()
    return mirror


@transaction.atomic
def update_mirror(mirror: Mirror, *, connectors: dict | None = None, **fields: Any) -> Mirror:
    mirror = Mirror.objects.select_for_update().get(pk=mirror.pk)
    changed = reconfigured = False
    for field, value in fields.items():
        if getattr(mirror, field) != value:
            setattr(mirror, field, value)
            changed = True
            reconfigured |= field in _CONFIG_FIELDS
    for kind, spec in (connectors or {}).items():
        connector = mirror.connectors.get(kind=kind)
        for field, value in connector_fields(spec).items():
            if getattr(connector, field) != value:
                setattr(connector, field, value)
                changed = True
                reconfigured |= field in _CONNECTOR_CONFIG_FIELDS
        connector.save()
    if reconfigured:
        mirror.generation += 1
    mirror.save()
    if changed:  # an unchanged PATCH needs no supervision pass
        reconcile_soon()
    return mirror


@transaction.atomic
def delete_mirror(mirror: Mirror) -> None:
    """Removes the mirror, its metric history and, once that is committed, its time series; a
    supervision pass queued at commit stops its application."""
    name = mirror.name
    mirror.delete()
    MetricMinute.objects.filter(mirror_name=name).delete()
    MetricHour.objects.filter(mirror_name=name).delete()
    transaction.on_commit(lambda: delete_series(name))
    reconcile_soon()


def delete_series(name: str) -> None:
    try:
        series.delete(get_redis(), name)
    except redis.RedisError as error:
        log.warning("series of deleted mirror %s left in Redis: %s", name, error)
