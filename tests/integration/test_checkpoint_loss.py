"""A mirror that lost its Spark checkpoint resumes from its offset syncs instead of copying again.

Real clusters, real Spark, the real control plane: a mirror copies a backlog, its application (or
only its source connector) stops, its checkpoint folder is deleted as an operator or a lost disk
would, more records arrive, and it starts again. Every record must arrive, in order per
partition, and only the few records copied after each partition's latest offset sync (MM2 syncs
at least every offset.lag.max records) may be copied twice; the status says how many.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from controlplane.infra import hadoop_fs
from mirrorcore import channel
from mirrorcore.formats import OffsetSync
from mirrors.services import runtime
from mirrors.services.redis_client import get_redis
from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

PARTITIONS = 3
# Not a multiple of the spacing of offset syncs (offset.lag.max + 1 records) per partition: the
# copy ends between two syncs, so some records are copied again.
BACKLOG = 60_240
MORE = 15_000
BATCH = 5_000  # batch.max.records
MAX_OFFSET_LAG = 100  # offset.lag.max, MM2's default


def records(partition: int, first: int, count: int) -> list[Record]:
    return [Record(f"{partition}-{i}".encode(), b"v" * 100, (("seq", str(i).encode()),), 1_700_000_000_000 + i)
            for i in range(first, first + count)]


class Traffic(threading.Thread):
    """Numbered records into every partition, `rate` per second in all, until stopped."""

    def __init__(self, bootstrap: str, topic: str, first: int, rate: int) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.rate = bootstrap, topic, rate
        self.next = first  # per partition
        self.halt = threading.Event()

    def run(self) -> None:
        per_tick = max(1, self.rate // 10 // PARTITIONS)
        while not self.halt.is_set():
            kafka_tools.produce(self.bootstrap, self.topic,
                                {p: records(p, self.next, per_tick) for p in range(PARTITIONS)})
            self.next += per_tick
            time.sleep(0.1)

    def stop(self) -> int:
        """Stops the traffic; returns the records written per partition."""
        self.halt.set()
        self.join(30)
        return self.next


def checkpoint_location(name: str, hadoop_conf: str | None = None) -> str:
    """The mirror's checkpoint folder, as the control plane told its application (on YARN: as the engine
    places it; the configuration file left the worker with the submission)."""
    if hadoop_conf:
        from mirrors.engines.yarn import YarnEngine

        return YarnEngine(conf_dir=hadoop_conf).checkpoint_location(name)
    config = json.loads((runtime.work_dir(name) / runtime.APP_CONFIG).read_text())
    return config.get("checkpoint_location") or str(runtime.work_dir(name) / "checkpoints")


def verb(api, name: str, kind: str, action: str) -> None:
    response = api.put(f"/api/v1/mirrors/{name}/connectors/{kind}/{action}/")
    assert response.status_code == 202, response.content


def copied_up_to(api, name: str, topic: str, last: int, timeout: float) -> dict:
    """Wait until the source connector reports offset `last` of every partition written."""
    return wait_for_status(api, name, lambda s: {
        p["partition"]: p["last_upstream_offset"] for p in (s["progress"] or {}).get("partitions", [])
        if p["topic"] == topic} == dict.fromkeys(range(PARTITIONS), last), timeout)


@pytest.mark.parametrize("stop", ["application", "source-connector"])
def test_lost_checkpoint_resumes_from_offset_syncs(api, devstack, control_plane, unique, figures, stop, request):
    """A local checkpoint folder lost while the mirror is stopped. (A checkpoint lost on HDFS, under a
    mirror on YARN: test_checkpoint_deleted_under_a_running_mirror[yarn].)"""
    topic, name = f"lost-{unique}", f"lost-{unique}"
    remote = f"east.{topic}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    per_partition = BACKLOG // PARTITIONS
    kafka_tools.create_topic(east, topic, PARTITIONS)
    kafka_tools.produce(east, topic, {p: records(p, 0, per_partition) for p in range(PARTITIONS)})
    create_clusters(api, devstack)
    created = time.monotonic()
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        # Micro-batches throughout: a real-time query stopped on purpose hands its positions over and
        # leaves no checkpoint to lose (test_real_time_mode covers that path).
        "connectors": {"source": {"tasks_max": 2, "config": {"batch.max.records": str(BATCH),
                                                             "replication.mode": "micro-batch"}}},
    }, format="json")
    assert response.status_code == 201, response.content
    request.addfinalizer(lambda: api.delete(f"/api/v1/mirrors/{name}/"))  # its heartbeats would reach later tests
    copied_up_to(api, name, topic, per_partition - 1, 240)
    backlog_seconds = time.monotonic() - created
    assert kafka_tools.end_offsets(west, remote) == dict.fromkeys(range(PARTITIONS), per_partition)

    # Stop, lose the checkpoint, write more while stopped.
    kinds = ("source", "checkpoint", "heartbeat") if stop == "application" else ("source",)
    for kind in kinds:
        verb(api, name, kind, "stop")
    location = checkpoint_location(name)
    if stop == "application":
        wait_for_status(api, name, lambda s: s["application"]["state"] == "not_running"
                        and not s["application"]["pid"] and not s["application"]["id"], 60)
        wait_for(lambda: name not in runtime.running_apps(), 30, f"the application of {name} exiting", poll=0.2)
    else:
        wait_for_status(api, name, lambda s: s["connectors"]["source"]["state"] == "STOPPED", 60)
    source_checkpoint = f"{location}/source"
    assert hadoop_fs.exists(f"{source_checkpoint}/offsets"), f"no checkpoint where the application was told: " \
                                                                 f"{location}"
    hadoop_fs.delete(location)
    assert not hadoop_fs.exists(location)
    kafka_tools.produce(east, topic, {p: records(p, per_partition, MORE // PARTITIONS) for p in range(PARTITIONS)})
    total_per_partition = per_partition + MORE // PARTITIONS

    restarted, resumed_at = time.monotonic(), time.time()
    for kind in kinds:
        verb(api, name, kind, "resume")
    copied_up_to(api, name, topic, total_per_partition - 1, 240)
    resume_seconds = time.monotonic() - restarted
    assert hadoop_fs.exists(f"{source_checkpoint}/offsets"), "the new query checkpoints where the old one did"

    # Every record, in order per partition; the duplicates are the records after the latest sync.
    expected = {p: [r.key for r in records(p, 0, total_per_partition)] for p in range(PARTITIONS)}
    arrived = kafka_tools.arrived_in_order(kafka_tools.read_topic(west, remote), expected)
    duplicates = {}
    for partition in range(PARTITIONS):
        keys = arrived[partition].keys
        duplicates[partition] = arrived[partition].duplicates
        # the copy is the old copy, then the source again from the resume point
        restart_at = per_partition - duplicates[partition]
        assert keys == expected[partition][:per_partition] + expected[partition][restart_at:], f"partition {partition}"
        assert 0 <= duplicates[partition] <= MAX_OFFSET_LAG + BATCH, f"partition {partition}: re-copied"

    live = channel.read_status(get_redis(), name)
    resumed = live["connectors"]["source"]["resumed"]
    assert resumed["from"] == "offset-syncs"
    ours = {key: start for key, start in resumed["per_partition"].items() if key.startswith(f"{topic}:")}
    assert sorted(ours) == [f"{topic}:{p}" for p in range(PARTITIONS)]  # beside them: the heartbeats topic
    assert all(start["how"] == "offset-sync" for start in ours.values())
    assert sum(start["duplicates"] for start in ours.values()) == sum(duplicates.values())
    for partition in range(PARTITIONS):
        reported = ours[f"{topic}:{partition}"]
        assert reported["duplicates"] == duplicates[partition]
        assert reported["start"] == per_partition - duplicates[partition]
        assert reported["remote_end"] == per_partition
    # The first record copied after the resume is synced (as after an MM2 task start): consumers'
    # offsets translate past the duplicates.
    sync_records = kafka_tools.read_topic(east, "mm2-offset-syncs.west.internal")[0]
    syncs = [OffsetSync.decode(record.key, record.value) for _, record in sync_records]
    for partition in range(PARTITIONS):
        start = per_partition - duplicates[partition]
        assert OffsetSync(topic, partition, start, per_partition) in syncs, f"partition {partition}: no sync at resume"
    # The lag counts from where replication resumed, never from the partitions' beginning.
    points = api.get(f"/api/v1/mirrors/{name}/metrics/?series=lag&since={resumed_at:.0f}").json()["points"]
    lags = [sum(p["records"] for p in point["partitions"] if p["topic"] == topic) for point in points]
    worst_lag = max(lags, default=0)
    assert worst_lag <= MORE + sum(duplicates.values()), lags
    figures(f"stopping the {stop}, checkpoint deleted: {BACKLOG} records copied in {backlog_seconds:.1f} s, "
            f"{MORE} more written while stopped; all {BACKLOG + MORE} on the target {resume_seconds:.1f} s after "
            f"the resume (lag at most {worst_lag} records, {len(lags)} points); duplicates per partition "
            f"{duplicates} (offset.lag.max {MAX_OFFSET_LAG}, batch.max.records {BATCH}; a re-copy: {BACKLOG})")


def restart_source(api, name: str) -> float:
    """Restart the source connector (Kafka Connect's verb); returns when it was asked."""
    asked = time.time()
    response = api.post(f"/api/v1/mirrors/{name}/connectors/source/restart/")
    assert response.status_code == 202, response.content
    return asked


def resumed_since(api, name: str, since: float, timeout: float) -> dict:
    """The source connector's latest start without a usable checkpoint, once it is later than `since`."""
    status = wait_for_status(api, name, lambda s: (s["progress"] or {}).get("resumed") is not None
                             and s["progress"]["resumed"]["at"] >= since, timeout)
    return status["progress"]["resumed"]


@pytest.mark.parametrize("engine", ["local", "yarn"])
def test_checkpoint_deleted_under_a_running_mirror(api, devstack, control_plane, unique, figures, engine, request):
    """The checkpoint folder vanishes while the query writes to it under steady traffic (an operator's
    mistake, a storage cleanup). The query fails on its next batch and the connector restarts; or, if
    the restart comes first, it starts without a checkpoint: either way it resumes from the offset
    syncs. Then only the checkpoint's metadata file is lost, and a restart must not trust the rest."""
    env = None
    spark = {}
    if engine == "yarn":
        from tests.integration.test_yarn_mirrors import YARN_SPARK

        env, spark = request.getfixturevalue("yarn_cluster").submit_env(), YARN_SPARK
    topic, name = f"gone-{unique}", f"gone-{unique}"
    remote = f"east.{topic}"
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    per_partition = 10_040
    kafka_tools.create_topic(east, topic, PARTITIONS)
    kafka_tools.produce(east, topic, {p: records(p, 0, per_partition) for p in range(PARTITIONS)})
    create_clusters(api, devstack)
    response = api.post("/api/v1/mirrors/", {
        "name": name, "source": "east", "target": "west", "topics": topic,
        # Micro-batches: each batch writes the checkpoint, so a deleted folder is noticed at the next one (a
        # real-time query on local[N] logs its offsets once per ten-minute epoch).
        "connectors": {"source": {"tasks_max": 2, "config": {"batch.max.records": str(BATCH),
                                                             "replication.mode": "micro-batch"}}}, "spark": spark,
    }, format="json")
    assert response.status_code == 201, response.content
    request.addfinalizer(lambda: api.delete(f"/api/v1/mirrors/{name}/"))
    copied_up_to(api, name, topic, per_partition - 1, 240)
    location = checkpoint_location(name, env["HADOOP_CONF_DIR"] if env else None)
    source_checkpoint = f"{location}/source"
    assert hadoop_fs.exists(f"{source_checkpoint}/offsets", env)

    traffic = Traffic(east, topic, per_partition, rate=600)
    traffic.start()
    try:
        time.sleep(5)  # batches flow under the traffic
        deleted = time.time()
        hadoop_fs.delete(location, env)
        time.sleep(5)  # the running query reaches its next batch
        asked = restart_source(api, name)
        first = resumed_since(api, name, deleted, 120)
        time.sleep(5)
        # Part of a checkpoint lost: the metadata file. Restarting from the rest is refused.
        assert hadoop_fs.exists(f"{source_checkpoint}/metadata", env), "the new query checkpoints again"
        hadoop_fs.delete(f"{source_checkpoint}/metadata", env)
        partly_lost = restart_source(api, name)
        second = resumed_since(api, name, partly_lost, 120)
        time.sleep(5)
    finally:
        total_per_partition = traffic.stop()
    copied_up_to(api, name, topic, total_per_partition - 1, 240)
    caught_up = time.time() - partly_lost

    expected = {p: [r.key for r in records(p, 0, total_per_partition)] for p in range(PARTITIONS)}
    arrived = kafka_tools.arrived_in_order(kafka_tools.read_topic(west, remote), expected)
    duplicates = {}
    for partition in range(PARTITIONS):
        duplicates[partition] = arrived[partition].duplicates
        # two resumes, each copying again at most what followed a partition's latest sync, and at
        # most one interrupted batch run again
        assert 0 <= duplicates[partition] <= 2 * MAX_OFFSET_LAG + 3 * BATCH, f"partition {partition}: {duplicates}"
    reported_each = []
    for resumed in (first, second):
        assert resumed["from"] == "offset-syncs", resumed
        ours = {key: start for key, start in resumed["per_partition"].items() if key.startswith(f"{topic}:")}
        assert sorted(ours) == [f"{topic}:{p}" for p in range(PARTITIONS)], resumed
        assert all(start["how"] == "offset-sync" for start in ours.values()), ours
        assert all(start["duplicates"] <= MAX_OFFSET_LAG + BATCH for start in ours.values()), ours
        reported_each.append(sum(start["duplicates"] for start in ours.values()))
    reported = sum(reported_each)
    assert second["cause"] == "the checkpoint's metadata file is missing", second
    # A restart that interrupts a micro-batch runs it again from the checkpoint (at least once, as a
    # Connect task restarted mid-batch): those copies come on top of the ones a resume reports.
    assert reported <= sum(duplicates.values()), (first, second, duplicates)
    assert channel.read_status(get_redis(), name)["connectors"]["source"]["state"] == "RUNNING"
    figures(f"{engine}: checkpoint deleted under a running mirror at 600 records/s: resumed from the offset syncs "
            f"{first['at'] - deleted:.1f} s later ({first['cause']}; the restart was asked {asked - deleted:.1f} s "
            f"after the deletion); metadata file then lost and the connector restarted: resumed "
            f"{second['at'] - partly_lost:.1f} s later ({second['cause']}); all {total_per_partition * PARTITIONS} "
            f"records on the target {caught_up:.1f} s after the second restart; 0 lost; duplicates per partition "
            f"{duplicates}, {reported_each[0]} and {reported_each[1]} reported by the two resumes "
            f"(offset.lag.max {MAX_OFFSET_LAG}, batch.max.records {BATCH})")
