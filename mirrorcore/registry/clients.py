"""The Kafka client settings Mirrorplane starts from, before a connector's `producer.override.*`."""

from __future__ import annotations

# The source connector's record producer: ordered, idempotent, acknowledged by all replicas (no loss,
# no reordering), batched a little.
PRODUCER_DEFAULTS: dict[str, str] = {
    "acks": "all",
    "enable.idempotence": "true",
    "max.in.flight.requests.per.connection": "5",
    "linger.ms": "5",
    "batch.size": "262144",
    "compression.type": "none",
}

# Over PRODUCER_DEFAULTS while the source connector copies a backlog in micro-batches. A task's
# partitions share its rate, so with 5 ms of linger a batch left at a fraction of its size: longer
# linger and larger batches mean a quarter of the produce requests. On 10,000,000 x 512 B records, with
# MM2 given the same settings, the steady-state ratio to MM2 went from 1.04x to 1.34x (docs/benchmarks.md).
# Real-time mode keeps PRODUCER_DEFAULTS: its records wait for no batch.
MICRO_BATCH_PRODUCER_DEFAULTS: dict[str, str] = {
    "linger.ms": "20",
    "batch.size": "1048576",
}


def producer_defaults(micro_batch: bool) -> dict[str, str]:
    """The source connector's record producer before `producer.override.*`: in micro-batches or not."""
    return PRODUCER_DEFAULTS | (MICRO_BATCH_PRODUCER_DEFAULTS if micro_batch else {})
