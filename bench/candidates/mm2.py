"""Apache MirrorMaker 2 (`org.apache.kafka:connect-mirror` from Maven Central, the brokers' version) in
dedicated mode: `org.apache.kafka.connect.mirror.MirrorMaker` with a generated properties file.

Same flow, topics, tasks.max and producer settings as Mirrorplane's mirror; replication factors 1
(one broker per cluster); ACL sync off (the dev brokers have no authorizer). JVM options are those
of Kafka's `connect-mirror-maker.sh` (`-Xms256M -Xmx2G`, G1 as `kafka-run-class.sh` sets it).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench.candidates import Candidate, RunSpec
from bench.cluster import TARGET
from controlplane.infra import maven, processes
from spark_runtime.connectors.source import PRODUCER_DEFAULTS

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
_LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
logger.mm2.name = org.apache.kafka.connect.mirror.MirrorMaker
logger.mm2.level = info
"""

def mm2_properties(source_alias: str, source: str, target_alias: str, target: str, topics: str, tasks: int,
                   producer: dict[str, str] | None = None) -> str:
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
    return "".join(f"{key} = {value}\n" for key, value in props.items())


def jars() -> list[Path]:
    return maven.resolve(f"connect-mirror-{maven.KAFKA_VERSION}", ARTIFACTS)


class MirrorMaker2(Candidate):
    name = "mm2"
    title = "MirrorMaker 2"

    def __init__(self, env) -> None:
        super().__init__(env)
        self.classpath = ""
        self.process: subprocess.Popen | None = None
        self.properties: Path | None = None

    def setup(self) -> None:
        self.classpath = ":".join(str(jar) for jar in jars())

    def start(self, spec: RunSpec) -> None:
        folder = self.env.work_dir / "mm2" / spec.label
        folder.mkdir(parents=True, exist_ok=True)
        self.properties = folder / "mm2.properties"
        self.properties.write_text(mm2_properties(spec.alias, self.env.source, TARGET, self.env.target,
                                                  spec.topic, spec.tasks, PRODUCER_DEFAULTS))
        (folder / "log4j2.properties").write_text(_LOG4J2.format(log=folder / "mm2.log"))
        argv = [shutil.which("java") or "java", *JVM_OPTIONS,
                f"-Dlog4j2.configurationFile={folder / 'log4j2.properties'}",
                "-cp", self.classpath, MAIN_CLASS, str(self.properties)]
        self.process = processes.spawn(argv, folder / "stdout.log")

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
        return {"artifact": ARTIFACTS[0], "mode": "dedicated (MirrorMaker main class)", "jvm": " ".join(JVM_OPTIONS),
                "producer": dict(PRODUCER_DEFAULTS)}
