"""A single-node KRaft Kafka cluster (broker and controller in one JVM) on loopback ports.

Every cluster has a PLAINTEXT listener (inter-broker, and what `bootstrap_servers` returns). A
secured cluster (`new_secured_cluster`) also has client listeners for each security protocol:

    SASL_SSL        SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN over TLS
    SASL_PLAINTEXT  PLAIN, SCRAM-SHA-512 and SCRAM-SHA-256
    SSL             TLS, no client certificate
    MTLS            TLS with a client certificate required (ssl.client.auth=required)

Its TLS material (a throwaway CA, the broker's key and certificate) lives in `<home>/tls`, PEM only.
`users` are created as SCRAM credentials at format time and listed in the PLAIN JAAS config.
`listener_address(name)` gives a listener's `host:port`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import javaproperties

from controlplane.infra import maven, processes
from devstack import tls

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

SCRAM_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256")
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
BROKER_HEAP = "512m"  # each test, demo and benchmark broker's heap (-Xms and -Xmx)
# Listener name -> how it is secured; the port is chosen when the cluster is created.
SECURED_LISTENERS: dict[str, dict] = {
    "SASL_SSL": {"protocol": "SASL_SSL", "mechanisms": [*SCRAM_MECHANISMS, "PLAIN"]},
    "SASL_PLAINTEXT": {"protocol": "SASL_PLAINTEXT", "mechanisms": ["PLAIN", *SCRAM_MECHANISMS]},
    "SSL": {"protocol": "SSL", "client_auth": "none"},
    "MTLS": {"protocol": "SSL", "client_auth": "required"},
}
DEFAULT_USERS = {"alice": "alice-secret", "admin": "admin-secret"}
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}


@dataclass
class KafkaCluster:
    """One running (or startable) cluster; everything needed to find and stop it again."""

    alias: str
    home: str
    port: int
    controller_port: int
    cluster_id: str = field(default_factory=lambda: base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22])
    pid: int = 0
    # name -> {"port": int, "protocol": str, optionally "mechanisms": [SASL mechanisms],
    # "client_auth": "required"|"requested"|"none" (SSL), "properties": {raw broker properties}}
    extra_listeners: dict[str, dict] = field(default_factory=dict)
    # SASL users (name -> password): SCRAM credentials for both mechanisms, and PLAIN users.
    users: dict[str, str] = field(default_factory=dict)
    # StandardAuthorizer with super.users = User:ANONYMOUS (PLAINTEXT, CONTROLLER and the SSL listener
    # without client certificates) plus `super_users` (names such as "admin", or full "User:..." principals).
    authorizer: bool = False
    super_users: list[str] = field(default_factory=list)
    # The JVM's full JIT (C2) as in production; without it the broker compiles with C1 only, which
    # starts it faster and costs more CPU per request once it runs (a test or demo broker).
    full_jit: bool = False
    _process: subprocess.Popen | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, password in self.users.items():
            if not name or not (name + password).isprintable() or any(c in name + password for c in '"\\,[]= '):
                raise ValueError(f"user {name!r}: names and passwords must be printable without blanks, quotes, "
                                 "backslashes or ',[]=' (they go into StorageTool's --add-scram and a JAAS config)")

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def listener_addresses(self) -> dict[str, str]:
        """Every client listener by name (PLAINTEXT included) as `host:port`."""
        extra = {name: f"127.0.0.1:{spec['port']}" for name, spec in self.extra_listeners.items()}
        return {"PLAINTEXT": self.bootstrap_servers} | extra

    def listener_address(self, name: str) -> str:
        try:
            return self.listener_addresses[name]
        except KeyError:
            raise KeyError(f"cluster {self.alias!r} has no listener {name!r}; "
                           f"it has {', '.join(self.listener_addresses)}") from None

    @property
    def tls_dir(self) -> Path:
        return Path(self.home) / "tls"

    @property
    def uses_tls(self) -> bool:
        return any(spec["protocol"].endswith("SSL") for spec in self.extra_listeners.values())

    def ca(self) -> tls.CertificateAuthority:
        """The CA that signed the broker's certificate and that the broker trusts for client certificates."""
        self._ensure_tls()
        return tls.CertificateAuthority.from_pem((self.tls_dir / "ca.pem").read_text(),
                                                 (self.tls_dir / "ca-key.pem").read_text())

    @property
    def ca_pem(self) -> str:
        return self.ca().cert_pem

    def issue_client_certificate(self, common_name: str) -> tls.IssuedCertificate:
        """A client certificate the MTLS listener accepts; its principal is `User:<common_name>`."""
        return tls.issue(self.ca(), common_name, server=False)

    @property
    def marker(self) -> str:
        """Text on the JVM's command line that identifies this cluster's process."""
        return str(Path(self.home) / "server.properties")

    def to_dict(self) -> dict:
        state = {name: getattr(self, name) for name in self.__dataclass_fields__ if not name.startswith("_")}
        state = json.loads(json.dumps(state))  # a deep copy: the state must not share the listener specs
        return state | {"bootstrap_servers": self.bootstrap_servers, "listeners": self.listener_addresses}

    @classmethod
    def from_dict(cls, data: dict) -> KafkaCluster:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and not k.startswith("_")}
        return cls(**fields)

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, heap: str = BROKER_HEAP, timeout: float = 60.0, attempts: int = 2) -> None:
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
                self.port, self.controller_port, *others = processes.free_ports(2 + len(self.extra_listeners))
                for spec, port in zip(self.extra_listeners.values(), others, strict=True):
                    spec["port"] = port

    def jvm_options(self, heap: str = BROKER_HEAP) -> list[str]:
        return [f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", *([] if self.full_jit else ["-XX:TieredStopAtLevel=1"])]

    def _start_once(self, heap: str, timeout: float) -> None:
        home = Path(self.home)
        data = home / "data"
        home.mkdir(parents=True, exist_ok=True)
        if self.uses_tls:
            self._ensure_tls()
        (home / "server.properties").write_text(self._server_properties(data))
        (home / "log4j2.yaml").write_text(_LOG4J2.format(log=home / "broker.log"))
        classpath = os.pathsep.join(str(jar) for jar in maven.kafka_broker_classpath())
        java = shutil.which("java") or "java"
        meta = data / "meta.properties"
        if meta.exists():  # a reused data directory keeps the cluster id it was formatted with
            self.cluster_id = _property(meta, "cluster.id") or self.cluster_id
        else:
            # `--cluster-id=<id>`: a random id may start with '-', which `-t <id>` would read as an option
            format_argv = [java, "-cp", classpath, "kafka.tools.StorageTool", "format",
                           f"--cluster-id={self.cluster_id}", "-c", str(home / "server.properties"),
                           "--ignore-formatted"]
            for mechanism in SCRAM_MECHANISMS:
                for name, password in self.users.items():
                    format_argv += ["--add-scram", f'{mechanism}=[name="{name}",password="{password}"]']
            result = subprocess.run(format_argv, capture_output=True, text=True)
            if result.returncode != 0:  # not the command line: it holds the SCRAM passwords
                output = (result.stderr.strip() or result.stdout.strip())[-2000:]
                raise subprocess.SubprocessError(f"formatting {data} failed (exit {result.returncode}): {output}")
        argv = [
            java, *self.jvm_options(heap), "-Djava.awt.headless=true",
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
        """True once the broker answers a metadata request as this cluster (its cluster id): a broker of
        another cluster on the port means this one could not bind it, and is an error."""
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
        if metadata.cluster_id not in (None, self.cluster_id):
            raise RuntimeError(f"Kafka cluster {self.alias!r}: port {self.port} answers as cluster "
                               f"{metadata.cluster_id}, not as this broker's {self.cluster_id}: another "
                               f"broker holds the port")
        return bool(metadata.brokers)

    def running(self) -> bool:
        return processes.is_alive(self.pid, self.marker)

    def stop(self) -> bool:
        return processes.terminate(self.pid, self.marker, grace_seconds=15)

    def _ensure_tls(self) -> None:
        """Create the CA (unless one was placed in the TLS directory) and the broker's key and certificate."""
        directory = self.tls_dir
        directory.mkdir(parents=True, exist_ok=True)
        if not (directory / "ca.pem").exists():
            ca = tls.make_ca(f"mirrorplane-{self.alias}-ca")
            _write_private(directory / "ca-key.pem", ca.key_pem)
            (directory / "ca.pem").write_text(ca.cert_pem)
        if not (directory / "server.pem").exists():
            ca = tls.CertificateAuthority.from_pem((directory / "ca.pem").read_text(),
                                                   (directory / "ca-key.pem").read_text())
            _write_private(directory / "server.pem", tls.issue(ca, f"kafka-{self.alias}").keystore_pem)

    def _security_properties(self) -> dict[str, str]:
        props: dict[str, str] = {}
        if self.uses_tls:
            props |= {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(self.tls_dir / "server.pem"),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(self.tls_dir / "ca.pem"),
                # A client certificate CN=alice is the principal User:alice, as a SASL user would be.
                "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
            }
        for name, spec in self.extra_listeners.items():
            prefix = f"listener.name.{name.lower()}."
            if spec["protocol"].startswith("SASL"):
                mechanisms = spec.get("mechanisms") or list(SCRAM_MECHANISMS)
                props[prefix + "sasl.enabled.mechanisms"] = ",".join(mechanisms)
                for mechanism in mechanisms:
                    module = _LOGIN_MODULES[mechanism]
                    users = "".join(f' user_{user}="{_jaas_quote(password)}"' for user, password in self.users.items())
                    options = users if mechanism == "PLAIN" else ""
                    props[f"{prefix}{mechanism.lower()}.sasl.jaas.config"] = f"{module} required{options};"
            if spec["protocol"].endswith("SSL") and spec.get("client_auth"):
                props[prefix + "ssl.client.auth"] = spec["client_auth"]
        if self.authorizer:
            principals = ["User:ANONYMOUS"] + [u if ":" in u else f"User:{u}" for u in self.super_users]
            props |= {"authorizer.class.name": STANDARD_AUTHORIZER, "super.users": ";".join(principals)}
        return props

    def _server_properties(self, data: Path) -> str:
        listeners = {"PLAINTEXT": self.port, "CONTROLLER": self.controller_port}
        protocols = {"PLAINTEXT": "PLAINTEXT", "CONTROLLER": "PLAINTEXT"}
        extra_props = self._security_properties()
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
        return "".join(javaproperties.join_key_value(key, str(value)) + "\n" for key, value in props.items())


def new_cluster(alias: str, root: Path, full_jit: bool = False) -> KafkaCluster:
    port, controller_port = processes.free_ports(2)
    return KafkaCluster(alias=alias, home=str(root / f"kafka-{alias}"), port=port, controller_port=controller_port,
                        full_jit=full_jit)


def new_secured_cluster(
    alias: str,
    root: Path,
    users: dict[str, str] | None = None,
    authorizer: bool = False,
    super_users: list[str] | None = None,
    ca: tls.CertificateAuthority | None = None,
) -> KafkaCluster:
    """A cluster with PLAINTEXT plus the SASL_SSL, SASL_PLAINTEXT, SSL and MTLS listeners.

    `users` default to alice/alice-secret and admin/admin-secret; with `authorizer`, `super_users`
    default to ["admin"]. The broker's certificate is signed by `ca`, or by a CA made for it.
    """
    users = dict(DEFAULT_USERS if users is None else users)
    port, controller_port, *ports = processes.free_ports(2 + len(SECURED_LISTENERS))
    listeners = {name: {"port": p} | json.loads(json.dumps(spec))
                 for (name, spec), p in zip(SECURED_LISTENERS.items(), ports, strict=True)}
    cluster = KafkaCluster(
        alias=alias, home=str(root / f"kafka-{alias}"), port=port, controller_port=controller_port,
        extra_listeners=listeners, users=users, authorizer=authorizer,
        super_users=list(["admin"] if super_users is None and authorizer else super_users or []),
    )
    if ca is not None:
        cluster.tls_dir.mkdir(parents=True, exist_ok=True)
        _write_private(cluster.tls_dir / "ca-key.pem", ca.key_pem)
        (cluster.tls_dir / "ca.pem").write_text(ca.cert_pem)
        (cluster.tls_dir / "server.pem").unlink(missing_ok=True)
    return cluster


def _jaas_quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _write_private(path: Path, text: str) -> None:
    path.touch(mode=0o600, exist_ok=True)
    path.write_text(text)


def _property(path: Path, key: str) -> str | None:
    """One property of a java.util.Properties file, trimmed; None when the file does not set it."""
    value = javaproperties.loads(path.read_text(encoding="latin-1")).get(key)
    return None if value is None else value.strip()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
    except FileNotFoundError:
        return ""
