"""Time series a mirror application records for the dashboard, kept in Redis streams.

One stream per mirror and series; an entry's id is its time in milliseconds, its field `v` a
JSON object. Entries older than the retention are trimmed on every append (XADD MINID), so a
stream holds a bounded window whatever the rate. Both sides import these names from here.

Series and their points:
- `heartbeat`: a heartbeat of this flow arrived on the target:
  `{"flow": "A->B", "latency_ms": arrival - emission, "emitted_at": ms}`
- `lag`: replication lag, sampled every couple of seconds:
  `{"records": total, "seconds": max, "idle": bool, "partitions": [{"topic", "partition",
  "remote_topic", "records", "seconds"}], "source_ends": {topic: sum of its end offsets}}`; only
  partitions with records to replicate are listed (others are 0); `seconds` is the age of the
  oldest unreplicated record, or the heartbeat latency when idle; `source_ends` covers every
  mirrored topic, unchanged sums meaning its producers wrote nothing (migration readiness).
- `checkpoint`: after each checkpoint pass: `{"groups": [{"group", "partitions", "checkpoints",
  "reprocess"}]}`, `reprocess` being the most records the group would read again on failover.
- `throughput`: every couple of seconds (spark_runtime/samples.py): `{"records_per_s", "bytes_per_s",
  "records", "bytes", "topics": {topic: records/s}}`, rates since the previous sample, `records` and
  `bytes` replicated since the application started; `topics` counts offsets advanced (null while a
  partition of the topic has no earlier position).
- `tasks`: every couple of seconds: `{state: tasks in that state}` over every connector, `RUNNING`
  always present; a connector without tasks counts once only when FAILED (see samples.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

SERIES = ("heartbeat", "lag", "checkpoint", "throughput", "tasks")
DEFAULT_RETENTION_SECONDS = 6 * 3600

SAMPLE_SECONDS = 2.0  # how often the application samples lag, throughput and tasks


def series_key(mirror: str, series: str) -> str:
    return f"mirrorplane:mirror:{mirror}:series:{series}"


def append(client: Any, mirror: str, series: str, point: dict[str, Any], at: float | None = None,
           retention_seconds: float = DEFAULT_RETENTION_SECONDS) -> None:
    """Record `point` at `at` (seconds since the epoch, default now)."""
    at_ms = int((time.time() if at is None else at) * 1000)
    oldest = max(0, at_ms - int(retention_seconds * 1000))
    client.xadd(series_key(mirror, series), {"v": json.dumps(point, separators=(",", ":"))},
                id=f"{at_ms}-*", minid=oldest, approximate=True)


def read(client: Any, mirror: str, series: str, since: float | None = None, until: float | None = None,
         limit: int | None = None) -> list[dict[str, Any]]:
    """Points between `since` and `until` (seconds since the epoch), oldest first, each with `at`.

    With `limit`, the newest `limit` points of that window.
    """
    start = "-" if since is None else str(int(since * 1000))
    end = "+" if until is None else str(int(until * 1000))
    if limit is None:
        entries = client.xrange(series_key(mirror, series), min=start, max=end)
    else:
        entries = list(reversed(client.xrevrange(series_key(mirror, series), max=end, min=start, count=limit)))
    return [decode(entry_id, fields) for entry_id, fields in entries]


def latest(client: Any, mirror: str, series: str) -> dict[str, Any] | None:
    entries = client.xrevrange(series_key(mirror, series), count=1)
    return decode(*entries[0]) if entries else None


def delete(client: Any, mirror: str) -> None:
    client.delete(*(series_key(mirror, series) for series in SERIES))


def decode(entry_id: bytes | str, fields: Mapping[bytes | str, bytes | str]) -> dict[str, Any]:
    """A stream entry (as XRANGE returns it, also from a pipeline) as a point with its `at`."""
    entry_id = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    raw = fields.get(b"v", fields.get("v"))
    if raw is None:
        raise TypeError(f"stream entry {entry_id} has no field v")
    point: dict[str, Any] = {"at": int(entry_id.split("-")[0]) / 1000} | json.loads(raw)
    return point
