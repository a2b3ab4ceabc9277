"""What a mirror's application reports and what its connectors are doing now.

The one place that reads applications' live status from Redis (`live_status` for one mirror,
`read_all` for many in one round trip, with their newest heartbeat and lag points) and decides
whether a report can be trusted (`trusted_live`). The supervisor records the connectors' state on
every pass; the status document, the overview, `/metrics` and link health read it between passes,
so a status never shows progress from a connector it calls UNASSIGNED.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import redis

from mirrorcore import channel, series
from mirrors.choices import ApplicationState, ConnectorState, DesiredState
from mirrors.models import Connector, Mirror
from mirrors.services.redis_client import get_redis

log = logging.getLogger(__name__)

# An application in one of these states is not running: what it last reported is no longer true.
NOT_ALIVE = (ApplicationState.BACKOFF, ApplicationState.FAILED, ApplicationState.NOT_RUNNING)


class Observed(NamedTuple):
    state: str
    error: str
    tasks: list


def live_status(mirror: Mirror) -> dict | None:
    """What the running application last published, if it runs the current configuration."""
    try:
        status = channel.read_status(get_redis(), mirror.name)
    except redis.RedisError as error:
        log.warning("no live status for %s: %s", mirror.name, error)
        return None
    if not status or status.get("generation") != mirror.generation:
        return None
    return status


@dataclass(frozen=True)
class Reading:
    """One mirror's share of `read_all`: its live status as published (not yet trusted) and its newest
    heartbeat and lag points, oldest first."""

    live: dict | None = None
    heartbeats: list[dict] = field(default_factory=list)
    lags: list[dict] = field(default_factory=list)

    @property
    def heartbeat(self) -> dict | None:
        return self.heartbeats[-1] if self.heartbeats else None

    @property
    def lag(self) -> dict | None:
        return self.lags[-1] if self.lags else None


def read_all(names: Sequence[str], heartbeats: int = 1, lags: int = 1) -> tuple[dict[str, Reading], str | None]:
    """Every named mirror's live status and newest `heartbeats` and `lags` points, in one Redis round trip.

    Returns (name -> Reading, None), or ({}, why Redis cannot be read). Unreadable entries are logged
    and left out; trust each live status with `trusted_live` before using it.
    """
    if not names:
        return {}, None
    try:
        pipe = get_redis().pipeline(transaction=False)
        for name in names:
            pipe.get(channel.status_key(name))
            pipe.xrevrange(series.series_key(name, "heartbeat"), count=heartbeats)
            pipe.xrevrange(series.series_key(name, "lag"), count=lags)
        replies = pipe.execute()
    except redis.RedisError as error:
        log.warning("no live status without Redis: %s", error)
        return {}, f"Redis cannot be read ({error})"
    readings = {}
    for i, name in enumerate(names):
        raw, heartbeat_entries, lag_entries = replies[3 * i: 3 * i + 3]
        readings[name] = Reading(_json(raw, name), _points(heartbeat_entries, name), _points(lag_entries, name))
    return readings, None


def _json(raw: bytes | None, name: str) -> dict | None:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        log.warning("unreadable live status of %s", name)
        return None


def _points(newest_first: list, name: str) -> list[dict]:
    points = []
    for entry in reversed(newest_first):
        try:
            points.append(series.decode(*entry))
        except (ValueError, KeyError, TypeError):
            log.warning("unreadable series point of %s", name)
    return points


def trusted_live(live: dict | None, generation: int, application_state: str | None) -> dict | None:
    """The live status if it speaks for the mirror's current configuration and a live application."""
    if not live or live.get("generation") != generation or application_state in NOT_ALIVE:
        return None
    return live


def current(connector: Connector, live: dict | None) -> Observed | None:
    """The connector's state, error and tasks now; None when neither `live` nor its desired state says.

    `live` must be trusted (see `trusted_live`). The application's report wins: a connector desired
    STOPPED is STOPPED once the application says so, or at once when no application reports. A report
    made before the connector's latest restart request counts as RESTARTING.
    """
    reported = ((live or {}).get("connectors") or {}).get(connector.kind) or {}
    if reported.get("state") and reported.get("restart") == connector.restart_token:
        return Observed(reported["state"], reported.get("error") or "", reported.get("tasks") or [])
    if connector.desired_state == DesiredState.STOPPED:
        return Observed(ConnectorState.STOPPED, "", [])
    if reported.get("state"):
        return Observed(ConnectorState.RESTARTING, reported.get("error") or "", [])
    return None


def current_or_recorded(connector: Connector, live: dict | None) -> Observed:
    """`current`, else what the supervisor last recorded."""
    return current(connector, live) or Observed(connector.state, connector.error, connector.tasks)


def application_state(recorded: str, live: dict | None) -> str:
    """A STARTING application that already reports (trusted `live`) is RUNNING, as the next pass will record."""
    return ApplicationState.RUNNING if recorded == ApplicationState.STARTING and live else recorded
