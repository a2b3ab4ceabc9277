"""Restarting the Celery worker or Redis loses no desired state and never starts a second driver."""

from __future__ import annotations

import time

import pytest

from mirrors.services import runtime
from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)


def drivers(name: str) -> list[int]:
    return runtime.running_apps().get(name, runtime.AppProcesses()).drivers


def test_worker_and_redis_restarts_keep_one_driver_and_the_desired_state(api, devstack, control_plane, unique,
                                                                       figures):
    east = devstack.clusters["east"].bootstrap_servers
    topic, name = f"restarts-{unique}", f"restarts-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic},
                    format="json").status_code == 201
    pid = wait_for_status(api, name, lambda s: s["application"]["state"] == "running", 120)["application"]["pid"]
    assert api.put(f"/api/v1/mirrors/{name}/connectors/source/pause/").status_code == 202
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED", 30)

    control_plane["restart_worker"]()
    started = time.monotonic()
    for _ in range(10):  # ten reconcile passes of the new worker
        time.sleep(1)
        assert drivers(name) == [pid], f"drivers after a worker restart: {drivers(name)}"
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED"
                             and s["application"]["state"] == "running", 30)
    assert status["application"]["pid"] == pid and status["application"]["restarts"] == 0
    worker_seconds = time.monotonic() - started

    devstack.redis.stop()
    devstack.redis.start()  # same port, empty: desired state, status and series are gone
    started = time.monotonic()
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED"
                             and s["connectors"]["heartbeat"]["state"] == "RUNNING"
                             and (s["progress"] or {}).get("reported_at", 0) > time.time() - 3, 60)
    redis_seconds = time.monotonic() - started
    assert drivers(name) == [pid] and status["application"]["pid"] == pid, "the application kept running"
    assert api.put(f"/api/v1/mirrors/{name}/connectors/source/resume/").status_code == 202
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 10)
    assert drivers(name) == [pid]
    figures(f"worker SIGKILLed and restarted: 1 driver (pid {pid}) throughout, source still PAUSED "
            f"({worker_seconds:.1f} s to the next status); Redis restarted empty: desired state republished, "
            f"status back in {redis_seconds:.1f} s, same driver, resume obeyed")
