"""Upper bounds of the brokers themselves: Kafka's own perf tools on the same clusters and data.

`org.apache.kafka.tools.ProducerPerformance` (kafka-producer-perf-test) writes as many records of the
dataset's size as the dataset holds to a fresh topic on the target, with the raw copy's producer
settings (acks=all, idempotent, linger.ms 20, 1 MB batches, the dataset's codec);
`org.apache.kafka.tools.ConsumerPerformance` (kafka-consumer-perf-test) reads the whole source topic.
The classes are those of the Kafka distribution the brokers run: `kafka-tools` of the brokers'
version from Maven Central, with the broker's classpath besides.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from bench import jvm
from bench.cluster import create_topic, delete_topics
from bench.datasets import Dataset
from bench.measure import ResourceSampler
from controlplane.infra import maven, processes

TOOLS_ARTIFACTS = (f"org.apache.kafka:kafka-tools:{maven.KAFKA_VERSION}",)
PRODUCER_MAIN = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_MAIN = "org.apache.kafka.tools.ConsumerPerformance"
JVM_OPTIONS = ("-Xms512m", "-Xmx1g", "-XX:+UseG1GC", "-Djava.awt.headless=true")
PRODUCER_PROPS = {"acks": "all", "enable.idempotence": "true", "linger.ms": "20", "batch.size": "1048576",
                  "buffer.memory": "268435456", "max.request.size": "16777216"}
WARM_UP_RECORDS = 1_000_000  # per dataset, through each broker, before its first run
PRODUCER_TOTAL = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\)")


def classpath() -> str:
    jars = [*maven.resolve(f"kafka-tools-{maven.KAFKA_VERSION}", TOOLS_ARTIFACTS), *maven.kafka_broker_classpath()]
    return ":".join(dict.fromkeys(str(jar) for jar in jars))


def parse_producer(output: str) -> dict | None:
    """The final line of ProducerPerformance (the last `N records sent, R records/sec (M MB/sec)`)."""
    matches = PRODUCER_TOTAL.findall(output)
    if not matches:
        return None
    records, rate, mb = matches[-1]
    return {"records": int(records), "records_per_second": float(rate), "mb_per_second": float(mb)}


def parse_consumer(output: str) -> dict | None:
    """ConsumerPerformance's summary line (`--hide-header`): start, end, MB, MB/s, records, records/s,
    rebalance ms, fetch ms, fetch MB/s, fetch records/s. The fetch figures leave the group join out."""
    for line in reversed(output.splitlines()):
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 10:
            continue
        try:
            numbers = [float(field) for field in fields[2:]]
        except ValueError:
            continue
        return {"records": int(numbers[2]), "records_per_second": numbers[3], "mb_per_second": numbers[1],
                "fetch_records_per_second": numbers[7], "fetch_mb_per_second": numbers[6],
                "rebalance_ms": int(numbers[4])}
    return None


class UpperBounds:
    """Runs the two tools; each run is a dict with the tool's figures, CPU seconds and any error."""

    def __init__(self, source: str, target: str, work_dir: Path, timeout: float) -> None:
        self.source, self.target = source, target
        self.work_dir = work_dir / "upper"
        self.timeout = timeout
        self.classpath = ""

    def setup(self) -> None:
        self.classpath = classpath()

    def producer(self, label: str, records: int, record_bytes: int, partitions: int, compression: str) -> dict:
        topic = f"perf-{label}"
        config = {"compression.type": compression} if compression != "none" else None
        create_topic(self.target, topic, partitions, config)
        props = PRODUCER_PROPS | {"bootstrap.servers": self.target, "compression.type": compression}
        argv = ["--topic", topic, "--num-records", str(records), "--record-size", str(record_bytes),
                "--throughput", "-1", "--producer-props", *(f"{k}={v}" for k, v in props.items())]
        try:
            return self._run(f"producer-{label}", PRODUCER_MAIN, argv, parse_producer)
        finally:
            delete_topics(self.target, topic)

    def consumer(self, label: str, topic: str, records: int) -> dict:
        argv = ["--bootstrap-server", self.source, "--topic", topic, "--messages", str(records),
                "--timeout", "60000", "--hide-header", "--group", f"perf-{label}"]
        return self._run(f"consumer-{label}", CONSUMER_MAIN, argv, parse_consumer)

    def warm_up(self, dataset: Dataset, partitions: int, say: Callable[[str], None]) -> dict:
        """Both tools once, untimed, before a dataset's first run: the source broker serves fetches of
        the dataset and the target broker appends batches of its size and codec. Without it the first
        run of an invocation paid for the brokers' JIT compiling those paths: about three times the
        brokers' CPU of later runs of the same candidate."""
        records, label = min(dataset.records, WARM_UP_RECORDS), f"warm-up-{dataset.name.lower()}"
        say(f"warming the brokers up for {dataset.name}: {records:,} records read from the source and written "
            f"to a scratch topic on the target (untimed)")
        consumer = self.consumer(label, dataset.topic, records)
        producer = self.producer(label, records, dataset.record_bytes, partitions, dataset.compression)
        errors = [run["error"] for run in (consumer, producer) if run["error"]]
        for error in errors:
            say(f"  warm-up: {error}")
        return {"dataset": dataset.name, "records": records,
                "seconds": round(consumer["seconds"] + producer["seconds"], 1), "errors": errors}

    def _run(self, label: str, main: str, arguments: list[str], parse: Callable[[str], dict | None]) -> dict:
        log = self.work_dir / f"{label}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
        argv = [jvm.java(), *JVM_OPTIONS, "-cp", self.classpath, main, *arguments]
        process = processes.spawn(argv, log)
        sampler = ResourceSampler({"tool": lambda: [process.pid]}).start()
        started = time.monotonic()
        try:
            code = process.wait(self.timeout)
        except subprocess.TimeoutExpired:
            processes.terminate(process.pid, main, grace_seconds=5)
            code = None
        seconds = time.monotonic() - started
        usage = sampler.snapshot()["tool"]
        sampler.stop()
        output = log.read_text(errors="replace")
        figures = parse(output)
        result = {"seconds": round(seconds, 2), "cpu_seconds": usage["cpu_seconds"],
                  "peak_rss_mb": usage["peak_rss_mb"], "log": str(log), "error": None}
        if figures is None or code != 0:
            tail = " | ".join(output.strip().splitlines()[-3:])
            result["error"] = f"exit {code}: {tail}" if code != 0 else f"no summary line: {tail}"
        return result | (figures or {})
