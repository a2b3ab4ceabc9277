"""Mirror applications on YARN in cluster deploy mode: the driver runs in a container, not on this host.

- Submission: `spark-submit --master yarn --deploy-mode cluster` returns once the ResourceManager
  has accepted the application (`spark.yarn.submit.waitAppCompletion=false`); nothing of the mirror
  keeps running on the worker that submitted it.
- Code and jars: Spark's jars and ours are staged once on the cluster's filesystem
  (`spark.yarn.archive`); the `spark_runtime` code ships with each submission (`--py-files`).
- Configuration: credentials never go on a command line or into YARN's application environment.
  The configuration file is shipped with `--files`: YARN keeps it in the submitting user's private
  staging directory (mode 700) for the application's lifetime and localizes it into the driver's
  private container directory; the copy on this host is removed once the submission returns.
- Finding applications: every application carries the tags `<tag>`, `<tag>-mirror-<name>` and
  `<tag>-generation-<n>` (MIRRORPLANE_YARN_TAG), so any worker on any host finds a mirror's
  applications by asking the ResourceManager; its name is `mirrorplane-<mirror>-g<generation>`.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Mapping

from django.conf import settings

from controlplane.infra import hadoop_fs, yarn, yarn_staging
from controlplane.infra import spark as spark_jars
from mirrors.engines.base import Application, Engine, EngineError, EngineUnavailable, Outcome
from mirrors.models import Mirror
from mirrors.services import runtime

log = logging.getLogger(__name__)

SHIPPED_CONFIG = "app.json"
# Accepted by the ResourceManager, its ApplicationMaster (the driver) not launched yet.
QUEUED_STATES = frozenset({"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED"})
# spark-submit's client reports a refusal as an exception line; the ResourceManager's words follow the colon.
_EXCEPTION = re.compile(r"(?:Exception|Error)(?: in thread \"\w+\")?[^:\n]*: (?P<message>.+)$", re.MULTILINE)


def tags(base: str, mirror: str, generation: int) -> list[str]:
    return [base, f"{base}-mirror-{mirror}", f"{base}-generation-{generation}"]


def parse_tags(base: str, values: tuple[str, ...]) -> tuple[str | None, int | None]:
    """The mirror name and generation an application's tags carry."""
    mirror = generation = None
    for value in values:
        if value.startswith(f"{base}-mirror-"):
            mirror = value.removeprefix(f"{base}-mirror-")
        elif value.startswith(f"{base}-generation-") and value.rsplit("-", 1)[1].isdigit():
            generation = int(value.rsplit("-", 1)[1])
    return mirror, generation


def refusal(output: str) -> str:
    """The client's reason a submission was refused: its last exception message, else the last lines."""
    messages = [m.group("message").strip() for m in _EXCEPTION.finditer(output)]
    if messages:
        return messages[-1][:1000]
    lines = [line for line in output.splitlines() if line.strip()]
    return "\n".join(lines[-5:])[:1000] or "spark-submit failed without output"


class YarnEngine(Engine):
    name = "yarn"

    def __init__(self, conf_dir: str | None = None, resourcemanager_url: str | None = None,
                 tag: str | None = None) -> None:
        self.conf_dir = conf_dir if conf_dir is not None else settings.HADOOP_CONF_DIR
        url = resourcemanager_url or settings.YARN_RESOURCEMANAGER_URL or (
            yarn.resourcemanager_url(self.conf_dir) if self.conf_dir else None)
        self.tag = (tag or settings.YARN_TAG).lower()
        self.rm = yarn.ResourceManager(url) if url else None

    @property
    def configured(self) -> bool:
        return self.rm is not None

    def _resourcemanager(self) -> yarn.ResourceManager:
        if self.rm is None:
            raise EngineUnavailable("spark.master is yarn but no YARN cluster is configured: set HADOOP_CONF_DIR "
                                    "(or MIRRORPLANE_YARN_RESOURCEMANAGER_URL) for the workers")
        return self.rm

    def live(self, known: Mapping[str, str]) -> dict[str, list[Application]]:
        try:
            found = self._resourcemanager().applications(self.tag)
        except yarn.ResourceManagerError as error:
            raise EngineUnavailable(str(error)) from None
        result: dict[str, list[Application]] = {}
        for app in found:
            mirror, generation = parse_tags(self.tag, app.tags)
            if mirror:
                result.setdefault(mirror, []).append(
                    Application(app.id, mirror, generation, app.state, app.tracking_url, launched_at=app.launched_at,
                                queued=app.launched_at is None and app.state in QUEUED_STATES))
        return result

    def checkpoint_root(self) -> str:
        """Storage every NodeManager reaches: MIRRORPLANE_CHECKPOINT_ROOT, unless it is a local folder
        (the default), then `<fs.defaultFS>/mirrorplane/checkpoints`. A root without a scheme is on the
        cluster's default file system."""
        root = str(settings.CHECKPOINT_ROOT).rstrip("/")
        return f"{self.staging_root()}/checkpoints" if root.startswith("file:") else root

    def checkpoint_location(self, mirror_name: str) -> str | None:
        return hadoop_fs.mirror_location(self.checkpoint_root(), mirror_name)

    def staging_root(self) -> str:
        if settings.YARN_STAGING_ROOT:
            return settings.YARN_STAGING_ROOT.rstrip("/")
        default_fs = yarn.default_filesystem(self.conf_dir) if self.conf_dir else None
        if not default_fs or default_fs.startswith("file:"):
            raise EngineError("mirrors on YARN need a cluster filesystem: fs.defaultFS in HADOOP_CONF_DIR's "
                              "core-site.xml (or MIRRORPLANE_YARN_STAGING_ROOT) must name one, e.g. hdfs://...")
        return f"{default_fs.rstrip('/')}/mirrorplane"

    def environment(self) -> dict[str, str]:
        """spark-submit's environment: the worker's, less the control plane's own secrets."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIRRORPLANE_")}
        env["HADOOP_CONF_DIR"] = self.conf_dir
        env["SPARK_HOME"] = str(spark_jars.pyspark_home())
        return env

    def submit(self, mirror: Mirror) -> Application:
        rm = self._resourcemanager()
        try:
            rm.info()
        except yarn.ResourceManagerError as error:
            raise EngineError(str(error)) from None
        env = self.environment()
        archive = yarn_staging.spark_archive(self.staging_root(), spark_jars.runtime_jars(), env)
        folder = runtime.work_dir(mirror.name)
        config = runtime.write_app_config(mirror, folder / SHIPPED_CONFIG, work_dir=".",
                                          checkpoint_location=self.checkpoint_location(mirror.name))
        argv = runtime.cluster_submit_argv(mirror, archive=archive, code=yarn_staging.runtime_code(),
                                           config=config, tags=tags(self.tag, mirror.name, mirror.generation),
                                           python=settings.YARN_PYTHON)
        try:
            result = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=folder, check=False,
                                    timeout=settings.SUBMIT_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise EngineError(f"spark-submit to YARN did not return within {settings.SUBMIT_TIMEOUT_SECONDS:.0f} s") \
                from None
        finally:
            config.unlink(missing_ok=True)  # YARN holds its private copy now
        output = f"{result.stdout}\n{result.stderr}"
        (folder / runtime.DRIVER_LOG).write_text(output[-200_000:])
        found = yarn.APPLICATION_ID.findall(output)
        if result.returncode != 0 or not found:
            if found:  # accepted, then the client gave up on it: nothing half-submitted stays behind
                self._kill_quietly(found[-1])
            raise EngineError(refusal(output))
        log.info("mirror %s: submitted YARN application %s", mirror.name, found[-1])
        return Application(found[-1], mirror.name, mirror.generation, "SUBMITTED")

    def kill(self, application: Application) -> None:
        try:
            self._resourcemanager().kill(application.id)
        except yarn.ResourceManagerError as error:
            raise EngineUnavailable(str(error)) from None

    def _kill_quietly(self, application_id: str) -> None:
        try:
            self._resourcemanager().kill(application_id)
        except (yarn.ResourceManagerError, EngineError) as error:
            log.warning("could not kill YARN application %s: %s", application_id, error)

    def outcome(self, mirror_name: str, application_id: str) -> Outcome:
        try:
            app = self._resourcemanager().application(application_id)
        except yarn.ResourceManagerError as error:
            return Outcome(f"YARN application {application_id} ended (its final status is unknown: {error})")
        if app is None:
            return Outcome(f"YARN application {application_id} is unknown to the ResourceManager")
        reason = f"YARN application {application_id} {app.state} ({app.final_status})"
        return Outcome(f"{reason}: {app.diagnostics.strip()}" if app.diagnostics.strip() else reason,
                       succeeded=app.final_status == "SUCCEEDED")
