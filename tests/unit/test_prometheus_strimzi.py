"""The Strimzi-named series of one mirror, from its readings (pure: no database, no Redis)."""

from __future__ import annotations

import pytest

from controlplane import prometheus_strimzi as strimzi
from controlplane.prometheus_strimzi import ConnectorReading, MirrorReading

NOW = 10_000.0
MSC = strimzi.MSC


def live(partitions: list[dict] | None = None) -> dict:
    return {"connectors": {
        "source": {"state": "RUNNING", "metrics": {"records": 30, "bytes": 3000},
                   "partitions": partitions if partitions is not None else [
                       {"topic": "orders", "partition": 0, "records": 20, "bytes": 2000,
                        "rate": {"records_per_s": 10.0, "bytes_per_s": 1000.0, "at": NOW - 5}},
                       {"topic": "orders", "partition": 1, "records": 10, "bytes": 1000,
                        "rate": {"records_per_s": 4.0, "bytes_per_s": 400.0, "at": NOW - 100}},
                       {"topic": "heartbeats", "partition": 0, "records": 3, "bytes": 30, "rate": None}]},
    }}


def reading(**changes) -> MirrorReading:
    base = {
        "name": "m1", "source": "east", "target": "west", "live": live(),
        "heartbeats": [{"at": NOW - 60, "latency_ms": 900}, {"at": NOW - 20, "latency_ms": 30},
                       {"at": NOW - 1, "latency_ms": 50}],
        "lags": [{"at": NOW - 4, "partitions": [{"topic": "orders", "partition": 1, "records": 7, "seconds": 2.0}]},
                 {"at": NOW - 2, "partitions": [{"topic": "orders", "partition": 1, "records": 9, "seconds": 3.0},
                                                {"topic": "orders", "partition": 2, "records": 5, "seconds": None}]}],
        "connectors": [ConnectorReading("source", "RUNNING", [{"id": 0, "state": "RUNNING"},
                                                              {"id": 1, "state": "FAILED"}]),
                       ConnectorReading("checkpoint", "RUNNING", [{"id": 0, "state": "RUNNING"}]),
                       ConnectorReading("heartbeat", "STOPPED", [])],
        "application_state": "running",
        "checkpoint_groups": [{"group": "billing", "partitions": [
            {"topic": "orders", "partition": 0, "checkpoint_age_seconds": 4.0},
            {"topic": "orders", "partition": 1, "checkpoint_age_seconds": None}]}],
    }
    return MirrorReading(**(base | changes))


def collect(r: MirrorReading) -> dict[tuple[str, tuple], float]:
    result = {}
    for name, labels, value in strimzi.mirror_samples(r, NOW):
        assert set(labels) == set(strimzi.FAMILIES[name].labels), name
        result[(name, tuple(sorted(labels.items())))] = value
    return result


def get(samples: dict, name: str, **labels) -> float | None:
    pod = {"namespace": "mirrorplane", "strimzi_io_kind": "KafkaMirrorMaker2", "strimzi_io_cluster": "m1",
           "kubernetes_pod_name": "m1"}
    return samples.get((name, tuple(sorted((pod | labels).items()))))


def tp(topic: str, partition: int) -> dict[str, str]:
    return {"source": "east", "target": "west", "topic": topic, "partition": str(partition)}


def test_counts_and_rates_per_partition():
    s = collect(reading())
    assert get(s, f"{MSC}record_count", **tp("orders", 0)) == 20
    assert get(s, f"{MSC}byte_count", **tp("orders", 1)) == 1000
    assert get(s, f"{MSC}record_rate", **tp("orders", 0)) == 10
    assert get(s, f"{MSC}byte_rate", **tp("orders", 0)) == 1000
    assert get(s, f"{MSC}record_rate", **tp("orders", 1)) == 0, "its latest batch is older than the rate window"
    assert get(s, f"{MSC}record_rate", **tp("heartbeats", 0)) == 0
    assert get(s, f"{MSC}record_count", **tp("orders", 2)) is None, "only lagging: nothing copied is known"


def test_record_age_from_the_lag_samples_of_the_window():
    s = collect(reading())
    assert get(s, f"{MSC}record_age_ms", **tp("orders", 1)) == 3000
    assert get(s, f"{MSC}record_age_ms_min", **tp("orders", 1)) == 2000
    assert get(s, f"{MSC}record_age_ms_max", **tp("orders", 1)) == 3000
    assert get(s, f"{MSC}record_age_ms_avg", **tp("orders", 1)) == 2500
    assert get(s, f"{MSC}record_age_ms", **tp("orders", 0)) == 0, "caught up"
    assert get(s, f"{MSC}record_age_ms", **tp("orders", 2)) is None, "lagging, but its age was not looked up"
    assert get(s, f"{MSC}record_age_ms_max", **tp("orders", 2)) == 0, "not lagging in the older sample"


def test_replication_latency_is_the_heartbeats_topics_own():
    s = collect(reading())
    assert get(s, f"{MSC}replication_latency_ms", **tp("heartbeats", 0)) == 50
    assert get(s, f"{MSC}replication_latency_ms_min", **tp("heartbeats", 0)) == 30
    assert get(s, f"{MSC}replication_latency_ms_max", **tp("heartbeats", 0)) == 50, "older than the window: left out"
    assert get(s, f"{MSC}replication_latency_ms_avg", **tp("heartbeats", 0)) == 40
    assert not any(name.startswith(f"{MSC}replication_latency") and ("topic", "orders") in labels
                   for name, labels in collect(reading()))


def test_checkpoint_latency_of_checkpointed_partitions():
    s = collect(reading())
    labels = {"source": "east", "target": "west", "group": "billing", "topic": "orders", "partition": "0"}
    for stat in strimzi.STATS:
        assert get(s, f"{strimzi.MCC}checkpoint_latency_ms{stat}", **labels) == 4000
    assert get(s, f"{strimzi.MCC}checkpoint_latency_ms", **(labels | {"partition": "1"})) is None


def test_worker_connectors_and_tasks():
    s = collect(reading())
    source = '"east->west.MirrorSourceConnector"'
    assert get(s, "kafka_connect_worker_connector_count") == 2, "the stopped heartbeat connector does not run"
    assert get(s, "kafka_connect_worker_task_count") == 3
    assert get(s, "kafka_connect_coordinator_assigned_tasks", clientid="connect-m1") == 3
    assert get(s, "kafka_connect_worker_connector_total_task_count", connector=source) == 2
    assert get(s, "kafka_connect_worker_connector_failed_task_count", connector=source) == 1
    assert get(s, "kafka_connect_worker_connector_paused_task_count", connector=source) == 0
    assert get(s, "kafka_connect_connector_status", connector=source, task="1", status="failed") == 1
    assert get(s, "kafka_connect_worker_rebalance_rebalancing") == 0
    assert get(collect(reading(application_state="starting")), "kafka_connect_worker_rebalance_rebalancing") == 1


def test_client_lag_and_bytes():
    s = collect(reading())
    consumer = '"east->west|MirrorSourceConnector|replication-consumer"'
    assert get(s, "kafka_consumer_fetch_manager_records_lag", clientid=consumer, topic="orders", partition="1") == 9
    assert get(s, "kafka_consumer_fetch_manager_records_lag", clientid=consumer, topic="orders", partition="0") == 0
    assert get(s, "kafka_consumer_incoming_byte_total", clientid=consumer) == 3000
    producer = '"connector-producer-east->west.MirrorSourceConnector"'
    assert get(s, "kafka_producer_outgoing_byte_total", clientid=producer) == 3000


def test_without_a_live_status_the_worker_runs_nothing():
    s = collect(reading(live=None, lags=[], heartbeats=[], checkpoint_groups=[]))
    assert get(s, "kafka_connect_worker_connector_count") == 0
    assert get(s, "kafka_connect_worker_task_count") == 0
    assert {name for name, _ in s} == {
        "kafka_connect_worker_connector_count", "kafka_connect_worker_task_count",
        "kafka_connect_coordinator_assigned_connectors", "kafka_connect_coordinator_assigned_tasks",
        "kafka_connect_worker_rebalance_rebalancing"}


def test_an_older_application_without_partition_counts():
    s = collect(reading(live=live([{"topic": "orders", "partition": 0}])))
    assert get(s, f"{MSC}record_count", **tp("orders", 0)) is None
    assert get(s, f"{MSC}record_age_ms", **tp("orders", 0)) == 0


@pytest.mark.parametrize("namespace", ["kafka", "mirrorplane"])
def test_namespace_label(namespace):
    s = collect(reading(namespace=namespace))
    assert {dict(labels)["namespace"] for _, labels in s} == {namespace}
