"""What a connector is doing now, from its desired state and its application's live status.

The supervisor records this on every pass; the status document, the overview and link health
read it between passes, so a status never shows progress from a connector it calls UNASSIGNED.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import redis

from mirrorcore import channel
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
