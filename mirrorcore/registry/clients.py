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

# Both clients' socket buffers wherever Mirrorplane sets them (see MICRO_BATCH_CONSUMER_DEFAULTS).
SOCKET_BUFFER_BYTES = "4194304"

# Over PRODUCER_DEFAULTS while the source connector copies a backlog in micro-batches. A task's
# partitions share its rate, so with 5 ms of linger a batch left at a fraction of its size: longer
# linger and larger batches mean a quarter of the produce requests. On 10,000,000 x 512 B records, with
# MM2 given the same settings, the steady-state ratio to MM2 went from 1.04x to 1.34x (docs/benchmarks.md).
# Real-time mode keeps PRODUCER_DEFAULTS: its records wait for no batch. The socket's send buffer: see
# MICRO_BATCH_CONSUMER_DEFAULTS.
# A produce request may carry 16 MB: with the producer's 1 MB limit each request carried one full batch,
# so a task's partitions went to the broker one request each; now a request carries every partition's
# ready batch. The 64 MB buffer keeps the 5 requests in flight fed (the default 32 MB holds four
# requests of 8 MB). On 6,000,000 x 512 B (one invocation each, 2 repetitions) Mirrorplane/raw copy at
# steady state went from 0.83x (0.78-0.88) to 0.98x (0.84-1.13); with a 256 MB buffer, 1.02x
# (0.92-1.13). On 10,000,000 x 512 B (5 repetitions, MM2 given the same) Mirrorplane/raw was 0.90x and
# Mirrorplane/MM2 1.35x, against 0.79x and 1.32x before (docs/benchmarks.md).
MICRO_BATCH_PRODUCER_DEFAULTS: dict[str, str] = {
    "linger.ms": "20",
    "batch.size": "1048576",
    "send.buffer.bytes": SOCKET_BUFFER_BYTES,
    "max.request.size": "16777216",
    "buffer.memory": "67108864",
}


def producer_defaults(micro_batch: bool) -> dict[str, str]:
    """The source connector's record producer before `producer.override.*`: in micro-batches or not."""
    return PRODUCER_DEFAULTS | (MICRO_BATCH_PRODUCER_DEFAULTS if micro_batch else {})


# Over the consumer's own defaults while the source connector copies a backlog in micro-batches: a
# task's poll returned 500 records at most, so at 100,000 records/s each task polled 200 times a second,
# and each poll pays for its metadata, coordinator and network checks. With 10,000, on 2,000,000 x 512 B
# (Mirrorplane alone, 4 runs each way, in turn) the median steady-state rate went from 112,900 to 123,400
# records/s and the CPU per run from 42.2 to 39.9 s.
# Socket buffers of 4 MB, for the consumer and the producer: Spark's Kafka source sets the consumer's
# receive buffer to 64 KB unless told otherwise (the producer's send buffer is 128 KB), which fixes the
# socket's size and turns a backlog's multi-MB fetches and produce requests into many small reads and
# writes, for the brokers as well. On 6,000,000 x 512 B (one invocation each, 2 repetitions, MM2 given the
# same settings) Mirrorplane's median steady state went from 0.63x to 0.86x the raw copy's, its CPU from
# 82.7 to 65.8 s and the brokers' during its runs from 37.2 to 30.5 s (docs/benchmarks.md).
MICRO_BATCH_CONSUMER_DEFAULTS: dict[str, str] = {
    "max.poll.records": "10000",
    "receive.buffer.bytes": SOCKET_BUFFER_BYTES,
}


# Real-time mode's consumers keep the consumer's 500 records a poll, and read at most 128 KB a partition
# per fetch (the consumer's default is 1 MB) through the same 4 MB receive buffer. At the log's end a
# fetch brings a few KB whatever the limit. A slot that is behind, though, was sent responses of 1-3 MB,
# and on two busy cores each of those took 100-240 ms to arrive, whatever the socket buffers on either
# side: at 37,000 records/s such a slot copied 15,600-17,900 records/s of the 18,500 its partitions
# received and caught up, if at all, by chance. With 128 KB fetches both slots, started 25,000 and 53,000
# records behind, fetched 50-320 KB in 5-39 ms, copied 19,000 records/s and caught up within a minute;
# forced real-time runs at 37,000 records/s, one each (docs/benchmarks.md).
REAL_TIME_CONSUMER_DEFAULTS: dict[str, str] = {
    "receive.buffer.bytes": SOCKET_BUFFER_BYTES,
    "max.partition.fetch.bytes": "131072",
}


def consumer_defaults(micro_batch: bool) -> dict[str, str]:
    """The source connector's record consumer settings before `consumer.*`: in micro-batches or not."""
    return dict(MICRO_BATCH_CONSUMER_DEFAULTS if micro_batch else REAL_TIME_CONSUMER_DEFAULTS)
