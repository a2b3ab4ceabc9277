"""Series named and labelled as Strimzi's JMX exporter rules name MirrorMaker 2's and Kafka Connect's metrics.

Strimzi's MirrorMaker 2 Grafana dashboard (and alerts written for it) then read Mirrorplane. Pure:
`mirror_samples` turns what the `/metrics` collector has already read for one mirror into samples;
nothing here reads the database or Redis.

Each mirror runs as one application, which plays one Connect cluster of one worker:
`strimzi_io_cluster` and `kubernetes_pod_name` are the mirror's name, `strimzi_io_kind` is
`KafkaMirrorMaker2` and `namespace` is configurable. In Strimzi, Prometheus adds these labels from
the pod; here the exposition carries them. Connector names and client ids keep the double quotes
JMX puts around values holding `>` or `|`, as the exporter leaves them and the dashboard's
matchers (`connector=~"\\".*SourceConnector\\""`) expect.

Where Mirrorplane measures something else than MirrorMaker 2, the closest value is used:

- `record_count`, `byte_count`: records and bytes copied from the partition since the application
  started (MM2: since the task started).
- `record_rate`, `byte_rate`: the rate of the partition's latest batch (or real-time tick), 0 when it
  is older than `RATE_WINDOW_SECONDS` (MM2: a meter over its sample window).
- `record_age_ms`: the age of the partition's oldest record not yet replicated, from the newest lag
  sample, 0 when caught up (MM2: the age of the record at the moment the task read it).
  `_min/_max/_avg`: over the lag samples of the last `WINDOW_SECONDS`.
- `replication_latency_ms`: heartbeat latency (emission on the source to arrival on the target),
  measured on the records of the source's `heartbeats` topic, so only its partitions carry it
  (MM2: per record of every partition, timestamp to the target's acknowledgement).
  `_min/_max/_avg`: over the heartbeats of the last `WINDOW_SECONDS`.
- `checkpoint_latency_ms`: the age of the group partition's newest checkpoint. `_min/_max/_avg`: the
  one observation a scrape has (checkpoint ages are not kept per partition over time).
- `kafka_consumer_fetch_manager_records_lag`: records not yet replicated, newest lag sample; the
  client id is the replication consumer's, without a task: Spark's Kafka source is not one consumer
  per task.
- `kafka_consumer_incoming_byte_total`, `kafka_producer_outgoing_byte_total`: the bytes of the records
  replicated since the application started, both ways (Kafka's clients count bytes on the wire,
  protocol overhead included).
- `kafka_connect_worker_rebalance_rebalancing`: 1 while the application starts (its tasks are being
  assigned), else 0: one application owns all of a mirror's tasks, with no group rebalance.
- `kafka_connect_connector_task_offset_commit_avg_time_ms`: Spark's time to commit the query's
  progress (its write-ahead and commit log entries), averaged over the latest batches; one commit
  covers every task of the query, so each source task carries the same value.
- `kafka_connect_source_task_source_record_active_count`: records handed to the producers and not yet
  acknowledged, and `kafka_producer_buffer_available_bytes`: the bytes free in the producers'
  buffers. Counted per JVM, not per task: all on task 0 (the dashboard sums them), and only when the
  tasks run in the driver's JVM (local[N]); on a cluster the application cannot see them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from mirrorcore.policy import HEARTBEATS_TOPIC

KIND = "KafkaMirrorMaker2"
DEFAULT_NAMESPACE = "mirrorplane"
WINDOW_SECONDS = 30.0  # MM2's metrics.sample.window.ms
RATE_WINDOW_SECONDS = 30.0  # a batch older than this no longer counts towards the rates

POD = ("namespace", "strimzi_io_kind", "strimzi_io_cluster", "kubernetes_pod_name")
SOURCE_PARTITION = (*POD, "source", "target", "topic", "partition")
GROUP_PARTITION = (*POD, "source", "target", "group", "topic", "partition")
MSC = "kafka_connect_mirror_mirrorsourceconnector_"
MCC = "kafka_connect_mirror_mirrorcheckpointconnector_"
STATS = ("", "_min", "_max", "_avg")
TASK_STATES = ("running", "paused", "failed", "unassigned", "restarting")
CONNECTOR_CLASSES = {"source": "MirrorSourceConnector", "checkpoint": "MirrorCheckpointConnector",
                     "heartbeat": "MirrorHeartbeatConnector"}


@dataclass(frozen=True)
class Family:
    name: str
    help: str
    labels: tuple[str, ...]
    counter: bool = False


def _families() -> dict[str, Family]:
    families = [
        Family(f"{MSC}record_count", "Records copied from the partition since the application started",
               SOURCE_PARTITION),
        Family(f"{MSC}byte_count", "Bytes copied from the partition since the application started", SOURCE_PARTITION),
        Family(f"{MSC}record_rate", "Records per second of the partition's latest batch", SOURCE_PARTITION),
        Family(f"{MSC}byte_rate", "Bytes per second of the partition's latest batch", SOURCE_PARTITION),
        *(Family(f"{MSC}record_age_ms{s}", f"Age of the oldest record not yet replicated{_over(s, 'lag samples')}",
                 SOURCE_PARTITION) for s in STATS),
        *(Family(f"{MSC}replication_latency_ms{s}", "Heartbeat latency from the source to the target"
                 f"{_over(s, 'heartbeats')}", SOURCE_PARTITION) for s in STATS),
        *(Family(f"{MCC}checkpoint_latency_ms{s}", "Age of the group partition's newest checkpoint",
                 GROUP_PARTITION) for s in STATS),
        Family("kafka_connect_worker_connector_count", "Connectors the mirror's application runs", POD),
        Family("kafka_connect_worker_task_count", "Tasks the mirror's application runs", POD),
        Family("kafka_connect_worker_connector_total_task_count", "Tasks of the connector", (*POD, "connector")),
        *(Family(f"kafka_connect_worker_connector_{state}_task_count", f"Tasks of the connector {state}",
                 (*POD, "connector")) for state in TASK_STATES),
        Family("kafka_connect_connector_status", "1 for each task in its status",
               (*POD, "connector", "task", "status")),
        Family("kafka_connect_coordinator_assigned_connectors", "Connectors assigned to the worker",
               (*POD, "clientid")),
        Family("kafka_connect_coordinator_assigned_tasks", "Tasks assigned to the worker", (*POD, "clientid")),
        Family("kafka_connect_worker_rebalance_rebalancing", "1 while the application starts and its tasks are "
               "assigned", POD),
        Family("kafka_consumer_fetch_manager_records_lag", "Records of the partition not yet replicated",
               (*POD, "clientid", "topic", "partition")),
        Family("kafka_consumer_incoming_byte_total", "Bytes of the records read from the source since the "
               "application started", (*POD, "clientid"), counter=True),
        Family("kafka_producer_outgoing_byte_total", "Bytes of the records written to the target since the "
               "application started", (*POD, "clientid"), counter=True),
        Family("kafka_producer_buffer_available_bytes", "Bytes free in the record producers' buffers",
               (*POD, "clientid")),
        Family("kafka_connect_connector_task_offset_commit_avg_time_ms", "Milliseconds to commit the query's "
               "progress, averaged over the latest batches", (*POD, "connector", "task")),
        Family("kafka_connect_source_task_source_record_active_count", "Records sent to the target and not yet "
               "acknowledged", (*POD, "connector", "task")),
    ]
    return {f.name: f for f in families}


def _over(stat: str, what: str) -> str:
    word = {"_min": "smallest", "_max": "largest", "_avg": "mean"}.get(stat)
    return f" ({word} over the {what} of the last {WINDOW_SECONDS:g} s)" if word else ""


FAMILIES = _families()


@dataclass(frozen=True)
class ConnectorReading:
    kind: str
    state: str  # Kafka Connect's state, upper case
    tasks: list[dict] = field(default_factory=list)  # [{"id", "state"}]


@dataclass(frozen=True)
class MirrorReading:
    """What the collector read for one mirror: `heartbeats` and `lags` are the newest series points, oldest first."""

    name: str
    source: str
    target: str
    live: dict | None
    heartbeats: list[dict]
    lags: list[dict]
    connectors: list[ConnectorReading]
    application_state: str
    checkpoint_groups: list[dict] = field(default_factory=list)  # status.checkpoint_groups: ages included
    namespace: str = DEFAULT_NAMESPACE


Sample = tuple[str, dict[str, str], float]


def connector_name(reading: MirrorReading, kind: str) -> str:
    return f'"{reading.source}->{reading.target}.{CONNECTOR_CLASSES.get(kind, kind)}"'


def mirror_samples(reading: MirrorReading, now: float) -> Iterator[Sample]:
    pod = {"namespace": reading.namespace, "strimzi_io_kind": KIND, "strimzi_io_cluster": reading.name,
           "kubernetes_pod_name": reading.name}
    yield from source_samples(reading, pod, now)
    yield from checkpoint_samples(reading, pod)
    yield from worker_samples(reading, pod)
    yield from client_samples(reading, pod)
    yield from source_task_samples(reading, pod)


def _source(live: dict | None) -> dict:
    return ((live or {}).get("connectors") or {}).get("source") or {}


def _lag_values(point: dict) -> dict[tuple[str, int], dict]:
    return {(p["topic"], int(p["partition"])): p for p in point.get("partitions") or []}


def _partitions(reading: MirrorReading) -> list[tuple[str, int]]:
    """The partitions the source connector reports, and those of the newest lag sample."""
    known = {(p["topic"], int(p["partition"])) for p in _source(reading.live).get("partitions") or []}
    newest = reading.lags[-1] if reading.lags else {}
    return sorted(known | set(_lag_values(newest)))


def _stats(values: list[float]) -> dict[str, float]:
    return {"_min": min(values), "_max": max(values), "_avg": round(sum(values) / len(values), 1)} if values else {}


def _age_ms(point: dict, tp: tuple[str, int]) -> float | None:
    """A lag sample's age of the partition's oldest waiting record, 0 when none waits; None when not looked up."""
    entry = _lag_values(point).get(tp)
    if entry is None:
        return 0.0
    return None if entry.get("seconds") is None else round(entry["seconds"] * 1000, 1)


def source_samples(reading: MirrorReading, pod: dict[str, str], now: float) -> Iterator[Sample]:
    flow = pod | {"source": reading.source, "target": reading.target}
    reported = {(p["topic"], int(p["partition"])): p for p in _source(reading.live).get("partitions") or []}
    window_lags = [p for p in reading.lags if p["at"] >= now - WINDOW_SECONDS]
    latencies = [p["latency_ms"] for p in reading.heartbeats
                 if p["at"] >= now - WINDOW_SECONDS and p.get("latency_ms") is not None]
    newest_latency = reading.heartbeats[-1].get("latency_ms") if reading.heartbeats else None
    for tp in _partitions(reading):
        labels = flow | {"topic": tp[0], "partition": str(tp[1])}
        partition = reported.get(tp) or {}
        if "records" in partition:
            rate = partition.get("rate") or {}
            recent = rate.get("at") is not None and now - rate["at"] <= RATE_WINDOW_SECONDS
            yield f"{MSC}record_count", labels, partition["records"]
            yield f"{MSC}byte_count", labels, partition.get("bytes", 0)
            yield f"{MSC}record_rate", labels, rate.get("records_per_s", 0.0) if recent else 0.0
            yield f"{MSC}byte_rate", labels, rate.get("bytes_per_s", 0.0) if recent else 0.0
        newest_age = _age_ms(reading.lags[-1], tp) if reading.lags else None
        if newest_age is not None:
            yield f"{MSC}record_age_ms", labels, newest_age
        ages = [age for age in (_age_ms(point, tp) for point in window_lags) if age is not None]
        for stat, value in _stats(ages).items():
            yield f"{MSC}record_age_ms{stat}", labels, value
        if tp[0] == HEARTBEATS_TOPIC:
            if newest_latency is not None:
                yield f"{MSC}replication_latency_ms", labels, newest_latency
            for stat, value in _stats(latencies).items():
                yield f"{MSC}replication_latency_ms{stat}", labels, value


def checkpoint_samples(reading: MirrorReading, pod: dict[str, str]) -> Iterator[Sample]:
    flow = pod | {"source": reading.source, "target": reading.target}
    for group in reading.checkpoint_groups:
        for p in group.get("partitions") or []:
            if p.get("checkpoint_age_seconds") is None:
                continue
            labels = flow | {"group": group["group"], "topic": p["topic"], "partition": str(p["partition"])}
            for stat in STATS:
                yield f"{MCC}checkpoint_latency_ms{stat}", labels, round(p["checkpoint_age_seconds"] * 1000, 1)


def worker_samples(reading: MirrorReading, pod: dict[str, str]) -> Iterator[Sample]:
    """Only connectors the running application reports count: without a live status the worker runs nothing."""
    running = [c for c in reading.connectors if reading.live is not None and c.state not in {"STOPPED", "UNASSIGNED"}]
    tasks = sum(len(c.tasks) for c in running)
    coordinator = pod | {"clientid": f"connect-{reading.name}"}
    yield "kafka_connect_worker_connector_count", pod, len(running)
    yield "kafka_connect_worker_task_count", pod, tasks
    yield "kafka_connect_coordinator_assigned_connectors", coordinator, len(running)
    yield "kafka_connect_coordinator_assigned_tasks", coordinator, tasks
    yield "kafka_connect_worker_rebalance_rebalancing", pod, 1.0 if reading.application_state == "starting" else 0.0
    for connector in running:
        labels = pod | {"connector": connector_name(reading, connector.kind)}
        states = [str(t.get("state") or "UNASSIGNED").lower() for t in connector.tasks]
        yield "kafka_connect_worker_connector_total_task_count", labels, len(states)
        for state in TASK_STATES:
            yield f"kafka_connect_worker_connector_{state}_task_count", labels, states.count(state)
        for task, state in zip(connector.tasks, states, strict=True):
            yield "kafka_connect_connector_status", labels | {"task": str(task.get("id", 0)), "status": state}, 1.0


def client_samples(reading: MirrorReading, pod: dict[str, str]) -> Iterator[Sample]:
    flow = f"{reading.source}->{reading.target}"
    consumer = pod | {"clientid": f'"{flow}|MirrorSourceConnector|replication-consumer"'}
    if reading.lags:
        newest = _lag_values(reading.lags[-1])
        for tp in _partitions(reading):
            records = (newest.get(tp) or {}).get("records", 0)
            yield "kafka_consumer_fetch_manager_records_lag", consumer | {"topic": tp[0], "partition": str(tp[1])}, \
                records
    if reading.live is not None:
        metrics = _source(reading.live).get("metrics") or {}
        copied = metrics.get("bytes", 0)
        producer = pod | {"clientid": f'"connector-producer-{flow}.MirrorSourceConnector"'}
        yield "kafka_consumer_incoming_byte_total", consumer, copied
        yield "kafka_producer_outgoing_byte_total", producer, copied
        if "producer_buffer_available_bytes" in metrics:
            yield "kafka_producer_buffer_available_bytes", producer | {
                "clientid": f'"connector-producer-{flow}.MirrorSourceConnector-0"'}, \
                metrics["producer_buffer_available_bytes"]


def source_task_samples(reading: MirrorReading, pod: dict[str, str]) -> Iterator[Sample]:
    """The source tasks' offset commit time and records in flight (see the module's docstring)."""
    source = _source(reading.live) if reading.live is not None else {}
    metrics, tasks = source.get("metrics") or {}, source.get("tasks") or []
    labels = pod | {"connector": connector_name(reading, "source")}
    for task in tasks if "offset_commit_ms" in metrics else []:
        yield "kafka_connect_connector_task_offset_commit_avg_time_ms", labels | {"task": str(task.get("id", 0))}, \
            metrics["offset_commit_ms"]
    if tasks and "in_flight_records" in metrics:
        yield "kafka_connect_source_task_source_record_active_count", labels | {"task": "0"}, \
            metrics["in_flight_records"]
