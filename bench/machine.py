"""Facts about the machine and the software measured, for the report."""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import psutil

from controlplane.infra import driver_jdk


def memory_gb() -> float:
    """The machine's total memory in GiB (as `free -g` shows it)."""
    return round(psutil.virtual_memory().total / 2**30, 1)


def cpu_model(text: str) -> str | None:
    """The first `model name` of /proc/cpuinfo (psutil does not tell the CPU's model)."""
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


def java_version(java: str | None) -> str:
    if not java:
        return "no java"
    lines = driver_jdk.version(java).splitlines()
    return lines[0].replace('"', "") if lines else "unknown"


def facts() -> dict:
    from bench import jvm
    from controlplane.infra import maven, spark

    return {
        "cores": psutil.cpu_count(),
        "memory_gb": memory_gb(),
        "cpu_model": cpu_model(_read("/proc/cpuinfo")),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "java": java_version(shutil.which("java")),  # the brokers'
        "candidates_java": java_version(jvm.java()),  # Mirrorplane's drivers', MM2's, the raw copy's
        "kafka": maven.KAFKA_VERSION,
        "spark": spark.pyspark_version(),
        "load_average_at_start": list(os.getloadavg()),
    }
