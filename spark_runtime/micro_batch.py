"""The source connector's query in micro-batches, run from the JVM.

The batch function is a Java class (`MicroBatchMirror`) handed to the query on the JVM side of the
DataFrame: Spark's stream thread calls it for every batch, it writes the batch and its offset syncs,
and no Python runs per batch. The driver's loop reads what the batches did (`Drained`) twice a
second, and creates remote partitions a batch waits for.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

FUNCTION_CLASS = "io.mirrorplane.spark.MicroBatchMirror"


@dataclass(frozen=True)
class BatchReport:
    batch_id: int
    seconds: float
    progress: list[str]  # the writer's "P" lines


@dataclass
class Drained:
    batches: list[BatchReport] = field(default_factory=list)
    grow: dict[str, int] = field(default_factory=dict)  # source topic -> partitions its remote topic needs
    syncs_written: int = 0  # offset syncs the function wrote, acknowledged, since it was made


def function(spark: Any, producer: Any, remote_topics: Any, tasks_max: int, max_offset_lag: int,
             sync_topic: str | None, sync_producer: Any, flush_interval_ms: int, sync_state: Any,
             partitions: Any) -> Any:
    """A new batch function (Java maps as arguments; `sync_topic` None: offset syncs are off)."""
    return _function_class(spark.sparkContext._jvm)(producer, remote_topics, tasks_max, max_offset_lag, sync_topic,
                                                    sync_producer, flush_interval_ms, sync_state, partitions)


def start(frame: Any, name: str, checkpoint: str, batch_function: Any) -> Any:
    """Start the query over `frame` (the Kafka source's DataFrame); returns a pyspark StreamingQuery."""
    from pyspark.sql.streaming.query import StreamingQuery

    query = (frame._jdf.writeStream().queryName(name).foreachBatch(batch_function)
             .option("checkpointLocation", checkpoint).start())
    return StreamingQuery(query)


def drain(batch_function: Any) -> Drained:
    """What the function's batches did since the last call, in one call into the JVM."""
    return parse(str(batch_function.drain()).split("\n"))


def parse(lines: list[str]) -> Drained:
    drained = Drained()
    for line in lines:
        kind, _, rest = line.partition("\t")
        if kind == "B":
            batch_id, seconds = rest.split("\t")
            drained.batches.append(BatchReport(int(batch_id), float(seconds), []))
        elif kind == "P" and drained.batches:
            drained.batches[-1].progress.append(line)
        elif kind == "G":
            topic, partitions = rest.rsplit("\t", 1)
            drained.grow[topic] = int(partitions)
        elif kind == "W":
            drained.syncs_written = int(rest)
    return drained


@functools.cache
def _function_class(jvm: Any) -> Any:
    """Looked up once: py4j resolves a dotted name by trying each prefix as a class (see real_time)."""
    return jvm.io.mirrorplane.spark.MicroBatchMirror
