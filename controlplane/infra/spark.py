"""Jars a mirror's Spark application needs: Spark's Kafka connector and our record writer.

The connector is resolved with `mvn` at exactly the installed pyspark's version; the writer
(spark_runtime/java) is compiled with the machine's JDK against pyspark's own jars. Both land
in the cache and are handed to spark-submit as local paths.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from controlplane.infra import maven
from controlplane.infra.paths import cache_dir

JAVA_SOURCES = Path(__file__).resolve().parents[2] / "spark_runtime" / "java"
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
    """Our JVM record writer, compiled once per source change."""
    sources = sorted(JAVA_SOURCES.rglob("*.java"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes())
    digest.update(pyspark_version().encode())
    jar = cache_dir() / "jars" / f"mirrorplane-writer-{digest.hexdigest()[:12]}.jar"
    if jar.exists():
        return jar
    jar.parent.mkdir(parents=True, exist_ok=True)
    with open(jar.parent / ".writer.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not jar.exists():
            _compile(sources, jar)
    return jar


def runtime_jars() -> list[Path]:
    return [*spark_kafka_jars(), mirror_writer_jar()]


def _compile(sources: list[Path], jar: Path) -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise RuntimeError("`javac` (a JDK 17+) is needed to build the mirror writer: run `make install`")
    classpath = [str(pyspark_home() / "jars" / "*"), *(str(j) for j in spark_kafka_jars())]
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(
            [javac, "--release", "17", "-nowarn", "-d", out, "-cp", ":".join(classpath), *map(str, sources)],
            capture_output=True, text=True, check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"compiling the mirror writer failed:\n{result.stderr[-3000:]}")
        partial = jar.with_suffix(".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(out).rglob("*.class")):
                archive.write(path, path.relative_to(out).as_posix())
        partial.rename(jar)


def _artifact(filename: str) -> str:
    match = _VERSIONED_JAR.match(filename)
    return match.group("artifact") if match else filename
