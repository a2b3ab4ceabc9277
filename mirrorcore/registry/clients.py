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
