"""The source connector's DataFrame reader: Spark's Kafka source, or, in real-time mode with a
consumer per task slot (`replication.real.time.consumers=per-task-slot`), our `SlotSource`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_runtime import real_time

# Options Spark's Kafka source manages itself and refuses when set.
SPARK_MANAGED_CONSUMER_OPTIONS = {
    "group.id", "auto.offset.reset", "key.deserializer", "value.deserializer",
    "enable.auto.commit", "interceptor.classes",
}


def kafka_options(consumer: Mapping[str, str]) -> dict[str, str]:
    """Consumer settings as the sources' `kafka.*` options, without those Spark manages."""
    return {f"kafka.{k}": v for k, v in consumer.items() if k not in SPARK_MANAGED_CONSUMER_OPTIONS}


def reader(spark: Any, topics: list[str], starting: str, options: Mapping[str, str], *,
           slots: int | None = None, max_records: int | None = None) -> Any:
    """A streaming reader of `topics` from `starting` (the Kafka source's startingOffsets).

    `slots`: real-time mode's `SlotSource`, one reader per slot, handing each record to the real-time
    sink on its task's thread (`real_time.hand_off`); else Spark's Kafka source, with
    `max_records` per micro-batch (None in real-time mode, which reads as records come, unbounded).
    """
    if slots is not None:
        stream = (spark.readStream.format(real_time.SLOT_SOURCE).option("topics", ",".join(topics))
                  .option("slots", str(slots)).option("startingOffsets", starting).option("handOff", "true"))
    else:
        stream = (spark.readStream.format("kafka").option("subscribe", ",".join(topics))
                  .option("startingOffsets", starting).option("includeHeaders", "true")
                  .option("failOnDataLoss", "false"))
        if max_records is not None:
            stream = stream.option("maxOffsetsPerTrigger", max_records)
    for key, value in options.items():
        stream = stream.option(key, value)
    return stream
