"""The Hadoop release of the local test bed: the version pyspark's client jars were built against,
the daemons' jars from Maven Central, and the JDK that runs them."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from controlplane.infra import maven

_JAR_VERSION = re.compile(r"^hadoop-client-api-(?P<version>\d[\w.\-]*)\.jar$")


def hadoop_version() -> str:
    """The Hadoop version of pyspark's bundled client (`jars/hadoop-client-api-<version>.jar`)."""
    from controlplane.infra.spark import pyspark_home

    for jar in sorted((pyspark_home() / "jars").glob("hadoop-client-api-*.jar")):
        match = _JAR_VERSION.match(jar.name)
        if match:
            return match.group("version")
    raise RuntimeError(f"no hadoop-client-api jar in {pyspark_home() / 'jars'}: is pyspark installed?")


def daemon_artifacts(version: str) -> tuple[str, ...]:
    """Maven coordinates of the HDFS and YARN daemons (with Log4j 1 through reload4j, as Hadoop ships)."""
    modules = ("hadoop-common", "hadoop-hdfs", "hadoop-yarn-server-resourcemanager", "hadoop-yarn-server-nodemanager",
               # the ResourceManager loads timeline-service v2 classes even with the timeline service off
               "hadoop-yarn-server-timelineservice", "hadoop-yarn-server-web-proxy")
    return (*(f"org.apache.hadoop:{module}:{version}" for module in modules),
            "org.slf4j:slf4j-reload4j:1.7.36", "ch.qos.reload4j:reload4j:1.2.22")


def daemon_classpath(version: str | None = None) -> list[Path]:
    """The daemons' jars, resolved from Maven Central once per version and reused."""
    version = version or hadoop_version()
    return maven.resolve(f"hadoop-daemons-{version}", daemon_artifacts(version))


def java_home() -> str:
    """`JAVA_HOME`, or the JDK of the `java` on the PATH."""
    configured = os.environ.get("JAVA_HOME")
    if configured and (Path(configured) / "bin" / "java").exists():
        return configured
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("no `java` on the PATH: run `make install` (it installs openjdk-17-jdk-headless)")
    return str(Path(java).resolve().parents[1])
