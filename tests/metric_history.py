"""Points and rows of the metric history shared by the rollup tests."""

from __future__ import annotations

from mirrorcore import series
from mirrors.models import Cluster, MetricMinute, Mirror
from mirrors.services.mirrors import create_mirror

T0 = 1_700_000_040  # a minute's start (divisible by 60)
H0 = 1_699_999_200  # an hour's start (divisible by 3600)
HOUR = 3600
TASKS_2 = {"tasks": {"RUNNING": 2}}



def lag(records: int, seconds: float, partitions: list[tuple[str, int, int, float | None]]) -> dict:
    return {"records": records, "seconds": seconds, "idle": not partitions,
            "partitions": [{"topic": t, "partition": p, "remote_topic": f"east.{t}", "records": r, "seconds": s}
                           for t, p, r, s in partitions]}


def record_minutes(fake, start: int, minutes: int, name: str = "m1") -> None:
    """A lag point every 20 s and a tasks point every 30 s."""
    for at in range(start, start + minutes * 60, 20):
        series.append(fake, name, "lag", lag(at - start, 1, []), at=at, retention_seconds=10**9)
    for at in range(start, start + minutes * 60, 30):
        series.append(fake, name, "tasks", {"RUNNING": 2}, at=at, retention_seconds=10**9)


def stored(name: str = "m1") -> dict[int, dict]:
    return {int(row.minute.timestamp()): row.data for row in MetricMinute.objects.filter(mirror_name=name)}


def two_cluster_mirror(name: str = "m1") -> Mirror:
    """A mirror east -> west, stored only (nothing runs)."""
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name=name, source=east, target=west)
