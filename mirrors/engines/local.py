"""Mirror applications as local processes: `spark-submit --deploy-mode client` on this host.

The embedded default (`local[N]`, or a standalone master with the driver here). This host's
process table is the truth about what runs, so only the host that submitted an application
can supervise it: run one Celery worker when mirrors use this engine.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from controlplane.infra import driver_jdk, processes
from mirrors.engines.base import Application, Engine, EngineError, Outcome
from mirrors.models import Mirror
from mirrors.services import runtime, standby

log = logging.getLogger(__name__)


class LocalEngine(Engine):
    name = "local"
    stops_at_once = True

    def checkpoint_location(self, mirror_name: str) -> str | None:
        return runtime.checkpoint_location(mirror_name)

    def live(self, known: Mapping[str, str]) -> dict[str, list[Application]]:
        found = runtime.running_apps()
        result: dict[str, list[Application]] = {}
        for name in set(found) | set(known):
            pid = int(known[name]) if known.get(name, "").isdigit() else None
            app = found.get(name, runtime.AppProcesses()).with_known_driver(pid)
            orphans = runtime.AppProcesses({g: p for g, p in app.groups.items() if g not in app.drivers})
            if orphans.groups:
                log.info("mirror %s: stopping processes left by a dead driver: %s", name, orphans.orphans)
                runtime.stop(name, orphans)
            if app.drivers:
                result[name] = [Application(id=str(pgid), mirror=name, pid=pgid) for pgid in app.drivers]
        return result

    def submit(self, mirror: Mirror) -> Application:
        try:
            job = runtime.prepare(mirror)
        except driver_jdk.DriverJdkError as error:
            raise EngineError(str(error)) from error
        pid = standby.claim(mirror, job) or runtime.start(mirror.name, job)
        return Application(id=str(pid), mirror=mirror.name, generation=mirror.generation, state="SUBMITTED", pid=pid)

    def maintain(self) -> None:
        standby.maintain()

    def kill(self, application: Application) -> None:
        runtime.stop(application.mirror, runtime.AppProcesses({int(application.id): [int(application.id)]}))

    def outcome(self, mirror_name: str, application_id: str) -> Outcome:
        if application_id.isdigit():
            processes.reap(int(application_id))
        tail = runtime.driver_log_tail(mirror_name, lines=8)
        return Outcome("the application exited unexpectedly" + (f":\n{tail}" if tail else ""))
