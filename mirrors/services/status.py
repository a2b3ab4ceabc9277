"""A mirror's status as the API and dashboard show it: supervisor view plus live progress."""

from __future__ import annotations

import logging
import time

from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import metrics, observed

log = logging.getLogger(__name__)


def describe(mirror: Mirror) -> dict:
    """The whole status document of `GET /api/v1/mirrors/{name}/status/`."""
    deployment, connectors = recorded_states(mirror)
    live = _trusted_live(mirror, deployment)
    return {
        "name": mirror.name,
        "generation": mirror.generation,
        "application": application_status(deployment, live),
        "connectors": {c.kind: _connector(c, live) for c in connectors},
        "progress": progress(live),
        "link": metrics.link_health(mirror, live),
        "checkpoints": checkpoint_groups(live),
        "lag": metrics.latest_point(mirror.name, "lag"),
    }


def recorded_states(mirror: Mirror, attempts: int = 3) -> tuple[Deployment | None, list[Connector]]:
    """The application's record and its connectors' as one supervision pass left them.

    A pass writes both in one transaction, but they are read in two queries, each its own snapshot
    (SQLite; PostgreSQL's READ COMMITTED): a pass committing in between could show a failed
    application beside connectors not yet failed. The application's record is read again after the
    connectors; while it changed, both are read again.
    """
    deployment = Deployment.objects.filter(mirror_name=mirror.name).first()
    connectors: list[Connector] = []
    for _ in range(attempts):
        connectors = list(Connector.objects.filter(mirror=mirror))
        again = Deployment.objects.filter(mirror_name=mirror.name).first()
        if _snapshot(again) == _snapshot(deployment):
            break
        deployment = again
    return deployment, connectors


def _snapshot(deployment: Deployment | None) -> tuple | None:
    return deployment.snapshot() if deployment else None


def connector_now(connector: Connector) -> observed.Observed:
    """One connector's state, error and tasks as the status document shows them now."""
    return observed.current_or_recorded(connector, live_of(connector.mirror))


def live_of(mirror: Mirror) -> dict | None:
    """The mirror's live status if its application speaks for the current configuration (reads Redis)."""
    return _trusted_live(mirror, Deployment.objects.filter(mirror_name=mirror.name).first())


def _trusted_live(mirror: Mirror, deployment: Deployment | None) -> dict | None:
    state = deployment.state if deployment else None
    return observed.trusted_live(observed.live_status(mirror), mirror.generation, state)


def _connector(connector: Connector, live: dict | None) -> dict:
    state, error, tasks = observed.current_or_recorded(connector, live)
    return {
        "state": state,
        "desired_state": connector.desired_state,
        "restarts": connector.restarts,
        "error": error,
        "tasks": tasks,
        "state_changed_at": connector.state_changed_at,
    }


def application_status(deployment: Deployment | None, live: dict | None) -> dict:
    if deployment is None:
        return {"state": "not_running", "engine": None, "id": None, "tracking_url": None, "pid": None, "restarts": 0,
                "submitted_at": None, "last_error": "", "spark_ui": None}
    return {
        "spark_ui": (live or {}).get("spark_ui"),
        "state": observed.application_state(deployment.state, live),
        "engine": deployment.engine,
        "id": deployment.application_id or None,
        "tracking_url": deployment.tracking_url if deployment.tracking_url.startswith(("http:", "https:")) else None,
        "pid": deployment.pid,
        "restarts": deployment.restarts,
        "consecutive_failures": deployment.consecutive_failures,
        "submitted_at": deployment.submitted_at,
        "next_attempt_at": deployment.next_attempt_at,
        "last_error": deployment.last_error,
    }


def progress(live: dict | None) -> dict | None:
    """Replication counters of the source connector and heartbeats emitted, from the live status."""
    if live is None:
        return None
    source = live.get("connectors", {}).get("source", {})
    heartbeat = live.get("connectors", {}).get("heartbeat", {})
    return {
        "reported_at": live.get("reported_at"),
        "topics": source.get("topics", []),
        "held_back_topics": source.get("held_back", {}),
        "partitions": source.get("partitions", []),
        **source.get("metrics", {}),
        "heartbeats_emitted": heartbeat.get("emitted", 0),
        # The latest start without a usable checkpoint in this application's life: why (`cause`),
        # when (`at`), where each partition resumed and the records copied again.
        "resumed": source.get("resumed"),
        # How the source runs its query: `setting` (replication.mode), the `mode` it runs in and why.
        "replication_mode": source.get("replication_mode"),
    }


def checkpoint_groups(live: dict | None, now: float | None = None) -> list[dict] | None:
    """The checkpoint connector's groups as reported, each partition with its checkpoint's age in seconds."""
    if live is None:
        return None
    now = time.time() if now is None else now
    groups = ((live.get("connectors") or {}).get("checkpoint") or {}).get("groups") or []
    return [group | {"partitions": [_with_age(p, now) for p in group.get("partitions") or []]} for group in groups]


def _with_age(partition: dict, now: float) -> dict:
    at = partition.get("checkpoint_at")
    return partition | {"checkpoint_age_seconds": None if at is None else round(max(0.0, now - at), 1)}
