"""Kafka Connect's connector verbs: pause, resume, stop, restart (connector or task).

A verb changes the connector's desired state (or restart token) in the database, records who
asked, and publishes the mirror's desired state to Redis at once, so the running application acts
within a second instead of waiting for the supervisor's next pass. Verbs on one connector leave
the others alone.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import redis
from django.db import transaction

from mirrorcore import channel
from mirrors.choices import ApplicationState, ConnectorState, DesiredState
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import events, observed
from mirrors.services.redis_client import get_redis
from mirrors.services.status import live_of
from mirrors.services.supervision import reconcile_soon

log = logging.getLogger(__name__)

TARGET_STATES = {"pause": DesiredState.PAUSED, "resume": DesiredState.RUNNING, "stop": DesiredState.STOPPED}


@dataclass(frozen=True)
class VerbResult:
    accepted: bool  # False: nothing to do (restart with only_failed and nothing failed)
    connector: Connector
    detail: str


def change_state(connector: Connector, verb: str, actor: str) -> VerbResult:
    """pause / resume / stop: the desired state, applied by the application within a second."""
    target = TARGET_STATES[verb]
    with transaction.atomic():
        connector = Connector.objects.select_for_update().select_related("mirror").get(pk=connector.pk)
        previous = connector.desired_state
        connector.desired_state = target
        connector.save(update_fields=["desired_state"])
        events.action(actor, verb, mirror=connector.mirror.name, connector=connector.kind,
                      from_state=connector.state, to_state=target, detail=f"desired state was {previous}")
    publish(connector.mirror)
    return VerbResult(True, connector, f"{connector.kind} connector: desired state {target} (was {previous})")


def restart(connector: Connector, actor: str, include_tasks: bool = False, only_failed: bool = False,
            task: int | None = None) -> VerbResult:
    """Restart the connector's work in its application (a new restart token).

    Our tasks share the connector's work (one streaming query, one loop), so a task restart restarts
    the connector; `include_tasks` is therefore implied. A mirror whose application the supervisor
    gave up on (FAILED after max_restarts) is submitted again, with its restart count reset.
    The live status is read from Redis before the row lock is taken: a slow Redis holds no lock.
    """
    live = live_of(connector.mirror)
    with transaction.atomic():
        connector = Connector.objects.select_for_update().select_related("mirror").get(pk=connector.pk)
        now = observed.current_or_recorded(connector, live)
        failed = now.state == ConnectorState.FAILED or any(t.get("state") == ConnectorState.FAILED for t in now.tasks)
        if only_failed and not failed:
            return VerbResult(False, connector, f"{connector.kind} connector is {now.state}: "
                                                "nothing failed, nothing restarted (only_failed=true)")
        connector.restart_token += 1
        connector.next_restart_at = None
        connector.save(update_fields=["restart_token", "next_restart_at"])
        revived = _revive_application(connector.mirror)
        if revived:
            reconcile_soon()
        what = f"task {task}" if task is not None else "connector" + (" and tasks" if include_tasks else "")
        events.action(actor, "restart", mirror=connector.mirror.name, connector=connector.kind,
                      from_state=connector.state, to_state=ConnectorState.RESTARTING,
                      detail=what + ("; the application is submitted again" if revived else ""))
    publish(connector.mirror)
    return VerbResult(True, connector, f"{connector.kind} {what} restarting")


def _revive_application(mirror: Mirror) -> bool:
    deployment = Deployment.objects.select_for_update().filter(mirror_name=mirror.name).first()
    if deployment is None or deployment.state != ApplicationState.FAILED:
        return False
    deployment.state = ApplicationState.NOT_RUNNING
    deployment.restarts = deployment.consecutive_failures = 0
    deployment.next_attempt_at = None
    deployment.save(update_fields=["state", "restarts", "consecutive_failures", "next_attempt_at", "updated_at"])
    return True


def publish(mirror: Mirror) -> None:
    """The mirror's desired state to Redis now; the supervisor rewrites it on every pass anyway."""
    connectors = Connector.objects.filter(mirror=mirror)
    desired = channel.Desired(mirror.generation,
                              {c.kind: channel.ConnectorDesired(c.desired_state, c.restart_token) for c in connectors})
    try:
        channel.publish_desired(get_redis(), mirror.name, desired)
    except redis.RedisError as error:
        log.warning("desired state of %s not published now (the supervisor will): %s", mirror.name, error)
