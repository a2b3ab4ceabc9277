"""A reader that follows an internal topic gets each record as it arrives, on a real broker."""

from __future__ import annotations

import statistics
import time

from confluent_kafka import OFFSET_END, Producer

from mirrorcore.connection import ClusterConnection
from spark_runtime.topic_reader import FOLLOWER, PartitionReader
from tests.integration import kafka_tools

RECORDS = 20


def test_a_follower_waiting_500_ms_per_fetch_gets_each_record_as_it_arrives(devstack, unique, figures):
    """The broker answers a waiting fetch once a record arrives: the follower's long wait adds nothing."""
    west = devstack.clusters["west"].bootstrap_servers
    topic = f"follow-{unique}"
    kafka_tools.create_topic(west, topic, 1)
    reader = PartitionReader(ClusterConnection("west", west), topic, "follow-test", FOLLOWER, start=OFFSET_END)
    producer = Producer({"bootstrap.servers": west, "linger.ms": 0, "acks": "all"})
    try:
        deadline = time.monotonic() + 30
        while not reader.caught_up and time.monotonic() < deadline:  # assigned and at the end
            reader.poll(timeout=0.2)
        assert reader.caught_up, "the follower never reached the end of an empty topic"
        latencies = []
        for i in range(RECORDS):
            time.sleep(0.3)  # the follower's fetch is waiting on the broker when the record arrives
            producer.produce(topic, value=str(i).encode())
            producer.flush(10)
            acknowledged = time.monotonic()
            records = []
            while not records and time.monotonic() < acknowledged + 5:
                records = reader.poll(timeout=0.05)
            assert [r.value() for r in records] == [str(i).encode()]
            latencies.append((time.monotonic() - acknowledged) * 1000)
    finally:
        reader.close()
    p50 = statistics.median(latencies)
    figures(f"topic follower (fetch.wait.max.ms 500): {RECORDS} records, acknowledged to read p50 {p50:.1f} ms, "
            f"max {max(latencies):.1f} ms")
    # Held for the fetch's whole wait, records would arrive about 250 ms after their write in the median.
    assert p50 < 60, f"a follower got records {p50:.0f} ms after they were written (median)"
