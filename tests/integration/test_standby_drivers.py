"""Standby drivers on real Spark and brokers: a ready one warms its Kafka clients up against a registered
cluster, a mirror takes it, its records arrive within seconds of its creation, the pool refills, and the
claimed driver is the mirror's in every respect."""

from __future__ import annotations

import time

import pytest

from controlplane.infra import priority, processes
from mirrorcore import standby_folder
from mirrors.services import runtime, standby
from tests.integration import kafka_tools
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

RECORDS = 2_000
PARTITIONS = 2
# A standby driver takes 10-20 s to start on these 2 cores beside the brokers; a driver of its own
# put the first record 15-18 s after the mirror's creation in the benchmark.
READY_WITHIN = 120
FIRST_RECORD_WITHIN = 8.0


# The worker's default MIRRORPLANE_STANDBY_NICE
STANDBY_NICE = 10


def thread_niceness(driver: standby.Standby) -> set[int]:
    """The nice values of every thread of a standby's processes (the JVM, the Python driver)."""
    return set(priority.niceness_by_thread([driver.leader, *driver.pids]).values())


def session_niceness(driver: standby.Standby, worker_pid: int, increment: int) -> tuple[int | None, int | None]:
    """The standby's session nice value and the one expected, `increment` below the worker's session (both
    None without the kernel's autogroup scheduling)."""
    worker = priority.session_niceness(worker_pid)
    return priority.session_niceness(driver.leader), None if worker is None else min(19, worker + increment)


def ready_standbys() -> list[standby.Standby]:
    return [s for s in standby.standbys() if s.alive and s.ready and s.claim is None]


def test_a_mirror_takes_a_ready_standby_driver_and_the_pool_refills(api, devstack, yarn_cluster, control_plane,
                                                                    unique, figures):
    """With the YARN test bed up, the worker's HADOOP_CONF_DIR makes HDFS the default file system: the
    standby's warm-up and the mirror's checkpoints must still be on this host's disk."""
    topic, name = f"standby-{unique}", f"standby-{unique}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    kafka_tools.create_topic(east, topic, PARTITIONS)
    expected = kafka_tools.backfill(RECORDS, PARTITIONS)
    kafka_tools.produce(east, topic, expected)
    warm_topic = f"warm-{unique}"  # west, the newest cluster, has a topic with records to read
    kafka_tools.create_topic(west, warm_topic, 1)
    kafka_tools.produce(west, warm_topic, kafka_tools.backfill(20, 1))
    create_clusters(api, devstack)

    # A worker of its own, with none of the suite's standbys left: this test sees one start and warm up.
    with control_plane["worker_with"](clear_standbys=True, MIRRORPLANE_STANDBY_DRIVERS="1"):
        started = time.monotonic()
        [waiting] = wait_for(lambda: ready_standbys() or None, READY_WITHIN, "a ready standby driver")
        figures(f"standby driver ready {time.monotonic() - started:.1f} s after the worker started")
        own = priority.own_niceness()
        assert thread_niceness(waiting) == {own + STANDBY_NICE}, "a standby waits at a lower priority"
        worker = control_plane["pid"]
        session, wanted = session_niceness(waiting, worker, STANDBY_NICE)
        assert session == wanted, "and so does its session, where its threads' nice values count"
        # The pool hands it a registered cluster, against which its Java Kafka clients make their first
        # requests, Spark's Kafka source runs a micro-batch query and the slot source a real-time one.
        warmed = wait_for(lambda: standby_folder.warm_up_outcome(waiting.folder), 60, "the standby's Kafka warm-up")
        assert warmed.startswith("west: 1 nodes") and warmed.endswith(
            "records fetched, producer metadata, a micro-batch query, a real-time query of the slot source"), warmed
        figures(f"standby's Kafka warm-up over {time.monotonic() - started:.1f} s after the worker started "
                f"({warmed})")

        created = time.monotonic()
        response = api.post("/api/v1/mirrors/", {
            "name": name, "source": "east", "target": "west", "topics": topic,
            "connectors": {"source": {"tasks_max": 2}},
        }, format="json")
        assert response.status_code == 201, response.content
        first = kafka_tools.wait_for_first_record(west, f"east.{topic}", timeout=60)
        first_record = first - created
        received = kafka_tools.consume_all(west, f"east.{topic}", RECORDS, timeout=60)
        figures(f"first record on the target {first_record:.2f} s after the mirror was created "
                f"(all {RECORDS:,} after {time.monotonic() - created:.1f} s)")
        assert received == expected
        assert first_record < FIRST_RECORD_WITHIN

        # The standby is the mirror's driver: the supervisor recorded its pid, the process table
        # shows it as the mirror's, and the mirror's folder has its log.
        assert waiting.claim == standby_folder.Claim(name, str(runtime.work_dir(name) / runtime.APP_CONFIG))
        status = wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "RUNNING", 30)
        assert status["application"]["state"] == "running"
        assert runtime.running_apps()[name].drivers == [waiting.leader]
        assert thread_niceness(waiting) == {own}, "a claimed standby runs its mirror at full priority"
        session, wanted = session_niceness(waiting, worker, 0)
        assert session == wanted, "in a session at the worker's priority"
        log = (runtime.work_dir(name) / runtime.DRIVER_LOG).read_text()
        assert f"claimed for mirror {name}" in log and "Kafka warmed up against west" in log
        assert "falling behind" not in log and "warm-up" not in log, "the warm-up leaves no warnings to the mirror"

        # The pool refills while the mirror runs.
        [refill] = wait_for(lambda: ready_standbys() or None, READY_WITHIN, "the next standby driver")
        assert refill.folder != waiting.folder
        assert thread_niceness(refill) == {own + STANDBY_NICE}
        session, wanted = session_niceness(refill, worker, STANDBY_NICE)
        assert session == wanted

        # Deleted, the mirror's driver (once the standby) stops; its folder is cleared away.
        assert api.delete(f"/api/v1/mirrors/{name}/").status_code == 204
        wait_for(lambda: not processes.find_processes(standby_folder.marker(waiting.folder)), 60,
                 "the claimed standby driver to stop")
        wait_for(lambda: not waiting.folder.exists(), 30, "the claimed standby's folder to be cleared")
        assert [s.folder for s in ready_standbys()] == [refill.folder]

    # A worker that keeps none stops the unclaimed standby.
    with control_plane["worker_with"](MIRRORPLANE_STANDBY_DRIVERS="0"):
        wait_for(lambda: not standby.standbys(), 60, "the unclaimed standby to be stopped")
        assert not processes.find_processes(standby_folder.marker(refill.folder))
