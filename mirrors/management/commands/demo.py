"""`./manage.py demo` (what `make demo` runs): the whole product on this machine, with live traffic.

Starts two new Kafka clusters and Redis, the web app, a Celery worker with beat, creates the demo
mirror east -> west and produces records to it until Ctrl-C, which stops everything it started.
Every run starts clean (see mirrors.services.demo): new, empty clusters, and the demo's mirror of an
earlier run removed from the database before it is created again.
With `--engine yarn` it also starts HDFS and YARN (two NodeManagers) and the demo mirror runs
there in cluster deploy mode, its checkpoint on HDFS.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
import threading
import time
from pathlib import Path

from confluent_kafka import Consumer, Producer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from controlplane.infra import processes
from devstack.hadoop_config import LOOPBACK_SPARK_CONF
from devstack.stack import Devstack
from mirrors.models import Mirror
from mirrors.services import demo, runtime, standby
from mirrors.services.demo import MIRROR
from mirrors.services.observed import live_status

ROOT = Path(settings.BASE_DIR)
DEMO_GROUP = "billing"


class Command(BaseCommand):
    help = "Run the demo: two Kafka clusters, Redis, web app, Celery worker and beat, a live mirror."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("DEMO_PORT", "8000")))
        parser.add_argument("--rate", type=int, default=200, help="records per second produced to the source")
        parser.add_argument("--engine", choices=["local", "yarn"], default="local",
                            help="where the demo mirror runs: local processes, or YARN (started here)")

    def handle(self, *args, port: int, rate: int, engine: str, **options):
        self.engine = engine
        signal.signal(signal.SIGTERM, _interrupt)
        self.children: list[tuple[str, int, str]] = []
        # Beside the demo's database; every run replaces it with new clusters (see _run).
        self.stack = Devstack.load(settings.VAR_DIR / "demo-stack")
        self.stop_traffic = threading.Event()
        try:
            self._run(port, rate)
        except KeyboardInterrupt:
            self.stdout.write("\nstopping ...")
        finally:
            self._shutdown()

    def _run(self, port: int, rate: int) -> None:
        try:
            self.stack = demo.prepare(self.stack.root, self.engine, self._step)
        except demo.DemoConflict as error:
            raise CommandError(str(error)) from None
        hadoop = self.stack.hadoop if self.engine == "yarn" else None  # prepare() starts it for YARN
        env = dict(os.environ, MIRRORPLANE_REDIS_URL=self.stack.redis_url,
                   DJANGO_SETTINGS_MODULE="controlplane.settings")
        if hadoop is not None:
            env.update(HADOOP_CONF_DIR=str(hadoop.conf_dir), SPARK_LOCAL_IP="127.0.0.1",
                       MIRRORPLANE_YARN_SPARK_CONF=json.dumps(LOOPBACK_SPARK_CONF))
        password = os.environ.get("DEMO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        _ensure_admin(password)

        if processes.port_open(port):
            port = processes.free_port()  # the preferred port is taken: use any free one
        self._step(f"starting the web app on 127.0.0.1:{port}, the Celery worker and beat")
        var = settings.VAR_DIR
        self._spawn("web", [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                    var / "demo-web.log", env, "runserver")
        self._spawn("celery", [sys.executable, "-m", "celery", "-A", "controlplane", "worker", "--beat",
                               "--pool", "solo", "--loglevel", "INFO", "-n", "demo@%h",
                               "--schedule", str(var / "celerybeat-schedule")], var / "demo-celery.log", env, "celery")
        threading.Thread(target=self._traffic, args=(rate,), daemon=True).start()
        threading.Thread(target=self._consumer, daemon=True).start()
        if not processes.wait_until(lambda: processes.port_open(port), 60):
            raise SystemExit(f"the web app did not start: see {var / 'demo-web.log'}")

        self.stdout.write(self.style.SUCCESS(
            f"\nMirrorplane demo is up\n"
            f"  dashboard:  http://127.0.0.1:{port}/\n"
            f"  login:      admin / {password}\n"
            f"  API:        http://127.0.0.1:{port}/api/v1/  (token: POST /api/v1/auth/token/)\n"
            f"  clusters:   east {self.stack.clusters['east'].bootstrap_servers}, "
            f"west {self.stack.clusters['west'].bootstrap_servers}\n"
            + (f"  YARN:       {hadoop.resourcemanager_url} (the mirror's driver runs there), "
               f"HDFS {hadoop.namenode_uri}\n" if hadoop is not None else "") +
            f"  logs:       {var}/demo-*.log, {runtime.work_dir(MIRROR)}/driver.log\n"
            f"Ctrl-C stops everything the demo started.\n"))
        self._step("waiting for the mirror's Spark application to replicate (first start takes ~20 s)")
        mirror = Mirror.objects.get(name=MIRROR)
        reported = False
        while True:
            status = live_status(mirror)
            records = ((status or {}).get("connectors", {}).get("source", {}).get("metrics", {})).get("records", 0)
            if records and not reported:
                self.stdout.write(self.style.SUCCESS(f"demo mirror {MIRROR} is replicating: {records} records copied"))
                reported = True
            time.sleep(2)

    def _traffic(self, rate: int) -> None:
        producer = Producer({"bootstrap.servers": self.stack.clusters["east"].bootstrap_servers, "linger.ms": 20})
        sequence = 0
        while not self.stop_traffic.is_set():
            started = time.monotonic()
            for _ in range(max(rate // 10, 1)):
                topic = "orders" if sequence % 3 else "payments"
                producer.produce(topic, key=f"customer-{sequence % 97}".encode(),
                                 value=f'{{"seq": {sequence}, "amount": {sequence % 1000}}}'.encode(),
                                 headers=[("source", b"demo")])
                sequence += 1
            producer.poll(0)
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))
        producer.flush(5)

    def _consumer(self) -> None:
        """A consumer group on east whose offsets the checkpoint connector translates to west."""
        consumer = Consumer({"bootstrap.servers": self.stack.clusters["east"].bootstrap_servers,
                             "group.id": DEMO_GROUP, "auto.offset.reset": "earliest",
                             "auto.commit.interval.ms": "2000"})
        consumer.subscribe(["orders"])
        try:
            while not self.stop_traffic.is_set():
                consumer.consume(500, timeout=0.5)
                time.sleep(0.2)  # a little slower than the traffic: the group has some lag
        finally:
            consumer.close()

    def _spawn(self, name: str, argv: list[str], log: Path, env: dict, marker: str) -> None:
        self.children.append((name, processes.spawn(argv, log, env=env, cwd=ROOT).pid, marker))

    def _shutdown(self) -> None:
        self.stop_traffic.set()
        for name, pid, marker in reversed(self.children):
            if processes.terminate(pid, marker, grace_seconds=15):
                self._say(f"stopped {name} (pid {pid})")
        for name, app in runtime.running_apps().items():
            runtime.stop(name, app)
            self._say(f"stopped the Spark application of {name} (pids {sorted(app.groups)})")
        standby.stop_all()
        # From the state file: what `prepare` started even if it failed half-way.
        for item in Devstack.load(self.stack.root).down():
            self._say(f"stopped {item}")

    def _say(self, text: str) -> None:
        """Report progress of the shutdown; a closed terminal or pipe must not interrupt it."""
        try:
            self.stdout.write(text)
            self.stdout.flush()
        except OSError:
            pass

    def _step(self, text: str) -> None:
        self.stdout.write(f"[demo] {text}", ending="\n")
        self.stdout.flush()


def _interrupt(*_: object) -> None:
    """SIGTERM ends the demo like Ctrl-C does."""
    raise KeyboardInterrupt


def _ensure_admin(password: str) -> None:
    user, _ = get_user_model().objects.get_or_create(username="admin", defaults={"is_staff": True,
                                                                              "is_superuser": True})
    user.is_staff = user.is_superuser = True
    user.set_password(password)
    user.save()
