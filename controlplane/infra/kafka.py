"""A single-node KRaft Kafka cluster (broker and controller in one JVM) on loopback ports."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from controlplane.infra import maven, processes

_LOG4J2 = """Configuration:
  status: warn
  Appenders:
    File:
      name: file
      fileName: "{log}"
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: warn
      AppenderRef:
        - ref: file
    Logger:
      - name: kafka.server.KafkaRaftServer
        level: info
"""


@dataclass
class KafkaCluster:
    """One running (or startable) cluster; everything needed to find and stop it again."""

    alias: str
    home: str
    port: int
    controller_port: int
    cluster_id: str = field(default_factory=lambda: base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22])
    pid: int = 0
    extra_listeners: dict[str, dict] = field(default_factory=dict)
    _process: subprocess.Popen | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def marker(self) -> str:
        """Text on the JVM's command line that identifies this cluster's process."""
        return str(Path(self.home) / "server.properties")

    def to_dict(self) -> dict:
        state = {name: getattr(self, name) for name in self.__dataclass_fields__ if not name.startswith("_")}
        return state | {"bootstrap_servers": self.bootstrap_servers}

    @classmethod
    def from_dict(cls, data: dict) -> KafkaCluster:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and not k.startswith("_")}
        return cls(**fields)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, heap: str = "512m", timeout: float = 60.0, attempts: int = 2) -> None:
        """Start and wait until the broker answers; on failure retry on fresh ports (a port picked
        as free can be taken by another process before the JVM binds it)."""
        for attempt in range(1, attempts + 1):
            try:
                self._start_once(heap, timeout)
                return
            except RuntimeError:
                self._kill_attempt()  # never two brokers on one data directory
                if attempt == attempts:
                    raise
                self.port, self.controller_port = processes.free_ports(2)

    def _start_once(self, heap: str, timeout: float) -> None:
        home = Path(self.home)
        data = home / "data"
        home.mkdir(parents=True, exist_ok=True)
        (home / "server.properties").write_text(self._server_properties(data))
        (home / "log4j2.yaml").write_text(_LOG4J2.format(log=home / "broker.log"))
        classpath = os.pathsep.join(str(jar) for jar in maven.kafka_broker_classpath())
        java = shutil.which("java") or "java"
        meta = data / "meta.properties"
        if meta.exists():  # a reused data directory keeps the cluster id it was formatted with
            self.cluster_id = _property(meta, "cluster.id") or self.cluster_id
        else:
            subprocess.run(
                [java, "-cp", classpath, "kafka.tools.StorageTool", "format",
                 "-t", self.cluster_id, "-c", str(home / "server.properties"), "--ignore-formatted"],
                check=True, capture_output=True, text=True,
            )
        argv = [
            java, f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={home / 'log4j2.yaml'}",
            "-cp", classpath, "kafka.Kafka", str(home / "server.properties"),
        ]
        self._process = processes.spawn(argv, home / "stdout.log")
        self.pid = self._process.pid
        if not processes.wait_until(self.ready, timeout, interval=0.3):
            tail = _tail(home / "stdout.log") + _tail(home / "broker.log")
            raise RuntimeError(f"Kafka cluster {self.alias!r} did not answer within {timeout:.0f}s:\n{tail}")

    def _kill_attempt(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(30)

    def ready(self) -> bool:
        """True once the broker answers a metadata request."""
        exited = self._process.poll() is not None if self._process else not self.running()
        if exited:
            log = _tail(Path(self.home) / "stdout.log") + _tail(Path(self.home) / "broker.log", 8)
            raise RuntimeError(f"Kafka cluster {self.alias!r} exited:\n{log}")
        if not processes.port_open(self.port):
            return False
        from confluent_kafka.admin import AdminClient

        try:
            metadata = AdminClient({"bootstrap.servers": self.bootstrap_servers}).list_topics(timeout=2)
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False
        return bool(metadata.brokers)

    def running(self) -> bool:
        return processes.is_alive(self.pid, self.marker)

    def stop(self) -> bool:
        return processes.terminate(self.pid, self.marker, grace_seconds=15)

    def _server_properties(self, data: Path) -> str:
        listeners = {"PLAINTEXT": self.port, "CONTROLLER": self.controller_port}
        protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT"}
        extra_props: dict[str, str] = {}
        for name, spec in self.extra_listeners.items():
            listeners[name] = spec["port"]
            protocols[name] = spec["protocol"]
            extra_props.update(spec.get("properties", {}))
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in listeners.items()),
            "advertised.listeners": ",".join(
                f"{n}://127.0.0.1:{p}" for n, p in listeners.items() if n != "CONTROLLER"
            ),
            "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
            "log.dirs": str(data),
            "num.partitions": "1",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "10",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "log.segment.bytes": str(64 * 1024 * 1024),
            "auto.create.topics.enable": "false",
        } | extra_props
        return "".join(f"{key}={value}\n" for key, value in props.items())


def new_cluster(alias: str, root: Path) -> KafkaCluster:
    port, controller_port = processes.free_ports(2)
    return KafkaCluster(alias=alias, home=str(root / f"kafka-{alias}"), port=port, controller_port=controller_port)


def _property(path: Path, key: str) -> str | None:
    for line in path.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == key:
            return value.strip()
    return None


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
    except FileNotFoundError:
        return ""
