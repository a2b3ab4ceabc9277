"""Follow one partition of an internal topic (offset syncs, checkpoints, heartbeats) from its start."""

from __future__ import annotations

import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, TopicPartition

from mirrorcore.connection import ClusterConnection

_BATCH = 10_000
# A reader catching up learns it reached the end from an empty fetch, which the broker holds for
# fetch.wait.max.ms: 50 ms keeps read_to_end short. A reader that only follows a topic takes
# librdkafka's default, 500 ms: the broker answers a waiting fetch as soon as a record arrives, so
# nothing arrives later, and an idle follower sends 2 fetches a second instead of 20 (a mirror's
# driver follows two topics for as long as it runs: its heartbeats and its offset syncs).
FOLLOWER = {"fetch.wait.max.ms": "500"}


class PartitionReader:
    """An assigned (group-less) consumer of `topic` partition 0; `poll` returns what is new.

    A topic that does not exist yet reads as empty; once created, it is read from `start`
    (its beginning unless told otherwise).
    """

    def __init__(self, connection: ClusterConnection, topic: str, purpose: str,
                 overrides: dict[str, str] | None = None, start: int = OFFSET_BEGINNING) -> None:
        self.topic = topic
        self.caught_up = False
        config = connection.librdkafka_config() | {
            "group.id": f"mirrorplane-{purpose}-{uuid.uuid4().hex[:8]}",  # required, never joined or committed
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "fetch.wait.max.ms": "50",
            "topic.metadata.refresh.interval.ms": "5000",
        } | (overrides or {})
        self.consumer = Consumer(config)
        self.consumer.assign([TopicPartition(topic, 0, start)])

    def poll(self, timeout: float = 0.0) -> list[Message]:
        """Records available now (waiting up to `timeout` for the first ones)."""
        records: list[Message] = []
        # The first record is taken as soon as it arrives (consume would wait the whole timeout for
        # a full batch), then whatever else is already fetched.
        first = self.consumer.poll(timeout)
        pending = [first] if first is not None else []
        while True:
            batch = pending or self.consumer.consume(_BATCH, timeout=0)
            pending = []
            if not batch:
                return records
            for message in batch:
                error = message.error()
                if error is None:
                    records.append(message)
                elif error.code() in (KafkaError._PARTITION_EOF, KafkaError.UNKNOWN_TOPIC_OR_PART,
                                      KafkaError._UNKNOWN_TOPIC, KafkaError._UNKNOWN_PARTITION):
                    self.caught_up = True
                else:
                    raise RuntimeError(f"reading {self.topic!r} failed: {error.str()}")

    def read_to_end(self, timeout: float = 30.0) -> list[Message]:
        """Everything up to the current end of the partition (or what arrived before the timeout)."""
        records: list[Message] = []
        deadline = time.monotonic() + timeout
        self.caught_up = False
        while not self.caught_up and time.monotonic() < deadline:
            records.extend(self.poll(timeout=0.2))
        return records

    def close(self) -> None:
        self.consumer.close()
