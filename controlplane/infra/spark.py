"""Jars a mirror's Spark application needs: Spark's Kafka connector and our record writer.

The connector is resolved with `mvn` at exactly the installed pyspark's version; the writer
(spark_runtime/java) is compiled with the machine's JDK against pyspark's own jars. Both land
in the cache and are handed to spark-submit as local paths.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from controlplane.infra import javac, maven

JAVA_SOURCES = Path(__file__).resolve().parents[2] / "spark_runtime" / "java"
ENTRY_POINT = Path(__file__).resolve().parents[2] / "spark_runtime" / "main.py"
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-\d[\w.\-]*\.jar$")


def pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def spark_kafka_jars() -> list[Path]:
    """spark-sql-kafka-0-10 and the dependencies that pyspark does not already ship."""
    version = pyspark_version()
    jars = maven.resolve(
        f"spark-sql-kafka-{version}", (f"org.apache.spark:spark-sql-kafka-0-10_2.13:{version}",)
    )
    shipped = {_artifact(jar.name) for jar in (pyspark_home() / "jars").glob("*.jar")}
    return [jar for jar in jars if _artifact(jar.name) not in shipped]


def mirror_writer_jar() -> Path:
    """Our JVM record writer, compiled against pyspark's jars once per source change."""
    def classpath() -> list[str]:
        return [str(pyspark_home() / "jars" / "*"), *(str(j) for j in spark_kafka_jars())]

    return javac.compiled_jar("mirrorplane-writer", sorted(JAVA_SOURCES.rglob("*.java")), classpath,
                              salt=pyspark_version())


def runtime_jars() -> list[Path]:
    return [*spark_kafka_jars(), mirror_writer_jar()]


def submit_argv(name: str, master: str, config_path: Path, jars: Sequence[Path], resources: Sequence[str] = (),
                conf: Mapping[str, str] | None = None) -> list[str]:
    """spark-submit of a mirror application in client mode: `resources` are spark-submit options
    (`--driver-memory 1g` ...), `conf` Spark properties set after the jars."""
    argv = [str(Path(sys.executable).parent / "spark-submit"), "--master", master, "--deploy-mode", "client",
            "--name", name, *resources,
            "--conf", f"spark.jars={','.join(str(jar) for jar in jars)}",
            "--conf", "spark.ui.showConsoleProgress=false"]
    for key, value in sorted((conf or {}).items()):
        argv += ["--conf", f"{key}={value}"]
    return [*argv, str(ENTRY_POINT), f"--config={config_path}"]


def submit_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """spark-submit's environment: the driver and its Python workers run this interpreter, with the
    project on the path."""
    return dict(os.environ if base is None else base, PYSPARK_PYTHON=sys.executable,
                PYSPARK_DRIVER_PYTHON=sys.executable, PYTHONPATH=str(ENTRY_POINT.parents[1]))


def _artifact(filename: str) -> str:
    match = _VERSIONED_JAR.match(filename)
    return match.group("artifact") if match else filename
