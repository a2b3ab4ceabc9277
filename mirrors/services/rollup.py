"""A mirror's time series beyond Redis's 6 hours: a ladder of minutes, then hours, in the database.

`run` (Celery beat, every 60 s) rolls up each mirror's complete minutes from the newest one already
stored (at most the Redis retention back) into MetricMinute rows; merges the minutes of every complete
hour older than the minute retention (METRICS_MINUTE_RETENTION_HOURS, default 48) into one MetricHour
row and deletes them (`compact`); then deletes the rows older than the retention (METRICS_RETENTION_DAYS,
default 30) and those of deleted mirrors. Every step upserts or deletes what it read, so running it
twice, or twice at once, leaves the same rows.

`minute_data` is the aggregation, also applied by the graphs to single raw points and to the minutes
not rolled up yet; `merge` combines such aggregates into a coarser bucket of the same shape (an hour
row, or the graphs' hours not compacted yet), so every graph reads one shape. Per series, a bucket holds:

- `heartbeat`: `{flow: {"mean", "max", "n"}}`, latency in ms
- `lag`: `{"records": max total, "seconds": max, "n", "topics": {topic: {"records", "seconds",
  "partitions": {partition: {"records", "seconds"}}}}}`, maxima over the bucket; only topics and
  partitions with records waiting (the `MAX_PARTITIONS` worst per topic), others were at 0
- `throughput`: `{"records_per_s", "bytes_per_s", "n", "records", "bytes", "topics": {topic: records/s}}`:
  mean rates (a topic absent from a sample was at 0, an unknown rate is left out), the last cumulative counts
- `checkpoint`: `{"groups": {group: {"reprocess": max, "checkpoints": emitted}}}`
- `tasks`: `{state: max tasks in that state}`

`n` counts the samples behind a bucket; merged means are weighted by it.
"""

from __future__ import annotations

import logging
import math
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from django.db import transaction
from django.db.models import Max
from django.db.models.functions import TruncHour

from mirrorcore import series
from mirrors.models import MetricHour, MetricMinute, Mirror

log = logging.getLogger(__name__)

SLACK_SECONDS = 5.0  # a minute is complete this long after its end (points are appended as they happen)
WINDOW_MINUTES = 60  # Redis is read this many minutes at a time
MAX_PARTITIONS = 64  # lagging partitions kept per topic and bucket, the worst first
COMPACT_HOURS_PER_RUN = 500  # hours merged per run at most (a backlog takes a few runs, the worker stays free)


# -- aggregation (pure) -----------------------------------------------------------------

def minute_data(points: dict[str, list[dict]]) -> dict:
    """The aggregates of every series that has points."""
    return {name: summarize(name, pts) for name, pts in points.items() if pts and name in _SUMMARIES}


def summarize(name: str, points: list[dict]) -> dict:
    return _SUMMARIES[name](points)


def _max(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)


def _heartbeat(points: list[dict]) -> dict:
    flows: dict[str, list[float]] = defaultdict(list)
    for point in points:
        if point.get("latency_ms") is not None:
            flows[point.get("flow") or "?"].append(point["latency_ms"])
    return {flow: {"mean": round(sum(v) / len(v), 1), "max": max(v), "n": len(v)} for flow, v in sorted(flows.items())}


def _lag(points: list[dict]) -> dict:
    topics: dict[str, dict] = {}
    for point in points:
        per_topic: dict[str, list] = {}
        for part in point.get("partitions") or []:
            records, seconds = part.get("records") or 0, part.get("seconds")
            entry = topics.setdefault(part["topic"], {"records": 0, "seconds": None, "partitions": {}})
            kept = entry["partitions"].setdefault(str(part["partition"]), {"records": 0, "seconds": None})
            kept["records"], kept["seconds"] = max(kept["records"], records), _max(kept["seconds"], seconds)
            total = per_topic.setdefault(part["topic"], [0, None])
            total[0], total[1] = total[0] + records, _max(total[1], seconds)
        for topic, (records, seconds) in per_topic.items():
            entry = topics[topic]
            entry["records"], entry["seconds"] = max(entry["records"], records), _max(entry["seconds"], seconds)
    _cap_partitions(topics)
    return {"records": max((p.get("records") or 0 for p in points), default=0),
            "seconds": max((p.get("seconds") or 0 for p in points), default=0),
            "n": len(points), "topics": dict(sorted(topics.items()))}


def _cap_partitions(topics: dict[str, dict]) -> None:
    """Keeps the `MAX_PARTITIONS` partitions with the most records of each topic."""
    for entry in topics.values():
        if len(entry["partitions"]) > MAX_PARTITIONS:
            worst = sorted(entry["partitions"].items(), key=lambda kv: -kv[1]["records"])[:MAX_PARTITIONS]
            entry["partitions"] = dict(worst)


def _mean(values: list[float], n: int, digits: int) -> float:
    return round(sum(values) / n, digits) if n else 0.0


def _throughput(points: list[dict]) -> dict:
    n = len(points)
    topics: dict[str, list[float]] = defaultdict(list)
    unknown: dict[str, int] = defaultdict(int)  # samples where the topic's rate was not known (None)
    for point in points:
        for topic, rate in (point.get("topics") or {}).items():
            if rate is None:
                unknown[topic] += 1
            else:
                topics[topic].append(rate)
    result = {"records_per_s": _mean([p.get("records_per_s") or 0 for p in points], n, 3),
              "bytes_per_s": _mean([p.get("bytes_per_s") or 0 for p in points], n, 1), "n": n,
              "records": points[-1].get("records"), "bytes": points[-1].get("bytes")}
    if topics or unknown:
        result["topics"] = {topic: _mean(topics[topic], n - unknown[topic], 3) if topics[topic] else None
                            for topic in sorted(set(topics) | set(unknown))}
    return result


def _checkpoint(points: list[dict]) -> dict:
    groups: dict[str, dict] = {}
    for point in points:
        for group in point.get("groups") or []:
            entry = groups.setdefault(group["group"], {"reprocess": None, "checkpoints": 0})
            entry["reprocess"] = _max(entry["reprocess"], group.get("reprocess"))
            entry["checkpoints"] += group.get("checkpoints") or 0
    return {"groups": dict(sorted(groups.items()))}


def _tasks(points: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for point in points:
        for state, count in point.items():
            if state != "at" and isinstance(count, int | float):
                counts[state] = max(counts.get(state, 0), int(count))
    return dict(sorted(counts.items()))


_SUMMARIES = {"heartbeat": _heartbeat, "lag": _lag, "throughput": _throughput, "checkpoint": _checkpoint,
              "tasks": _tasks}


# -- merging buckets (pure) -------------------------------------------------------------

def merge(buckets: list[dict]) -> dict:
    """One coarser bucket of the same shape from `minute_data` (or merged) buckets, oldest first.

    Means are weighted by their sample counts, maxima stay maxima, emitted checkpoints add up and
    the cumulative counts are the newest known. Merging merged buckets gives the merge of all
    (but for the rounding of the means).
    """
    return {name: combine([bucket[name] for bucket in buckets if name in bucket])
            for name, combine in _MERGES.items() if any(name in bucket for bucket in buckets)}


def _n(entry: dict) -> int:
    return entry.get("n") or 1


def _weighted(pairs: list[tuple[float | None, int]], digits: int) -> float | None:
    """The mean of the known values weighted by their counts; None if none is known."""
    known = [(value, weight) for value, weight in pairs if value is not None]
    total = sum(weight for _, weight in known)
    return round(sum(value * weight for value, weight in known) / total, digits) if total else None


def _newest(values: list[Any]) -> Any:
    return next((value for value in reversed(values) if value is not None), None)


def _highest(values: list[float | None]) -> float | None:
    result = None
    for value in values:
        result = _max(result, value)
    return result


def _merge_heartbeat(buckets: list[dict]) -> dict:
    flows: dict[str, list[dict]] = defaultdict(list)
    for bucket in buckets:
        for flow, entry in bucket.items():
            flows[flow].append(entry)
    return {flow: {"mean": _weighted([(e.get("mean"), _n(e)) for e in entries], 1),
                   "max": _highest([e.get("max") for e in entries]), "n": sum(_n(e) for e in entries)}
            for flow, entries in sorted(flows.items())}


def _merge_lag(buckets: list[dict]) -> dict:
    topics: dict[str, dict] = {}
    for bucket in buckets:
        for topic, entry in (bucket.get("topics") or {}).items():
            kept = topics.setdefault(topic, {"records": 0, "seconds": None, "partitions": {}})
            kept["records"] = max(kept["records"], entry.get("records") or 0)
            kept["seconds"] = _max(kept["seconds"], entry.get("seconds"))
            for partition, worst in (entry.get("partitions") or {}).items():
                part = kept["partitions"].setdefault(partition, {"records": 0, "seconds": None})
                part["records"] = max(part["records"], worst.get("records") or 0)
                part["seconds"] = _max(part["seconds"], worst.get("seconds"))
    _cap_partitions(topics)
    return {"records": max(bucket.get("records") or 0 for bucket in buckets),
            "seconds": max(bucket.get("seconds") or 0 for bucket in buckets),
            "n": sum(_n(bucket) for bucket in buckets), "topics": dict(sorted(topics.items()))}


def _merge_throughput(buckets: list[dict]) -> dict:
    result = {"records_per_s": _weighted([(b.get("records_per_s"), _n(b)) for b in buckets], 3) or 0.0,
              "bytes_per_s": _weighted([(b.get("bytes_per_s"), _n(b)) for b in buckets], 1) or 0.0,
              "n": sum(_n(b) for b in buckets),
              "records": _newest([b.get("records") for b in buckets]),
              "bytes": _newest([b.get("bytes") for b in buckets])}
    topics = sorted({topic for bucket in buckets for topic in bucket.get("topics") or {}})
    if topics:  # absent from a bucket: at 0 all along; None: not known then, left out; never known: None
        known = {topic for b in buckets for topic, rate in (b.get("topics") or {}).items() if rate is not None}
        result["topics"] = {topic: _weighted([((b.get("topics") or {}).get(topic, 0), _n(b)) for b in buckets], 3)
                            if topic in known else None for topic in topics}
    return result


def _merge_checkpoint(buckets: list[dict]) -> dict:
    groups: dict[str, dict] = {}
    for bucket in buckets:
        for group, entry in (bucket.get("groups") or {}).items():
            kept = groups.setdefault(group, {"reprocess": None, "checkpoints": 0})
            kept["reprocess"] = _max(kept["reprocess"], entry.get("reprocess"))
            kept["checkpoints"] += entry.get("checkpoints") or 0
    return {"groups": dict(sorted(groups.items()))}


def _merge_tasks(buckets: list[dict]) -> dict:
    counts: dict[str, int] = {}
    for bucket in buckets:
        for state, count in bucket.items():
            if isinstance(count, int | float):
                counts[state] = max(counts.get(state, 0), int(count))
    return dict(sorted(counts.items()))


_MERGES = {"heartbeat": _merge_heartbeat, "lag": _merge_lag, "throughput": _merge_throughput,
           "checkpoint": _merge_checkpoint, "tasks": _merge_tasks}


# -- reading Redis by minute ------------------------------------------------------------

def minute_of(at: float) -> int:
    return int(at // 60 * 60)


def hour_of(at: float) -> int:
    return int(at // 3600 * 3600)


def read_minutes(client: Any, mirror: str, start: int, end: float) -> dict[int, dict]:
    """`{minute start: minute_data}` of the points in [start, end), read `WINDOW_MINUTES` at a time."""
    minutes: dict[int, dict] = {}
    window: float = start
    while window < end:
        window_end = min(end, window + WINDOW_MINUTES * 60)
        grouped: dict[int, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        for name in series.SERIES:
            for point in series.read(client, mirror, name, since=window, until=window_end - 0.001):
                grouped[minute_of(point["at"])][name].append(point)
        minutes |= {minute: minute_data(points) for minute, points in sorted(grouped.items())}
        window = window_end
    return minutes


def as_datetime(at: float) -> datetime:
    return datetime.fromtimestamp(at, tz=UTC)


# -- the periodic task ------------------------------------------------------------------

def rollup_mirror(client: Any, mirror: str, now: float | None = None) -> int:
    """Store the complete minutes not rolled up yet; returns how many rows were written."""
    return store_minutes(client, mirror, *pending(mirror, now))


def pending(mirror: str, now: float | None = None) -> tuple[int, int]:
    """[start, end) of the minutes to roll up: after the newest stored one, within what Redis keeps, complete."""
    now = time.time() if now is None else now
    end = minute_of(now - SLACK_SECONDS)  # the minute starting here is not complete yet
    oldest = minute_of(now - series.DEFAULT_RETENTION_SECONDS) + 60  # the one before may be partly trimmed
    newest = MetricMinute.objects.filter(mirror_name=mirror).aggregate(newest=Max("minute"))["newest"]
    return max(oldest, int(newest.timestamp()) + 60 if newest else oldest), end


def store_minutes(client: Any, mirror: str, start: int, end: int) -> int:
    """Upsert the minutes in [start, end) that have points: a second run, or one at the same time, rewrites
    the same rows."""
    if start >= end:
        return 0
    rows = [MetricMinute(mirror_name=mirror, minute=as_datetime(minute), data=data)
            for minute, data in read_minutes(client, mirror, start, end).items() if data]
    MetricMinute.objects.bulk_create(rows, update_conflicts=True, unique_fields=["mirror_name", "minute"],
                                     update_fields=["data"])
    return len(rows)


def compact(minute_retention_hours: float, now: float | None = None,
            limit: int = COMPACT_HOURS_PER_RUN) -> tuple[int, int]:
    """Every complete hour older than `minute_retention_hours` into one MetricHour row per mirror, its minutes
    deleted; oldest first, at most `limit` hours (the next run does the rest). Returns (hours, minutes)."""
    now = time.time() if now is None else now
    # the hours before the one holding `now - retention` are complete and past it
    cutoff = as_datetime(hour_of(now - minute_retention_hours * 3600))
    hours = (MetricMinute.objects.filter(minute__lt=cutoff).annotate(hour=TruncHour("minute", tzinfo=UTC))
             .values_list("hour", "mirror_name").distinct().order_by("hour", "mirror_name")[:limit])
    written = merged = 0
    for hour, mirror in list(hours):
        minutes = compact_hour(mirror, hour)
        written, merged = written + bool(minutes), merged + minutes
    return written, merged


@transaction.atomic
def compact_hour(mirror: str, hour: datetime) -> int:
    """Upserts the hour's row from its minutes, then deletes those; returns how many were merged.

    The minutes are locked (PostgreSQL; SQLite's transactions take the lock up front), so a run at the same
    time waits, then finds them gone and writes nothing.
    """
    rows = list(MetricMinute.objects.select_for_update()
                .filter(mirror_name=mirror, minute__gte=hour, minute__lt=hour + timedelta(hours=1))
                .order_by("minute").values_list("pk", "data"))
    if not rows:
        return 0
    MetricHour.objects.bulk_create([MetricHour(mirror_name=mirror, hour=hour, data=merge([d for _, d in rows]))],
                                   update_conflicts=True, unique_fields=["mirror_name", "hour"], update_fields=["data"])
    MetricMinute.objects.filter(pk__in=[pk for pk, _ in rows]).delete()
    return len(rows)


def delete_expired(retention_days: float, now: float | None = None) -> int:
    """Rows past the retention (hours, and minutes a capped compaction left behind), and rows of mirrors
    deleted while a rollup was writing them."""
    now = time.time() if now is None else now
    deleted = 0
    if retention_days > 0 and math.isfinite(retention_days):
        cutoff = as_datetime(now) - timedelta(days=retention_days)
        deleted += MetricHour.objects.filter(hour__lt=cutoff).delete()[0]
        deleted += MetricMinute.objects.filter(minute__lt=cutoff).delete()[0]
    mirrors = Mirror.objects.values("name")
    deleted += MetricHour.objects.exclude(mirror_name__in=mirrors).delete()[0]
    return deleted + MetricMinute.objects.exclude(mirror_name__in=mirrors).delete()[0]


def run(client: Any, retention_days: float, minute_retention_hours: float = 48, now: float | None = None) -> dict:
    """Roll up every mirror, compact old minutes into hours, then apply the retention; Redis being away skips
    the rollup, not the rest."""
    written, error = 0, None
    for name in Mirror.objects.order_by("name").values_list("name", flat=True):
        try:
            written += rollup_mirror(client, name, now)
        except redis.RedisError as failure:  # the next run resumes where this one stopped
            log.warning("metrics not rolled up from %s on: %s", name, failure)
            error = str(failure)
            break
    hours, compacted = compact(minute_retention_hours, now)
    return {"minutes": written, "hours": hours, "compacted": compacted,
            "deleted": delete_expired(retention_days, now), "error": error}
