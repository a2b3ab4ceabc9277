"""The driver class archive `make install` records: a real spark-submit maps it and loads Spark's and
Kafka's classes from it, and starts with less work than without."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from controlplane.infra import class_archive
from controlplane.infra import spark as spark_jars

PROBE = """
import time
started = time.monotonic()
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
# spark.jars classes come through Spark's class loader
spark.sparkContext._jvm.org.apache.spark.util.Utils.classForName(
    "org.apache.kafka.clients.producer.KafkaProducer", True, False)
spark.range(3).count()
print(f"session and first job {time.monotonic() - started:.2f}")
"""


def submit(script: Path, jars: list[Path], java_options: str) -> tuple[subprocess.CompletedProcess, float, float]:
    """Runs the probe; returns the result, its wall seconds and the CPU seconds of its processes."""
    env = spark_jars.submit_env(dict(os.environ, SPARK_SUBMIT_OPTS=java_options))  # on the drivers' JDK
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[1]",
            "--conf", f"spark.jars={','.join(str(jar) for jar in jars)}", str(script)]
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    wall, after = time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def test_a_driver_maps_the_archive_and_loads_spark_and_kafka_classes_from_it(tmp_path, figures):
    jars = spark_jars.runtime_jars()
    archive = class_archive.record(jars)
    assert archive is not None and archive == class_archive.archive_path(jars)
    script = tmp_path / "probe.py"
    script.write_text(PROBE)

    # -Xshare:on: the JVM refuses to start unless it can map the archive
    mapped, _, _ = submit(script, jars, f"-XX:SharedArchiveFile={archive} -Xshare:on -Xlog:class+load=info")
    assert mapped.returncode == 0, mapped.stdout[-3000:] + mapped.stderr[-3000:]
    loaded = [line for line in mapped.stdout.splitlines() if "source: shared objects file (top)" in line]
    for name in ("org.apache.spark.SparkContext", "org.apache.spark.sql.SparkSession",
                 "org.apache.kafka.clients.producer.KafkaProducer"):
        assert any(f" {name} " in line for line in loaded), f"{name} not loaded from the archive"

    # Side by side, one run each; CPU seconds (the class parsing and verification the archive saves,
    # about a third) rather than wall time, which other work on the machine stretches.
    runs: dict[str, tuple[float, float]] = {}
    for label, options in (("with", class_archive.jvm_options(jars)), ("without", "")):
        done, wall, cpu = submit(script, jars, options)
        assert done.returncode == 0, done.stderr[-3000:]
        runs[label] = (wall, cpu)
    (wall_with, cpu_with), (wall_without, cpu_without) = runs["with"], runs["without"]
    assert cpu_with < cpu_without, f"the archive saved no work: {runs}"
    figures(f"class archive {archive.stat().st_size / 2 ** 20:.0f} MB, {len(loaded):,} classes mapped; "
            f"spark-submit to a first job's end, side by side: {cpu_with:.1f} CPU s and {wall_with:.1f} s "
            f"with it, {cpu_without:.1f} CPU s and {wall_without:.1f} s without "
            f"({cpu_with / cpu_without:.2f}x the CPU)")
