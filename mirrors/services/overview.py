"""The dashboard's overview: clusters and mirrors with their health, and the problems that need attention.

A mirror's `health`, first match wins (`reason` says why in one sentence):
1. failed: a connector is FAILED, or the application failed (gave up after max_restarts).
2. stopped: every connector is desired stopped (its application exits).
3. paused: a connector is desired paused or reports PAUSED.
4. degraded: the application is not running (starting, backoff, not running) or its status is stale
   (no report from the current configuration within REPORT_STALE_SECONDS, or Redis cannot be read);
   a connector desired running is not RUNNING; the heartbeat link is unhealthy; a consumer group's
   offsets could not be synced to the target (sync `skipped` or `failed`).
5. running: none of the above.

Cheap whatever the number of mirrors: four database queries (clusters, mirrors, their connectors,
deployments) and one Redis round trip (a pipeline of every mirror's live status and newest heartbeat
and lag points). The metric history is never read. With Redis down, every mirror that should run is
degraded with that reason and one problem says so. `links` groups the mirrors by cluster pair and
direction for the topology (mirrors.services.topology).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.urls import reverse

from mirrorcore import channel
from mirrors.choices import ApplicationState, ConnectorKind, DesiredState
from mirrors.models import Cluster, Connector, Deployment, Mirror
from mirrors.services import metrics, observed, topology
from mirrors.services.metrics import HEALTHY, UNHEALTHY, UNKNOWN

log = logging.getLogger(__name__)

RUNNING, DEGRADED, FAILED, PAUSED, STOPPED = "running", "degraded", "failed", "paused", "stopped"
HEALTH = (RUNNING, DEGRADED, FAILED, PAUSED, STOPPED)
ERROR, WARNING = "error", "warning"
REPORT_STALE_SECONDS = 10.0  # applications report every 0.5 s; their status key lives 30 s
FRESH_LAG_SECONDS = 30.0  # an older lag point says nothing about now (the sampler runs every 2 s)
UNSYNCED = frozenset({"skipped", "failed"})  # checkpoint connector's group `sync` values worth a problem


# -- health: pure ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ConnectorFacts:
    kind: str
    state: str  # observed, Kafka Connect's vocabulary
    desired_state: str  # running | paused | stopped
    error: str = ""


@dataclass(frozen=True)
class Facts:
    """What a mirror's health is decided from."""

    connectors: tuple[ConnectorFacts, ...]
    application: str = ApplicationState.RUNNING
    application_error: str = ""
    silent: str | None = None  # why there is no usable live status (None: the application reports)
    link_state: str = UNKNOWN
    link_reason: str = ""
    unsynced_groups: tuple[tuple[str, str], ...] = field(default=())  # (group, why)


def health(facts: Facts) -> tuple[str, str]:
    """(health, reason) with the precedence of the module docstring."""
    failed = [c for c in facts.connectors if c.state == channel.FAILED]
    if failed:
        c = failed[0]
        more = f" (and {', '.join(o.kind for o in failed[1:])})" if failed[1:] else ""
        return FAILED, f"the {c.kind} connector failed{more}: {first_line(c.error) or 'no error reported'}"
    if facts.application == ApplicationState.FAILED:
        return FAILED, f"the application failed: {first_line(facts.application_error) or 'no error recorded'}"
    if facts.connectors and all(c.desired_state == DesiredState.STOPPED for c in facts.connectors):
        return STOPPED, "every connector is stopped"
    paused = [c.kind for c in facts.connectors
              if c.desired_state == DesiredState.PAUSED or c.state == channel.PAUSED]
    if paused:
        return PAUSED, f"the {_kinds(paused)} paused"
    causes = _degraded_causes(facts)
    if causes:
        return DEGRADED, "; ".join(causes)
    idle = [c.kind for c in facts.connectors if c.desired_state == DesiredState.STOPPED]
    return RUNNING, "; ".join(["replicating"] + ([f"the {_kinds(idle)} stopped"] if idle else [])
                              + ([facts.link_reason] if facts.link_reason else []))


def _degraded_causes(facts: Facts) -> list[str]:
    causes = []
    if facts.application == ApplicationState.BACKOFF:
        causes.append(f"the application is restarting after a failure: {first_line(facts.application_error)}")
    elif facts.application != ApplicationState.RUNNING:
        causes.append(f"the application is {facts.application.replace('_', ' ')}")
    elif facts.silent:
        causes.append(facts.silent)
    lagging = [c for c in facts.connectors if c.desired_state == DesiredState.RUNNING and c.state != channel.RUNNING]
    causes += [f"the {c.kind} connector is {c.state} (desired running)" for c in lagging]
    if facts.link_state == UNHEALTHY:
        causes.append(f"link unhealthy: {facts.link_reason}")
    causes += [f"group {group!r} not synced: {why}" for group, why in facts.unsynced_groups]
    return causes


def _kinds(kinds: list[str]) -> str:
    return f"{kinds[0]} connector is" if len(kinds) == 1 else f"{', '.join(kinds[:-1])} and {kinds[-1]} connectors are"


def first_line(text: str | None, limit: int = 300) -> str:
    """An error's first line (tracebacks and log tails follow it), at most `limit` characters."""
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- reading everything at once --------------------------------------------------------------

def overview(now: float | None = None) -> dict:
    """The document of `GET /api/v1/overview/`."""
    now = time.time() if now is None else now
    clusters = list(Cluster.objects.all())
    mirrors = list(Mirror.objects.select_related("source", "target").prefetch_related("connectors"))
    deployments = {d.mirror_name: d for d in Deployment.objects.all()}
    readings, redis_error = observed.read_all([m.name for m in mirrors])

    rows, problems = [], []
    if redis_error:
        problems.append(_problem(ERROR, None, None, "Redis cannot be read",
                                 f"{redis_error}: live status, heartbeats and lag are unknown"))
    for mirror in mirrors:
        try:
            row, found = _mirror(mirror, deployments.get(mirror.name), readings.get(mirror.name, observed.Reading()),
                                 redis_error, now)
        except Exception as error:  # one broken mirror must not hide the others (logged)
            log.exception("overview of mirror %s", mirror.name)
            row, found = _broken(mirror, error), [
                _problem(ERROR, mirror.name, None, "status cannot be evaluated", str(error))]
        rows.append(row)
        problems += found

    return {
        "generated_at": now,
        "clusters": [{"alias": c.alias, "bootstrap_servers": c.bootstrap_servers,
                      "mirrors_out": sum(1 for m in mirrors if m.source_id == c.pk),
                      "mirrors_in": sum(1 for m in mirrors if m.target_id == c.pk)} for c in clusters],
        "mirrors": rows,
        "links": topology.links(rows),
        "problems": sorted(problems, key=lambda p: (p["severity"] != ERROR, p["mirror"] or "", p["title"])),
        "counts": {state: sum(1 for row in rows if row["health"] == state) for state in HEALTH},
    }


# -- one mirror ------------------------------------------------------------------------------

def _mirror(mirror: Mirror, deployment: Deployment | None, reading: observed.Reading, redis_error: str | None,
            now: float) -> tuple[dict, list[dict]]:
    connectors = {c.kind: c for c in mirror.connectors.all()}
    recorded_app_state = deployment.state if deployment else ApplicationState.NOT_RUNNING
    live = observed.trusted_live(reading.live, mirror.generation, recorded_app_state)
    app_state = observed.application_state(recorded_app_state, live)
    reported = (live or {}).get("connectors") or {}
    states = {kind: _connector(connector, live) for kind, connector in sorted(connectors.items())}
    started_at = metrics.started_at(mirror, deployment)
    link = metrics.link_health_from(mirror, connectors, reading.heartbeat, started_at, live, now, redis_error)
    groups = ((reported.get(ConnectorKind.CHECKPOINT) or {}).get("groups")) or []
    unsynced = tuple((g["group"], g.get("sync_note") or f"sync {g['sync']}") for g in groups
                     if g.get("sync") in UNSYNCED)
    silent = _silence(live, deployment, redis_error, now)
    facts = Facts(
        connectors=tuple(ConnectorFacts(kind, s["state"], s["desired_state"], s["error"] or "")
                         for kind, s in states.items()),
        application=app_state, application_error=deployment.last_error if deployment else "",
        silent=silent, link_state=link["state"], link_reason=link["reason"], unsynced_groups=unsynced)
    state, reason = health(facts)
    lag = reading.lag if reading.lag and now - reading.lag["at"] <= FRESH_LAG_SECONDS else None
    row = {
        "name": mirror.name, "source": mirror.source.alias, "target": mirror.target.alias,
        "health": state, "reason": reason, "application": app_state,
        "link": link["state"], "latency_ms": link["latency_ms"] if link["state"] == HEALTHY else None,
        "lag_records": lag.get("records") if lag else None, "lag_seconds": lag.get("seconds") if lag else None,
        "connectors": states, "url": mirror_url(mirror.name),
    }
    return row, _problems(mirror, state, facts, link, redis_error is None)


def _connector(connector: Connector, live: dict | None) -> dict:
    state, error, tasks = observed.current_or_recorded(connector, live)
    return {"state": state, "desired_state": connector.desired_state, "tasks": len(tasks), "error": error or None}


def _silence(live: dict | None, deployment: Deployment | None, redis_error: str | None, now: float) -> str | None:
    """Why a running application's live status is missing or stale; None when it is fresh."""
    if redis_error:
        return f"its live status is unknown: {redis_error}"
    if live is None:
        last = deployment.last_report_at.timestamp() if deployment and deployment.last_report_at else None
        since = f" for {now - last:.0f} s" if last is not None else " yet"
        return f"the application has not reported its status{since}"
    age = now - (live.get("reported_at") or 0)
    return f"the application last reported {age:.0f} s ago" if age > REPORT_STALE_SECONDS else None


def _problems(mirror: Mirror, state: str, facts: Facts, link: dict, redis_read: bool) -> list[dict]:
    name = mirror.name
    found = [_problem(ERROR, name, c.kind, f"{c.kind} connector failed", c.error or "no error reported")
             for c in facts.connectors if c.state == channel.FAILED]
    if facts.application == ApplicationState.FAILED:
        found.append(_problem(ERROR, name, None, "application failed", facts.application_error
                              or "no error recorded"))
    elif facts.application == ApplicationState.BACKOFF:
        found.append(_problem(WARNING, name, None, "application restarting after a failure",
                              facts.application_error or "no error recorded"))
    # Only while the application runs and nothing is paused or stopped on purpose: otherwise a silent
    # application and a link without heartbeats are consequences, already told above or chosen.
    if state not in (STOPPED, PAUSED) and facts.application == ApplicationState.RUNNING:
        if facts.silent and redis_read:  # else one problem tells Redis cannot be read, not one per mirror
            found.append(_problem(WARNING, name, None, "application not reporting", facts.silent))
        if link["state"] == UNHEALTHY:
            found.append(_problem(WARNING, name, None,
                                  f"link {mirror.source.alias} → {mirror.target.alias} unhealthy", link["reason"]))
    found += [_problem(WARNING, name, ConnectorKind.CHECKPOINT,
                       f"group {group!r} not synced to {mirror.target.alias}", why)
              for group, why in facts.unsynced_groups]
    return found


def _problem(severity: str, mirror: str | None, connector: str | None, title: str, detail: str) -> dict:
    return {"severity": severity, "mirror": mirror, "connector": connector, "title": title, "detail": detail,
            "url": mirror_url(mirror) if mirror else None}


def _broken(mirror: Mirror, error: Exception) -> dict[str, Any]:
    return {"name": mirror.name, "source": mirror.source.alias, "target": mirror.target.alias,
            "health": DEGRADED, "reason": f"its status cannot be evaluated: {error}", "application": None,
            "link": UNKNOWN, "latency_ms": None, "lag_records": None, "lag_seconds": None, "connectors": {},
            "url": mirror_url(mirror.name)}


def mirror_url(name: str) -> str:
    """The mirror's dashboard page."""
    return reverse("mirror-detail", kwargs={"name": name})
