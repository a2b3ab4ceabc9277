"""Heartbeat latency of a flow A->B, measured where the heartbeats arrive.

The heartbeat connector writes A->B heartbeats to `heartbeats` on A; the source connector carries
them to `A.heartbeats` on B like any record. A background thread follows that topic on B and
records, for each heartbeat of this flow, its arrival time minus its emission time. Heartbeats
stop arriving when anything on the way stops (A, B, the source connector, the application), which
is what makes the link unhealthy.

Heartbeats emitted before the monitor started are left out: a new mirror's source connector copies
the source's `heartbeats` topic from its beginning, so what earlier applications of the same flow
emitted arrives again, minutes or hours old. That is history, not this link's latency.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from confluent_kafka import OFFSET_END

from mirrorcore.connection import ClusterConnection
from mirrorcore.formats import Heartbeat
from spark_runtime.topic_reader import FOLLOWER, PartitionReader

log = logging.getLogger(__name__)


class HeartbeatMonitor:
    def __init__(self, target: ClusterConnection, topic: str, source_alias: str, target_alias: str,
                 record_point: Callable[[dict, float], None]) -> None:
        self.target = target
        self.topic = topic
        self.flow = (source_alias, target_alias)
        self.record_point = record_point
        self.received = 0
        self.last_arrival_at: float | None = None
        self.latency_ms: int | None = None
        self.error: str | None = None
        self.since_ms = 0  # heartbeats emitted before this are history (set when started)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self.since_ms = int(time.time() * 1000)
        reader = PartitionReader(self.target, self.topic, "heartbeat-monitor", FOLLOWER, start=OFFSET_END)
        self._thread = threading.Thread(target=self._run, args=(reader,), name="heartbeat-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def _run(self, reader: PartitionReader) -> None:
        try:
            while not self._stop.is_set():
                try:
                    records = reader.poll(timeout=0.2)
                    self.error = None
                except RuntimeError as error:
                    self.error = str(error)
                    log.warning("heartbeat monitor: %s", error)
                    time.sleep(1)
                    continue
                for record in records:
                    self._observe(record.key(), record.value(), time.time())
        finally:
            reader.close()

    def _observe(self, key: bytes | None, value: bytes | None, arrived_at: float) -> None:
        try:
            beat = Heartbeat.decode(key, value)
        except Exception:  # noqa: BLE001 - a foreign record in a heartbeat topic is skipped
            return
        if (beat.source_alias, beat.target_alias) != self.flow:
            return  # carried from further upstream: another flow's heartbeat
        if beat.timestamp_ms < self.since_ms:
            return  # emitted before this monitor started: copied history
        self.received += 1
        self.last_arrival_at = arrived_at
        self.latency_ms = max(0, int(arrived_at * 1000) - beat.timestamp_ms)
        try:
            self.record_point({"flow": "->".join(self.flow), "latency_ms": self.latency_ms,
                               "emitted_at": beat.timestamp_ms}, arrived_at)
        except Exception as error:  # noqa: BLE001 - losing a point must not stop the monitor
            log.warning("cannot record heartbeat latency: %s", error)

    def status(self) -> dict:
        return {"flow": "->".join(self.flow), "topic": self.topic, "received": self.received,
                "last_arrival_at": self.last_arrival_at, "latency_ms": self.latency_ms, "error": self.error}
