"""The supervisor: one pass brings every mirror's application and connectors to the desired state.

Desired state comes from the database, observed state from the mirror's engine (this host's
process table, or a YARN ResourceManager: see mirrors.engines) and from the status each
application publishes to Redis. A pass writes rows only when something changed.

Passes normally run one at a time (the reconcile lock in supervision.py), but the lock expires, so
two passes on two workers can overlap. What then keeps one application per mirror:
- a submission happens only under the mirror's submission lease in Redis (SET NX with a time-out
  longer than a submission), and the pass that holds it looks the mirror's applications up in the
  engine again before submitting: the second of two racing passes finds the first one's application
  (YARN knows it once spark-submit returned) and adopts it instead of submitting another;
- a pass that still sees two live applications of a mirror keeps the one its deployment records
  (else the newest) and kills the others;
- the desired state in Redis names the application the control plane keeps (YARN), and a driver
  that is not that application exits by itself.
An engine that cannot be asked (its ResourceManager does not answer) is not read as "nothing
runs": the pass leaves that engine's mirrors as they are until it answers again.
"""

from __future__ import annotations

import logging
import re
import shutil
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from controlplane.infra import hadoop_fs
from mirrorcore import channel, series
from mirrorcore.overrides import refusal_message
from mirrors.choices import ApplicationState, ConnectorState, DesiredState
from mirrors.engines import Application, Engine, EngineError, Engines, EngineUnavailable
from mirrors.models import Connector, Deployment, Mirror
from mirrors.services import events, observed, runtime
from mirrors.services.overrides import mirror_refusals

log = logging.getLogger(__name__)

MAX_BACKOFF_SECONDS = 60.0

# How long an application of an older configuration may take to exit by itself before it is killed.
GENERATION_GRACE = timedelta(seconds=30)
# An application whose connectors are all stopped exits by itself; one still there this long after is killed.
STOP_GRACE_SECONDS = 30.0

# How precisely the last status report is remembered (a database write at most this often per mirror).
REPORT_GRANULARITY = timedelta(seconds=5)


def stale_after() -> timedelta:
    """How long an application may go without a status report before it counts as stuck."""
    return timedelta(seconds=settings.APP_STALE_SECONDS)


def backoff_seconds(failures: int) -> float:
    """1 s, 2 s, 4 s ... up to a minute, for the n-th consecutive failure."""
    return min(2.0 ** max(failures - 1, 0), MAX_BACKOFF_SECONDS)


def submission_lease_key(mirror: str) -> str:
    return f"mirrorplane:mirror:{mirror}:submitting"


def submission_lease_seconds() -> int:
    """Longer than any submission may take, so a lease outlives the submission it guards."""
    return int(settings.SUBMIT_TIMEOUT_SECONDS) + 60


def _newest_first(app: Application) -> tuple[int, ...]:
    return tuple(-int(part) for part in re.findall(r"\d+", app.id))


class Reconciler:
    def __init__(self, redis_client: Any, engines: Engines | None = None) -> None:
        self.redis = redis_client
        self.engines = engines or Engines()
        self.owner = uuid.uuid4().hex  # this pass, as holder of submission leases

    def run(self) -> None:
        mirrors = list(Mirror.objects.select_related("source", "target").prefetch_related("connectors"))
        names = {mirror.name for mirror in mirrors}
        deployments = list(Deployment.objects.all())
        in_use = ({self.engines.for_mirror(m).name for m in mirrors} | {d.engine for d in deployments}
                  | self.engines.configured())
        live: dict[str, dict[str, list[Application]] | None] = {}
        for name in sorted(in_use):
            known = {d.mirror_name: d.application_id for d in deployments if d.engine == name and d.application_id}
            try:
                live[name] = self.engines.get(name).live(known)
            except EngineUnavailable as error:
                log.warning("the %s engine cannot be asked now: %s", name, error)
                live[name] = None
        for name, apps in live.items():
            for mirror_name, applications in (apps or {}).items():
                if mirror_name not in names:
                    log.info("stopping the application of deleted mirror %s", mirror_name)
                    self._kill(self.engines.get(name), applications)
        for deployment in deployments:
            apps = live.get(deployment.engine)
            if deployment.mirror_name in names or apps is None:
                continue
            engine = self.engines.get(deployment.engine)
            if engine.stops_at_once or not apps.get(deployment.mirror_name):  # else: stopping, next pass
                self._forget(deployment, engine)
        for mirror in mirrors:
            engine = self.engines.for_mirror(mirror)
            self.reconcile_mirror(mirror, engine, live)
        for name in sorted(in_use):
            try:
                self.engines.get(name).maintain()
            except OSError as error:
                log.warning("the %s engine's housekeeping failed: %s", name, error)

    def _forget(self, deployment: Deployment, engine: Engine) -> None:
        """A deleted mirror whose application is gone: its checkpoints, state and folder go too. A
        checkpoint that cannot be deleted keeps the deployment, so the next pass tries again: a new
        mirror of the same name must never resume from it."""
        try:
            location = engine.checkpoint_location(deployment.mirror_name)
            if location:
                hadoop_fs.delete(location, engine.environment())
        except (hadoop_fs.HadoopFsError, EngineError) as error:
            log.warning("could not delete the checkpoints of deleted mirror %s: %s", deployment.mirror_name, error)
            return
        self.redis.delete(channel.desired_key(deployment.mirror_name))
        series.delete(self.redis, deployment.mirror_name)  # points the application added while stopping
        shutil.rmtree(runtime.work_dir(deployment.mirror_name), ignore_errors=True)
        deployment.delete()

    def reconcile_mirror(self, mirror: Mirror, engine: Engine,
                         live: dict[str, dict[str, list[Application]] | None]) -> None:
        now = timezone.now()
        connectors = {c.kind: c for c in mirror.connectors.all()}
        deployment, _ = Deployment.objects.get_or_create(mirror_name=mirror.name)
        before = deployment.snapshot()
        for connector in connectors.values():
            self._auto_restart(connector, now)
        self._publish_desired(mirror, connectors, deployment)
        for other, apps in live.items():  # its master changed: the old engine's application goes
            if other != engine.name and apps and apps.get(mirror.name):
                log.info("mirror %s moved to the %s engine: stopping its %s application", mirror.name, engine.name,
                         other)
                self._kill(self.engines.get(other), apps[mirror.name])
        if deployment.engine != engine.name and not deployment.application_id:
            deployment.engine = engine.name
        # Not a report from the old configuration's application, on its way out:
        status = observed.trusted_live(channel.read_status(self.redis, mirror.name), mirror.generation, None)

        should_run = any(c.desired_state != DesiredState.STOPPED for c in connectors.values())
        previous_state = deployment.state
        apps = live.get(engine.name)
        if apps is None and (deployment.application_id or not should_run):
            pass  # the engine cannot be asked: leave the recorded application as it is, judge it later
        elif should_run:  # (an engine that cannot be asked fails the submission, with its reason)
            app = self._one_application(mirror.name, engine, (apps or {}).get(mirror.name, []), deployment)
            self._keep_running(mirror, engine, deployment, app, status, now, list(connectors.values()))
            if deployment.application_id and deployment.snapshot() != before:
                self._publish_desired(mirror, connectors, deployment)
        else:
            if apps and apps.get(mirror.name) and not _exits_by_itself(deployment, status, now):
                log.info("stopping the application of %s: every connector is stopped", mirror.name)
                self._kill(engine, apps[mirror.name])
            deployment.state, deployment.pid = ApplicationState.NOT_RUNNING, None
            deployment.application_id, deployment.tracking_url = "", ""
            deployment.consecutive_failures, deployment.next_attempt_at = 0, None
        status = observed.trusted_live(status, mirror.generation, deployment.state)  # not a dead one's last words
        with transaction.atomic():  # readers see the application's and its connectors' states together
            if deployment.snapshot() != before:
                deployment.save()
            if deployment.state != previous_state:
                events.transition(mirror=mirror.name, what="application", from_state=previous_state,
                                  to_state=deployment.state, detail=deployment.last_error
                                  if deployment.state in (ApplicationState.BACKOFF, ApplicationState.FAILED) else "")
            for connector in connectors.values():
                self._observe(connector, deployment, status, now)

    def _publish_desired(self, mirror: Mirror, connectors: dict[str, Connector], deployment: Deployment) -> None:
        channel.publish_desired(self.redis, mirror.name, channel.Desired(
            mirror.generation,
            {kind: channel.ConnectorDesired(c.desired_state, c.restart_token) for kind, c in connectors.items()},
            # Drivers that know their own id (YARN) exit when the control plane keeps another one.
            application=deployment.application_id if deployment.engine != "local" else None,
        ))

    # -- the application -----------------------------------------------------------------

    def _kill(self, engine: Engine, applications: list[Application]) -> None:
        for application in applications:
            try:
                engine.kill(application)
            except EngineError as error:
                log.warning("could not stop %s application %s of %s (next pass tries again): %s",
                            engine.name, application.id, application.mirror, error)

    def _one_application(self, name: str, engine: Engine, apps: list[Application],
                         deployment: Deployment) -> Application | None:
        """Exactly one application per mirror: the one the deployment records, else the newest; others go."""
        if not apps:
            return None
        recorded = [a for a in apps if a.id == deployment.application_id and deployment.engine == engine.name]
        keep = recorded[0] if recorded else sorted(apps, key=_newest_first)[0]
        extras = [a for a in apps if a.id != keep.id]
        if extras:
            log.warning("mirror %s: keeping application %s, stopping %s", name, keep.id, [a.id for a in extras])
            self._kill(engine, extras)
        return keep

    @staticmethod
    def _silent_since(submitted: datetime, app: Application, deployment: Deployment) -> datetime:
        """Since when the application owes a status report: its last one, else the launch of its driver
        where the engine tells (a YARN application may wait for a container long after its submission),
        else its submission."""
        launched = datetime.fromtimestamp(app.launched_at, tz=UTC) if app.launched_at else submitted
        return max(submitted, launched, deployment.last_report_at or submitted)

    def _adopt(self, deployment: Deployment, engine: Engine, app: Application) -> None:
        deployment.engine, deployment.application_id = engine.name, app.id
        deployment.pid = app.pid
        deployment.tracking_url = app.tracking_url or deployment.tracking_url

    def _keep_running(self, mirror: Mirror, engine: Engine, deployment: Deployment, app: Application | None,
                      status: dict | None, now: datetime, connectors: list[Connector]) -> None:
        if deployment.state == ApplicationState.FAILED:
            if deployment.generation == mirror.generation:
                if app is not None:  # given up on it: nothing of it keeps running
                    self._kill(engine, [app])
                return  # given up after max_restarts: an operator's restart (or a new configuration) revives it
            deployment.state, deployment.restarts, deployment.consecutive_failures = ApplicationState.NOT_RUNNING, 0, 0
        if app is not None:
            if app.generation is not None and app.generation != mirror.generation:
                # It exits by itself when it reads the new generation; its successor is submitted once it
                # is gone. One that does not exit within the grace period is killed.
                if now - mirror.updated_at > GENERATION_GRACE:
                    log.warning("mirror %s: application %s still runs generation %d of %d: killing it",
                                mirror.name, app.id, app.generation, mirror.generation)
                    self._kill(engine, [app])
                return
            self._adopt(deployment, engine, app)
            started = deployment.submitted_at or now
            if status is not None:
                deployment.state = ApplicationState.RUNNING
                if deployment.last_report_at is None or now - deployment.last_report_at > REPORT_GRANULARITY:
                    deployment.last_report_at = now
                if deployment.consecutive_failures and now - started > timedelta(seconds=60):
                    deployment.consecutive_failures = 0
            elif not app.queued and now - self._silent_since(started, app, deployment) > stale_after():
                self._failed(deployment, f"no status report for {settings.APP_STALE_SECONDS:.0f}s: "
                                         "the application is stuck and was stopped", now, connectors)
                self._kill(engine, [app])
            return
        if deployment.application_id:
            ended = self.engines.get(deployment.engine).outcome(mirror.name, deployment.application_id)
            self.redis.delete(channel.status_key(mirror.name))  # the dead application's last words
            if deployment.generation == mirror.generation and deployment.state != ApplicationState.BACKOFF:
                self._failed(deployment, ended.reason, now, connectors)
            deployment.pid, deployment.application_id = None, ""
        if deployment.state == ApplicationState.FAILED:
            return  # it just failed for the last time
        if deployment.next_attempt_at and now < deployment.next_attempt_at:
            deployment.state = ApplicationState.BACKOFF
            return
        self._submit(mirror, engine, deployment, now, connectors)

    def _submit(self, mirror: Mirror, engine: Engine, deployment: Deployment, now: datetime,
                connectors: list[Connector]) -> None:
        """Submit under the mirror's lease, after looking its applications up once more (see the module doc)."""
        lease = submission_lease_key(mirror.name)
        if not self.redis.set(lease, self.owner, nx=True, ex=submission_lease_seconds()):
            log.info("mirror %s: another supervision pass is submitting its application", mirror.name)
            return
        try:
            try:
                existing = engine.live({}).get(mirror.name, [])
            except EngineUnavailable as error:
                deployment.generation = mirror.generation  # this configuration failed: FAILED stays FAILED
                self._failed(deployment, str(error), now, connectors)
                return
            if existing:
                self._adopt(deployment, engine, sorted(existing, key=_newest_first)[0])
                log.info("mirror %s: adopted application %s submitted by another pass", mirror.name,
                         deployment.application_id)
                return
            refused = mirror_refusals(mirror)
            if refused:  # stored before the policy was tightened: never started, whatever the engine
                deployment.generation = mirror.generation
                self._failed(deployment, refusal_message(refused), now, connectors)
                return
            try:
                app = engine.submit(mirror)
            except EngineError as error:
                deployment.generation = mirror.generation
                self._failed(deployment, f"the {engine.name} engine refused the application: {error}", now,
                             connectors)
                return
            self._adopt(deployment, engine, app)
            log.info("submitted the application of %s (generation %d, %s %s)",
                     mirror.name, mirror.generation, engine.name, app.id)
            deployment.state = ApplicationState.STARTING
            deployment.generation = mirror.generation
            deployment.submissions += 1
            deployment.submitted_at, deployment.next_attempt_at = now, None
        finally:
            if self.redis.get(lease) in (self.owner, self.owner.encode()):
                self.redis.delete(lease)

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


def _exits_by_itself(deployment: Deployment, status: dict | None, now: datetime) -> bool:
    """Every connector is stopped: a live application sees it on its next loop and exits by itself,
    once its connectors have stopped cleanly (a real-time query hands its exact positions over).
    One that reports nothing, or is still there STOP_GRACE_SECONDS after the decision, is killed."""
    if not status:
        return False
    decided = deployment.updated_at if deployment.state == ApplicationState.NOT_RUNNING else None
    return (now - (decided or now)).total_seconds() < STOP_GRACE_SECONDS
