"""Heartbeat latency: arrival minus emission, for this flow's heartbeats only."""

from __future__ import annotations

from mirrorcore.connection import ClusterConnection
from mirrorcore.formats import Heartbeat
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


def test_heartbeats_emitted_before_the_monitor_started_are_history():
    """A new mirror copies the source's heartbeats topic from its start: old beats are not latency."""
    points: list = []
    subject = monitor(points)
    subject.since_ms = 2_000_000  # as start() sets it
    old, new = Heartbeat("east", "west", 1_999_999), Heartbeat("east", "west", 2_000_100)
    subject._observe(old.key(), old.value(), arrived_at=2_000.5)
    subject._observe(new.key(), new.value(), arrived_at=2_000.5)
    assert [point["emitted_at"] for point, _ in points] == [2_000_100]
    assert subject.status()["received"] == 1 and subject.status()["latency_ms"] == 400
