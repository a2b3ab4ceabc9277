"""Apache MirrorMaker 2 (`org.apache.kafka:connect-mirror` from Maven Central, the brokers' version) in
dedicated mode: `org.apache.kafka.connect.mirror.MirrorMaker` with a generated properties file.

Same flow, topics, tasks.max and producer settings as Mirrorplane's mirror; replication factors 1
(one broker per cluster); ACL sync off (the dev brokers have no authorizer). `mm2` runs with the
heap of Kafka's `connect-mirror-maker.sh` (`-Xms256M -Xmx2G`) and Mirrorplane's collector and class
sharing (see bench/jvm.py); `mm2-stock` with the options of `connect-mirror-maker.sh` as they are
(G1 as `kafka-run-class.sh` sets it).

The worker logs every client's configuration at start: the record producers' (client.id
`connector-producer-MirrorSourceConnector-<task>`) give the producer settings in effect and how many
source tasks really ran, the source tasks' consumers (client.id ending
`MirrorSourceConnector-<task>|replication-consumer`) the consumer settings in effect.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import javaproperties

from bench import jvm
from bench.candidates.base import Candidate, RunSpec
from bench.cluster import TARGET, EndOffsets, delete_topics
from controlplane.infra import maven, processes
from mirrorcore.registry import consumer_defaults, producer_defaults

ARTIFACTS = (
    f"org.apache.kafka:connect-mirror:{maven.KAFKA_VERSION}",
    # MM2 logs through SLF4J; these give it Log4j 2, as the broker has (SLF4J 2 for the binding).
    "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "org.apache.logging.log4j:log4j-core:2.24.3",
    "org.slf4j:slf4j-api:2.0.17",
)
MAIN_CLASS = "org.apache.kafka.connect.mirror.MirrorMaker"
JVM_OPTIONS = ("-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
               "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
               "-Djava.awt.headless=true")
INTERNAL_REPLICATION_FACTORS = (
    "replication.factor", "checkpoints.topic.replication.factor", "heartbeats.topic.replication.factor",
    "offset-syncs.topic.replication.factor", "offset.storage.replication.factor",
    "status.storage.replication.factor", "config.storage.replication.factor",
)
# Properties format: YAML would need jackson-dataformat-yaml, which MM2's dependencies lack.
LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.mm2.name = org.apache.kafka.connect.mirror.MirrorMaker
logger.mm2.level = info
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = info
"""
TASK_PRODUCER = re.compile(r"MirrorSourceConnector-(\d+)$")
TASK_CONSUMER = re.compile(r"MirrorSourceConnector-(\d+)\|replication-consumer$")
# The client settings shown per run and in the report; the whole dump of the first task producer goes to
# the settings.
KEY_CONSUMER_SETTINGS = ("max.poll.records", "fetch.min.bytes", "fetch.max.wait.ms", "fetch.max.bytes",
                         "max.partition.fetch.bytes", "receive.buffer.bytes")
KEY_PRODUCER_SETTINGS = ("acks", "enable.idempotence", "max.in.flight.requests.per.connection", "linger.ms",
                         "batch.size", "compression.type", "buffer.memory", "max.request.size", "send.buffer.bytes")
TRAINING_TIMEOUT_SECONDS = 180.0


def producer_configs(log: str) -> list[dict[str, str]]:
    """Every `ProducerConfig values:` dump of a log, in order: one `key = value` per tab-indented line."""
    return client_configs(log, "ProducerConfig")


def consumer_configs(log: str) -> list[dict[str, str]]:
    """Every `ConsumerConfig values:` dump of a log, in order."""
    return client_configs(log, "ConsumerConfig")


def client_configs(log: str, kind: str) -> list[dict[str, str]]:
    """Every `<kind> values:` dump of a log, in order: one `key = value` per tab-indented line."""
    configs: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for line in log.splitlines():
        if f"{kind} values:" in line:
            current = {}
            configs.append(current)
        elif current is not None and line.startswith("\t"):
            key, separator, value = line.strip().partition(" =")
            if separator:
                current[key] = value.strip()
        else:
            current = None
    return configs


def task_producers(configs: list[dict[str, str]]) -> dict[int, dict[str, str]]:
    """The record producers of MirrorSourceConnector tasks, by task number (the last dump of each)."""
    return task_clients(configs, TASK_PRODUCER)


def task_consumers(configs: list[dict[str, str]]) -> dict[int, dict[str, str]]:
    """The record consumers of MirrorSourceConnector tasks, by task number (the last dump of each)."""
    return task_clients(configs, TASK_CONSUMER)


def task_clients(configs: list[dict[str, str]], client_id: re.Pattern[str]) -> dict[int, dict[str, str]]:
    tasks = {}
    for config in configs:
        match = client_id.search(config.get("client.id", ""))
        if match:
            tasks[int(match.group(1))] = config
    return tasks

def mm2_properties(source_alias: str, source: str, target_alias: str, target: str, topics: str, tasks: int,
                   producer: dict[str, str] | None = None, consumer: dict[str, str] | None = None) -> str:
    """The dedicated-mode properties file of one flow `source_alias->target_alias`."""
    flow = f"{source_alias}->{target_alias}"
    props: dict[str, str] = {
        "clusters": f"{source_alias}, {target_alias}",
        f"{source_alias}.bootstrap.servers": source,
        f"{target_alias}.bootstrap.servers": target,
        f"{flow}.enabled": "true",
        f"{flow}.topics": topics,
        "tasks.max": str(tasks),
        f"{flow}.tasks.max": str(tasks),
        "sync.topic.acls.enabled": "false",
    }
    props |= dict.fromkeys(INTERNAL_REPLICATION_FACTORS, "1")
    # The target's producer settings reach the worker producer of every herder writing to it.
    props |= {f"{target_alias}.producer.{key}": value for key, value in (producer or {}).items()}
    # The source's consumer settings reach the consumers reading from it (the source tasks' among them).
    props |= {f"{source_alias}.consumer.{key}": value for key, value in (consumer or {}).items()}
    return "".join(javaproperties.join_key_value(key, value, separator=" = ") + "\n" for key, value in props.items())


def jars() -> list[Path]:
    return maven.resolve(f"connect-mirror-{maven.KAFKA_VERSION}", ARTIFACTS)


def producer_settings(compression: str, overrides: tuple[tuple[str, str], ...] = (), steady: bool = False
                      ) -> dict[str, str]:
    """The producer Mirrorplane's source connector would use for the run (its micro-batch settings for a
    backlog, its real-time ones for steady traffic), the benchmark's `--producer` settings, the run's
    compression."""
    return producer_defaults(micro_batch=not steady) | dict(overrides) | {"compression.type": compression}


def consumer_settings(steady: bool = False) -> dict[str, str]:
    """The consumer settings Mirrorplane's source connector would add for the run: its micro-batch ones
    for a backlog (larger polls, a larger socket buffer), its real-time ones for steady traffic (the
    socket buffer, smaller partition fetches)."""
    return consumer_defaults(micro_batch=not steady)


class MirrorMaker2(Candidate):
    name = "mm2"
    title = "MirrorMaker 2"
    profile = "matched"

    def __init__(self, env) -> None:
        super().__init__(env)
        self.classpath = ""
        self.process: subprocess.Popen | None = None
        self.properties: Path | None = None
        self.jvm_options: list[str] = list(JVM_OPTIONS)
        self.archive: Path | None = None
        self.effective_producer: dict[str, str] | None = None
        self.effective_consumers: dict[str, dict[str, str]] = {}  # "backlog" / "steady": the last run's of each
        self.steady = False

    def setup(self) -> None:
        self.classpath = ":".join(str(jar) for jar in jars())
        if self.profile == "matched":
            path = jvm.archive_path("mm2", self.classpath, jvm.matched(JVM_OPTIONS, None))
            self.archive = jvm.record(path, self._train)
            self.jvm_options = jvm.matched(JVM_OPTIONS, self.archive)

    def _train(self, extra: list[str]) -> None:
        """Copy the training topic, then stop: the JVM writes its class archive as it exits."""
        spec = RunSpec(label=f"{self.name}-class-archive", alias=f"cds{self.name.replace('-', '')}",
                       topic=self.env.training_topic, partitions=1, tasks=1)
        watcher = EndOffsets(self.env.target, spec.remote_topic)
        try:
            self._launch(spec, [*jvm.matched(JVM_OPTIONS, None), *extra])
            deadline = time.monotonic() + TRAINING_TIMEOUT_SECONDS
            while watcher.total() < self.env.training_records:
                if (why := self.failure()) or time.monotonic() > deadline:
                    raise RuntimeError(why or "the training copy did not finish")
                time.sleep(0.5)
        finally:
            watcher.close()
            if self.process is not None:
                processes.terminate(self.process.pid, str(self.properties), grace_seconds=120)
                self.process = None
            delete_topics(self.env.target, f"{spec.alias}.")

    def start(self, spec: RunSpec) -> None:
        self.effective_producer, self.steady = None, spec.steady
        self._launch(spec, self.jvm_options)

    def _launch(self, spec: RunSpec, options: list[str]) -> None:
        folder = self.env.work_dir / "mm2" / spec.label
        folder.mkdir(parents=True, exist_ok=True)
        self.properties = folder / "mm2.properties"
        producer = producer_settings(spec.compression, self.env.producer, spec.steady)
        self.properties.write_text(mm2_properties(spec.alias, self.env.source, TARGET, self.env.target,
                                                  spec.topic, spec.tasks, producer, consumer_settings(spec.steady)))
        (folder / "log4j2.properties").write_text(LOG4J2.format(log=folder / "mm2.log"))
        argv = [jvm.java(), *options,
                f"-Dlog4j2.configurationFile={folder / 'log4j2.properties'}",
                "-cp", self.classpath, MAIN_CLASS, str(self.properties)]
        self.process = processes.spawn(argv, folder / "stdout.log")

    def details(self) -> dict:
        log = self.properties.parent / "mm2.log" if self.properties else None
        text = log.read_text(errors="replace") if log and log.exists() else ""
        producers = task_producers(producer_configs(text))
        consumers = task_consumers(consumer_configs(text))
        first = producers[min(producers)] if producers else {}
        first_consumer = consumers[min(consumers)] if consumers else {}
        self.effective_producer = first or self.effective_producer
        if first_consumer:
            self.effective_consumers["steady" if self.steady else "backlog"] = first_consumer
        return {"effective_tasks": len(producers) or None,
                "producer": {key: first[key] for key in KEY_PRODUCER_SETTINGS if key in first},
                "consumer": {key: first_consumer[key] for key in KEY_CONSUMER_SETTINGS if key in first_consumer}}

    def process_groups(self) -> list[int]:
        return [self.process.pid] if self.process else []

    def failure(self) -> str | None:
        if self.process is not None and self.process.poll() is not None:
            log = self.properties.parent / "mm2.log" if self.properties else None
            tail = log.read_text(errors="replace").splitlines()[-5:] if log and log.exists() else []
            return f"MirrorMaker 2 exited with {self.process.returncode}: " + " | ".join(tail)
        return None

    def stop(self) -> None:
        if self.process is not None and self.properties is not None:
            processes.terminate(self.process.pid, str(self.properties), grace_seconds=30)
        self.process = None

    def settings(self) -> dict:
        return {"artifact": ARTIFACTS[0], "mode": "dedicated (MirrorMaker main class)", "jvm_profile": self.profile,
                "jvm": " ".join(self.jvm_options), "class_archive": str(self.archive) if self.archive else None,
                "producer": producer_settings("none", self.env.producer),  # compressed datasets: their codec
                "effective_producer": dict(sorted(self.effective_producer.items())) if self.effective_producer
                else None,
                "effective_consumers": {traffic: dict(sorted(config.items()))
                                        for traffic, config in sorted(self.effective_consumers.items())}}


class StockMirrorMaker2(MirrorMaker2):
    """MM2 with the JVM options of Kafka's connect-mirror-maker.sh, as shipped."""

    name = "mm2-stock"
    title = "MirrorMaker 2 (stock JVM)"
    profile = "stock"
