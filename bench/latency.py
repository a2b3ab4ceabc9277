"""Steady-state end-to-end latency: a producer at a fixed rate into a fresh source topic while the
candidate mirrors it, one consumer on the target computing arrival time minus record timestamp.

Phases: warm-up (the candidate starts, catches up with what was produced meanwhile, and runs at least
`WARMUP_STEADY_SECONDS` with less than a second of records waiting), then `seconds` of measured records
(keys starting with "m"), then a drain of at most `DRAIN_SECONDS`. Only measured records count; a
measured record that never arrives is reported as missing. The record timestamp is the producer's
CreateTime, set when the application hands the record to its client.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.candidates import Candidate, Environment, RunSpec
from bench.cluster import create_topic, delete_topics
from bench.measure import ResourceSampler
from bench.stats import percentile

WARMUP_STEADY_SECONDS = 10.0
WARMUP_TIMEOUT_SECONDS = 300.0
DRAIN_SECONDS = 30.0
TICK_SECONDS = 0.005


def latency_summary(latencies_ms: Sequence[float], expected: int) -> dict:
    """Percentiles of the measured records' latencies, and how many never arrived."""
    if not latencies_ms:
        return {"records": 0, "missing": expected, "p50_ms": None, "p95_ms": None, "p99_ms": None,
                "max_ms": None, "mean_ms": None}
    return {
        "records": len(latencies_ms),
        "missing": max(expected - len(latencies_ms), 0),
        "p50_ms": round(percentile(latencies_ms, 50), 1),
        "p95_ms": round(percentile(latencies_ms, 95), 1),
        "p99_ms": round(percentile(latencies_ms, 99), 1),
        "max_ms": round(max(latencies_ms), 1),
        "mean_ms": round(sum(latencies_ms) / len(latencies_ms), 1),
    }


class TargetReader(threading.Thread):
    """Reads the remote topic from its beginning as soon as it exists; latency per measured record."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True, name="latency-reader")
        self.bootstrap, self.topic = bootstrap, topic
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.warm = 0
        self.first_arrival: float | None = None
        self.measured: list[float] = []
        self.error: str | None = None

    def run(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "bench-latency",
                             "enable.auto.commit": False, "fetch.wait.max.ms": 100})
        try:
            while not self.stopping.is_set():
                topic = consumer.list_topics(self.topic, timeout=5).topics.get(self.topic)
                if topic is not None and not topic.error and topic.partitions:
                    consumer.assign([TopicPartition(self.topic, p, 0) for p in topic.partitions])
                    break
                time.sleep(0.2)
            while not self.stopping.is_set():
                messages = consumer.consume(10_000, timeout=0.05)
                arrived = time.time() * 1000
                with self.lock:
                    for message in messages:
                        if message.error():
                            continue
                        if self.first_arrival is None:
                            self.first_arrival = time.monotonic()
                        if message.key()[:1] == b"m":
                            self.measured.append(arrived - message.timestamp()[1])
                        else:
                            self.warm += 1
        except Exception as error:  # noqa: BLE001 - reported with the result
            self.error = f"{type(error).__name__}: {error}"
        finally:
            consumer.close()


class RateProducer:
    """Produces `rate` records/s, evenly paced, keys "w..." (warm-up) or "m..." (measured)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int, key_bytes: int,
                 record_bytes: int) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1, "acks": "all",
                                  "enable.idempotence": True, "compression.type": "none"})
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.key_bytes = key_bytes
        self.values = [os.urandom(record_bytes) for _ in range(64)]
        self.sent = 0

    def run(self, prefix: bytes, until: Callable[[int, float], bool]) -> int:
        """Produce until `until(records of this phase, seconds of this phase)`; returns the records sent."""
        started, count = time.monotonic(), 0
        while True:
            elapsed = time.monotonic() - started
            if until(count, elapsed):
                break
            while count < int(elapsed * self.rate):
                key = prefix + str(count).rjust(max(self.key_bytes - 1, 1), "0").encode()
                self.producer.produce(self.topic, key=key, value=self.values[count & 63],
                                      partition=count % self.partitions, headers=[("bench-seq", b"")])
                count += 1
            self.producer.poll(0)
            time.sleep(TICK_SECONDS)
        self.sent += count
        return count

    def close(self) -> None:
        self.producer.flush(30)


def measure(candidate: Candidate, spec: RunSpec, env: Environment, rate: int, seconds: float, key_bytes: int,
            record_bytes: int, say: Callable[[str], None] = print) -> dict:
    create_topic(env.source, spec.topic, spec.partitions)
    candidate.prepare(spec)
    reader = TargetReader(env.target, spec.remote_topic)
    producer = RateProducer(env.source, spec.topic, spec.partitions, rate, key_bytes, record_bytes)
    sampler = ResourceSampler({"candidate": candidate.process_groups})
    result: dict = {"candidate": candidate.name, "tasks": spec.tasks, "rate": rate, "seconds": seconds,
                    "label": spec.label, "remote_topic": spec.remote_topic, "error": None}
    expected = 0
    try:
        sampler.start()
        candidate.start(spec)
        reader.start()

        def warmed(sent: int, elapsed: float) -> bool:
            if elapsed > WARMUP_TIMEOUT_SECONDS:
                raise TimeoutError(f"no steady replication within {WARMUP_TIMEOUT_SECONDS:.0f} s")
            if (why := candidate.failure()) or reader.error:
                raise RuntimeError(why or reader.error)
            with reader.lock:
                first, received = reader.first_arrival, reader.warm
            return (first is not None and time.monotonic() - first >= WARMUP_STEADY_SECONDS
                    and sent - received < rate)

        warm = producer.run(b"w", warmed)
        result["warmup_records"] = warm
        say(f"  {candidate.title}: replicating steadily after {warm / rate:.0f} s; measuring {seconds:g} s "
            f"at {rate:,} records/s")
        before = sampler.snapshot()["candidate"]
        expected = producer.run(b"m", lambda sent, elapsed: elapsed >= seconds)
        after = sampler.snapshot()["candidate"]
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline:
            with reader.lock:
                if len(reader.measured) >= expected:
                    break
            time.sleep(0.2)
        result["cpu_seconds_measured"] = round(after["cpu_seconds"] - before["cpu_seconds"], 2)
        result["peak_rss_mb"] = after["peak_rss_mb"]
    except (TimeoutError, RuntimeError) as error:
        result["error"] = str(error)
    finally:
        reader.stopping.set()
        reader.join(10)
        producer.close()
        sampler.stop()
        result["details"] = candidate.details()
        candidate.stop()
    with reader.lock:
        result |= latency_summary(reader.measured, expected)
    result["expected"] = expected
    delete_topics(env.target, f"{spec.alias}.")
    delete_topics(env.source, spec.topic)
    return result
