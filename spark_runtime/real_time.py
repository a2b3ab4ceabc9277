"""The source connector's query in Spark's real-time mode, started and read from the JVM.

The query is built on the JVM side of the DataFrame: its sink (`RealTimeMirrorSink`) hands each
task's rows, as Spark's source produced them, to a `RealTimeMirrorWriter`; no Python runs per record
or per epoch. The trigger's duration is the epoch, how
often Spark commits its progress to the checkpoint. Each epoch boundary ends the long-running tasks
and schedules new ones, holding back the records of that moment for 0.2-0.9 s.

With the tasks in the driver's JVM (local[N]) the driver commits their acknowledged positions
itself every `offset.flush.interval.ms` (`commit`, checkpoint_store's positions), as MM2 commits its
offsets, so Spark's epoch is `DRIVER_COMMITS_EPOCH_MS`: a boundary every ten minutes rather than
every minute. On executors the driver learns positions only per epoch, so the epoch is
`offset.flush.interval.ms` itself: 60 s unless set (Kafka Connect's default), a shorter one raises
the tail latency, a longer one resends more after a SIGKILL.
"""

from __future__ import annotations

import functools
from typing import Any

from mirrorcore import registry

WRITER_CLASS = "io.mirrorplane.spark.RealTimeMirrorWriter"
SINK_CLASS = "io.mirrorplane.spark.RealTimeMirrorSink"
SLOT_SOURCE = "io.mirrorplane.spark.SlotSource"  # a consumer per task slot (replication.real.time.consumers)
MIN_EPOCH_MS = 5_000  # Spark's spark.sql.streaming.realTimeMode.minBatchDuration
DEFAULT_EPOCH_MS = registry.get_int({}, "offset.flush.interval.ms", mm2_default=True)  # Kafka Connect's


DRIVER_COMMITS_EPOCH_MS = 600_000


def epoch_ms(flush_interval_ms: int, driver_commits: bool) -> int:
    """The trigger's duration: `offset.flush.interval.ms` (at least Spark's minimum), or, when the
    driver commits the positions itself every `offset.flush.interval.ms`, ten minutes or that
    interval if longer."""
    if driver_commits:
        return max(flush_interval_ms, DRIVER_COMMITS_EPOCH_MS)
    return max(flush_interval_ms, MIN_EPOCH_MS)


def commit(spark: Any) -> list[str]:
    """Sync each running partition's latest acknowledged position and flush the syncs (MM2's commit);
    the `progress` lines, whose positions are then what to commit."""
    text = str(_writer_method(spark.sparkContext._jvm, "commit")())
    return text.split("\n") if text else []


def start(spark: Any, frame: Any, name: str, checkpoint: str, producer: Any, remote_topics: Any,
          max_offset_lag: int, sync_topic: str | None, sync_producer: Any, epoch_ms: int, producers: int) -> Any:
    """Start the query over `frame` (`SLOT_SOURCE`'s DataFrame or Spark's Kafka source's); returns a
    pyspark StreamingQuery. Its tasks (one per task slot, or one per partition with Spark's Kafka
    source) take `producers` record producers in turn (task i producer i % producers): the source
    connector passes its task slots, as MM2 gives each of its tasks.max tasks a producer. A producer
    per partition sends smaller requests, more of them: at 5,000 records/s over 8 partitions on 2
    cores, 8 producers against 2 cost the target broker about 5 CPU s a minute more, and the
    mirror's p50 was 25 ms against 14 (one run each)."""
    from pyspark.sql.streaming.query import StreamingQuery

    jvm = spark.sparkContext._jvm
    writer = jvm.io.mirrorplane.spark.RealTimeMirrorWriter(producer, remote_topics, max_offset_lag, sync_topic,
                                                           sync_producer, producers)
    trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime(f"{epoch_ms} milliseconds")
    query = (write_stream(frame, name, writer).queryName(name).trigger(trigger)
             .option("checkpointLocation", checkpoint).start())
    return StreamingQuery(query)


# The columns real-time mode's query keeps of the slot source's rows: the source hands each record
# itself to the sink on the task's thread (RecordHandOff), so Spark's projection into its own rows
# copies two numbers per record instead of the key, value and headers.
HAND_OFF_COLUMNS = ("partition", "offset")


def hand_off(frame: Any) -> Any:
    """`frame` (the slot source's DataFrame, read with `handOff`) as the sink takes its records handed off."""
    return frame.select(*HAND_OFF_COLUMNS)


def write_stream(frame: Any, name: str, task: Any) -> Any:
    """The JVM DataStreamWriter of `frame` into `SINK_CLASS`, whose tasks each take a copy of `task`
    (a Java RealTimeTask), registered under `name`. Spark's allowlist of real-time sinks does not
    know that sink: its check is turned into a warning for the session."""
    spark = frame.sparkSession
    jvm = spark.sparkContext._jvm
    spark.conf.set(str(jvm.io.mirrorplane.spark.RealTimeMirrorSink.ALLOWLIST_CHECK), "false")
    jvm.io.mirrorplane.spark.RealTimeMirrorSink.register(name, task)
    return frame._jdf.writeStream().format(SINK_CLASS).option("task", name).outputMode("update")


def failure(spark: Any) -> str | None:
    """The first failed send (or offset-sync write) of a real-time task in this JVM, or None."""
    error = _writer_method(spark.sparkContext._jvm, "failure")()
    return None if error is None else str(error)


def progress(spark: Any) -> list[str]:
    """What this JVM's real-time tasks copied, per partition ("P" lines, see RealTimeMirrorWriter)."""
    text = str(_writer_method(spark.sparkContext._jvm, "progress")())
    return text.split("\n") if text else []


def syncs_written(spark: Any) -> int:
    """Offset syncs this JVM's real-time tasks wrote."""
    return int(_writer_method(spark.sparkContext._jvm, "syncsWritten")())


def reset(spark: Any) -> None:
    _writer_method(spark.sparkContext._jvm, "reset")()


@functools.cache
def _writer_class(jvm: Any) -> Any:
    """The writer's class, looked up once: py4j resolves a dotted name by trying each prefix ("io",
    "io.mirrorplane", ...) as a class, and each miss scans every jar on the class path. Done twice a
    second, that cost the driver about 2 CPU-seconds a minute."""
    return jvm.io.mirrorplane.spark.RealTimeMirrorWriter


@functools.cache
def _writer_method(jvm: Any, name: str) -> Any:
    """One of the writer's static methods, looked up once: each lookup is a round trip into the JVM
    (py4j asks whether the name is a method or a field), as many as the calls themselves otherwise."""
    return getattr(_writer_class(jvm), name)
