"""A mirror whose application reports live status and series points, as `GET /metrics` reads them."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from mirrorcore import channel, series
from mirrors.models import Cluster, Deployment, Mirror
from mirrors.services.mirrors import create_mirror


def make_mirror() -> Mirror:
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m1", source=east, target=west)


def samples(body: bytes | str) -> dict[tuple[str, tuple], float]:
    text = body.decode() if isinstance(body, bytes) else body
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(parsed: dict, name: str, **labels) -> float | None:
    return parsed.get((name, tuple(sorted(labels.items()))))


def _partition(topic: str, partition: int, now: float) -> dict:
    return {"topic": topic, "partition": partition, "remote_topic": f"east.{topic}", "last_upstream_offset": 10,
            "last_downstream_offset": 10, "records": 11, "bytes": 1100,
            "rate": {"records_per_s": 100.0, "bytes_per_s": 10000.0, "at": now - 2}}


def publish_running(fake, mirror: Mirror, now: float) -> None:
    """A running application (its deployment, unless the test made one) reporting a source, a checkpoint
    (one group) and a failed heartbeat connector; a heartbeat and a lag point at `now`."""
    Deployment.objects.get_or_create(mirror_name=mirror.name,
                                     defaults={"state": "running", "pid": 1, "generation": mirror.generation})
    channel.publish_status(fake, mirror.name, {"generation": mirror.generation, "connectors": {
        "source": {"state": "RUNNING", "error": None, "restart": 0,
                   "tasks": [{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "RUNNING"}],
                   "metrics": {"records": 5000, "bytes": 640000, "batches": 7, "offset_syncs": 3,
                               "offset_commit_ms": 14.5, "in_flight_records": 42,
                               "producer_buffer_available_bytes": 33_500_000,
                               "last_batch": {"id": 6, "records": 1000, "bytes": 128000, "seconds": 0.5,
                                              "at": now - 2}},
                   "partitions": [_partition("heartbeats", 0, now)] + [_partition("orders", p, now) for p in range(3)]},
        "checkpoint": {"state": "RUNNING", "error": None, "restart": 0, "tasks": [{"id": 0, "state": "RUNNING"}],
                       "groups": [{"group": "billing", "partitions": [
                           {"topic": "orders", "partition": 0, "remote_topic": "east.orders", "checkpoint_at": now - 4},
                           {"topic": "orders", "partition": 1, "remote_topic": "east.orders", "checkpoint_at": None},
                       ]}]},
        "heartbeat": {"state": "FAILED", "error": "boom", "restart": 0, "tasks": [{"id": 0, "state": "FAILED"}]},
    }})
    series.append(fake, mirror.name, "heartbeat", {"flow": "east->west", "latency_ms": 37, "emitted_at": 1}, at=now)
    series.append(fake, mirror.name, "lag", {"records": 120, "seconds": 3.5, "partitions": [
        {"topic": "orders", "partition": 2, "remote_topic": "east.orders", "records": 120, "seconds": 3.5}]}, at=now)
