"""A class-data-sharing archive (AppCDS) for the driver JVM of mirror applications.

A mirror application's driver JVM spends most of its first seconds loading and verifying the
classes of Spark, Spark SQL, streaming and the Kafka clients. An archive of those classes, mapped
at JVM start, saves about 4 s per start on 2 cores (spark-submit to the first micro-batch).

The archive is recorded once per JDK (the drivers', `driver_jdk`), Spark and jar set (`record()`,
run by `make install`) by a short training run of a real mirror application against a throwaway
local cluster: the JVM dumps every class it loaded when the application stops
(`-XX:ArchiveClassesAtExit`). Applications then start with `-XX:SharedArchiveFile` (`jvm_options()`).
A JVM that finds the archive unusable (another JDK, another class path, a damaged file) ignores it
and starts as it would without: the archive only ever makes starts faster.

Archives are named by Spark version and Java release: recording one replaces the older archives of
the same two only, so installations of two Spark versions sharing one cache (side by side during an
upgrade), and the drivers' JDK switched back and forth, keep each their own.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from controlplane.infra import driver_jdk, paths, processes
from controlplane.infra import spark as spark_jars
from mirrorcore.policy import ReplicationPolicy

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # an unusable archive is ignored silently
TRAINING_RECORDS = 60_000
TRAINING_TOPIC, TRAINING_SOURCE_ALIAS, TRAINING_TARGET_ALIAS = "training", "source", "target"
TRAINING_TIMEOUT_SECONDS = 300.0
DUMP_TIMEOUT_SECONDS = 180.0


def archive_dir() -> Path:
    path = paths.cache_dir() / "class-archive"
    path.mkdir(parents=True, exist_ok=True)
    return path


def archive_path(jars: Sequence[Path]) -> Path:
    """Where the archive for the drivers' JDK, this Spark and these jars lives (it may not exist yet)."""
    return archive_dir() / f"{_archive_prefix()}{archive_key(jars)}.jsa"


def _archive_prefix() -> str:
    """`driver-<Spark version>-java<release>-`: see prune()."""
    return f"driver-{spark_jars.pyspark_version()}-{_java_tag()}-"


def _java_tag() -> str:
    return f"java{driver_jdk.feature_release(driver_jdk.java()) or 'unknown'}"


def archive_key(jars: Sequence[Path]) -> str:
    java = driver_jdk.java()
    facts = [os.path.realpath(java), driver_jdk.version(java), spark_jars.pyspark_version()]
    for jar in jars:
        stat = jar.stat()
        facts.append(f"{jar.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("\n".join(facts).encode()).hexdigest()[:16]


def jvm_options(jars: Sequence[Path]) -> str:
    """The driver JVM's options for these jars (SPARK_SUBMIT_OPTS): the archive if recorded, else none."""
    path = archive_path(jars)
    return f"-XX:SharedArchiveFile={path} {QUIET}" if path.is_file() else ""


def record(jars: Sequence[Path], say: Callable[[str], None] = print) -> Path | None:
    """Record the archive for these jars unless it exists; returns it, or None if training failed
    (applications then start without it, as before)."""
    target = archive_path(jars)
    if target.is_file():
        return target
    from devstack.stack import Devstack

    work = archive_dir() / f"training-{target.stem}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    started = time.monotonic()
    say("recording the Spark driver's class archive (once per JDK, Spark and jar version; about a minute)")
    stack = Devstack(root=work / "stack")
    try:
        stack.up([TRAINING_SOURCE_ALIAS, TRAINING_TARGET_ALIAS])
        source, destination = (stack.clusters[alias].bootstrap_servers
                               for alias in (TRAINING_SOURCE_ALIAS, TRAINING_TARGET_ALIAS))
        say(f"  throwaway clusters at {source} and {destination}; {TRAINING_RECORDS:,} records to replicate")
        _load_records(source, TRAINING_TOPIC, TRAINING_RECORDS)
        dump = work / "driver.jsa"
        app = _start_application(work, source, destination, stack.redis_url, jars, dump)
        try:
            remote = ReplicationPolicy().format_remote_topic(TRAINING_SOURCE_ALIAS, TRAINING_TOPIC)
            _wait_for_replication(destination, remote, TRAINING_RECORDS, app, say)
            _commit_group(source)
        finally:
            say("  stopping the application: the JVM writes the archive as it exits")
            processes.terminate(app.pid, str(work), grace_seconds=DUMP_TIMEOUT_SECONDS)
        if not dump.is_file() or dump.stat().st_size == 0:
            raise RuntimeError(f"the JVM wrote no archive (see {work / 'driver.log'})")
        dump.replace(target)
    except Exception as error:  # noqa: BLE001 - the archive is an optimisation; its absence only slows starts
        say(f"  no class archive recorded: {error}; applications start without it")
        return None
    finally:
        stack.down()
    prune(target)
    shutil.rmtree(work, ignore_errors=True)
    say(f"  class archive recorded in {time.monotonic() - started:.0f} s: {target} "
        f"({target.stat().st_size / 2 ** 20:.0f} MB)")
    return target


def prune(kept: Path) -> None:
    """Delete the archives of this Spark version and Java release other than `kept` (an older update of
    the JDK, another jar set), and those named before archives carried their Java release. Those of
    other Spark versions belong to other installations sharing the cache, and those of other Java
    releases to another choice of the drivers' JDK (switching back finds its own): they stay."""
    spark_prefix, same_release = f"driver-{spark_jars.pyspark_version()}-", f"{_java_tag()}-"
    for stale in archive_dir().glob(f"{spark_prefix}*.jsa"):
        rest = stale.name.removeprefix(spark_prefix)
        if stale != kept and (rest.startswith(same_release) or not rest.startswith("java")):
            stale.unlink(missing_ok=True)


def _load_records(bootstrap: str, topic: str, count: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 4, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for i in range(count):
        producer.produce(topic, key=f"{i:016d}".encode(), value=b"x" * 512, partition=i % 4,
                         headers=[("trace", b"training")])
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush(60)


def _start_application(work: Path, source: str, target: str, redis_url: str, jars: Sequence[Path],
                       dump: Path) -> subprocess.Popen:
    """A mirror application like any other (default policy; two clusters, as a mirror into its own source
    cluster is refused)."""
    config = {
        "name": "class-archive-training", "generation": 1, "work_dir": str(work / "app"), "redis_url": redis_url,
        "source": {"alias": TRAINING_SOURCE_ALIAS, "bootstrap_servers": source},
        "target": {"alias": TRAINING_TARGET_ALIAS, "bootstrap_servers": target},
        "topics": TRAINING_TOPIC, "groups": ".*",
        "connectors": {"source": {"tasks_max": 2, "config": {}}, "checkpoint": {"tasks_max": 1, "config": {}},
                       "heartbeat": {"tasks_max": 1, "config": {}}},
    }
    config_path = work / "app.json"
    config_path.write_text(json.dumps(config))
    argv = spark_jars.submit_argv("mirrorplane-class-archive-training", "local[2]", config_path, jars)
    env = spark_jars.submit_env(dict(os.environ, SPARK_SUBMIT_OPTS=f"-XX:ArchiveClassesAtExit={dump} {QUIET}"))
    return processes.spawn(argv, work / "driver.log", env=env, cwd=work)


def _wait_for_replication(bootstrap: str, topic: str, count: int, app: subprocess.Popen,
                          say: Callable[[str], None]) -> None:
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "class-archive-training"})
    deadline = time.monotonic() + TRAINING_TIMEOUT_SECONDS
    copied, reported = 0, 0.0
    try:
        while copied < count:
            if app.poll() is not None:
                raise RuntimeError(f"the training application exited with code {app.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{copied:,} of {count:,} records replicated after {TRAINING_TIMEOUT_SECONDS:.0f} s")
            try:
                copied = sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=2)[1] for p in range(4))
            except KafkaException:
                copied = 0  # the remote topic is not there yet
            if time.monotonic() - reported > 10:
                say(f"  {copied:,} of {count:,} records replicated")
                reported = time.monotonic()
            time.sleep(1)
    finally:
        consumer.close()


def _commit_group(bootstrap: str) -> None:
    """A consumer group's offsets on the source, which the checkpoint connector then translates."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "class-archive-training"})
    try:
        consumer.commit(offsets=[TopicPartition(TRAINING_TOPIC, p, 10) for p in range(4)], asynchronous=False)
    finally:
        consumer.close()
    time.sleep(5)  # a checkpoint pass and a few heartbeats

