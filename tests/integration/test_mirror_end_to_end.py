"""A mirror created through the REST API replicates records exactly, on real clusters and real Spark."""

from __future__ import annotations

import random
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration import kafka_tools
from tests.integration.driver_report import driver_report
from tests.integration.kafka_tools import Record

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 10_000
PARTITIONS = 3


def make_records(count: int, partitions: int, seed: int) -> dict[int, list[Record]]:
    """Keys, binary values, two headers and explicit (non-monotonic) timestamps per record."""
    rng = random.Random(seed)
    base = 1_700_000_000_000
    records: dict[int, list[Record]] = {p: [] for p in range(partitions)}
    for i in range(count):
        value = rng.randbytes(rng.randint(0, 300)) if i % 97 else None  # a few null values too
        headers = (("trace", rng.randbytes(8)), ("seq", str(i).encode()))
        records[i % partitions].append(Record(f"key-{i}".encode(), value, headers, base + rng.randint(0, 10**9)))
    return records


def create_clusters(api, devstack) -> None:
    for alias in ("east", "west"):
        response = api.post("/api/v1/clusters/", {
            "alias": alias, "bootstrap_servers": devstack.clusters[alias].bootstrap_servers,
        }, format="json")
        assert response.status_code == 201, response.content


def wait_for_status(api, name: str, predicate, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    status = {}
    while time.monotonic() < deadline:
        status = api.get(f"/api/v1/mirrors/{name}/status/").json()
        if predicate(status):
            return status
        time.sleep(0.5)
    raise AssertionError(f"status condition not reached within {timeout}s; last status: {status}\n"
                         + driver_report(name))


def test_records_arrive_in_order_and_byte_identical(api, devstack, control_plane, unique, figures):
    topic = f"orders-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = make_records(RECORDS, PARTITIONS, seed=7)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)

    created = time.monotonic()
    response = api.post("/api/v1/mirrors/", {
        "name": f"e2e-{unique}", "source": "east", "target": "west", "topics": topic,
        "connectors": {"source": {"tasks_max": 2}},
    }, format="json")
    assert response.status_code == 201, response.content

    received = kafka_tools.consume_all(west, f"east.{topic}", RECORDS, timeout=60)
    elapsed = time.monotonic() - created
    figures(f"{RECORDS} records on the target {elapsed:.1f}s after the mirror was created")

    assert sorted(received) == list(range(PARTITIONS)), "remote topic keeps the source's partitions"
    for partition in range(PARTITIONS):
        assert received[partition] == expected[partition], f"partition {partition} differs"
    assert elapsed < 60
    assert kafka_tools.end_offsets(west, f"east.{topic}") == {p: len(expected[p]) for p in range(PARTITIONS)}

    # The batch's summary is published just after its records are acknowledged.
    status = wait_for_status(api, f"e2e-{unique}",
                             lambda s: (s["progress"] or {}).get("records", 0) >= RECORDS, 30)
    source = status["connectors"]["source"]
    assert source["state"] == "RUNNING"
    assert [task["state"] for task in source["tasks"]] == ["RUNNING", "RUNNING"]
    assert status["connectors"]["heartbeat"]["state"] == "RUNNING"
    assert status["application"]["state"] == "running"

    # Strimzi's dashboard reads the source tasks' gauges from the live application: Spark's commit
    # time, and (tasks in the driver's JVM) the writer's records in flight and its producers' buffer.
    name = f"e2e-{unique}"
    gauges = ("kafka_connect_connector_task_offset_commit_avg_time_ms",
              "kafka_connect_source_task_source_record_active_count", "kafka_producer_buffer_available_bytes")
    deadline, found = time.monotonic() + 30, {}
    while time.monotonic() < deadline and len(found) < len(gauges):
        exposition = api.get("/metrics").content.decode()
        found = {sample.name: sample for family in text_string_to_metric_families(exposition)
                 for sample in family.samples
                 if sample.name in gauges and sample.labels.get("strimzi_io_cluster") == name}
        time.sleep(1)
    assert set(found) == set(gauges), f"exported for {name}: {sorted(found)}"
    assert found["kafka_connect_connector_task_offset_commit_avg_time_ms"].value >= 0
    assert found["kafka_connect_source_task_source_record_active_count"].value >= 0
    assert found["kafka_producer_buffer_available_bytes"].value > 0
    figures(f"offset commit {found['kafka_connect_connector_task_offset_commit_avg_time_ms'].value:.1f} ms on "
            f"average, {found['kafka_connect_source_task_source_record_active_count'].value:.0f} records in flight, "
            f"{found['kafka_producer_buffer_available_bytes'].value / 2 ** 20:.1f} MiB of producer buffer free")


def test_tasks_max_above_the_applications_cores_runs_as_many_tasks_as_cores(api, devstack, control_plane, unique,
                                                                            figures):
    east, west = (devstack.clusters[alias].bootstrap_servers for alias in ("east", "west"))
    topic, partitions = f"wide-{unique}", 6
    kafka_tools.create_topic(east, topic, partitions)
    expected = make_records(600, partitions, seed=7)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {
        "name": f"wide-{unique}", "source": "east", "target": "west", "topics": topic,
        "connectors": {"source": {"tasks_max": 4}},
    }, format="json").status_code == 201

    received = kafka_tools.consume_all(west, f"east.{topic}", 600, timeout=60)
    assert {p: received.get(p, []) for p in range(partitions)} == expected
    status = wait_for_status(api, f"wide-{unique}", lambda s: (s["progress"] or {}).get("records", 0) >= 600, 30)
    tasks = status["connectors"]["source"]["tasks"]
    assert [task["state"] for task in tasks] == ["RUNNING", "RUNNING"], "local[2] runs two tasks at once"
    figures(f"tasks.max 4 on local[2], 6 partitions: {len(tasks)} tasks, 600 records byte-identical")
