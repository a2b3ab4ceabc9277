"""The source connector's query in Spark's real-time mode, started and read from the JVM.

The query is built on the JVM side of the DataFrame (`RealTimeMirrorWriter` is a Java
ForeachWriter): no Python runs per record or per epoch. The trigger's duration is the epoch, how
often Spark commits its progress to the checkpoint: `offset.flush.interval.ms`, as often as MM2
commits its offsets, 60 s unless set (Kafka Connect's default). Each epoch boundary ends the
long-running tasks and schedules new ones, holding back the records of that moment for 150-200 ms,
so a shorter epoch raises the tail latency; a longer one resends more after a SIGKILL.
"""

from __future__ import annotations

import functools
from typing import Any

from mirrorcore import registry

WRITER_CLASS = "io.mirrorplane.spark.RealTimeMirrorWriter"
MIN_EPOCH_MS = 5_000  # Spark's spark.sql.streaming.realTimeMode.minBatchDuration
DEFAULT_EPOCH_MS = registry.get_int({}, "offset.flush.interval.ms", mm2_default=True)  # Kafka Connect's


def epoch_ms(flush_interval_ms: int) -> int:
    """The trigger's duration for `offset.flush.interval.ms`: at least Spark's minimum."""
    return max(flush_interval_ms, MIN_EPOCH_MS)


def start(spark: Any, frame: Any, name: str, checkpoint: str, producer: Any, remote_topics: Any,
          max_offset_lag: int, sync_topic: str | None, sync_producer: Any, epoch_ms: int) -> Any:
    """Start the query over `frame` (the Kafka source's DataFrame); returns a pyspark StreamingQuery."""
    from pyspark.sql.streaming.query import StreamingQuery

    jvm = spark.sparkContext._jvm
    writer = jvm.io.mirrorplane.spark.RealTimeMirrorWriter(producer, remote_topics, max_offset_lag, sync_topic,
                                                           sync_producer)
    trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime(f"{epoch_ms} milliseconds")
    query = (frame._jdf.writeStream().queryName(name).outputMode("update").foreach(writer).trigger(trigger)
             .option("checkpointLocation", checkpoint).start())
    return StreamingQuery(query)


def progress(spark: Any) -> list[str]:
    """What this JVM's real-time tasks copied, per partition ("P" lines, see RealTimeMirrorWriter)."""
    text = str(_writer_class(spark.sparkContext._jvm).progress())
    return text.split("\n") if text else []


def syncs_written(spark: Any) -> int:
    """Offset syncs this JVM's real-time tasks wrote."""
    return int(_writer_class(spark.sparkContext._jvm).syncsWritten())


def reset(spark: Any) -> None:
    _writer_class(spark.sparkContext._jvm).reset()


@functools.cache
def _writer_class(jvm: Any) -> Any:
    """The writer's class, looked up once: py4j resolves a dotted name by trying each prefix ("io",
    "io.mirrorplane", ...) as a class, and each miss scans every jar on the class path. Done twice a
    second, that cost the driver about 2 CPU-seconds a minute."""
    return jvm.io.mirrorplane.spark.RealTimeMirrorWriter
