"""JVM settings of the Java candidates, matched to Mirrorplane's driver JVM.

Mirrorplane's driver runs on the drivers' JDK (MIRRORPLANE_SPARK_JAVA_HOME, `driver_jdk`) with the
collector and JIT inlining limits of MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS (the parallel collector and
`-XX:MaxInlineLevel=9 -XX:FreqInlineSize=200` by default) and a class-data-sharing archive of its own
classes. MM2, the raw copy and Kafka's perf tools run on the same JDK (`java()`); the "matched" profile
gives MM2 and the raw copy the same collector, the same inlining limits and an archive of their own
classes, recorded once per
JDK and class path by a short training run that copies a small topic with `-XX:ArchiveClassesAtExit`
(the JVM writes the archive as it exits). A JVM that finds the archive unusable ignores it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from controlplane.infra import driver_jdk, paths
from controlplane.infra.class_archive import QUIET

DEFAULT_COLLECTOR = "-XX:+UseParallelGC"
GC_FLAGS = ("-XX:+UseParallelGC", "-XX:+UseG1GC", "-XX:+UseSerialGC", "-XX:+UseZGC", "-XX:+UseShenandoahGC")
INLINING_FLAGS = ("-XX:MaxInlineLevel=", "-XX:FreqInlineSize=", "-XX:MaxInlineSize=", "-XX:InlineSmallCode=")


def java() -> str:
    """The `java` of the drivers' JDK: every Java candidate and tool runs on it (the brokers do not)."""
    return driver_jdk.java()


def driver_options() -> str:
    """Mirrorplane's driver JVM options, as the control plane reads them."""
    return os.environ.get("MIRRORPLANE_SPARK_DRIVER_JAVA_OPTIONS", driver_jdk.DEFAULT_JAVA_OPTIONS)


def collector(options: str) -> list[str]:
    """The collector flags among JVM options (the parallel collector when none is chosen)."""
    chosen = [flag for flag in options.split() if flag in GC_FLAGS]
    return chosen or [DEFAULT_COLLECTOR]


def inlining(options: str) -> list[str]:
    """The JIT inlining limits among JVM options."""
    return [flag for flag in options.split() if flag.startswith(INLINING_FLAGS)]


def without_collector(options: Sequence[str]) -> list[str]:
    """JVM options less collector choices and collector tuning flags (MaxGCPauseMillis and the like)."""
    g1_tuning = ("-XX:MaxGCPauseMillis", "-XX:InitiatingHeapOccupancyPercent", "-XX:+ExplicitGCInvokesConcurrent")
    return [o for o in options if o not in GC_FLAGS and not o.startswith(g1_tuning)]


def matched(stock: Sequence[str], archive: Path | None) -> list[str]:
    """A candidate's stock options with Mirrorplane's collector and inlining limits, and the
    candidate's own archive."""
    sharing = [f"-XX:SharedArchiveFile={archive}", *QUIET.split()] if archive and archive.is_file() else []
    stock = [o for o in without_collector(stock) if not o.startswith(INLINING_FLAGS)]
    return [*stock, *collector(driver_options()), *inlining(driver_options()), *sharing]


def archive_path(name: str, classpath: str, options: Sequence[str]) -> Path:
    """Where the archive of this JDK, class path (jars with size and time) and options lives."""
    facts = [os.path.realpath(java()), " ".join(options)]
    for entry in classpath.split(":"):
        try:
            stat = Path(entry).stat()
            facts.append(f"{entry}:{stat.st_size}:{stat.st_mtime_ns}")
        except OSError:
            facts.append(entry)
    key = hashlib.sha256("\n".join(facts).encode()).hexdigest()[:16]
    folder = paths.cache_dir() / "bench-class-archive"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}-{key}.jsa"


def record(target: Path, train: Callable[[list[str]], None], say: Callable[[str], None] = print) -> Path | None:
    """The archive at `target`, recorded by `train(extra JVM options)` unless it exists; None when the
    training wrote none (the candidate then starts without one, which the report shows)."""
    if target.is_file():
        return target
    dump = target.with_name(target.stem + ".partial.jsa")
    dump.unlink(missing_ok=True)
    try:
        train([f"-XX:ArchiveClassesAtExit={dump}", *QUIET.split()])
    except Exception as error:  # noqa: BLE001 - the archive only speeds starts; the report shows its absence
        say(f"  no class archive recorded for {target.stem}: {error}")
        return None
    if not dump.is_file() or dump.stat().st_size == 0:
        say(f"  the JVM wrote no class archive for {target.stem}")
        return None
    dump.replace(target)
    say(f"  class archive {target.name} ({target.stat().st_size / 2**20:.0f} MB)")
    return target
