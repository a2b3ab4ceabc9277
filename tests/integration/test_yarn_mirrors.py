"""Mirrors on a real YARN + HDFS cluster (two NodeManagers), supervised by the real Celery worker.

The driver runs in a YARN container in cluster deploy mode; the checkpoint is on HDFS; the worker
finds the application by its tags through the ResourceManager's REST API.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
from confluent_kafka import Producer

from controlplane.infra import hadoop_fs, processes, yarn
from mirrors.engines import EngineError, EngineUnavailable
from mirrors.engines.yarn import YarnEngine
from mirrors.models import Mirror
from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters, make_records, wait_for_status

pytestmark = pytest.mark.django_db(transaction=True)

PARTITIONS = 3
RECORDS = 100_000  # the byte-identical copy
# Small containers: the driver (AM) and one executor per mirror fit the test bed's NodeManagers.
YARN_SPARK = {"master": "yarn", "driver_memory": "640m", "executor_memory": "512m", "num_executors": 1,
              "executor_cores": 2}


def rm_applications(rm: yarn.ResourceManager, mirror: str, states=yarn.ALIVE_STATES) -> list[yarn.YarnApplication]:
    return [app for app in rm.applications(f"mirrorplane-mirror-{mirror}", states)
            if f"mirrorplane-mirror-{mirror}" in app.tags]


def driver_processes_on_this_host(name: str) -> list[int]:
    """Processes of the mirror's driver that run outside YARN's containers (there must be none)."""
    return [pid for pid in processes.find_processes(f"mirrorplane-{name}")
            if "appcache" not in processes.cmdline(pid) and "nm-local-dir" not in processes.cmdline(pid)]


def create_yarn_mirror(api, name: str, topic: str, spark: dict | None = None, connectors: dict | None = None):
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        "spark": spark or YARN_SPARK,
        "connectors": connectors or {"source": {"tasks_max": 2}},
    }, format="json")
    assert response.status_code == 201, response.content
    return response


def test_a_yarn_mirror_copies_byte_identical_records_from_a_driver_in_a_container(
        api, devstack, yarn_cluster, control_plane, unique, figures):
    topic, name = f"yarn-{unique}", f"yarn-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = make_records(RECORDS, PARTITIONS, seed=11)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)
    created = time.monotonic()
    create_yarn_mirror(api, name, topic)

    status = wait_for_status(api, name, lambda s: s["application"]["id"], 240)
    application = status["application"]
    assert application["engine"] == "yarn" and application["id"].startswith("application_")
    received = kafka_tools.consume_all(west, f"east.{topic}", RECORDS, timeout=300)
    copied = time.monotonic() - created
    assert received == expected, "records differ (partition, key, value, headers or timestamp)"

    rm = yarn.ResourceManager(yarn_cluster.resourcemanager_url)
    [app] = rm_applications(rm, name)
    assert app.id == application["id"] and app.state == "RUNNING"
    nodes = {node["nodeHTTPAddress"]: node["id"] for node in rm.nodes()}
    assert app.am_host in nodes, f"the driver's container {app.am_host} is on none of {list(nodes)}"
    status = wait_for_status(api, name, lambda s: s["application"]["tracking_url"], 30)
    assert status["application"]["tracking_url"].startswith("http")
    checkpoint = YarnEngine(conf_dir=str(yarn_cluster.conf_dir)).checkpoint_location(name)
    assert checkpoint.startswith(yarn_cluster.namenode_uri)
    env = yarn_cluster.submit_env()
    assert hadoop_fs.exists(f"{checkpoint}/source/offsets", env), "no streaming checkpoint on HDFS"
    assert driver_processes_on_this_host(name) == [], "a driver of the mirror runs outside YARN"
    figures(f"{RECORDS:,} records copied byte-identical {copied:.1f} s after the POST; driver in YARN container on "
            f"{nodes[app.am_host]}; checkpoint at {checkpoint}")

    assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204
    deadline = time.monotonic() + 90
    while rm_applications(rm, name) or hadoop_fs.exists(checkpoint, env):
        assert time.monotonic() < deadline, "the deleted mirror's application or checkpoint is still there"
        time.sleep(1)


@pytest.mark.parametrize(("case", "spark", "reason"), [
    ("queue", YARN_SPARK | {"queue": "nosuch"}, "nosuch"),
    ("memory", YARN_SPARK | {"driver_memory": "8g"}, "above the max threshold"),
])
def test_bad_yarn_input_fails_the_mirror_with_yarns_reason(api, devstack, yarn_cluster, control_plane, unique,
                                                           case, spark, reason, figures):
    name = f"bad-{case}-{unique}"
    topic = f"bad-{unique}"
    kafka_tools.create_topic(devstack.clusters["east"].bootstrap_servers, topic, 1)
    create_clusters(api, devstack)
    create_yarn_mirror(api, name, topic, spark=spark, connectors={
        kind: {"auto_restart": {"max_restarts": 1}} for kind in ("source", "checkpoint", "heartbeat")})
    status = wait_for_status(api, name, lambda s: s["application"]["state"] == "failed", 240)
    assert reason in status["application"]["last_error"], status["application"]["last_error"]
    assert "not restarted" in status["application"]["last_error"]
    assert all(c["state"] == "FAILED" and reason in c["error"] for c in status["connectors"].values())
    for _ in range(10):  # ten more passes (one a second): no crash loop
        time.sleep(1)
        again = api.get(f"/api/v1/mirrors/{name}/status/").json()["application"]
        assert (again["state"], again["restarts"]) == ("failed", status["application"]["restarts"])
    assert again["restarts"] <= 1
    rm = yarn.ResourceManager(yarn_cluster.resourcemanager_url)
    assert rm_applications(rm, name) == [], "something half-submitted is left running"
    figures(f"{case}: FAILED after {again['restarts']} restart(s): {status['application']['last_error'][:160]!r}")


def test_a_mirror_on_an_unreachable_resourcemanager_fails_with_its_address(api, devstack, yarn_cluster, control_plane,
                                                                          unique, tmp_path, figures):
    """The only worker's HADOOP_CONF_DIR names a ResourceManager that is not there."""
    conf = tmp_path / "hadoop-conf"
    conf.mkdir()
    port = processes.free_port()
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        f"<value>127.0.0.1:{port}</value></property></configuration>")
    (conf / "core-site.xml").write_text(
        "<configuration><property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:9</value></property>"
        "</configuration>")
    name = f"no-rm-{unique}"
    kafka_tools.create_topic(devstack.clusters["east"].bootstrap_servers, name, 1)
    create_clusters(api, devstack)
    with control_plane["stopped"]():
        worker = control_plane["spawn_worker"]("no-rm", HADOOP_CONF_DIR=str(conf))
        try:
            create_yarn_mirror(api, name, name, connectors={
                kind: {"auto_restart": {"max_restarts": 2}} for kind in ("source", "checkpoint", "heartbeat")})
            status = wait_for_status(api, name, lambda s: s["application"]["state"] == "failed", 120)
            error = status["application"]["last_error"]
            assert f"ResourceManager at http://127.0.0.1:{port} is unreachable" in error, error
            assert "not restarted: 2 restarts reached the limit 2" in error
            assert all(f"127.0.0.1:{port}" in c["error"] for c in status["connectors"].values())
            figures(f"no ResourceManager: FAILED after {status['application']['restarts']} restarts: {error[:140]!r}")
        finally:
            api.delete(f"/api/v1/mirrors/{name}/")
            time.sleep(3)  # the deletion is seen by this worker's pass
            control_plane["stop_worker"](worker)


def test_an_unreachable_resourcemanager_is_refused_with_its_address(tmp_path):
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        f"<value>127.0.0.1:{processes.free_port()}</value></property></configuration>")
    engine = YarnEngine(conf_dir=str(tmp_path))
    with pytest.raises(EngineUnavailable, match=r"ResourceManager at http://127\.0\.0\.1:\d+ is unreachable"):
        engine.live({})
    with pytest.raises(EngineError, match="is unreachable"):
        engine.submit(Mirror(name="m"))


RECOVERY_SECONDS = 180


def test_losing_the_nodemanager_that_hosts_the_driver_loses_nothing(
        api, devstack, yarn_cluster, control_plane, unique, figures):
    """kill -9 of the NodeManager (and its containers) that runs the driver, mid-backfill."""
    topic, name = f"nmloss-{unique}", f"nmloss-{unique}"
    records = 150_000
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = kafka_tools.backfill(records, PARTITIONS)
    kafka_tools.produce(east, topic, expected)
    create_clusters(api, devstack)
    create_yarn_mirror(api, name, topic, connectors={"source": {"tasks_max": 2, "config": {
        "batch.max.records": "20000"}}})
    remote = f"east.{topic}"
    deadline = time.monotonic() + 300
    while sum(kafka_tools.end_offsets(west, remote).values()) < records // 10:
        assert time.monotonic() < deadline, "the backfill did not start"
        time.sleep(0.5)
    rm = yarn.ResourceManager(yarn_cluster.resourcemanager_url)
    [app] = rm_applications(rm, name)
    nodes = {node["nodeHTTPAddress"]: node["id"] for node in rm.nodes()}
    lost = nodes[app.am_host]
    copied_at_kill = sum(kafka_tools.end_offsets(west, remote).values())
    assert copied_at_kill < records, "the backfill finished before the kill: make batches smaller"
    yarn_cluster.kill_nodemanager(lost)
    killed_at = time.monotonic()
    try:
        # Running again: an application of the mirror with its driver on the other NodeManager, copying. YARN
        # declares the NodeManager lost after the test bed's 10 s expiry; then a driver starts in a new
        # container, which in the lowered test lane waits for the cores the integration lane leaves idle.
        deadline = killed_at + RECOVERY_SECONDS
        while True:
            apps = [a for a in rm_applications(rm, name) if a.state == "RUNNING" and a.am_host
                    and nodes.get(a.am_host) not in (None, lost)]
            if apps and sum(kafka_tools.end_offsets(west, remote).values()) > copied_at_kill:
                break
            assert time.monotonic() < deadline, f"not running again on the other NodeManager within " \
                                                f"{RECOVERY_SECONDS} s: " \
                                                f"{[(a.id, a.state, a.am_host) for a in rm_applications(rm, name)]}"
            time.sleep(1)
        recovered = time.monotonic() - killed_at
        how = "YARN's second attempt of the same application" if apps[0].id == app.id else \
            f"our resubmission ({apps[0].id})"
        wait_for_status(api, name, lambda s: {
            p["partition"]: p["last_upstream_offset"] for p in (s["progress"] or {}).get("partitions", [])
            if p["topic"] == topic} == {p: len(expected[p]) - 1 for p in range(PARTITIONS)}, 400)
        total = sum(kafka_tools.end_offsets(west, remote).values())
        received = kafka_tools.consume_all(west, remote, total, timeout=240)
        duplicates = kafka_tools.duplicates_after_check(received, expected)
        assert sum(len(r) for r in received.values()) == total == records + duplicates
        assert len(rm_applications(rm, name)) == 1
        figures(f"NodeManager {lost} killed at {copied_at_kill} of {records} records; running again on the other "
                f"NodeManager after {recovered:.1f} s by {how}; 0 lost, {duplicates} duplicates")
    finally:
        yarn_cluster.restart_nodemanager(lost)
        devstack.save()  # `devstack status` reads the new NodeManager's pid from the state file
        api.delete(f"/api/v1/mirrors/{name}/")


# One record a second per mirror: the query looks for new records every 250 ms instead of Spark's 10 ms,
# so that ten applications fit on this two-core machine beside the brokers and the test bed.
IDLE_POLLING = {"spark.sql.streaming.pollingDelay": "250ms"}


def alive_together(apps: list[yarn.YarnApplication]) -> list[tuple[str, str]]:
    """Pairs of applications whose lives (accepted to ended, by the ResourceManager's clock) overlap."""
    lives = sorted((app.started_at or 0.0, app.finished_at or float("inf"), app.id) for app in apps)
    return [(first, second) for i, (_, ended, first) in enumerate(lives)
            for started, _, second in lives[i + 1:] if started < ended]


class ApplicationSampler(threading.Thread):
    """Counts each mirror's live applications from the ResourceManager once a second, in one query."""

    def __init__(self, rm: yarn.ResourceManager, names: list[str]):
        super().__init__(daemon=True)
        self.rm, self.names = rm, names
        self.most = dict.fromkeys(names, 0)
        self.samples = self.errors = 0
        self.longest_gap = 0.0
        self._last = time.monotonic()
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.is_set():
            began = time.monotonic()
            try:
                apps = self.rm.applications("mirrorplane")
            except yarn.ResourceManagerError:
                self.errors += 1
            else:
                now = time.monotonic()
                self.longest_gap, self._last = max(self.longest_gap, now - self._last), now
                self.samples += 1
                for name in self.names:
                    live = sum(f"mirrorplane-mirror-{name}" in app.tags for app in apps)
                    self.most[name] = max(self.most[name], live)
            self._stopped.wait(max(0.0, 1 - (time.monotonic() - began)))

    def stop(self) -> None:
        """Stops sampling; a sampler that died early shows as one long gap."""
        if not self._stopped.is_set():
            self.longest_gap = max(self.longest_gap, time.monotonic() - self._last)
        self._stopped.set()
        if self.is_alive():
            self.join(10)


def test_two_workers_on_two_hosts_keep_one_application_per_mirror(
        api, devstack, yarn_cluster, control_plane, unique, figures):
    """A second worker with its own data folder (another host); the first is killed with -9 and comes back
    later. Sampled from the ResourceManager every second, from the first submission to the end, on a
    thread of its own, then checked against the ResourceManager's record of when each application was
    accepted and ended: never two applications of one mirror alive at once.

    The mirrors run in real-time mode, as a mirror under steady traffic does: its driver and executor
    then cost about 4% and 2% of a core (measured on the test bed), where a micro-batch mirror taking a
    batch a second (heartbeats) costs about 14% and 6%, and ten of those saturate two cores.

    The suite runs 2 mirrors for 40 s; MIRRORPLANE_HA_MIRRORS and MIRRORPLANE_HA_SECONDS scale it up
    (the test bed's NodeManagers hold about 5 mirrors of this size; MIRRORPLANE_TESTBED_NODEMANAGER_MB
    lets them hold more: 11264 holds 10). Every 10 s each mirror's remote end offset is read: the
    longest time one went without copying a record is reported and bounded."""
    mirrors = int(os.environ.get("MIRRORPLANE_HA_MIRRORS", "2"))
    seconds = float(os.environ.get("MIRRORPLANE_HA_SECONDS", "40"))
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    create_clusters(api, devstack)
    names = [f"ha{i}-{unique}" for i in range(mirrors)]
    second = control_plane["spawn_worker"]("second")
    sampler = ApplicationSampler(yarn.ResourceManager(yarn_cluster.resourcemanager_url), names)
    sampler.start()  # from the first submission on
    try:
        # Two at a time, as an operator adds mirrors: ten Spark applications starting at once on this
        # two-core machine starve each other past the supervisor's start timeout.
        for pair in (names[i:i + 2] for i in range(0, len(names), 2)):
            for name in pair:
                kafka_tools.create_topic(east, name, 1)
                create_yarn_mirror(api, name, name, spark=YARN_SPARK | {"executor_cores": 2},
                                   connectors={"source": {"tasks_max": 2,
                                                          "config": {"replication.mode": "real-time"}}})
            for name in pair:
                wait_for_status(api, name, lambda s: s["application"]["state"] == "running", 300)
        producer = Producer({"bootstrap.servers": east, "linger.ms": 5})
        started = time.monotonic()
        killed = restarted = False
        sequence = 0
        copied_at = dict.fromkeys(names, (0, started))  # remote end offset, when it last grew
        longest_stall = dict.fromkeys(names, 0.0)
        next_check = started + 10
        while time.monotonic() - started < seconds:
            elapsed = time.monotonic() - started
            if not killed and elapsed > seconds * 0.13:
                control_plane["kill_worker"]()
                killed = True
            if killed and not restarted and elapsed > seconds * 0.53:
                control_plane["start_worker"]()
                restarted = True
            sequence += 1
            for name in names:
                producer.produce(name, key=f"{sequence}".encode(), value=b"v", partition=0)
            producer.poll(0)
            if time.monotonic() >= next_check:
                next_check += 10
                now = time.monotonic()
                for name in names:
                    end = sum(kafka_tools.end_offsets(west, f"east.{name}").values())
                    if end > copied_at[name][0]:
                        copied_at[name] = (end, now)
                    longest_stall[name] = max(longest_stall[name], now - copied_at[name][1])
            time.sleep(max(0.0, started + sequence - time.monotonic()))
        assert producer.flush(60) == 0
        sampler.stop()
        most = sampler.most
        assert max(most.values()) <= 1, f"more than one application of a mirror at once: {most}"
        assert max(longest_stall.values()) <= 60, f"a mirror went a minute without copying: {longest_stall}"
        deadline = time.monotonic() + 90
        while True:  # every mirror kept replicating: the target catches up with every record produced
            copied = {name: sum(kafka_tools.end_offsets(west, f"east.{name}").values()) for name in names}
            if all(count >= sequence for count in copied.values()):
                break
            assert time.monotonic() < deadline, f"a mirror stopped replicating: {copied} of {sequence}"
            time.sleep(1)
        # The samples can miss a second application that lived between two of them (in the lowered test lane
        # the ResourceManager went 23 s unsampled); its own record of every application's start and end cannot.
        history = {name: rm_applications(sampler.rm, name, yarn.ALIVE_STATES + yarn.ENDED_STATES) for name in names}
        at_once = {name: pairs for name, apps in history.items() if (pairs := alive_together(apps))}
        assert not at_once, f"two applications of a mirror were alive at once, by the ResourceManager: {at_once}"
        figures(f"{mirrors} YARN mirrors, 2 workers, one killed -9 at {seconds * 0.13:.0f} s and restarted at "
                f"{seconds * 0.53:.0f} s, {seconds:.0f} s: {sampler.samples} ResourceManager samples (longest gap "
                f"{sampler.longest_gap:.1f} s, {sampler.errors} unanswered), at most {max(most.values())} "
                f"application per mirror, {sum(map(len, history.values()))} applications in the ResourceManager's "
                f"record of them, none alive beside another of its mirror; longest time a mirror copied nothing "
                f"{max(longest_stall.values()):.0f} s (read every 10 s); "
                f"copied {sorted(copied.values())} of {sequence} records each")
    finally:
        sampler.stop()
        control_plane["stop_worker"](second)
        for name in names:
            api.delete(f"/api/v1/mirrors/{name}/")
