"""The heartbeat connector: MM2-format heartbeats every `emit.heartbeats.interval.seconds`.

Each heartbeat of flow A->B is written twice: to `heartbeats` on B, as MM2's heartbeat connector
does (B's heartbeats topic names the flows into B), and to `heartbeats` on A, from where the
source connector carries it to `A.heartbeats` on B (and onward in chains), as MM2's heartbeat
connector of the reverse pair does. The second copy is what the heartbeat monitor times on B.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import KafkaError, Message, Producer

from mirrorcore import one_cluster
from mirrorcore.admin import ClusterError, KafkaAdmin
from mirrorcore.config import MirrorConfig
from mirrorcore.formats import Heartbeat
from mirrorcore.policy import heartbeats_off
from mirrorcore.waiting import wait_until
from spark_runtime.connectors.base import Connector
from spark_runtime.heartbeat_monitor import HeartbeatMonitor


class HeartbeatConnector(Connector):
    kind = "heartbeat"

    def __init__(self, config: MirrorConfig, source_admin: KafkaAdmin, target_admin: KafkaAdmin,
                 record_point: Callable[[dict, float], None] = lambda point, at: None) -> None:
        super().__init__()
        self.config = config
        self.settings = config.connectors["heartbeat"]
        self.source_admin = source_admin
        self.target_admin = target_admin
        self.topic = config.policy.heartbeats_topic()
        self.producers: dict[str, Producer] = {}  # "source" / "target" -> producer
        remote = config.policy.format_remote_topic(config.source.alias, self.topic)
        self.monitor = HeartbeatMonitor(config.target, remote, config.source.alias, config.target.alias, record_point)
        self.source_note: str | None = None
        self.next_emit = 0.0
        self.emitted = 0
        self._delivery_error: str | None = None
        self._drop_source_side = False

    @property
    def off_reason(self) -> str | None:
        return heartbeats_off(self.config.replication_policy, self.settings.config)

    def _start(self) -> None:
        if self.off_reason:
            return
        one_cluster.ensure_two_clusters(self.source_admin, self.target_admin)
        replication_factor = self.settings.get_int("heartbeats.topic.replication.factor")
        overrides = {"linger.ms": "0"} | self.settings.prefixed("producer.override.")
        self.target_admin.create_topics({self.topic: 1}, replication_factor)
        self.producers["target"] = Producer(self.config.target.librdkafka_config() | overrides)
        try:
            self.source_admin.create_topics({self.topic: 1}, replication_factor)
            self._await_metadata()
        except ClusterError as error:  # e.g. a read-only user on the source: MM2's heartbeats still flow
            self.source_note = (f"cannot write heartbeats on {self.config.source.alias!r} ({error}): "
                                "the link's latency is not measured")
        else:
            self.source_note = None
            self.producers["source"] = Producer(self.config.source.librdkafka_config() | overrides)
            self.monitor.start()
        self.next_emit = 0.0

    def _await_metadata(self, timeout: float = 10.0) -> None:
        """Until the new topic shows in the source's metadata: the source connector lists topics next."""
        wait_until(lambda: self.source_admin.partition_counts([self.topic]), timeout)

    def _halt(self) -> None:
        self.monitor.stop()
        producers, self.producers = self.producers, {}
        for producer in producers.values():
            producer.flush(5)

    _guarded_cleanup = _halt

    def _tick(self) -> None:
        if not self.producers:
            return
        for producer in self.producers.values():
            producer.poll(0)
        if self._drop_source_side:
            self._drop_source_side = False
            self.monitor.stop()
            self.producers.pop("source", None)
        if self._delivery_error:
            error, self._delivery_error = self._delivery_error, None
            raise RuntimeError(f"writing heartbeats failed: {error}")
        now = time.time()
        if now >= self.next_emit:
            beat = Heartbeat(self.config.source.alias, self.config.target.alias, int(now * 1000))
            for side, producer in self.producers.items():
                producer.produce(self.topic, key=beat.key(), value=beat.value(), on_delivery=self._on_delivery(side))
            self.emitted += 1
            self.next_emit = now + self.settings.get_float("emit.heartbeats.interval.seconds")

    def _on_delivery(self, side: str) -> Callable[[KafkaError | None, Message], None]:
        return lambda error, _message: self._delivered(side, error)

    def _delivered(self, side: str, error: KafkaError | None) -> None:
        if error is None:
            return
        alias = self.config.source.alias if side == "source" else self.config.target.alias
        if side == "source" and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            # The topic exists but we may not write it: MM2's heartbeats on the target still flow.
            self.source_note = (f"may not write heartbeats on {alias!r} ({error.str()}): "
                                "the link's latency is not measured")
            self._drop_source_side = True
            return
        self._delivery_error = f"to {self.topic!r} on {alias!r}: {error}"

    def status(self) -> dict:
        return super().status() | {"emitted": self.emitted, "detail": self.off_reason or self.source_note,
                                   "link": self.monitor.status()}
