"""Taking over from a running Apache MirrorMaker 2 without copying again.

Apache MM2 (connect-mirror from Maven Central, dedicated mode as connect-mirror-maker.sh runs it)
replicates a topic under steady load and is stopped: with SIGTERM (Kafka Connect commits its
positions on the way out), or killed between two commits of its positions. Mirrorplane imports
MM2's properties file with `?adopt=true` while the load goes on. Every record must reach the
remote topic, in order per partition, and only what MM2 had copied but not committed may be copied
again, as the status reports.

The flow's cluster aliases are this test's own (both on the devstack's brokers), so that MM2's
internal topics (offsets, offset syncs, checkpoints) are too.
"""

from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from bench.candidates import mm2
from controlplane.infra import processes
from mirrorcore import adoption, remote_cluster
from mirrorcore.connection import ClusterConnection
from mirrors.models import Cluster
from tests.integration import kafka_tools
from tests.integration.test_checkpoint_loss import PARTITIONS, Traffic, records
from tests.integration.test_mirror_end_to_end import wait_for_status
from tests.integration.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

BACKLOG = 3_000  # per partition, before MM2 starts
RATE = 600  # records per second under way, all partitions


def committed(west: str, offsets_topic: str, source: str, topic: str) -> dict[int, int]:
    """MM2's committed source offsets of `topic` (flow `source`) per partition, in its offsets topic."""
    found = remote_cluster.read_topic(ClusterConnection(alias=source, bootstrap_servers=west), offsets_topic, 20)
    return {p: offset for (t, p), offset in adoption.committed_offsets(found or [], source).items() if t == topic}


class MirrorMaker2:
    """Apache MM2 in dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker) with a properties file."""

    def __init__(self, folder, text: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.properties = folder / "mm2.properties"
        self.properties.write_text(text)
        self.log = folder / "mm2.log"
        (folder / "log4j2.properties").write_text(mm2.LOG4J2.format(log=self.log))
        classpath = ":".join(str(jar) for jar in mm2.jars())
        argv = [shutil.which("java") or "java", "-Xms128M", "-Xmx512M",
                f"-Dlog4j2.configurationFile={folder / 'log4j2.properties'}",
                "-cp", classpath, mm2.MAIN_CLASS, str(self.properties)]
        self.process = processes.spawn(argv, folder / "stdout.log")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, kill: bool) -> float:
        """SIGTERM (Connect commits its offsets on the way out) or SIGKILL, then wait for the exit;
        returns the seconds it took."""
        started = time.monotonic()
        if kill:
            os.killpg(self.process.pid, signal.SIGKILL)
        else:
            processes.terminate(self.process.pid, str(self.properties), grace_seconds=60)
        self.process.wait(60)
        return time.monotonic() - started


# (how MM2 stops, its offset.flush.interval.ms: Connect's default is 60 s)
@pytest.mark.parametrize(("stop", "flush_ms"), [("sigterm", 1_000), ("sigkill", 10_000)])
def test_adopting_a_running_mm2_copies_nothing_again_but_its_uncommitted_records(
        api, devstack, control_plane, unique, figures, tmp_path, request, stop, flush_ms):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    source, target = f"src{unique}", f"dst{unique}"
    topic, name = f"adopt-{unique}", f"adopt-{unique}"
    remote, offsets_topic = f"{source}.{topic}", f"mm2-offsets.{source}.internal"
    kafka_tools.create_topic(east, topic, PARTITIONS)
    kafka_tools.produce(east, topic, {p: records(p, 0, BACKLOG) for p in range(PARTITIONS)})
    properties = mm2.mm2_properties(source, east, target, west, topic, tasks=2) + (
        f"{target}.offset.flush.interval.ms = {flush_ms}\n"
        f"emit.checkpoints.interval.seconds = 1\n"
        f"{target}->{source}.emit.heartbeats.enabled = false\n")  # no herder for the way back: a faster start

    traffic = Traffic(east, topic, BACKLOG, rate=RATE)
    traffic.start()
    request.addfinalizer(traffic.stop)
    started = time.monotonic()
    mirror_maker = MirrorMaker2(tmp_path / "mm2", properties)
    request.addfinalizer(lambda: processes.terminate(mirror_maker.process.pid, str(mirror_maker.properties), 30))

    # MM2 copies the backlog and commits positions past it in every partition.
    def past_backlog():
        assert mirror_maker.alive(), f"MM2 exited: {mirror_maker.log.read_text(errors='replace')[-2000:]}"
        found = committed(west, offsets_topic, source, topic)
        return len(found) == PARTITIONS and min(found.values()) >= BACKLOG and found

    found = wait_for(past_backlog, 180, "MM2 committing offsets past the backlog in every partition", poll=1)
    if stop == "sigkill":  # killed once it has copied records it has not committed yet
        wait_for(lambda: all(end > found[p] + 50 for p, end in kafka_tools.end_offsets(west, remote).items()),
                   60, "MM2 copying past its committed offsets")
    mm2_seconds = time.monotonic() - started
    stop_seconds = mirror_maker.stop(kill=stop == "sigkill")
    mm2_positions = committed(west, offsets_topic, source, topic)
    remote_ends = kafka_tools.end_offsets(west, remote)
    # The remote partitions start empty and the source has no gaps: remote offsets equal source offsets.
    uncommitted = {p: remote_ends[p] - (mm2_positions[p] + 1) for p in range(PARTITIONS)}
    assert all(count >= 0 for count in uncommitted.values()), (mm2_positions, remote_ends)

    # Mirrorplane takes over with MM2's own file, the load still on.
    text = properties + f"{source}->{target}.mirrorplane.name = {name}\n"
    adopted_at = time.monotonic()
    response = api.post("/api/v1/import/?adopt=true", data=text.encode(), content_type="text/plain")
    assert response.status_code == 201, response.content
    request.addfinalizer(lambda: api.delete(f"/api/v1/mirrors/{name}/"))
    [flow] = response.json()["adopted"]
    assert flow["offsets_topic"] == offsets_topic and flow["fallback"] == 0  # MM2 copies `heartbeats` too
    assert {e["partition"]: e["start"] for e in flow["partitions"] if e["topic"] == topic} == {
        p: mm2_positions[p] + 1 for p in range(PARTITIONS)}
    assert Cluster.objects.get(alias=source).bootstrap_servers == east

    status = wait_for_status(api, name, lambda s: (s["progress"] or {}).get("resumed") is not None, 180)
    resumed = status["progress"]["resumed"]
    time.sleep(3)  # traffic flows through the adopted mirror
    total = traffic.stop()
    wait_for_status(api, name, lambda s: {
        p["partition"]: p["last_upstream_offset"] for p in (s["progress"] or {}).get("partitions", [])
        if p["topic"] == topic} == dict.fromkeys(range(PARTITIONS), total - 1), 180)
    caught_up_seconds = time.monotonic() - adopted_at

    expected = {p: [r.key for r in records(p, 0, total)] for p in range(PARTITIONS)}
    arrived = kafka_tools.arrived_in_order(kafka_tools.read_topic(west, remote), expected)
    duplicates = {}
    for partition in range(PARTITIONS):
        keys = arrived[partition].keys
        start = mm2_positions[partition] + 1
        assert keys == expected[partition][:remote_ends[partition]] + expected[partition][start:], \
            f"partition {partition}"
        duplicates[partition] = arrived[partition].duplicates
        assert duplicates[partition] == uncommitted[partition], "only MM2's uncommitted copies come again"

    assert resumed["from"] == "mm2-offsets"
    for partition in range(PARTITIONS):
        reported = resumed["per_partition"][f"{topic}:{partition}"]
        assert reported["how"] == "mm2-offsets"
        assert reported["start"] == mm2_positions[partition] + 1
        assert reported["remote_end"] == remote_ends[partition]
        assert reported["duplicates"] == duplicates[partition]
    reported_total = sum(resumed["per_partition"][f"{topic}:{p}"]["duplicates"] for p in range(PARTITIONS))
    if stop == "sigkill":
        assert sum(duplicates.values()) > 0, "killed between two commits, MM2 had copied records it had not committed"
    figures(f"MM2 copied {BACKLOG * PARTITIONS} backlog records and more under {RATE}/s in {mm2_seconds:.1f} s, "
            f"stopped by {stop} (offset.flush.interval.ms {flush_ms}) in {stop_seconds:.1f} s; "
            f"adopted at {sum(remote_ends.values())} remote records, "
            f"{PARTITIONS * total} in all, 0 lost; duplicates per partition {duplicates} (MM2's uncommitted "
            f"copies, reported: {reported_total}); caught up {caught_up_seconds:.1f} s after the import "
            f"(a re-copy would be {sum(remote_ends.values())} duplicates)")
