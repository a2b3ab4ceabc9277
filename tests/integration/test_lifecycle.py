"""Stopping every connector, or deleting the mirror, ends its Spark application; a desired-state change
(pause) does not restart it."""

from __future__ import annotations

import time

import pytest

from controlplane.infra import processes
from mirrors.services import runtime
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

ALL_STOPPED = {"connectors": {kind: {"state": "stopped"} for kind in ("source", "checkpoint", "heartbeat")}}
ALL_RUNNING = {"connectors": {kind: {"state": "running"} for kind in ("source", "checkpoint", "heartbeat")}}


def drivers(name: str) -> list[int]:
    app = runtime.running_apps().get(name)
    return app.drivers if app else []


def test_stop_resume_and_delete_control_the_application(api, devstack, control_plane, unique, figures):
    topic, name = f"life-{unique}", f"life-{unique}"
    east = devstack.clusters["east"].bootstrap_servers
    kafka_tools.create_topic(east, topic, 2)
    kafka_tools.produce(east, topic, {0: [Record(b"k", b"v", (), 1_700_000_000_000)]})
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic},
                    format="json").status_code == 201
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 90)
    pid = status["application"]["pid"]

    # pausing the source leaves the application (and the heartbeat connector) running
    api.patch(f"/api/v1/mirrors/{name}/", {"connectors": {"source": {"state": "paused"}}}, format="json")
    started = time.monotonic()
    status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "PAUSED", 15)
    figures(f"source PAUSED {time.monotonic() - started:.1f}s after the PATCH")
    assert status["application"]["pid"] == pid and status["connectors"]["heartbeat"]["state"] == "RUNNING"

    # stopping every connector ends the application
    api.patch(f"/api/v1/mirrors/{name}/", ALL_STOPPED, format="json")
    started = time.monotonic()
    assert processes.wait_until(lambda: not drivers(name), 45), "the application kept running"
    figures(f"application gone {time.monotonic() - started:.1f}s after every connector was stopped")
    status = wait_for_status(api, name, lambda s: s["application"]["state"] == "not_running", 15)
    assert {c["state"] for c in status["connectors"].values()} == {"STOPPED"}
    assert status["application"]["restarts"] == 0, "a requested stop is not a failure"

    # running again submits it again; deleting the mirror ends it
    api.patch(f"/api/v1/mirrors/{name}/", ALL_RUNNING, format="json")
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 90)
    assert len(drivers(name)) == 1
    assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204
    started = time.monotonic()
    assert processes.wait_until(lambda: not drivers(name), 45), "the deleted mirror's application kept running"
    figures(f"application gone {time.monotonic() - started:.1f}s after the mirror was deleted")
    assert not runtime.work_dir(name).exists() or processes.wait_until(lambda: not runtime.work_dir(name).exists(), 10)
