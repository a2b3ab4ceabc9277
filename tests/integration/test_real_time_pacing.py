"""Real-time mode's paced polls on real brokers: a fast slot's consumer polls at most once per
`replication.real.time.poll.pace.ms`, a backlog is read at full speed all the same, nothing is lost."""

from __future__ import annotations

import statistics
import time

import pytest

from tests.integration import kafka_tools
from tests.integration.kafka_tools import Record
from tests.integration.test_mirror_end_to_end import create_clusters, wait_for_status
from tests.integration.test_real_time_mode import PARTITIONS, Paced, arrival_latencies, create_mirror, mode_of

pytestmark = pytest.mark.django_db(transaction=True)

PACE_MS = 1000  # long enough to tell paced polls from the few milliseconds of unpaced ones
BURST = 20_000  # records per partition
PACED_BURST_SECONDS = BURST / 500 * PACE_MS / 1000  # a slot's backlog if every full poll (500) were paced too


def paced_polls(status: dict) -> int:
    return int((status.get("progress") or {}).get("paced_polls") or 0)


def test_fast_slots_poll_at_the_pace_and_a_backlog_is_read_at_full_speed(api, devstack, control_plane, unique,
                                                                          figures):
    east, west = devstack.clusters["east"].bootstrap_servers, devstack.clusters["west"].bootstrap_servers
    topic, name = f"paced-{unique}", f"paced-{unique}"
    kafka_tools.create_topic(east, topic, PARTITIONS)
    create_clusters(api, devstack)
    create_mirror(api, name, topic, {"replication.mode": "real-time",
                                     "replication.real.time.poll.pace.ms": str(PACE_MS),
                                     "replication.real.time.poll.pace.above.records.per.second": "20"})
    wait_for_status(api, name, lambda s: mode_of(s) == "real-time" and s["connectors"]["source"]["state"] == "RUNNING",
                    120)
    kafka_tools.wait_for_topic(west, f"east.{topic}", 60)

    traffic = Paced(east, topic, 200)  # 100 records/s a partition: above the limit, a poll far from full
    traffic.start()
    time.sleep(5)
    latencies = arrival_latencies(west, f"east.{topic}", 10)
    status = wait_for_status(api, name, lambda s: paced_polls(s) > 0, 30)
    sent = traffic.stop()
    assert latencies, "no record arrived in 10 s"
    median = statistics.median(latencies)
    assert median >= PACE_MS / 5, f"median {median:.0f} ms: the polls were not paced"

    burst_at = int(time.time() * 1000)
    burst = {p: [Record(f"b{p}-{i}".encode(), f"v{p}-{i}".encode(), (("seq", str(i).encode()),), burst_at + i)
                 for i in range(BURST)] for p in range(PARTITIONS)}
    before = kafka_tools.end_offsets(west, f"east.{topic}")
    started = time.monotonic()
    kafka_tools.produce(east, topic, burst)
    expected = {p: before.get(p, 0) + BURST for p in range(PARTITIONS)}
    deadline = time.monotonic() + 120
    while any(end < expected[p] for p, end in kafka_tools.end_offsets(west, f"east.{topic}").items()):
        assert time.monotonic() < deadline, "the backlog was not copied within 120 s"
        time.sleep(0.2)
    burst_seconds = time.monotonic() - started
    assert burst_seconds < PACED_BURST_SECONDS / 2, f"{burst_seconds:.1f} s: full polls were paced too"

    total = sum(len(records) for records in sent.values()) + BURST * PARTITIONS
    received = kafka_tools.consume_all(west, f"east.{topic}", total, timeout=60)
    for partition in range(PARTITIONS):
        assert received.get(partition) == sent[partition] + burst[partition], f"partition {partition} differs"
    figures(f"real-time mode paced to a poll every {PACE_MS} ms above 20 records/s a slot: at 200 records/s the "
            f"median latency {median:.0f} ms, {paced_polls(status)} polls paced; a backlog of "
            f"{BURST * PARTITIONS:,} records copied in {burst_seconds:.1f} s; {total:,} records byte-identical")
