"""A mirror's time series (heartbeat, lag, checkpoint) and the health of its heartbeat link."""

from __future__ import annotations

import logging
import time

import redis

from mirrorcore import channel, registry, series
from mirrorcore.policy import heartbeats_off
from mirrors.choices import ConnectorKind, DesiredState
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import observed
from mirrors.services.redis_client import get_redis

log = logging.getLogger(__name__)

HEALTHY, UNHEALTHY, UNKNOWN = "healthy", "unhealthy", "unknown"


def read_series(mirror_name: str, name: str, since: float | None = None, until: float | None = None,
                limit: int | None = None) -> list[dict]:
    """Points of one series, oldest first; raises redis.RedisError when Redis cannot be read."""
    return series.read(get_redis(), mirror_name, name, since=since, until=until, limit=limit)


def latest_point(mirror_name: str, name: str) -> dict | None:
    """The newest point of a series, or None (also when Redis is away: a status must still render)."""
    points = newest_points(mirror_name, name, 1)
    return points[-1] if points else None


def newest_points(mirror_name: str, name: str, count: int) -> list[dict]:
    """The newest `count` points of a series, oldest first, in one read; [] when Redis is away."""
    try:
        return series.read(get_redis(), mirror_name, name, limit=count)
    except redis.RedisError as error:
        log.warning("no %s series for %s: %s", name, mirror_name, error)
        return []


def unhealthy_after_seconds(heartbeat: Connector | None) -> float:
    return registry.get_valid_float(heartbeat.config if heartbeat else {}, "link.unhealthy.after.seconds")


def link_health(mirror: Mirror, live: dict | None, now: float | None = None) -> dict:
    """Is the heartbeat link source -> target alive: the newest heartbeat arrival against the limit.

    `live`: the application's trusted live status (observed.py; None: there is none).
    """
    now = time.time() if now is None else now
    connectors = {c.kind: c for c in mirror.connectors.all()}
    point, redis_error = None, None
    try:
        point = series.latest(get_redis(), mirror.name, "heartbeat")
    except redis.RedisError as error:
        redis_error = str(error)
    deployment = Deployment.objects.filter(mirror_name=mirror.name).first()
    return link_health_from(mirror, connectors, point, started_at(mirror, deployment), live, now, redis_error)


def link_health_from(mirror: Mirror, connectors: dict[str, Connector], point: dict | None, started_at: float,
                live: dict | None, now: float, redis_error: str | None = None) -> dict:
    """Link health from inputs read beforehand (no query, no Redis call): the overview reads them in bulk.

    `point`: the newest heartbeat point; `started_at`: when heartbeats could first be expected;
    `live`: the application's live status (None: there is none); `redis_error`: why Redis could not be read.
    """
    heartbeat = connectors.get(ConnectorKind.HEARTBEAT)
    limit = unhealthy_after_seconds(heartbeat)
    result = {"state": UNKNOWN, "reason": "", "last_heartbeat_at": None, "latency_ms": None,
              "unhealthy_after_seconds": limit}
    off = heartbeats_off(mirror.replication_policy, heartbeat.config if heartbeat else {})
    if off:
        return result | {"reason": off}
    if redis_error:
        return result | {"reason": f"cannot read heartbeats: {redis_error}"}
    last_at = point["at"] if point else None
    result |= {"last_heartbeat_at": last_at, "latency_ms": point.get("latency_ms") if point else None}
    age = None if last_at is None else max(0.0, now - last_at)
    recent = age is not None and age < limit
    desired = heartbeat.desired_state if heartbeat else DesiredState.RUNNING
    if desired != DesiredState.RUNNING:
        if recent:
            return result | {"state": HEALTHY, "reason": f"last heartbeat {age:.1f} s ago; "
                                                           f"the heartbeat connector is {desired}"}
        return result | {"state": UNHEALTHY, "reason": f"the heartbeat connector is {desired}: "
                                                       f"no heartbeats are emitted from {mirror.source.alias}"}
    if recent:
        return result | {"state": HEALTHY, "reason": f"last heartbeat {age:.1f} s ago"}
    if (last_at is None or last_at < started_at) and now - started_at < limit:
        return result | {"reason": "waiting for the first heartbeat"}
    detail = (((live or {}).get("connectors") or {}).get(ConnectorKind.HEARTBEAT) or {}).get("detail")
    if detail and last_at is None:
        return result | {"reason": detail}
    silence = "yet" if age is None else f"for {age:.0f} s"
    return result | {"state": UNHEALTHY, "reason": f"no heartbeat from {mirror.source.alias} {silence} "
                                                   f"(limit {limit:g} s){_suspects(connectors, live)}"}


def started_at(mirror: Mirror, deployment: Deployment | None) -> float:
    """When heartbeats could first be expected: the application's submission, else the mirror's creation."""
    moments = [mirror.created_at] + ([deployment.submitted_at] if deployment and deployment.submitted_at else [])
    return max(moment.timestamp() for moment in moments)


def _suspects(connectors: dict[str, Connector], live: dict | None) -> str:
    """What stands in the heartbeats' way: the source connector carries them, the heartbeat connector emits them."""
    notes = []
    if live is None:
        notes.append("the application reports no status")
    for kind, role in ((ConnectorKind.SOURCE, "source"), (ConnectorKind.HEARTBEAT, "heartbeat")):
        connector = connectors.get(kind)
        state = observed.current_or_recorded(connector, live).state if connector else None
        if state and state != channel.RUNNING:
            notes.append(f"the {role} connector is {state}")
    return "".join(f"; {note}" for note in notes)
