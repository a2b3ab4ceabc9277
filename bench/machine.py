"""Facts about the machine and the software measured, for the report."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path


def meminfo_gb(text: str) -> float | None:
    """MemTotal of /proc/meminfo in GiB (as `free -g` shows it)."""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / 2**20, 1)
    return None


def cpu_model(text: str) -> str | None:
    """The first `model name` of /proc/cpuinfo."""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "model name":
            return value.strip()
    return None


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def java_version() -> str:
    java = shutil.which("java")
    if not java:
        return "no java"
    result = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    lines = (result.stderr or result.stdout).splitlines()
    return lines[0].replace('"', "") if lines else "unknown"


def facts() -> dict:
    from controlplane.infra import maven, spark

    return {
        "cores": os.cpu_count(),
        "memory_gb": meminfo_gb(_read("/proc/meminfo")),
        "cpu_model": cpu_model(_read("/proc/cpuinfo")),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "java": java_version(),
        "kafka": maven.KAFKA_VERSION,
        "spark": spark.pyspark_version(),
        "load_average_at_start": list(os.getloadavg()),
    }
