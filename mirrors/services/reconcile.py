"""The supervisor: one pass brings every mirror's application and connectors to the desired state.

Desired state comes from the database, observed state from the process table and from the
status each application publishes to Redis. A pass writes rows only when something changed.
Run it under the reconcile lock (see mirrors.tasks); it is safe to run again at any time.
"""

from __future__ import annotations

import logging
import shutil
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from controlplane.infra import processes
from mirrors.choices import ApplicationState, ConnectorState, DesiredState
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import events, observed, runtime
from spark_runtime import channel, series

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 60.0

# How precisely the last status report is remembered (a database write at most this often per mirror).
REPORT_GRANULARITY = timedelta(seconds=5)


def stale_after() -> timedelta:
    """How long an application may go without a status report before it counts as stuck."""
    return timedelta(seconds=settings.APP_STALE_SECONDS)


def backoff_seconds(failures: int) -> float:
    """1 s, 2 s, 4 s ... up to a minute, for the n-th consecutive failure."""
    return min(2.0 ** max(failures - 1, 0), MAX_BACKOFF_SECONDS)


class Reconciler:
    def __init__(self, redis_client: Any) -> None:
        self.redis = redis_client

    def run(self) -> None:
        apps = runtime.running_apps()
        mirrors = list(Mirror.objects.select_related("source", "target").prefetch_related("connectors"))
        names = {mirror.name for mirror in mirrors}
        for name, app in apps.items():
            if name not in names:
                log.info("stopping the application of deleted mirror %s", name)
                runtime.stop(name, app)
        for deployment in Deployment.objects.exclude(mirror_name__in=names):
            self.redis.delete(channel.desired_key(deployment.mirror_name))
            series.delete(self.redis, deployment.mirror_name)  # points the application added while stopping
            shutil.rmtree(runtime.work_dir(deployment.mirror_name), ignore_errors=True)
            deployment.delete()
        for mirror in mirrors:
            self.reconcile_mirror(mirror, apps.get(mirror.name, runtime.AppProcesses()))

    def reconcile_mirror(self, mirror: Mirror, app: runtime.AppProcesses) -> None:
        now = timezone.now()
        connectors = {c.kind: c for c in mirror.connectors.all()}
        deployment, _ = Deployment.objects.get_or_create(mirror_name=mirror.name)
        before = _snapshot(deployment)
        for connector in connectors.values():
            self._auto_restart(connector, now)
        channel.publish_desired(self.redis, mirror.name, channel.Desired(
            mirror.generation,
            {kind: channel.ConnectorDesired(c.desired_state, c.restart_token) for kind, c in connectors.items()},
        ))
        app = self._one_driver(mirror.name, app.with_known_driver(deployment.pid), deployment)
        # Not a report from the old configuration's application, on its way out:
        status = observed.trusted_live(channel.read_status(self.redis, mirror.name), mirror.generation, None)

        should_run = any(c.desired_state != DesiredState.STOPPED for c in connectors.values())
        previous_state = deployment.state
        if should_run:
            self._keep_running(mirror, deployment, app, status, now, list(connectors.values()))
        else:
            if app.groups:
                log.info("stopping the application of %s: every connector is stopped", mirror.name)
                runtime.stop(mirror.name, app)
            deployment.state, deployment.pid = ApplicationState.NOT_RUNNING, None
            deployment.consecutive_failures, deployment.next_attempt_at = 0, None
        status = observed.trusted_live(status, mirror.generation, deployment.state)  # not a dead one's last words
        with transaction.atomic():  # readers see the application's and its connectors' states together
            if _snapshot(deployment) != before:
                deployment.save()
            if deployment.state != previous_state:
                events.transition(mirror=mirror.name, what="application", from_state=previous_state,
                                  to_state=deployment.state, detail=deployment.last_error
                                  if deployment.state in (ApplicationState.BACKOFF, ApplicationState.FAILED) else "")
            for connector in connectors.values():
                self._observe(connector, deployment, status, now)

    # -- the application -----------------------------------------------------------------

    def _one_driver(self, name: str, app: runtime.AppProcesses, deployment: Deployment) -> runtime.AppProcesses:
        """Exactly one driver per mirror: stop any extra, and Python drivers left without a JVM."""
        if not app.drivers:
            if app.groups:
                log.info("mirror %s: stopping processes left by a dead driver: %s", name, app.orphans)
                runtime.stop(name, app)
            return runtime.AppProcesses()
        keep = deployment.pid if deployment.pid in app.drivers else app.drivers[-1]
        extras = app.without(keep)
        if extras.groups:
            log.warning("mirror %s: keeping driver %d, stopping %s", name, keep, sorted(extras.groups))
            runtime.stop(name, extras)
        return runtime.AppProcesses({keep: app.groups[keep]})

    def _keep_running(self, mirror: Mirror, deployment: Deployment, app: runtime.AppProcesses,
                      status: dict | None, now: datetime, connectors: list[Connector]) -> None:
        if deployment.state == ApplicationState.FAILED:
            if deployment.generation == mirror.generation:
                return  # given up after max_restarts: an operator's restart (or a new configuration) revives it
            deployment.state, deployment.restarts, deployment.consecutive_failures = ApplicationState.NOT_RUNNING, 0, 0
        if app.drivers:
            deployment.pid = app.drivers[0]
            started = deployment.submitted_at or now
            if status is not None:
                deployment.state = ApplicationState.RUNNING
                if deployment.last_report_at is None or now - deployment.last_report_at > REPORT_GRANULARITY:
                    deployment.last_report_at = now
                if deployment.consecutive_failures and now - started > timedelta(seconds=60):
                    deployment.consecutive_failures = 0
            elif now - max(started, deployment.last_report_at or started) > stale_after():
                self._failed(deployment, f"no status report for {settings.APP_STALE_SECONDS:.0f}s: "
                                         "the application is stuck and was stopped", now, connectors)
                runtime.stop(mirror.name, app)
            return
        if deployment.pid:
            processes.reap(deployment.pid)
            self.redis.delete(channel.status_key(mirror.name))  # the dead application's last words
            if deployment.generation == mirror.generation and deployment.state != ApplicationState.BACKOFF:
                tail = runtime.driver_log_tail(mirror.name, lines=8)
                self._failed(deployment, "the application exited unexpectedly" + (f":\n{tail}" if tail else ""),
                             now, connectors)
            deployment.pid = None
        if deployment.state == ApplicationState.FAILED:
            return  # it just failed for the last time
        if deployment.next_attempt_at and now < deployment.next_attempt_at:
            deployment.state = ApplicationState.BACKOFF
            return
        deployment.pid = runtime.submit(mirror)
        log.info("submitted the application of %s (generation %d, pid %d)",
                 mirror.name, mirror.generation, deployment.pid)
        deployment.state = ApplicationState.STARTING
        deployment.generation = mirror.generation
        deployment.submissions += 1
        deployment.submitted_at, deployment.next_attempt_at = now, None

    def _failed(self, deployment: Deployment, reason: str, now: datetime, connectors: list[Connector]) -> None:
        limit = restart_limit(connectors)
        if limit is not None and deployment.restarts >= limit:
            log.error("application of %s failed and is not restarted (%d restarts, limit %d): %s",
                      deployment.mirror_name, deployment.restarts, limit, reason)
            deployment.last_error = (f"{reason}\n(not restarted: {deployment.restarts} restarts "
                                     f"reached the limit {limit})")
            deployment.state, deployment.next_attempt_at = ApplicationState.FAILED, None
            return
        deployment.consecutive_failures += 1
        deployment.restarts += 1
        delay = backoff_seconds(deployment.consecutive_failures)
        log.warning("application of %s failed (%d in a row), next attempt in %.0fs: %s",
                    deployment.mirror_name, deployment.consecutive_failures, delay, reason)
        deployment.last_error = reason
        deployment.state = ApplicationState.BACKOFF
        deployment.next_attempt_at = now + timedelta(seconds=delay)

    # -- connectors ----------------------------------------------------------------------

    def _auto_restart(self, connector: Connector, now: datetime) -> None:
        """A FAILED connector with auto-restart gets a new restart token after its backoff."""
        if not (connector.state == ConnectorState.FAILED and connector.desired_state == DesiredState.RUNNING
                and connector.auto_restart_enabled):
            return
        if connector.max_restarts is not None and connector.restarts >= connector.max_restarts:
            return
        if connector.next_restart_at is None:
            connector.next_restart_at = now + timedelta(seconds=backoff_seconds(connector.restarts + 1))
            connector.save(update_fields=["next_restart_at"])
        elif now >= connector.next_restart_at:
            log.info("auto-restarting %s (restart %d)", connector, connector.restarts + 1)
            connector.restart_token += 1
            connector.restarts += 1
            connector.next_restart_at = None
            connector.save(update_fields=["restart_token", "restarts", "next_restart_at"])

    def _observe(self, connector: Connector, deployment: Deployment, status: dict | None, now: datetime) -> None:
        now_observed = observed.current(connector, status)
        if now_observed is not None:
            state, error, tasks = now_observed
        elif deployment.state == ApplicationState.FAILED:
            state, error, tasks = ConnectorState.FAILED, deployment.last_error, []
        elif deployment.state == ApplicationState.BACKOFF:
            state, error, tasks = ConnectorState.RESTARTING, deployment.last_error, []
        else:
            state, error, tasks = ConnectorState.UNASSIGNED, "", []
        if (connector.state, connector.error, connector.tasks) == (state, error, tasks):
            return
        if connector.state != state:
            events.transition(mirror=connector.mirror.name, connector=connector.kind, from_state=connector.state,
                              to_state=state, detail=error if state == ConnectorState.FAILED else "")
            connector.state_changed_at = now
            if state != ConnectorState.FAILED:
                connector.next_restart_at = None
        connector.state, connector.error, connector.tasks = state, error, tasks
        connector.save(update_fields=["state", "error", "tasks", "state_changed_at", "next_restart_at"])
        if state == ConnectorState.FAILED:
            self._auto_restart(connector, now)  # schedule the first restart without waiting a pass


def restart_limit(connectors: list[Connector]) -> int | None:
    """How often a dead application is submitted again: the strictest `max_restarts` of the connectors
    that should run; 0 when none of them has auto-restart enabled; None for no limit."""
    running = [c for c in connectors if c.desired_state != DesiredState.STOPPED]
    if not any(c.auto_restart_enabled for c in running):
        return 0
    limits = [c.max_restarts for c in running if c.auto_restart_enabled and c.max_restarts is not None]
    return min(limits) if limits else None


def _snapshot(deployment: Deployment) -> tuple:
    return tuple(getattr(deployment, f.attname) for f in Deployment._meta.concrete_fields if f.name != "updated_at")
