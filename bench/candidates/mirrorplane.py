"""Mirrorplane as an operator runs it: the web app and a Celery worker with beat on their own database,
a mirror created through the REST API (token auth), replicated by the Spark application the
reconciler submits. Product defaults throughout (SPARK_MASTER local[2], 1g driver, reconcile every 2 s).

The clock starts at the POST creating the mirror. With standby drivers (the default, one), each run
starts once one is ready and has warmed Kafka up against a registered cluster, and its
mirror takes it, as a mirror created on an installation that has been up a while does. The
resources measured are those of the mirror's Spark application (its process group: spark-submit's
JVM and the Python driver; a standby's CPU from its own start on); the control plane's CPU during the
run is reported beside them. The next standby starts 20 s after the claim, as it would in
production: latency runs measure only once it is up.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench import jvm
from bench.candidates.base import Candidate, Environment, RunSpec
from bench.cluster import TARGET
from controlplane.infra import processes
from mirrorcore import channel, standby_folder

ROOT = Path(__file__).resolve().parents[2]
USER = "bench"
# The pool writes its deferral on each pass (every 2 s by default): older than this, it has stopped deferring.
REFILL_DEFERRAL_FRESH_SECONDS = 10.0


def settling_reason(replication_mode: dict) -> str | None:
    """Why a mirror whose source connector reports `replication_mode` is not in its steady state:
    auto mode copies a start-up backlog in micro-batches and changes to real-time mode only once it
    has caught up."""
    mode = replication_mode.get("mode")
    if not mode:
        return "the source connector has not chosen its mode yet"
    reason = str(replication_mode.get("reason") or "")
    if replication_mode.get("setting") == "auto" and mode == "micro-batch" and reason.startswith("backlog"):
        return f"copying the start-up backlog in micro-batches ({reason})"
    return None


class ApiError(RuntimeError):
    pass


class Api:
    """The REST API with a token, JSON in and out."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.token = ""

    def login(self, username: str, password: str) -> None:
        self.token = self.call("POST", "/api/v1/auth/token/", {"username": username, "password": password})["token"]

    def call(self, method: str, path: str, body: dict | None = None, timeout: float = 30) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)  # noqa: S310 - http://127.0.0.1
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - our own loopback URL
                raw = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            raise ApiError(f"{method} {path}: HTTP {error.code} {detail}") from None
        return json.loads(raw) if raw else None



def mirror_request(spec: RunSpec, producer: tuple[tuple[str, str], ...], replication_mode: str | None,
                   extra: str = "") -> dict:
    """The run's mirror, as POSTed to the API: the benchmark's producer settings as
    `producer.override.*`, the dataset's codec over them, then `extra` source connector properties
    ("name=value,name=value": `MIRRORPLANE_BENCH_SOURCE_PROPERTIES`)."""
    config = {f"producer.override.{key}": value for key, value in producer}
    if spec.compression != "none":
        config["producer.override.compression.type"] = spec.compression
    if replication_mode:
        config["replication.mode"] = replication_mode
    for item in filter(None, (part.strip() for part in extra.split(","))):
        name, _, value = item.partition("=")
        config[name.strip()] = value.strip()
    return {"name": spec.label, "source": spec.alias, "target": TARGET, "topics": spec.topic,
            "connectors": {"source": {"tasks_max": spec.tasks, "config": config}}}

def _process_groups(pids: Iterable[int]) -> list[int]:
    """The process groups of these processes, leaving out those gone meanwhile."""
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            continue
    return sorted(groups)


class Mirrorplane(Candidate):
    name = "mirrorplane"
    title = "Mirrorplane"
    home_name = "controlplane"
    redis_db = 0

    def __init__(self, env: Environment) -> None:
        super().__init__(env)
        self.home = env.work_dir / self.home_name
        self.children: list[tuple[int, str]] = []  # (pid, marker)
        self.api: Api | None = None
        self.redis: Any = None
        self.spec: RunSpec | None = None
        self.started = 0.0
        self.timeline: dict[str, float] = {}
        self.batches: dict[int, dict] = {}
        self.effective_tasks = 0  # the most source tasks the application reported at once
        self.error: str | None = None
        self._watch_stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # -- the control plane, once ------------------------------------------------------------

    def _api(self) -> Api:
        if self.api is None:
            raise RuntimeError("the control plane is not set up")
        return self.api

    def _spec(self) -> RunSpec:
        if self.spec is None:
            raise RuntimeError("no run started")
        return self.spec

    def _env(self) -> dict[str, str]:
        """The control plane as an operator runs it: Django's debug mode (it records every query) off."""
        return dict(os.environ, DJANGO_SETTINGS_MODULE="controlplane.settings", MIRRORPLANE_DEBUG="0",
                    MIRRORPLANE_VAR_DIR=str(self.home.resolve()), MIRRORPLANE_REDIS_URL=self._redis_url(),
                    MIRRORPLANE_STANDBY_DRIVERS=str(self._standby_drivers()))

    @property
    def data_dir(self) -> Path:
        return self.home.resolve() / "data"

    def setup(self) -> None:
        import redis

        from controlplane.infra import class_archive, spark

        jars = spark.runtime_jars()  # compiled and resolved now, not inside the first timed run
        # The driver's class archive, as `make install` records it (once per JDK, Spark and jars): the
        # product's default start, and the class sharing the `mm2` and raw candidates are matched to.
        class_archive.record(jars, say=lambda text: print(f"[bench] {text}", flush=True))
        self.home.mkdir(parents=True, exist_ok=True)
        password = secrets.token_urlsafe(16)
        env = self._env() | {"MIRRORPLANE_USER_PASSWORD": password}
        manage = [sys.executable, str(ROOT / "manage.py")]
        for argv in ([*manage, "migrate", "--verbosity", "0"], [*manage, "createuser", USER, "--role", "admin"]):
            result = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
            if result.returncode != 0:
                raise RuntimeError(f"{' '.join(argv[1:])} failed: {result.stderr[-2000:]}")
        port = processes.free_port()
        web = [*manage, "runserver", f"127.0.0.1:{port}", "--noreload"]
        worker = [sys.executable, "-m", "celery", "-A", "controlplane", "worker", "--beat", "--pool", "solo",
                  "--loglevel", "INFO", "-n", "bench@%h", "--schedule", str(self.home.resolve() / "celerybeat")]
        for argv, log, marker in ((web, "web.log", "runserver"), (worker, "celery.log", "celery")):
            self.children.append((processes.spawn(argv, self.home / log, env=self._env(), cwd=ROOT).pid, marker))
        if not processes.wait_until(lambda: processes.port_open(port), 60):
            raise RuntimeError(f"the web app did not start: see {self.home / 'web.log'}")
        self.api = Api(f"http://127.0.0.1:{port}")
        self.api.login(USER, password)
        self.api.call("POST", "/api/v1/clusters/", {"alias": TARGET, "bootstrap_servers": self.env.target})
        self.redis = redis.Redis.from_url(self._redis_url())

    def control_plane_groups(self) -> list[int]:
        return [pid for pid, _ in self.children]

    def teardown(self) -> None:
        for pid, marker in reversed(self.children):
            processes.terminate(pid, marker, grace_seconds=15)
        self.children = []
        for folder, pids in self._standbys():  # they outlive the worker, as drivers do
            for pid in pids:
                processes.terminate(pid, standby_folder.marker(folder), grace_seconds=10)

    # -- one run ----------------------------------------------------------------------------

    def prepare(self, spec: RunSpec) -> None:
        self._api().call("POST", "/api/v1/clusters/", {"alias": spec.alias, "bootstrap_servers": self.env.source})
        if self._standby_drivers() > 0 and not processes.wait_until(lambda: self._waiting_standby() is not None,
                                                                     180):
            raise RuntimeError(f"no standby driver ready within 180 s: see {self.home / 'celery.log'}")

    def _standby_drivers(self) -> int:
        return int(os.environ.get("MIRRORPLANE_STANDBY_DRIVERS", "1"))

    def _redis_url(self) -> str:
        """The environment's Redis, in a database of this control plane's own (its own Celery queue)."""
        base, _, db = self.env.redis_url.rpartition("/")
        return f"{base}/{self.redis_db}" if db.isdigit() and "//" in base else self.env.redis_url

    def _standbys(self) -> list[tuple[Path, list[int]]]:
        """Each standby driver's folder with its live processes."""
        root = self.data_dir / "standby"
        found: dict[Path, list[int]] = {}
        for pid in processes.find_processes(standby_folder.marker(f"{root}/")):
            folder = standby_folder.folder_on_command_line(processes.cmdline(pid))
            if folder is not None:
                found.setdefault(folder, []).append(pid)
        return sorted(found.items())

    def _waiting_standby(self) -> Path | None:
        """A standby ready, unclaimed and done warming Kafka up (the control plane hands it a cluster
        once one is registered, as every run's is before this is asked)."""
        for folder, _ in self._standbys():
            if ((folder / standby_folder.READY).exists() and standby_folder.read_claim(folder) is None
                    and standby_folder.warm_up_outcome(folder) is not None):
                return folder
        return None

    def start(self, spec: RunSpec) -> None:
        self.spec, self.error = spec, None
        self.timeline, self.batches = {}, {}
        self.effective_tasks = 0
        self.replication_mode: dict = {}
        self.started = time.monotonic()
        self._api().call("POST", "/api/v1/mirrors/", mirror_request(
            spec, self.env.producer, os.environ.get("MIRRORPLANE_BENCH_REPLICATION_MODE"),
            os.environ.get("MIRRORPLANE_BENCH_SOURCE_PROPERTIES", "")))
        self._mark("mirror_created")
        self._watch_stop.clear()
        self._watcher = threading.Thread(target=self._watch, daemon=True, name="mirrorplane-status")
        self._watcher.start()

    def _marker(self) -> str:
        return f"--config={self.data_dir / 'mirrors' / self._spec().label / 'app.json'}"

    def _driver_processes(self) -> list[tuple[int, str]]:
        """The mirror's driver processes, each with the marker on its command line: a driver of its own,
        or the standby it claimed."""
        found = [(pid, self._marker()) for pid in processes.find_processes(self._marker())]
        for folder, pids in self._standbys():
            claim = standby_folder.read_claim(folder)
            if claim is not None and claim.mirror == self._spec().label:
                found += [(pid, standby_folder.marker(folder)) for pid in pids]
        return found

    def waiting_groups(self) -> list[int]:
        # a claimed standby is a mirror's driver now: this run's is in `process_groups`
        return _process_groups(pid for folder, pids in self._standbys() if standby_folder.read_claim(folder) is None
                               for pid in pids)

    def process_groups(self) -> list[int]:
        if self.spec is None:
            return []
        groups = _process_groups(pid for pid, _ in self._driver_processes())
        if groups:
            self._mark("driver_started")
        return groups

    def failure(self) -> str | None:
        return self.error

    def _mark(self, event: str) -> None:
        self.timeline.setdefault(event, round(time.monotonic() - self.started, 2))

    def _watch(self) -> None:
        """The application's status in Redis every 0.5 s: when it came up, and every micro-batch."""
        while not self._watch_stop.wait(0.5):
            self._observe()

    def _observe(self) -> dict | None:
        try:
            status = channel.read_status(self.redis, self._spec().label)
        except Exception:  # noqa: BLE001 - Redis hiccups only lose a sample
            return None
        if not status:
            return None
        self._mark("application_reported")
        source = status.get("connectors", {}).get("source", {})
        if source.get("state") == channel.RUNNING:
            self._mark("source_running")
        self.effective_tasks = max(self.effective_tasks, len(source.get("tasks") or []))
        if source.get("state") == channel.FAILED:
            self.error = f"the source connector FAILED: {source.get('error')}"
        self.replication_mode = source.get("replication_mode") or {}
        metrics = source.get("metrics") or {}
        batch = metrics.get("last_batch")
        if batch and batch.get("records"):
            self.batches.setdefault(batch["id"], {"records": batch["records"], "seconds": batch["seconds"],
                                                  "at": round(time.monotonic() - self.started, 2)})
        return metrics

    def starting(self) -> str | None:
        if self._standby_drivers() > 0 and self._waiting_standby() is None and not self._refill_deferred():
            return ("the next standby driver is not ready and warmed up yet (the pool starts it once no mirror is in"
                    " its first minutes and the host's cores are idle enough)")
        return None

    def _refill_deferred(self) -> bool:
        """Whether the pool said lately that the next standby waits, for idle cores or for the run's mirror
        to be past its first minutes: it may wait the whole run, and never share the cores with it."""
        deferral = standby_folder.refill_deferral(self.data_dir / "standby")
        return deferral is not None and time.time() - deferral.at < REFILL_DEFERRAL_FRESH_SECONDS

    def settling(self) -> str | None:
        return settling_reason(self.replication_mode)

    def details(self) -> dict:
        # The last batch is summarised once the writer returns, just after its records became visible
        # on the target: give the application two status reports to publish it.
        time.sleep(1.2)
        metrics = self._observe() or {}
        batches = [self.batches[key] | {"id": key} for key in sorted(self.batches)]
        return {"effective_tasks": self.effective_tasks or None,
                "timeline_seconds": dict(self.timeline), "micro_batches": batches,
                "batches_total": metrics.get("batches"), "records_total": metrics.get("records"),
                "driver_log": str(self._keep_driver_log().relative_to(self.env.work_dir))}

    def _keep_driver_log(self) -> Path:
        """A copy of the run's driver log (deleted with the mirror), in the work folder's `logs`."""
        label = self._spec().label
        kept = self.env.work_dir / "logs" / f"{label}.driver.log"
        kept.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copyfile(self.data_dir / "mirrors" / label / "driver.log", kept)
        except FileNotFoundError:
            kept.write_text("(the application wrote no driver log)\n")
        return kept

    def stop(self) -> None:
        self._watch_stop.set()
        if self._watcher is not None:
            self._watcher.join(5)
        if self.spec is None:
            return
        try:
            self._api().call("DELETE", f"/api/v1/mirrors/{self.spec.label}/")
        except ApiError:
            pass  # never created
        # The reconciler stops the application within a pass or two; stop it ourselves if it does not.
        if not processes.wait_until(lambda: not self._driver_processes(), 60):
            for pid, marker in self._driver_processes():
                processes.terminate(pid, marker, grace_seconds=10)
        try:
            self._api().call("DELETE", f"/api/v1/clusters/{self.spec.alias}/")
        except ApiError:
            pass
        self.spec = None
        # The next standby starts 20 s after the claim: wait for it here, so that its start does not
        # share the cores with the next run, whichever candidate that is.
        if self._standby_drivers() > 0:
            processes.wait_until(lambda: self._waiting_standby() is not None, 180)

    def settings(self) -> dict:
        from controlplane.infra import class_archive, driver_jdk
        from controlplane.infra import spark as spark_jars
        from mirrorcore.registry import DEFAULT_BATCH_MAX_RECORDS, consumer_defaults, producer_defaults

        archive = class_archive.archive_path(spark_jars.runtime_jars())
        return {"spark_master": os.environ.get("SPARK_MASTER", "local[2]"),
                "driver_java_release": driver_jdk.feature_release(driver_jdk.java()),
                "local_task_threads": int(os.environ.get("MIRRORPLANE_LOCAL_TASK_THREADS", "0")),
                "driver_memory": os.environ.get("MIRRORPLANE_SPARK_DRIVER_MEMORY", "1g"),
                "driver_java_options": jvm.driver_options(),
                "driver_class_archive": str(archive) if archive.is_file() else None,
                "standby_drivers": self._standby_drivers(),
                "replication_mode": os.environ.get("MIRRORPLANE_BENCH_REPLICATION_MODE") or "auto",
                "source_properties": os.environ.get("MIRRORPLANE_BENCH_SOURCE_PROPERTIES", ""),
                "batch.max.records": DEFAULT_BATCH_MAX_RECORDS,
                "producer": producer_defaults(micro_batch=False) | dict(self.env.producer),
                "micro_batch_producer": producer_defaults(micro_batch=True) | dict(self.env.producer),
                "consumer": consumer_defaults(micro_batch=False),
                "micro_batch_consumer": consumer_defaults(micro_batch=True),
                "reconcile_seconds": float(os.environ.get("MIRRORPLANE_RECONCILE_SECONDS", "2"))}



class MirrorplaneOwnDrivers(Mirrorplane):
    """Mirrorplane without standby drivers: each mirror launches a driver of its own (a control plane
    of its own, beside the other's, with MIRRORPLANE_STANDBY_DRIVERS=0)."""

    name = "mirrorplane-own-driver"
    title = "Mirrorplane (own driver)"
    home_name = "controlplane-own-driver"
    redis_db = 1

    def _standby_drivers(self) -> int:
        return 0
