"""A mirror runs on a Spark standalone cluster (master + worker from the installed pyspark, on loopback).

Its per-mirror `spark` resources reach spark-submit: the master URL, a 512m executor and one core
in total. Records only reach the target if the executors on the standalone worker received our
writer jar and Spark's Kafka connector (`spark.jars`) and ran the batches' tasks.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
from django.conf import settings

from devstack.spark_standalone import StandaloneCluster
from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters, make_records, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 2_000
PARTITIONS = 2


@pytest.fixture(scope="module")
def standalone():
    cluster = StandaloneCluster(settings.VAR_DIR / "spark-standalone", worker_cores=1, worker_memory="1g")
    cluster.up()
    try:
        yield cluster
    finally:
        cluster.down()


def get_json(url: str):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what} not within {timeout}s")


def test_mirror_runs_on_a_standalone_cluster(api, devstack, control_plane, standalone, unique, figures):
    assert standalone.alive_workers() == 1
    topic, name = f"standalone-{unique}", f"sa-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = make_records(RECORDS, PARTITIONS, seed=11)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)

    created = time.monotonic()
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic, "groups": "none-such",
        "spark": {"master": standalone.master_url, "executor_memory": "512m", "total_executor_cores": 1,
                  # executors on the worker reach the driver (client mode, this host) over loopback
                  "conf": {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}},
    }, format="json")
    assert response.status_code == 201, response.content

    received = kafka_tools.consume_all(west, f"east.{topic}", RECORDS, timeout=180)
    figures(f"{RECORDS} records on the target {time.monotonic() - created:.1f}s after the mirror was created "
            f"(standalone master, one 512m executor)")
    for partition in range(PARTITIONS):
        assert received[partition] == expected[partition], f"partition {partition} differs"

    # The master runs the application, with exactly the resources the mirror asked for.
    app = next(a for a in standalone.active_apps() if a["name"] == f"mirrorplane-{name}")
    assert app["state"] == "RUNNING"
    assert app["cores"] == 1
    assert app.get("memoryperexecutor", app.get("memoryperslave")) == 512

    # The batches' tasks ran on the worker's executor, not in the driver.
    status = wait_for_status(api, name, lambda s: (s["progress"] or {}).get("records", 0) >= RECORDS, 60)
    assert status["application"]["state"] == "running"
    ui = status["application"]["spark_ui"]
    assert ui, status["application"]
    apps = get_json(f"{ui}/api/v1/applications")
    assert [a["id"] for a in apps] == [app["id"]], "the driver's application is the master's"
    executors = [e for e in get_json(f"{ui}/api/v1/applications/{app['id']}/executors") if e["id"] != "driver"]
    assert len(executors) == 1 and executors[0]["hostPort"].startswith("127.0.0.1:")
    assert executors[0]["maxTasks"] == 1
    assert executors[0]["completedTasks"] > 0 and executors[0]["failedTasks"] == 0
    assert any(e["id"] == "driver" and e["completedTasks"] == 0
               for e in get_json(f"{ui}/api/v1/applications/{app['id']}/executors"))
    # The worker launched that executor for this application and it fetched the jars from the driver.
    executor_dir = standalone.worker_dir / app["id"] / executors[0]["id"]
    assert executor_dir.is_dir()
    jars = {p.name for p in executor_dir.glob("*.jar")}
    assert any(j.startswith("mirrorplane-writer-") for j in jars), jars
    assert any(j.startswith("spark-sql-kafka-0-10") for j in jars), jars

    # Deleting the mirror ends the application on the master.
    assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204
    wait_for(lambda: not any(a["name"] == f"mirrorplane-{name}" for a in standalone.active_apps()), 60,
             "the application leaving the master")
