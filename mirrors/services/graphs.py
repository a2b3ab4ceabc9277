"""The dashboard's graphs of one mirror: plotly-ready traces over the last 15 minutes, hour, 24 hours, 7 or
30 days.

15m and 1h read the raw points in Redis; 24h reads the MetricMinute rows plus the minutes not rolled
up yet (from Redis); 7d and 30d read the MetricHour rows plus the minutes not compacted yet, merged
per hour (rollup.merge). All become one shape (rollup.summarize: a raw point is a minute of one point),
then each graph picks its traces, downsampled to at most `MAX_POINTS` points (mean for latency and
rates, max for lag, reprocess and task counts), with a null where recording paused so that plotly
breaks the line. A graph without data says why in `empty`, in one sentence. `scale` is `log` when the
points span too much for a linear axis (`y_scale`), else `linear`.

Lag: a `total` trace (records: the sum over partitions; seconds: the oldest waiting record, or the
heartbeat latency when idle) and the `TOP_N` topics with the most lag in the range; lag 0 is data. With a
topic: `<topic> total` and its partitions (the `MAX_PARTITIONS` worst). Checkpoints: one trace per
group (the `TOP_N` most behind), y = `reprocess`. Tasks: one trace per state seen.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from mirrorcore import registry, series
from mirrorcore.channel import FAILED
from mirrorcore.policy import heartbeats_off
from mirrorcore.series import SAMPLE_SECONDS
from mirrors.choices import ApplicationState, ConnectorKind, DesiredState, ReplicationPolicy
from mirrors.models import Connector, Deployment, MetricHour, MetricMinute, Mirror
from mirrors.services import observed, rollup
from mirrors.services.redis_client import get_redis

DAY = 24 * 3600
RANGES = {"15m": 15 * 60, "1h": 3600, "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY}
RANGE_WORDS = {"15m": "the last 15 minutes", "1h": "the last hour", "24h": "the last 24 hours",
               "7d": "the last 7 days", "30d": "the last 30 days"}
RESOLUTIONS = {"15m": "raw", "1h": "raw", "24h": "1m", "7d": "1h", "30d": "1h"}
STEP_SECONDS = {"raw": 1, "1m": 60, "1h": 3600}  # downsampling buckets are multiples of this
MAX_POINTS = 300
TOP_N = 8
MAX_PARTITIONS = rollup.MAX_PARTITIONS
LOG_SCALE_SPREAD = 20  # a graph whose largest point is this many times its median is drawn on a log axis
MIN_GAP_SECONDS = {"raw": 10.0, "1m": 180.0, "1h": 3 * 3600.0}  # a longer silence between points is a break

Point = tuple[float, float | None]
Frames = list[tuple[float, dict]]  # (epoch seconds, one series' minute-shaped data)


@dataclass
class Trace:
    name: str
    points: list[Point]


def mirror_graphs(mirror: Mirror, range_key: str, topic: str | None = None, now: float | None = None) -> dict:
    """The graphs document of `GET /mirrors/{name}/graphs/`; raises redis.RedisError when Redis cannot be read."""
    until = time.time() if now is None else now
    since = until - RANGES[range_key]
    resolution = RESOLUTIONS[range_key]
    client = get_redis()
    frames = _READERS[resolution](client, mirror.name, since, until)
    why = _Why(mirror, range_key, topic, observed.live_status(mirror))
    lag, throughput = frames["lag"], frames["throughput"]
    known = why.check_topic(lag, throughput)
    target = mirror.target.alias
    graphs: dict[str, tuple[str, str, list[Trace], Callable[[list[float]], float]]] = {
        "heartbeat": ("Heartbeat latency: emission to arrival on " + target, "ms",
                      _heartbeat_traces(frames["heartbeat"], f"{mirror.source.alias}->{target}"), _mean),
        "lag_records": ("Replication lag: records not yet replicated" + _on(topic), "records",
                        _lag_traces(lag, "records", topic, why.partitions_of(topic)) if known else [], max),
        "lag_seconds": ("Replication lag: age of the oldest unreplicated record" + _on(topic), "s",
                        _lag_traces(lag, "seconds", topic, why.partitions_of(topic)) if known else [], max),
        "throughput_records": ("Throughput: records per second", "records/s",
                               _throughput_records(throughput, topic), _mean),
        "throughput_bytes": ("Throughput: bytes per second", "bytes/s",
                             [Trace("total", [(at, f.get("bytes_per_s")) for at, f in throughput])], _mean),
        "checkpoint": ("Checkpoint progress: records behind per group", "records",
                       _checkpoint_traces(frames["checkpoint"]), max),
        "tasks": ("Tasks by state", "tasks", _task_traces(frames["tasks"]), max),
    }
    series_of = {"lag_records": "lag", "lag_seconds": "lag", "throughput_records": "throughput",
                 "throughput_bytes": "throughput"}

    def why_empty(key: str) -> Callable[[], str]:
        return lambda: why.empty(key, bool(frames[series_of.get(key, key)]))

    return {
        "mirror": mirror.name, "range": range_key, "since": round(since, 3), "until": round(until, 3),
        "resolution": resolution, "topic": topic,
        "graphs": {key: _render(title, unit, traces, combine, since, until, resolution, why_empty(key))
                   for key, (title, unit, traces, combine) in graphs.items()},
    }


def _on(topic: str | None) -> str:
    return f", topic {topic}" if topic else ""


# -- reading -----------------------------------------------------------------------------

def _raw_frames(client, mirror: str, since: float, until: float) -> dict[str, Frames]:
    return {name: [(p["at"], rollup.summarize(name, [p])) for p in series.read(client, mirror, name, since, until)]
            for name in series.SERIES}


def _minutes(client, mirror: str, first: int, until: float) -> dict[int, dict]:
    """Stored minutes from `first` on, then the ones not rolled up yet (the current one included) from Redis."""
    rows = MetricMinute.objects.filter(mirror_name=mirror, minute__gte=rollup.as_datetime(first),
                                       minute__lte=rollup.as_datetime(until)).values_list("minute", "data")
    minutes = {int(minute.timestamp()): data for minute, data in rows}
    tail = max(first, rollup.minute_of(until - series.DEFAULT_RETENTION_SECONDS) + 60, *(m + 60 for m in minutes))
    return minutes | rollup.read_minutes(client, mirror, tail, until + 0.001)


def _minute_frames(client, mirror: str, since: float, until: float) -> dict[str, Frames]:
    return _by_series(_minutes(client, mirror, math.ceil(since / 60) * 60, until))


def _hour_frames(client, mirror: str, since: float, until: float) -> dict[str, Frames]:
    """Stored hours of the range, then the minutes after the newest one (not compacted yet) merged per hour,
    so the newest hours, the current one included, show too."""
    first = math.ceil(since / 3600) * 3600
    rows = MetricHour.objects.filter(mirror_name=mirror, hour__gte=rollup.as_datetime(first),
                                     hour__lte=rollup.as_datetime(until)).values_list("hour", "data")
    hours = {int(hour.timestamp()): data for hour, data in rows}
    newer = max([first, *(hour + 3600 for hour in hours)])
    per_hour: dict[int, list[dict]] = defaultdict(list)
    for minute, data in sorted(_minutes(client, mirror, newer, until).items()):
        per_hour[rollup.hour_of(minute)].append(data)
    return _by_series(hours | {hour: rollup.merge(minutes) for hour, minutes in per_hour.items()})


def _by_series(buckets: dict[int, dict]) -> dict[str, Frames]:
    ordered = sorted(buckets.items())
    return {name: [(at, data[name]) for at, data in ordered if name in data] for name in series.SERIES}


_READERS = {"raw": _raw_frames, "1m": _minute_frames, "1h": _hour_frames}


# -- traces ------------------------------------------------------------------------------

def _heartbeat_traces(frames: Frames, own_flow: str) -> list[Trace]:
    flows: dict[str, list[Point]] = defaultdict(list)
    for at, frame in frames:
        for flow, latency in frame.items():
            flows[flow].append((at, latency.get("mean")))
    return [Trace(flow, flows[flow]) for flow in sorted(flows, key=lambda f: (f != own_flow, f))]


def _topic_value(frame: dict, topic: str, field: str) -> float | None:
    entry = (frame.get("topics") or {}).get(topic)
    return 0 if entry is None else entry.get(field)


def _partition_value(frame: dict, topic: str, partition: int, field: str) -> float | None:
    entry = ((frame.get("topics") or {}).get(topic) or {}).get("partitions", {}).get(str(partition))
    return 0 if entry is None else entry.get(field)


def _worst(values: dict, limit: int) -> list:
    """The keys with the largest values, largest first (ties by key)."""
    return sorted(values, key=lambda k: (-values[k], k))[:limit]


def _lag_traces(frames: Frames, field: str, topic: str | None, known_partitions: list[int]) -> list[Trace]:
    if topic is None:
        topics = {t for _, frame in frames for t in frame.get("topics") or {}}
        peaks = {t: max((_topic_value(f, t, field) or 0 for _, f in frames), default=0) for t in topics}
        return [Trace("total", [(at, f.get(field)) for at, f in frames])] + [
            Trace(t, [(at, _topic_value(f, t, field)) for at, f in frames]) for t in _worst(peaks, TOP_N)]
    partitions = set(known_partitions) | {
        int(p) for _, f in frames for p in ((f.get("topics") or {}).get(topic) or {}).get("partitions", {})}
    peaks = {p: max((_partition_value(f, topic, p, field) or 0 for _, f in frames), default=0) for p in partitions}
    return [Trace(f"{topic} total", [(at, _topic_value(f, topic, field)) for at, f in frames])] + [
        Trace(f"partition {p}", [(at, _partition_value(f, topic, p, field)) for at, f in frames])
        for p in sorted(_worst(peaks, MAX_PARTITIONS))]


def _throughput_records(frames: Frames, topic: str | None) -> list[Trace]:
    topics = {t for _, frame in frames for t in frame.get("topics") or {}}
    if topic is not None:
        chosen = [topic] if topic in topics else []
    else:
        means = {t: sum((f.get("topics") or {}).get(t) or 0 for _, f in frames) / len(frames) for t in topics}
        chosen = _worst(means, TOP_N)
    return [Trace("total", [(at, f.get("records_per_s")) for at, f in frames])] + [
        Trace(t, [(at, (f.get("topics") or {}).get(t, 0)) for at, f in frames]) for t in chosen]


def _checkpoint_traces(frames: Frames) -> list[Trace]:
    groups: dict[str, list[Point]] = defaultdict(list)
    for at, frame in frames:
        for group, entry in (frame.get("groups") or {}).items():
            groups[group].append((at, entry.get("reprocess")))
    peaks = {g: max((y or 0 for _, y in points), default=0) for g, points in groups.items()}
    return [Trace(group, groups[group]) for group in sorted(_worst(peaks, TOP_N))]


def _task_traces(frames: Frames) -> list[Trace]:
    states = {state for _, frame in frames for state in frame}
    return [Trace(state, [(at, f.get(state, 0)) for at, f in frames])
            for state in sorted(states, key=lambda s: (s != "RUNNING", s))]


# -- shaping -----------------------------------------------------------------------------

def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _render(title: str, unit: str, traces: list[Trace], combine: Callable[[list[float]], float], since: float,
            until: float, resolution: str, why: Callable[[], str]) -> dict:
    shaped = [_shape(trace, combine, since, until, resolution) for trace in traces]
    values = [y for trace in shaped for y in trace["y"] if y is not None]
    if not values:
        return {"title": title, "unit": unit, "traces": [], "empty": why(), "scale": "linear"}
    return {"title": title, "unit": unit, "traces": shaped, "empty": None, "scale": y_scale(values)}


def y_scale(values: list[float]) -> str:
    """`log` when every point is above zero and the largest is `LOG_SCALE_SPREAD` times their median or more,
    else `linear`. A new mirror's first heartbeats take seconds; on a linear axis they flatten the steady
    10 ms line that follows into the bottom row of pixels, on a log axis both read."""
    if not values or min(values) <= 0:
        return "linear"
    return "log" if max(values) >= LOG_SCALE_SPREAD * statistics.median(values) else "linear"


def _shape(trace: Trace, combine: Callable[[list[float]], float], since: float, until: float,
           resolution: str) -> dict:
    """At most MAX_POINTS points (time buckets), a null in every silence longer than the usual spacing: the
    bucket width, a minute or an hour for stored rows (however few), else the median spacing of raw points."""
    points = sorted(trace.points, key=lambda p: p[0])
    width: float | None = None
    if len(points) > MAX_POINTS:
        step = STEP_SECONDS[resolution]
        width = max(step, math.ceil((until - since) / (MAX_POINTS - 1) / step) * step)
        buckets: dict[int, list[Point]] = defaultdict(list)
        for point in points:
            buckets[int(point[0] // width)].append(point)
        points = [(_mean([at for at, _ in bucket]), _combined([y for _, y in bucket], combine))
                  for _, bucket in sorted(buckets.items())]
    if width is None and resolution != "raw":
        width = STEP_SECONDS[resolution]
    if width is None:
        spacings = [b[0] - a[0] for a, b in itertools.pairwise(points)]
        width = statistics.median(spacings) if spacings else 0
    gap = max(3 * width, MIN_GAP_SECONDS[resolution])
    xs: list[float] = []
    ys: list[float | None] = []
    for at, y in points:
        if xs and at - xs[-1] > gap:
            xs.append(round((xs[-1] + at) / 2, 3))
            ys.append(None)
        xs.append(round(at, 3))
        ys.append(None if y is None else round(y, 3))
    return {"name": trace.name, "x": xs, "y": ys}


def _combined(values: list[float | None], combine: Callable[[list[float]], float]) -> float | None:
    known = [v for v in values if v is not None]
    return combine(known) if known else None


# -- why a graph is empty ----------------------------------------------------------------

def _interval(connector: Connector | None, key: str) -> float:
    return registry.get_valid_float(connector.config if connector else {}, key)


class _Why:
    """Reasons for an empty graph, most specific first: switched off, not running, nothing to measure, too early."""

    def __init__(self, mirror: Mirror, range_key: str, topic: str | None, live: dict | None) -> None:
        self.mirror = mirror
        self.words = RANGE_WORDS[range_key]
        self.topic = topic
        self.live = live
        self.connectors = {c.kind: c for c in mirror.connectors.all()}
        self.topic_known = True

    def _live(self, kind: str) -> dict:
        return ((self.live or {}).get("connectors") or {}).get(kind) or {}

    def replicated_topics(self) -> list[str]:
        return list(self._live(ConnectorKind.SOURCE).get("topics") or [])

    def check_topic(self, lag: Frames, throughput: Frames) -> bool:
        """No topic asked, or one that is replicated now or was in the range."""
        self.topic_known = self.topic is None or self.topic in self.replicated_topics() or any(
            self.topic in (f.get("topics") or {}) for _, f in itertools.chain(lag, throughput))
        return self.topic_known

    def partitions_of(self, topic: str | None) -> list[int]:
        partitions = self._live(ConnectorKind.SOURCE).get("partitions") or []
        return sorted({p["partition"] for p in partitions if p.get("topic") == topic})

    def empty(self, key: str, recorded: bool) -> str:
        reason = self._switched_off(key) or (None if recorded else self._not_running()) or self._nothing(key, recorded)
        return reason or self._too_early(key)

    def _switched_off(self, key: str) -> str | None:
        if key == "heartbeat":
            heartbeat = self.connectors.get(ConnectorKind.HEARTBEAT)
            off = heartbeats_off(self.mirror.replication_policy, heartbeat.config if heartbeat else {})
            if off:
                return _sentence(f"no heartbeat latency: {off}")
            return self._connector_down(ConnectorKind.HEARTBEAT, "no heartbeats are emitted")
        if key == "checkpoint":
            checkpoint = self.connectors.get(ConnectorKind.CHECKPOINT)
            if self.mirror.replication_policy == ReplicationPolicy.LEGACY:
                return "Checkpoints are off with the legacy replication policy (MM1 emulation)."
            if not registry.get_bool(checkpoint.config if checkpoint else {}, "emit.checkpoints.enabled"):
                return "Checkpoints are off (emit.checkpoints.enabled=false on the checkpoint connector)."
            return self._connector_down(ConnectorKind.CHECKPOINT, "no checkpoints are emitted")
        if key.startswith("lag"):
            return self._connector_down(ConnectorKind.SOURCE, "no topic is replicated and there is no lag to measure")
        if key.startswith("throughput"):
            return self._connector_down(ConnectorKind.SOURCE, "no records are replicated")
        return None

    def _connector_down(self, kind: str, consequence: str) -> str | None:
        connector = self.connectors.get(kind)
        if connector and connector.desired_state != DesiredState.RUNNING:
            return _sentence(f"the {kind} connector is {connector.desired_state}, so {consequence}")
        live = self._live(kind)
        if live.get("state") == FAILED:
            return _sentence(f"the {kind} connector failed, so {consequence}: {_short(live.get('error'))}")
        return None

    def _not_running(self) -> str | None:
        if self.live is not None:
            return None
        if self.connectors and all(c.desired_state == DesiredState.STOPPED for c in self.connectors.values()):
            return "Every connector of this mirror is stopped, so its application does not run and records nothing."
        deployment = Deployment.objects.filter(mirror_name=self.mirror.name).first()
        state = deployment.state if deployment else ApplicationState.NOT_RUNNING
        error = f" (last error: {_short(deployment.last_error)})" if deployment and deployment.last_error else ""
        if state == ApplicationState.STARTING:
            return "The mirror's application is starting; its first points follow a few seconds after it runs."
        if state == ApplicationState.BACKOFF:
            return f"The mirror's application is not running: it stopped and is submitted again after a backoff{error}."
        if state == ApplicationState.FAILED:
            return ("The mirror's application is not running: it failed too often and waits for an operator's "
                    f"restart{error}.")
        if state == ApplicationState.RUNNING:
            return ("The mirror's application reports no status, so nothing is recorded "
                    "(it may be starting again with a new configuration).")
        return f"The mirror's application is not running, so nothing was recorded in {self.words}."

    def _nothing(self, key: str, recorded: bool) -> str | None:
        """Running, but nothing to measure."""
        source = self.mirror.source.alias
        if key.startswith("lag") and not self.topic_known:
            if self.live is None:
                return f"No lag was recorded for topic {self.topic!r} in {self.words}: the mirror did not replicate it."
            topics = ", ".join(self.replicated_topics()) or "none yet"
            return f"This mirror does not replicate topic {self.topic!r} (it replicates: {topics})."
        if key.startswith("lag") and self.live is not None and not self.replicated_topics():
            return (f"No topic on {source} matches the mirror's topics ({self.mirror.topics!r}) yet, "
                    "so there is no lag to measure.")
        if key == "checkpoint" and self.live is not None:
            matching = (self._live(ConnectorKind.CHECKPOINT).get("metrics") or {}).get("groups")
            if matching == 0:
                return (f"No consumer group on {source} matches the checkpoint connector's groups "
                        f"({self.mirror.groups!r}, excluding {self.mirror.groups_exclude!r}).")
            if recorded and matching:
                return (f"None of the {matching} consumer groups matching the checkpoint connector's groups has "
                        "committed offsets on a replicated topic yet.")
        if key == "checkpoint" and recorded:
            return f"No consumer group had committed offsets on a replicated topic in {self.words}."
        return None

    def _too_early(self, key: str) -> str:
        if key == "heartbeat":
            every = _interval(self.connectors.get(ConnectorKind.HEARTBEAT), "emit.heartbeats.interval.seconds")
            return f"No heartbeat arrived in {self.words} yet: one is emitted every {every:g} s."
        if key == "checkpoint":
            every = _interval(self.connectors.get(ConnectorKind.CHECKPOINT), "emit.checkpoints.interval.seconds")
            return f"No checkpoint pass in {self.words} yet: the checkpoint connector records one every {every:g} s."
        what = "lag" if key.startswith("lag") else "task" if key == "tasks" else "throughput"
        return f"No {what} sample in {self.words} yet: the application takes one every {SAMPLE_SECONDS:g} s."


def _short(text: str | None, limit: int = 200) -> str:
    """The first line of an error, at most `limit` characters."""
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else "unknown error"
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _sentence(text: str) -> str:
    text = text.rstrip(".")
    return text[:1].upper() + text[1:] + "."
