"""The heartbeat connector: MM2-format heartbeats to `heartbeats` on the target, every interval."""

from __future__ import annotations

import time

from confluent_kafka import Producer

from spark_runtime.admin import KafkaAdmin
from spark_runtime.config import MirrorConfig
from spark_runtime.connectors.base import Connector
from spark_runtime.formats import Heartbeat


class HeartbeatConnector(Connector):
    kind = "heartbeat"

    def __init__(self, config: MirrorConfig, target_admin: KafkaAdmin) -> None:
        super().__init__()
        self.config = config
        self.settings = config.connectors["heartbeat"]
        self.target_admin = target_admin
        self.topic = config.policy.heartbeats_topic()
        self.producer: Producer | None = None
        self.next_emit = 0.0
        self.emitted = 0
        self._delivery_error: str | None = None

    @property
    def off_reason(self) -> str | None:
        if self.config.legacy:
            return "heartbeats are off with the legacy replication policy (MM1 emulation)"
        if not self.settings.get_bool("emit.heartbeats.enabled", True):
            return "emit.heartbeats.enabled=false"
        return None

    def _start(self) -> None:
        if self.off_reason:
            return
        replication_factor = self.settings.get_int("heartbeats.topic.replication.factor", -1)
        self.target_admin.create_topics({self.topic: 1}, replication_factor)
        self.producer = Producer(self.config.target.librdkafka_config() | {"linger.ms": "0"})
        self.next_emit = 0.0

    def _halt(self) -> None:
        producer, self.producer = self.producer, None
        if producer is not None:
            producer.flush(5)

    def _tick(self) -> None:
        if self.producer is None:
            return
        self.producer.poll(0)
        if self._delivery_error:
            error, self._delivery_error = self._delivery_error, None
            raise RuntimeError(f"writing heartbeats to {self.config.target.alias!r} failed: {error}")
        now = time.time()
        if now >= self.next_emit:
            beat = Heartbeat(self.config.source.alias, self.config.target.alias, int(now * 1000))
            self.producer.produce(self.topic, key=beat.key(), value=beat.value(), on_delivery=self._delivered)
            self.emitted += 1
            self.next_emit = now + self.settings.get_float("emit.heartbeats.interval.seconds", 1.0)

    def _delivered(self, error, _message) -> None:
        if error is not None:
            self._delivery_error = str(error)

    def status(self) -> dict:
        return super().status() | {"emitted": self.emitted, "detail": self.off_reason}
