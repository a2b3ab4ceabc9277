"""Kafka Connect's connector verbs against a running mirror, checked in Kafka; supervision limits."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from mirrors.services import runtime
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

RATE = 400  # records per second while the test runs


class Traffic(threading.Thread):
    """Numbered records into one partition until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic = bootstrap, topic
        self.sent = 0
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            batch = [Record(None, str(self.sent + i).encode(), (), int(time.time() * 1000)) for i in range(RATE // 10)]
            kafka_tools.produce(self.bootstrap, self.topic, {0: batch})
            self.sent += len(batch)
            time.sleep(0.1)

    def stop(self) -> int:
        self.halt.set()
        self.join(30)
        return self.sent


def copied(bootstrap: str, topic: str) -> int:
    return sum(kafka_tools.end_offsets(bootstrap, topic).values())


def verb(api, name: str, kind: str, action: str, method: str = "put", query: str = "") -> float:
    """Send a verb (202 at once); returns when it was sent."""
    started = time.monotonic()
    response = getattr(api, method)(f"/api/v1/mirrors/{name}/connectors/{kind}/{action}/{query}")
    assert response.status_code == 202, response.content
    return started


def flowing(west: str, remote: str, seconds: float = 3.0) -> int:
    before = copied(west, remote)
    time.sleep(seconds)
    return copied(west, remote) - before


def starts_flowing(west: str, remote: str, within: float = 60.0) -> int:
    """Records copied in the first second in which any were, waiting at most `within` seconds: a query
    (re)started in real-time mode schedules its long-running tasks first, seconds under load."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if growth := flowing(west, remote, 1.0):
            return growth
    return 0


@pytest.mark.parametrize("mode", ["auto", "micro-batch"])
def test_verbs_pause_stop_resume_restart_with_the_effect_in_kafka(api, devstack, control_plane, unique, figures,
                                                                  mode):
    """`auto` runs real-time mode here (a task slot per partition); micro-batches stop their query while a
    batch may be under way, which must read to Spark as an interruption, not as a failure."""
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name = f"verbs-{unique}", f"verbs-{unique}"
    remote = f"east.{topic}"
    kafka_tools.create_topic(east, topic, 1)
    traffic = Traffic(east, topic)
    traffic.start()
    create_clusters(api, devstack)
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic,
                                         "connectors": {"source": {"config": {"replication.mode": mode}}}},
                    format="json").status_code == 201
    status = wait_for_status(api, name, lambda s: topic in ((s["progress"] or {}).get("topics") or []), 120)
    assert starts_flowing(west, remote) > 0
    pid = wait_for_status(api, name, lambda s: s["application"]["pid"], 10)["application"]["pid"]
    timings: dict[str, float] = {}

    def transition(kind: str, action: str, state: str, method: str = "put") -> dict:
        started = verb(api, name, kind, action, method)
        status = wait_for_status(api, name, lambda s: s["connectors"][kind]["state"] == state, 5)
        timings[f"{kind} {action}"] = time.monotonic() - started
        return status

    status = transition("source", "pause", "PAUSED")
    assert {k: c["state"] for k, c in status["connectors"].items() if k != "source"} == \
        {"checkpoint": "RUNNING", "heartbeat": "RUNNING"}, "a verb on one connector leaves the others alone"
    time.sleep(1.5)
    paused_growth = flowing(west, remote)
    assert paused_growth == 0, f"{paused_growth} records copied while paused"
    transition("source", "resume", "RUNNING")
    assert starts_flowing(west, remote) > 0
    assert api.get(f"/api/v1/mirrors/{name}/status/").json()["application"]["pid"] == pid, "pause kept the app"

    transition("source", "stop", "STOPPED")
    time.sleep(1.5)
    assert flowing(west, remote) == 0
    transition("source", "resume", "RUNNING")
    assert starts_flowing(west, remote) > 0

    started = verb(api, name, "source", "restart", "post", "?include_tasks=true&only_failed=false")
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING"
                    and time.monotonic() - started > 0.5, 10)
    verb(api, name, "source", "tasks/0/restart", "post")
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 10)
    assert starts_flowing(west, remote) > 0

    for kind in ("source", "checkpoint", "heartbeat"):
        verb(api, name, kind, "stop")
    started = time.monotonic()
    wait_for_status(api, name, lambda s: s["application"]["state"] == "not_running" and not s["application"]["pid"], 30)
    timings["application exits once all are stopped"] = time.monotonic() - started
    for kind in ("source", "checkpoint", "heartbeat"):
        verb(api, name, kind, "resume")
    wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 120)

    sent = traffic.stop()
    wait_for_status(api, name, lambda s: any(p["topic"] == topic and p["last_upstream_offset"] == sent - 1
                                             for p in (s["progress"] or {}).get("partitions", [])), 120)
    received = kafka_tools.read_topic(west, remote)
    values = {int(record.value) for records in received.values() for _, record in records}
    assert values == set(range(sent)), f"{sent - len(values & set(range(sent)))} records lost"
    events = api.get(f"/api/v1/mirrors/{name}/events/?kind=action&limit=1000").json()
    assert [e["action"] for e in reversed(events)][1:7] == ["pause", "resume", "stop", "resume", "restart", "restart"]
    driver_log = (runtime.work_dir(name) / runtime.DRIVER_LOG).read_text(errors="replace")
    assert "StackOverflowError" not in driver_log, "a stop was taken for a failure"
    assert "terminated with error" not in driver_log
    figures(f"{mode}: verbs (202 at once, status shows the effect): "
            + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
    figures(f"{mode}: verbs: {sent} records sent during the test, all on the target "
            f"({sum(map(len, received.values()))} incl. duplicates); 0 copied while paused or stopped")


def test_driver_killed_beyond_max_restarts_leaves_the_mirror_failed(api, devstack, control_plane, unique, figures):
    east = devstack.clusters["east"].bootstrap_servers
    topic, name = f"maxr-{unique}", f"maxr-{unique}"
    kafka_tools.create_topic(east, topic, 1)
    create_clusters(api, devstack)
    limited = {"auto_restart": {"enabled": True, "max_restarts": 2}}
    assert api.post("/api/v1/mirrors/", {"name": name, "source": "east", "target": "west", "topics": topic,
                                         "connectors": dict.fromkeys(("source", "checkpoint", "heartbeat"), limited)},
                    format="json").status_code == 201
    pids = []
    for _ in range(3):
        status = wait_for_status(api, name, lambda s: s["application"]["state"] == "running"
                                 and s["application"]["pid"] not in pids, 120)
        pids.append(status["application"]["pid"])
        os.kill(pids[-1], signal.SIGKILL)
    status = wait_for_status(api, name, lambda s: s["application"]["state"] == "failed", 60)
    assert status["application"]["restarts"] == 2
    assert {c["state"] for c in status["connectors"].values()} == {"FAILED"}
    assert "exited unexpectedly" in status["connectors"]["source"]["error"]
    assert "reached the limit 2" in status["connectors"]["source"]["error"]
    time.sleep(3)
    assert api.get(f"/api/v1/mirrors/{name}/status/").json()["application"]["pid"] is None, "no fourth submission"
    steps = [(e["from_state"], e["to_state"]) for e in
             reversed(api.get(f"/api/v1/mirrors/{name}/events/?action=application").json())]
    assert sum(1 for _, to in steps if to == "backoff") == 2 and steps[-1][1] == "failed", steps

    api.post(f"/api/v1/mirrors/{name}/connectors/source/restart/")
    revived = wait_for_status(api, name, lambda s: s["application"]["state"] == "running", 120)
    figures(f"max_restarts=2: 3 SIGKILLs -> 2 restarts, then FAILED with the error; application events "
            f"{' | '.join(f'{a}->{b}' for a, b in steps)}; an operator restart revived it (pid "
            f"{revived['application']['pid']})")
