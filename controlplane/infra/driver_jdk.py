"""The JDK that this host's mirror drivers run on (client mode: the local engine and standby drivers).

`MIRRORPLANE_SPARK_JAVA_HOME` names it; unset, the drivers run on `JAVA_HOME`, else on the `java`
on the PATH, as spark-submit itself would choose. Spark 4.2 runs on Java 17, 21 and 25. The web app,
the Celery worker and Hadoop's tools are not affected; YARN containers run on their NodeManager's JDK.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

SETTING = "MIRRORPLANE_SPARK_JAVA_HOME"
# The drivers' JVM options unless MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS says otherwise. The parallel
# collector: 6% faster backfills than G1 on 2 cores (bench, side by side); left out when a mirror's
# spark.driver.extraJavaOptions chooses its own collector. Inlining limits (JDK 11's MaxInlineLevel, a
# smaller FreqInlineSize): every driver is a fresh JVM whose JIT compiles Kafka's and Spark's copy path
# during a backfill, and C2's time grows with the inlining (docs/benchmarks.md).
DEFAULT_JAVA_OPTIONS = "-XX:+UseParallelGC -XX:MaxInlineLevel=9 -XX:FreqInlineSize=200"


class DriverJdkError(RuntimeError):
    """The configured JDK has no `bin/java`."""


def java_home(env: Mapping[str, str] | None = None) -> str | None:
    """The drivers' JAVA_HOME: the setting, else JAVA_HOME, else None (spark-submit finds `java` on the
    PATH). Raises DriverJdkError when the setting names a folder without `bin/java`."""
    env = os.environ if env is None else env
    configured = env.get(SETTING, "").strip()
    if configured:
        if not (Path(configured) / "bin" / "java").is_file():
            raise DriverJdkError(f"{SETTING}={configured}: there is no bin/java in that folder")
        return configured
    return env.get("JAVA_HOME") or None


def java(env: Mapping[str, str] | None = None) -> str:
    """The `java` executable the drivers run."""
    env = os.environ if env is None else env
    home = java_home(env)
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java", path=env.get("PATH")) or "java"


def submit_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with JAVA_HOME set to the drivers' JDK (spark-submit starts the driver JVM from it)."""
    home = java_home(env)
    return dict(env, JAVA_HOME=home) if home else dict(env)


@functools.cache
def version(java_executable: str) -> str:
    """What `java -version` prints, or "unknown"."""
    try:
        return subprocess.run([java_executable, "-version"], capture_output=True, text=True,
                              timeout=30).stderr.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def feature_release(java_executable: str) -> int | None:
    """The Java feature release (17, 21, 25 ...) of `java_executable`, if its version says."""
    text = version(java_executable)
    quoted = text.split('"')[1] if text.count('"') >= 2 else ""
    head = quoted.split(".")[0].split("-")[0].split("+")[0]
    return int(head) if head.isdigit() else None
