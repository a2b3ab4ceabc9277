"""The local stack: N Kafka clusters plus Redis, and on request HDFS + YARN (`with_yarn`), recorded
in a state file so `down` finds them.

`./manage.py devstack`, `make demo` and the pytest fixtures all go through `Devstack`.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.infra import processes
from devstack.hadoop import HadoopCluster, new_hadoop_cluster
from devstack.kafka import KafkaCluster, new_cluster
from devstack.redis_server import RedisServer


@dataclass
class Devstack:
    root: Path
    clusters: dict[str, KafkaCluster] = field(default_factory=dict)
    redis: RedisServer | None = None
    hadoop: HadoopCluster | None = None
    brokers_full_jit: bool = False  # see KafkaCluster.full_jit: the benchmark's brokers run as in production

    @property
    def state_file(self) -> Path:
        return self.root / "stack.json"

    @classmethod
    def load(cls, root: Path) -> Devstack:
        stack = cls(root=root)
        if stack.state_file.exists():
            state = json.loads(stack.state_file.read_text())
            stack.clusters = {a: KafkaCluster.from_dict(c) for a, c in state.get("clusters", {}).items()}
            if state.get("redis"):
                stack.redis = RedisServer.from_dict(state["redis"])
            if state.get("hadoop"):
                stack.hadoop = HadoopCluster.from_dict(state["hadoop"])
            stack.brokers_full_jit = bool(state.get("brokers_full_jit", False))
        return stack

    def save(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        state = {
            "clusters": {alias: cluster.to_dict() for alias, cluster in self.clusters.items()},
            "redis": self.redis.to_dict() if self.redis else None,
            "hadoop": self.hadoop.to_dict() if self.hadoop else None,
            "brokers_full_jit": self.brokers_full_jit,
        }
        self.state_file.write_text(json.dumps(state, indent=2) + "\n")

    def up(self, aliases: list[str], with_redis: bool = True, fresh: bool = False, with_yarn: bool = False) -> None:
        """Start every cluster of `aliases` (and Redis, and with `with_yarn` HDFS and YARN) that is not
        running yet; idempotent."""
        to_start = []
        for alias in aliases:
            cluster = self.clusters.get(alias)
            if cluster and cluster.running() and not fresh:
                continue
            if cluster and fresh:
                cluster.stop()
            self.clusters[alias] = cluster = new_cluster(alias, self.root, self.brokers_full_jit)
            to_start.append(cluster)
        external_redis = bool(os.environ.get("MIRRORPLANE_REDIS_URL"))
        if with_redis and not external_redis and not (self.redis and self.redis.running()):
            self.redis = RedisServer(home=str(self.root / "redis"), port=processes.free_port())
            self.redis.start()
        self.save()
        # Brokers start in parallel: most of their start-up is JVM warm-up on separate cores.
        with ThreadPoolExecutor(max_workers=max(1, len(to_start))) as pool:
            list(pool.map(lambda cluster: cluster.start(), to_start))
        self.save()
        if with_yarn and (fresh or not (self.hadoop and self.hadoop.running())):
            if self.hadoop:
                self.hadoop.stop()
            self.hadoop = new_hadoop_cluster(self.root)
            self.save()
            try:
                self.hadoop.start()
            finally:
                self.save()

    def down(self) -> list[str]:
        """Stop what this stack started; returns what was stopped."""
        stopped = self.hadoop.stop() if self.hadoop else []
        for alias, cluster in self.clusters.items():
            if cluster.stop():
                stopped.append(f"kafka {alias} (pid {cluster.pid})")
        if self.redis and self.redis.stop():
            stopped.append(f"redis (pid {self.redis.pid})")
        if self.state_file.exists():
            self.state_file.unlink()
        return stopped

    def status(self) -> dict:
        return {
            "clusters": {
                alias: {"bootstrap_servers": c.bootstrap_servers, "pid": c.pid, "running": c.running(),
                        "cluster_id": c.cluster_id}
                for alias, c in self.clusters.items()
            },
            "redis": (
                {"url": self.redis.url, "pid": self.redis.pid, "running": self.redis.running()}
                if self.redis else None
            ),
            "yarn": (
                {"resourcemanager": self.hadoop.resourcemanager_url, "pid": self.hadoop.pids.get("resourcemanager", 0),
                 "running": self.hadoop.daemon_running("resourcemanager"), "conf_dir": str(self.hadoop.conf_dir),
                 "nodemanagers": self.hadoop.nodemanagers()}
                if self.hadoop else None
            ),
            "hdfs": (
                {"namenode": self.hadoop.namenode_uri, "pid": self.hadoop.pids.get("namenode", 0),
                 "running": self.hadoop.daemon_running("namenode") and self.hadoop.daemon_running("datanode"),
                 "datanode_pid": self.hadoop.pids.get("datanode", 0)}
                if self.hadoop else None
            ),
        }

    @property
    def redis_url(self) -> str:
        return os.environ.get("MIRRORPLANE_REDIS_URL") or (self.redis.url if self.redis else "")
