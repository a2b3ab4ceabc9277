"""The summary lines of Kafka's producer and consumer perf tools."""

from __future__ import annotations

from bench.upper import parse_consumer, parse_producer

PRODUCER_OUTPUT = """612345 records sent, 122469.0 records/sec (119.60 MB/sec), 180.3 ms avg latency, \
420.0 ms max latency.
1000000 records sent, 125000.9 records/sec (122.07 MB/sec), 175.21 ms avg latency, 431.00 ms max latency, \
160 ms 50th, 300 ms 95th, 410 ms 99th, 430 ms 99.9th.
"""
CONSUMER_OUTPUT = """[2030-01-01 10:00:00,000] WARN a log line, with commas, of no interest (x)
2030-01-01 10:00:01:000, 2030-01-01 10:00:06:000, 976.5625, 195.3125, 1000000, 200000.0000, 312, 4688, \
208.3112, 213310.5802
"""


def test_producer_summary_is_the_last_total():
    assert parse_producer(PRODUCER_OUTPUT) == {"records": 1_000_000, "records_per_second": 125000.9,
                                               "mb_per_second": 122.07}
    assert parse_producer("Exception in thread main") is None


def test_consumer_summary_line():
    result = parse_consumer(CONSUMER_OUTPUT)
    assert result == {"records": 1_000_000, "records_per_second": 200000.0, "mb_per_second": 195.3125,
                      "fetch_records_per_second": 213310.5802, "fetch_mb_per_second": 208.3112, "rebalance_ms": 312}
    assert parse_consumer("WARNING: Exiting before consuming the expected number of messages") is None
