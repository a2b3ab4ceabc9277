"""Jars a mirror's Spark application needs: Spark's Kafka connector and our record writer.

The connector is resolved with `mvn` at exactly the installed pyspark's version; the writer is
the Maven module spark_runtime/java, built with `mvn` against that same Spark version. Both land
in the cache and are handed to spark-submit as local paths.

`python -m controlplane.infra.spark test-java` runs the writer's JUnit tests (`make java-test`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from controlplane.infra import driver_jdk, maven

JAVA_MODULE = Path(__file__).resolve().parents[2] / "spark_runtime" / "java"
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
    """Our JVM record writer, built once per change of its module or of the Spark version."""
    return maven.module_jar("mirrorplane-writer", JAVA_MODULE, _java_module_properties())


def run_java_tests() -> int:
    """Runs the writer's JUnit tests against the installed Spark version; Maven's exit status."""
    return maven.run_tests(JAVA_MODULE, _java_module_properties())


def _java_module_properties() -> dict[str, str]:
    return {"spark.version": pyspark_version()}


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
    """spark-submit's environment: the driver JVM on the drivers' JDK (`driver_jdk`), the driver and
    its Python workers on this interpreter, with the project on the path. Raises DriverJdkError."""
    env = driver_jdk.submit_env(os.environ if base is None else base)
    return dict(env, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
                PYTHONPATH=str(ENTRY_POINT.parents[1]))


def _artifact(filename: str) -> str:
    match = _VERSIONED_JAR.match(filename)
    return match.group("artifact") if match else filename


if __name__ == "__main__":
    if sys.argv[1:] != ["test-java"]:
        sys.exit("usage: python -m controlplane.infra.spark test-java")
    sys.exit(run_java_tests())
