"""The source connector's query in Spark's real-time mode, started and read from the JVM.

The query is built on the JVM side of the DataFrame (`RealTimeMirrorWriter` is a Java
ForeachWriter): no Python runs per record or per epoch. The trigger's duration is the epoch, how
often Spark commits its progress to the checkpoint: `offset.flush.interval.ms`, as often as MM2
commits its offsets.
"""

from __future__ import annotations

from typing import Any

WRITER_CLASS = "io.mirrorplane.spark.RealTimeMirrorWriter"
MIN_EPOCH_MS = 5_000  # Spark's spark.sql.streaming.realTimeMode.minBatchDuration


def start(spark: Any, frame: Any, name: str, checkpoint: str, producer: Any, remote_topics: Any,
          max_offset_lag: int, sync_topic: str | None, sync_producer: Any, epoch_ms: int) -> Any:
    """Start the query over `frame` (the Kafka source's DataFrame); returns a pyspark StreamingQuery."""
    from pyspark.sql.streaming.query import StreamingQuery

    jvm = spark.sparkContext._jvm
    writer = jvm.io.mirrorplane.spark.RealTimeMirrorWriter(producer, remote_topics, max_offset_lag, sync_topic,
                                                           sync_producer)
    trigger = jvm.org.apache.spark.sql.streaming.Trigger.RealTime(f"{max(epoch_ms, MIN_EPOCH_MS)} milliseconds")
    query = (frame._jdf.writeStream().queryName(name).outputMode("update").foreach(writer).trigger(trigger)
             .option("checkpointLocation", checkpoint).start())
    return StreamingQuery(query)


def progress(spark: Any) -> list[str]:
    """What this JVM's real-time tasks copied, per partition ("P" lines, see RealTimeMirrorWriter)."""
    return list(spark.sparkContext._jvm.io.mirrorplane.spark.RealTimeMirrorWriter.progress())


def syncs_written(spark: Any) -> int:
    """Offset syncs this JVM's real-time tasks wrote."""
    return int(spark.sparkContext._jvm.io.mirrorplane.spark.RealTimeMirrorWriter.syncsWritten())


def reset(spark: Any) -> None:
    spark.sparkContext._jvm.io.mirrorplane.spark.RealTimeMirrorWriter.reset()
