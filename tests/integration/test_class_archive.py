"""The driver class archive `make install` records: a real spark-submit maps it and loads Spark's and
Kafka's classes from it, and starts sooner than without."""

from __future__ import annotations

import os
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


def submit(script: Path, jars: list[Path], java_options: str) -> tuple[subprocess.CompletedProcess, float]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_SUBMIT_OPTS=java_options)
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[1]",
            "--conf", f"spark.jars={','.join(str(jar) for jar in jars)}", str(script)]
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)
    return done, time.monotonic() - started


def test_a_driver_maps_the_archive_and_loads_spark_and_kafka_classes_from_it(tmp_path, figures):
    jars = spark_jars.runtime_jars()
    archive = class_archive.record(jars)
    assert archive is not None and archive == class_archive.archive_path(jars)
    script = tmp_path / "probe.py"
    script.write_text(PROBE)

    # -Xshare:on: the JVM refuses to start unless it can map the archive
    mapped, with_archive = submit(script, jars, f"-XX:SharedArchiveFile={archive} -Xshare:on -Xlog:class+load=info")
    assert mapped.returncode == 0, mapped.stdout[-3000:] + mapped.stderr[-3000:]
    loaded = [line for line in mapped.stdout.splitlines() if "source: shared objects file (top)" in line]
    for name in ("org.apache.spark.SparkContext", "org.apache.spark.sql.SparkSession",
                 "org.apache.kafka.clients.producer.KafkaProducer"):
        assert any(f" {name} " in line for line in loaded), f"{name} not loaded from the archive"

    plain, without_archive = submit(script, jars, "")
    assert plain.returncode == 0
    figures(f"class archive {archive.stat().st_size / 2 ** 20:.0f} MB, {len(loaded):,} classes mapped; "
            f"spark-submit to a first job's end: {with_archive:.1f} s with it, {without_archive:.1f} s without")
