"""Real services, started once per test session: two KRaft clusters, Redis, a Celery worker with beat."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from controlplane.infra import processes
from devstack.hadoop import HadoopCluster
from devstack.hadoop_config import LOOPBACK_SPARK_CONF
from devstack.stack import Devstack
from mirrors.services import runtime, standby
from mirrors.services.redis_client import get_redis, use_redis

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def devstack() -> Devstack:
    root = settings.VAR_DIR / "devstack"
    shutil.rmtree(root, ignore_errors=True)
    stack = Devstack(root=root)
    try:
        stack.up(["east", "west"])
        yield stack
    finally:
        stack.down()


@pytest.fixture(scope="session")
def north(devstack) -> str:
    """A third cluster, started on first use (aggregation and chain topologies)."""
    devstack.up(["east", "west", "north"])
    return devstack.clusters["north"].bootstrap_servers


@pytest.fixture(scope="session")
def yarn_cluster(devstack) -> HadoopCluster:
    """HDFS and YARN (a NameNode, a DataNode, a ResourceManager, two NodeManagers) on the session's stack,
    started on first use and reused; the stack's `down()` stops them."""
    devstack.up(list(devstack.clusters), with_yarn=True)
    return devstack.hadoop


@pytest.fixture(scope="session")
def control_plane(devstack, django_db_setup, django_db_blocker):
    """A Celery worker with the beat scheduler, on the test database: the real reconcile loop."""
    use_redis(devstack.redis_url)
    shutil.rmtree(settings.DATA_DIR, ignore_errors=True)
    settings.DATA_DIR.mkdir(parents=True)
    env = dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="controlplane.settings",
        MIRRORPLANE_DB_PATH=str(settings.DATABASES["default"]["NAME"]),
        MIRRORPLANE_DATA_DIR=str(settings.DATA_DIR),
        MIRRORPLANE_REDIS_URL=devstack.redis_url,
        MIRRORPLANE_RECONCILE_SECONDS="1",
        MIRRORPLANE_SPARK_DRIVER_MEMORY="768m",
        # A standby driver waits, as in production: a mirror without Spark settings of its own starts on
        # it at once, and the next one starts in a lowered session, on the cores the tests leave idle.
        MIRRORPLANE_STANDBY_DRIVERS="1",
        MIRRORPLANE_STANDBY_REFILL_BELOW_BUSY_PCT="100",
        # Tests create mirrors one after another: the next standby starts 20 s after a claim, not 300.
        MIRRORPLANE_STANDBY_REFILL_AFTER_START_SECONDS="20",
        # The YARN test bed's client configuration, there once a test asks for `yarn_cluster`.
        HADOOP_CONF_DIR=str(devstack.root / "hadoop" / "conf"),
        MIRRORPLANE_YARN_SPARK_CONF=json.dumps(LOOPBACK_SPARK_CONF),
        SPARK_LOCAL_IP="127.0.0.1",
    )
    log = settings.VAR_DIR / "celery.log"

    def worker_argv(name: str) -> list[str]:
        return [sys.executable, "-m", "celery", "-A", "controlplane", "worker", "--beat", "--pool", "solo",
                "--loglevel", "INFO", "-n", f"{name}-{uuid.uuid4().hex[:6]}@%h",
                "--schedule", str(settings.VAR_DIR / f"celerybeat-schedule-{name}")]

    argv = worker_argv("test")
    plane = {"pid": processes.spawn(argv, log, env=env, cwd=ROOT).pid, "log": log, "redis": get_redis()}

    def kill_worker() -> None:
        """SIGKILL the worker and its beat, as when its host is lost."""
        os.killpg(plane["pid"], signal.SIGKILL)
        processes.reap(plane["pid"])

    def start_worker() -> int:
        plane["pid"] = processes.spawn(argv, log, env=env, cwd=ROOT).pid
        return plane["pid"]

    def restart_worker() -> int:
        """SIGKILL the worker (and its beat) and start a new one, as a crashed host's supervisor would."""
        kill_worker()
        return start_worker()

    def spawn_worker(name: str, **overrides: str) -> int:
        """Another worker with beat and a data folder of its own, standing for a second host (`overrides`:
        environment variables of its own). It keeps no standby driver: nothing would stop one left in its
        folder at the end of the session."""
        data = settings.VAR_DIR / f"data-{name}"
        own = {"MIRRORPLANE_DATA_DIR": str(data), "MIRRORPLANE_STANDBY_DRIVERS": "0"}
        return processes.spawn(worker_argv(name), settings.VAR_DIR / f"celery-{name}.log", cwd=ROOT,
                               env=env | own | overrides).pid

    def stop_worker(pid: int) -> None:
        processes.terminate(pid, "celery", grace_seconds=15)

    @contextlib.contextmanager
    def stopped():
        """No supervisor for a while: for tests whose mirrors are not meant to run (fake clusters)."""
        processes.terminate(plane["pid"], "celery", grace_seconds=15)
        try:
            yield
        finally:
            plane["pid"] = processes.spawn(argv, log, env=env, cwd=ROOT).pid

    @contextlib.contextmanager
    def worker_with(clear_standbys: bool = False, **overrides: str):
        """The worker replaced, for a while, by one with `overrides` in its environment (same data folder);
        `clear_standbys`: the standby drivers the previous worker left are stopped before it starts."""
        processes.terminate(plane["pid"], "celery", grace_seconds=15)
        if clear_standbys:
            standby.stop_all()
        plane["pid"] = processes.spawn(argv, log, env=env | overrides, cwd=ROOT).pid
        try:
            yield
        finally:
            processes.terminate(plane["pid"], "celery", grace_seconds=15)
            plane["pid"] = processes.spawn(argv, log, env=env, cwd=ROOT).pid

    plane["restart_worker"] = restart_worker
    plane["worker_with"] = worker_with
    plane.update(kill_worker=kill_worker, start_worker=start_worker, spawn_worker=spawn_worker,
                 stop_worker=stop_worker)
    plane["stopped"] = stopped
    try:
        yield plane
    finally:
        processes.terminate(plane["pid"], "celery", grace_seconds=15)
        for name, app in runtime.running_apps().items():
            runtime.stop(name, app)
        standby.stop_all()


@pytest.fixture
def unique() -> str:
    """A short random suffix: every test gets its own topics and mirror names."""
    return uuid.uuid4().hex[:8]


# -- the browser: Playwright driving Debian's Chromium against pytest-django's live server -----

CHROMIUM = os.environ.get("MIRRORPLANE_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def chromium():
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make install` (Debian package chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread; the tests' ORM calls are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def browse(chromium, live_server):
    """`browse(width, height)`: a fresh browser context (no cookies) and page on the live server."""
    contexts = []

    def open_page(width: int = 1280, height: int = 800):
        context = chromium.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()
