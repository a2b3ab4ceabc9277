"""A Spark standalone cluster (one master, one worker) on loopback, from the installed pyspark.

Used by tests, and handy to try `SPARK_MASTER=spark://...` locally. The master and the worker
are `bin/spark-class` daemons of pyspark's own distribution, each leading its own process group
(executors the worker launches belong to the worker's group, so stopping it stops them too).
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.infra import processes
from controlplane.infra.spark import pyspark_home

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
HOST = "127.0.0.1"


@dataclass
class StandaloneCluster:
    """`root` holds the daemons' logs and the worker's directory (one folder per application/executor)."""

    root: Path
    worker_cores: int = 1
    worker_memory: str = "1g"
    daemon_memory: str = "256m"
    ports: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.ports['master']}"

    @property
    def master_ui(self) -> str:
        return f"http://{HOST}:{self.ports['master_ui']}"

    @property
    def worker_dir(self) -> Path:
        return self.root / "work"

    def _env(self) -> dict[str, str]:
        home = pyspark_home()
        return dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP=HOST, SPARK_LOCAL_HOSTNAME="localhost",
                    SPARK_DAEMON_MEMORY=self.daemon_memory, SPARK_LOG_DIR=str(self.root / "logs"),
                    SPARK_NO_DAEMONIZE="1")

    def _marker(self, role: str) -> str:
        return MASTER_CLASS if role == "master" else WORKER_CLASS

    def up(self, timeout: float = 90) -> StandaloneCluster:
        """Start the master, then the worker; return once the master counts the worker ALIVE."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.worker_dir.mkdir(exist_ok=True)
        master, master_ui, worker, worker_ui = processes.free_ports(4)
        self.ports = {"master": master, "master_ui": master_ui, "worker": worker, "worker_ui": worker_ui}
        spark_class = str(pyspark_home() / "bin" / "spark-class")
        try:
            self.pids["master"] = processes.spawn(
                [spark_class, MASTER_CLASS, "--host", HOST, "--port", str(master), "--webui-port", str(master_ui)],
                self.root / "master.log", env=self._env(), cwd=self.root).pid
            if not processes.wait_until(lambda: self.master_state() is not None, timeout):
                raise RuntimeError(f"the Spark master did not start; see {self.root / 'master.log'}")
            self.pids["worker"] = processes.spawn(
                [spark_class, WORKER_CLASS, "--host", HOST, "--port", str(worker), "--webui-port", str(worker_ui),
                 "--cores", str(self.worker_cores), "--memory", self.worker_memory,
                 "--work-dir", str(self.worker_dir), self.master_url],
                self.root / "worker.log", env=self._env(), cwd=self.root).pid
            if not processes.wait_until(lambda: self.alive_workers() > 0, timeout):
                raise RuntimeError(f"no worker registered with the Spark master; see {self.root / 'worker.log'}")
        except BaseException:
            self.down()
            raise
        return self

    def master_state(self) -> dict | None:
        """The master web UI's JSON document (workers, active and completed applications), None if unreachable."""
        try:
            with urllib.request.urlopen(f"{self.master_ui}/json/", timeout=2) as response:  # noqa: S310 - our http
                return json.load(response)
        except (OSError, ValueError):
            return None

    def alive_workers(self) -> int:
        state = self.master_state() or {}
        return sum(1 for worker in state.get("workers", []) if worker.get("state") == "ALIVE")

    def active_apps(self) -> list[dict]:
        return (self.master_state() or {}).get("activeapps", [])

    def down(self) -> None:
        """Stop the worker (and its executors), then the master."""
        for role in ("worker", "master"):
            pid = self.pids.pop(role, None)
            if pid:
                processes.terminate(pid, self._marker(role), grace_seconds=10)
