"""The raw limit: bench/java/RawCopy.java, plain KafkaConsumer + KafkaProducer per partition group with
large fetches and batches, compiled once with the JDK against the brokers' kafka-clients.

It is what any mirror's throughput is bounded by on this machine: no framework, no offsets kept,
no heartbeats, only the copy (with acks=all and idempotence, as the mirrors). Its target topic is
created at start (inside the timing, as the mirrors create theirs), with the source topic's
compression.type as the mirrors copy it. It runs with Mirrorplane's collector and a class archive of
its own (bench/jvm.py), as the `mm2` candidate.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from bench import jvm
from bench.candidates.base import Candidate, RunSpec
from bench.cluster import create_topic, delete_topics
from controlplane.infra import javac, maven, processes

SOURCE = Path(__file__).resolve().parents[1] / "java" / "RawCopy.java"
MAIN_CLASS = "RawCopy"
JVM_OPTIONS = ("-Xms512m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true")


def classpath() -> list[str]:
    return [str(jar) for jar in maven.kafka_broker_classpath()]


def jar() -> Path:
    return javac.compiled_jar("bench-raw-copy", [SOURCE], classpath, salt=maven.KAFKA_VERSION)


class RawCopy(Candidate):
    name = "raw"
    title = "raw Java copy"

    def __init__(self, env) -> None:
        super().__init__(env)
        self.classpath = ""
        self.process: subprocess.Popen | None = None
        self.log: Path | None = None
        self.archive: Path | None = None
        self.jvm_options: list[str] = list(JVM_OPTIONS)
        self.effective_tasks = 0

    def setup(self) -> None:
        self.classpath = ":".join([str(jar()), *classpath()])
        path = jvm.archive_path("raw", self.classpath, jvm.matched(JVM_OPTIONS, None))
        self.archive = jvm.record(path, self._train)
        self.jvm_options = jvm.matched(JVM_OPTIONS, self.archive)

    def _train(self, extra: list[str]) -> None:
        """Copy the training topic once; the JVM writes its class archive as it exits."""
        spec = RunSpec(label="raw-class-archive", alias="cdsraw", topic=self.env.training_topic, partitions=1,
                       tasks=1)
        try:
            process = self._launch(spec, [*jvm.matched(JVM_OPTIONS, None), *extra])
            deadline = time.monotonic() + 120
            while process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
            if process.poll() != 0:
                raise RuntimeError(self.failure() or "the training copy did not finish within 120 s")
        finally:
            self.stop()
            delete_topics(self.env.target, f"{spec.alias}.")

    def start(self, spec: RunSpec) -> None:
        self._launch(spec, self.jvm_options)

    def _launch(self, spec: RunSpec, options: list[str]) -> subprocess.Popen:
        config = {"compression.type": spec.compression} if spec.compression != "none" else None
        create_topic(self.env.target, spec.remote_topic, spec.partitions, config)
        self.log = self.env.work_dir / "raw" / f"{spec.label}.log"
        argv = [jvm.java(), *options, "-cp", self.classpath, MAIN_CLASS,
                self.env.source, self.env.target, spec.topic, spec.remote_topic, str(spec.partitions), str(spec.tasks),
                spec.compression]
        self.effective_tasks = min(spec.tasks, spec.partitions)
        self.process = processes.spawn(argv, self.log)
        return self.process

    def details(self) -> dict:
        return {"effective_tasks": self.effective_tasks}

    def process_groups(self) -> list[int]:
        return [self.process.pid] if self.process else []

    def failure(self) -> str | None:
        if self.process is not None and self.process.poll() not in (None, 0):
            tail = self.log.read_text(errors="replace").splitlines()[-5:] if self.log and self.log.exists() else []
            return f"the raw copy exited with {self.process.returncode}: " + " | ".join(tail)
        return None

    def stop(self) -> None:
        if self.process is not None:
            processes.terminate(self.process.pid, MAIN_CLASS, grace_seconds=10)
            self.process.wait(10)
        self.process = None

    def settings(self) -> dict:
        return {"source": "bench/java/RawCopy.java", "threads": "tasks.max (one per partition group)",
                "consumer": {"fetch.max.bytes": 67108864, "max.partition.fetch.bytes": 16777216,
                             "fetch.min.bytes": 1048576, "max.poll.records": 20000},
                "producer": {"acks": "all", "enable.idempotence": True, "linger.ms": 20, "batch.size": 1048576,
                             "compression.type": "the source topic's codec"},
                "jvm": " ".join(self.jvm_options), "class_archive": str(self.archive) if self.archive else None}
