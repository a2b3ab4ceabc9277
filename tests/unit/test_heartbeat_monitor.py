"""Heartbeat latency: arrival minus emission, for this flow's heartbeats only."""

from __future__ import annotations

from spark_runtime.connection import ClusterConnection
from spark_runtime.formats import Heartbeat
from spark_runtime.heartbeat_monitor import HeartbeatMonitor


def monitor(points: list) -> HeartbeatMonitor:
    target = ClusterConnection.from_dict({"alias": "west", "bootstrap_servers": "localhost:1"})
    return HeartbeatMonitor(target, "east.heartbeats", "east", "west", lambda point, at: points.append((point, at)))


def test_latency_of_this_flows_heartbeats():
    points: list = []
    subject = monitor(points)
    beat = Heartbeat("east", "west", 1_000_000)
    subject._observe(beat.key(), beat.value(), arrived_at=1_000.25)
    assert points == [({"flow": "east->west", "latency_ms": 250, "emitted_at": 1_000_000}, 1_000.25)]
    assert subject.status()["latency_ms"] == 250 and subject.status()["received"] == 1


def test_other_flows_and_foreign_records_are_ignored():
    points: list = []
    subject = monitor(points)
    upstream = Heartbeat("north", "east", 1_000_000)
    subject._observe(upstream.key(), upstream.value(), arrived_at=1_001)
    subject._observe(b"\x00", b"junk", arrived_at=1_001)
    assert points == [] and subject.status()["received"] == 0
