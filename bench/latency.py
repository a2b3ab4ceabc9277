"""End-to-end latency at a fixed rate: a producer at `rate` records/s into a fresh source topic while
the candidate mirrors it, a reader on the target computing each record's arrival time minus its
timestamp.

Phases: warm-up (the candidate starts, catches up with what was produced meanwhile, and runs at least
`steady_seconds` (`WARMUP_STEADY_SECONDS` unless set) with less than a second of records waiting, its own start over
(`Candidate.starting`), and in the state it keeps under steady traffic, `Candidate.settling`, or
keeping up after `SETTLE_GRACE_SECONDS`, or `steady_seconds` if longer, in another), then
`seconds` of measured records (keys starting with "m"), then a drain of at most `DRAIN_SECONDS`. Between
warm-up and measurement every dirty page is written back (`sync`), so that both brokers' files are next
dirtied together: on one disk, the kernel then writes them back in the same bursts in every candidate's
measured seconds, whatever its start-up took (bench.disk). Only measured records count; a measured
record that never arrives is reported as missing. The record timestamp is the producer's CreateTime,
set when the application hands the record to its client.

The reader runs in a process of its own (no lock shared with the producer) and times every record as
its client hands it over: it takes what the client has already fetched without waiting
(`consume(n, timeout=0)`), stamps each record with the time the call returned, and waits with `poll()`
for a single record only when nothing is queued, so a record is never held back by a wait for others.
A record handed over by a non-waiting call arrived at the earliest when the previous call returned:
the time between the two calls is the reader's resolution for it, reported as its median, p99 and
maximum (`reader_resolution_us`). A record of the slowest 1% handed over after such a gap of at least
`READER_PAUSE_MS` waited, in part, for the reader rather than the mirror: the tail counts them
(`after_reader_pause`), so a tail of the harness's own making is told from the candidate's.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import time
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from multiprocessing.connection import Connection
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.candidates.base import Candidate, Environment, RunSpec
from bench.cluster import create_topic, delete_topics
from bench.disk import DiskSampler, attribute
from bench.jit import compiler_cpu_seconds
from bench.measure import ResourceSampler, busy_share, machine_cpu
from bench.options import of_maximum
from bench.stats import percentile
from bench.tail import tail_summary
from bench.writeback import write_back

# How long `measure` keeps a candidate steady unless told, and the part of WARMUP_TIMEOUT_SECONDS meant
# for it. The benchmark's command line asks for a minute (`--latency-steady-seconds`): a JVM mirror's JIT
# compiles its copy path for more than a minute after its first record (both mirrors measured 9-11 CPU s
# of compiling in a minute that began 30 s after their start; Mirrorplane's driver compiled 2-3 CPU s
# every 10 s until about 75 s after its claim), and the steady state the latency goals are about begins
# after it.
WARMUP_STEADY_SECONDS = 10.0
SETTLE_GRACE_SECONDS = 60.0
WARMUP_TIMEOUT_SECONDS = 300.0
DRAIN_SECONDS = 30.0
TICK_SECONDS = 0.005
# How often the warm-up looks at the candidate's state: Mirrorplane's scans the process table for its
# next standby driver, which on every tick of the producer (200 a second) took CPU from that driver's start.
CHECK_SECONDS = 0.25
READER_BATCH = 500
READER_WAIT_SECONDS = 0.05


def resolve_rate(level: str, max_rate: float | None) -> int | None:
    """Records/s of a latency level: "5000" as it is, "50%" of `max_rate` (None without one)."""
    if of_maximum(level):
        if not max_rate:
            return None
        return max(1, round(max_rate * float(level[:-1]) / 100))
    return int(level)


def level_label(level: str) -> str:
    """A level as it may appear in a mirror name: "5000" or "50pct"."""
    return level.replace("%", "pct").replace(".", "-")


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


def resolution_summary(gaps_us: Sequence[float], queued_share: float) -> dict:
    """The reader's resolution: the times between two calls when the second handed over records that
    were already queued, and the share of records handed over so (the others woke a waiting poll)."""
    if not gaps_us:
        return {"p50_us": None, "p99_us": None, "max_us": None, "calls": 0, "queued_share": 0.0}
    return {"p50_us": round(percentile(gaps_us, 50), 1), "p99_us": round(percentile(gaps_us, 99), 1),
            "max_us": round(max(gaps_us), 1), "calls": len(gaps_us), "queued_share": round(queued_share, 3)}


class ReaderState:
    """What the reader process shares with the harness while it runs."""

    def __init__(self, context: Any) -> None:
        self.warm = context.Value("q", 0)
        self.measured = context.Value("q", 0)
        self.first_arrival = context.Value("d", 0.0)  # time.monotonic() of the first record, 0: none yet
        self.stopping = context.Event()


def read_target(bootstrap: str, topic: str, state: ReaderState, results: Connection) -> None:
    """The reader process: latencies of measured records until `state.stopping`; sends a summary."""
    latencies, gaps, stamps, partitions, record_gaps = array("d"), array("d"), array("d"), array("i"), array("d")
    queued_records = 0
    error = None
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-latency",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    try:
        _assign_when_present(consumer, topic, state)
        previous = time.perf_counter()
        while not state.stopping.is_set():
            messages = consumer.consume(READER_BATCH, timeout=0)
            waited = not messages
            if waited:
                message = consumer.poll(READER_WAIT_SECONDS)
                messages = [message] if message is not None else []
            arrived, now = time.time() * 1000, time.perf_counter()
            gap_ms = 0.0
            if messages and not waited:
                gaps.append((now - previous) * 1e6)
                queued_records += len(messages)
                gap_ms = (now - previous) * 1000
            previous = now
            _account(messages, arrived, latencies, state, stamps, partitions, record_gaps, gap_ms)
    except Exception as failure:  # noqa: BLE001 - reported with the result
        error = f"{type(failure).__name__}: {failure}"
    finally:
        consumer.close()
    share = queued_records / len(latencies) if latencies else 0.0
    results.send({"latencies": latency_summary(latencies, 0), "resolution": resolution_summary(gaps, share),
                  "tail": tail_summary(stamps, latencies, partitions, record_gaps), "received": len(latencies),
                  "error": error})
    results.close()


def _assign_when_present(consumer: Consumer, topic: str, state: ReaderState) -> None:
    while not state.stopping.is_set():
        metadata = consumer.list_topics(topic, timeout=5).topics.get(topic)
        if metadata is not None and not metadata.error and metadata.partitions:
            consumer.assign([TopicPartition(topic, p, 0) for p in metadata.partitions])
            return
        time.sleep(0.2)


def _account(messages: list, arrived_ms: float, latencies: array, state: ReaderState, stamps: array,
             partitions: array, record_gaps: array, gap_ms: float) -> None:
    warm = measured = 0
    for message in messages:
        if message.error():
            continue
        if message.key()[:1] == b"m":
            stamp = message.timestamp()[1]
            latencies.append(arrived_ms - stamp)
            stamps.append(stamp)
            partitions.append(message.partition())
            record_gaps.append(gap_ms)
            measured += 1
        else:
            warm += 1
    if warm or measured:
        if not state.first_arrival.value:
            state.first_arrival.value = time.monotonic()
        state.warm.value += warm
        state.measured.value += measured


class TargetReader:
    """The reader process, started when the candidate starts."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        context = multiprocessing.get_context("spawn")
        self.state = ReaderState(context)
        self._results, child_end = context.Pipe(duplex=False)
        self.process = context.Process(target=read_target, args=(bootstrap, topic, self.state, child_end),
                                       name="latency-reader", daemon=True)
        self._child_end = child_end
        self.result: dict | None = None

    def start(self) -> None:
        self.process.start()
        self._child_end.close()

    def stop(self, timeout: float = 60) -> dict:
        self.state.stopping.set()
        try:
            if self.process.pid is not None and self._results.poll(timeout):
                self.result = self._results.recv()
        except (EOFError, OSError):
            pass  # the reader died without a word: reported below
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
        return self.result or {"error": "the latency reader sent no result"}

    @property
    def alive_error(self) -> str | None:
        if self.process.pid is not None and not self.process.is_alive() and self.result is None:
            return "the latency reader exited early"
        return None


class RateProducer:
    """Produces `rate` records/s, evenly paced, keys "w..." (warm-up) or "m..." (measured)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: int, key_bytes: int,
                 record_bytes: int) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1, "acks": "all",
                                  "enable.idempotence": True, "compression.type": "none",
                                  "queue.buffering.max.messages": 2_000_000})
        self.topic, self.partitions, self.rate = topic, partitions, rate
        self.key_bytes = key_bytes
        self.values = [os.urandom(record_bytes) for _ in range(64)]
        self.sent = 0

    def run(self, prefix: bytes, until: Callable[[int, float], bool]) -> tuple[int, float]:
        """Produce until `until(records of this phase, seconds of this phase)`; returns the records sent
        and the seconds it took."""
        started, count = time.monotonic(), 0
        width = max(self.key_bytes - 1, 1)
        while True:
            elapsed = time.monotonic() - started
            if until(count, elapsed):
                break
            due = int(elapsed * self.rate)
            while count < due:
                try:
                    self.producer.produce(self.topic, key=prefix + str(count).rjust(width, "0").encode(),
                                          value=self.values[count & 63], partition=count % self.partitions,
                                          headers=[("bench-seq", b"")])
                except BufferError:
                    self.producer.poll(0.01)
                    continue
                count += 1
            self.producer.poll(0)
            time.sleep(TICK_SECONDS)
        self.sent += count
        return count, time.monotonic() - started

    def close(self) -> None:
        self.producer.flush(30)


class SteadyWait:
    """When the warm-up is over: the candidate's start is over, it keeps up (less than a second of
    records waiting) and has for `steady_seconds` in the state it keeps under steady traffic, or for
    `SETTLE_GRACE_SECONDS` (`steady_seconds` if longer) since its first record in another. Past
    `WARMUP_TIMEOUT_SECONDS` (longer by what `steady_seconds` adds) the run fails."""

    def __init__(self, candidate: Candidate, rate: int, steady_seconds: float = WARMUP_STEADY_SECONDS) -> None:
        self.candidate, self.rate, self.steady_seconds = candidate, rate, steady_seconds
        self.timeout = WARMUP_TIMEOUT_SECONDS + max(0.0, steady_seconds - WARMUP_STEADY_SECONDS)
        self.keeping_up_since: float | None = None
        self.next_check = 0.0

    def due(self, now: float) -> bool:
        """Whether to look at the candidate again: at most every CHECK_SECONDS."""
        if now < self.next_check:
            return False
        self.next_check = now + CHECK_SECONDS
        return True

    def reached(self, sent: int, elapsed: float, first_arrival: float, received: int, now: float) -> bool:
        starting, settling = self.candidate.starting(), self.candidate.settling()
        if elapsed > self.timeout:
            behind = sent - received
            why = starting or settling
            raise TimeoutError(f"no steady replication within {self.timeout:.0f} s: {sent:,} records "
                               f"sent, {behind:,} ({behind / self.rate:.1f} s) not on the target yet"
                               + (f"; {why}" if why else ""))
        if not first_arrival or sent - received >= self.rate or starting is not None:
            self.keeping_up_since = None
            return False
        if settling is not None:
            # In a state it would leave under less load (Mirrorplane's micro-batches at a high rate): measured as
            # it is once it has run SETTLE_GRACE_SECONDS since its first record and is keeping up.
            self.keeping_up_since = None
            return now - first_arrival >= max(SETTLE_GRACE_SECONDS, self.steady_seconds)
        self.keeping_up_since = self.keeping_up_since or now
        return now - self.keeping_up_since >= self.steady_seconds


def measure(candidate: Candidate, spec: RunSpec, env: Environment, rate: int, seconds: float, key_bytes: int,
            record_bytes: int, say: Callable[[str], None] = print,
            steady_seconds: float = WARMUP_STEADY_SECONDS, control_plane: Sequence[int] = (),
            brokers: Sequence[int] = (), services: Mapping[str, Callable[[], Iterable[int]]] | None = None) -> dict:
    """One latency run; `control_plane`: the process groups of the candidate's control plane (Mirrorplane's web
    app and Celery worker), whose CPU in the measured seconds is reported beside the candidate's own; `brokers`:
    the brokers' JVMs, whose JIT compilers' CPU in the measured seconds is reported (bench.jit); `services`: the
    process groups of what else runs on the machine, by name (the brokers, Redis, Mirrorplane's waiting standby
    and, in another candidate's runs, its control plane), whose CPU in those seconds is reported too, so that
    the machine's busy time is told apart (`machine_cpu_seconds`)."""
    create_topic(env.source, spec.topic, spec.partitions)
    candidate.prepare(spec)
    reader = TargetReader(*candidate.reader_endpoint(spec))
    producer = RateProducer(env.source, spec.topic, spec.partitions, rate, key_bytes, record_bytes)
    groups: dict[str, Callable[[], Iterable[int]]] = {"candidate": candidate.process_groups}
    if control_plane:
        groups["control_plane"] = functools.partial(tuple, control_plane)
    groups |= dict(services or {})
    # The control plane's worker reaps the Spark applications: only a candidate's own children are its.
    sampler = ResourceSampler(groups, services=[name for name in groups if name != "candidate"])
    disk_sampler = DiskSampler()
    result: dict = {"candidate": candidate.name, "tasks": spec.tasks, "rate": rate, "seconds": seconds,
                    "label": spec.label, "remote_topic": spec.remote_topic, "error": None}
    expected = 0
    try:
        sampler.start()
        disk_sampler.start()
        candidate.start(spec)
        reader.start()

        steady = SteadyWait(candidate, rate, steady_seconds)

        def warmed(sent: int, elapsed: float) -> bool:
            now = time.monotonic()
            if not steady.due(now):
                return False
            if why := (candidate.failure() or reader.alive_error):
                raise RuntimeError(why)
            return steady.reached(sent, elapsed, reader.state.first_arrival.value, reader.state.warm.value, now)

        warm, warm_seconds = producer.run(b"w", warmed)
        result["warmup_records"] = warm
        say(f"  {candidate.title}: replicating steadily after {warm_seconds:.0f} s; measuring {seconds:g} s "
            f"at {rate:,} records/s")
        result["writeback_before_measuring"] = write_back()
        usage_before, machine_before, jit_before = sampler.snapshot(), machine_cpu(), compiler_cpu_seconds(brokers)
        expected, measured_seconds = producer.run(b"m", lambda sent, elapsed: elapsed >= seconds)
        result["achieved_rate"] = round(expected / measured_seconds, 1) if measured_seconds else None
        usage_after = sampler.snapshot()
        if brokers:
            result["broker_jit_cpu_seconds"] = round(compiler_cpu_seconds(brokers) - jit_before, 2)
        machine_after = machine_cpu()
        breakdown = machine_breakdown(usage_before, usage_after, machine_before, machine_after)
        if control_plane:
            result["control_plane_cpu_seconds_measured"] = breakdown["control_plane"]
        # Everything on the machine: the candidate, the brokers, this producer and the reader.
        result["machine_busy_pct"] = busy_share(machine_before, machine_after)
        result["machine_cpu_seconds"] = breakdown
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline and reader.state.measured.value < expected:
            time.sleep(0.2)
        result["cpu_seconds_measured"] = breakdown["candidate"]
        result["peak_rss_mb"] = usage_after["candidate"]["peak_rss_mb"]
    except (TimeoutError, RuntimeError) as error:
        result["error"] = str(error)
    finally:
        outcome = reader.stop()
        producer.close()
        sampler.stop()
        disk_samples = disk_sampler.stop()
        result["details"] = candidate.details()
        candidate.stop()
    result |= _outcome(outcome, expected)
    result["tail"] = attribute(result["tail"], disk_samples)
    result["expected"] = expected
    delete_topics(env.target, f"{spec.alias}.")
    delete_topics(env.source, spec.topic)
    return result


def machine_breakdown(before: Mapping[str, dict], after: Mapping[str, dict], machine_before: tuple[float, float],
                      machine_after: tuple[float, float]) -> dict[str, float]:
    """The machine's busy CPU seconds between two readings, and each sampled set's share of them by name;
    `rest` is what none of the sets used: the harness's producer and reader, and the system."""
    shares = {name: round(after[name]["cpu_seconds"] - before[name]["cpu_seconds"], 2)
              for name in after if name in before}
    busy = round(machine_after[0] - machine_before[0], 2)
    return {"machine": busy, **shares, "rest": round(busy - sum(shares.values()), 2)}


def _outcome(outcome: dict, expected: int) -> dict:
    """The reader's result as the run's figures (its error only when the run has none)."""
    summary = dict(outcome.get("latencies") or latency_summary([], expected))
    summary["missing"] = max(expected - summary.get("records", 0), 0)
    figures = summary | {"reader_resolution_us": outcome.get("resolution"), "tail": outcome.get("tail")}
    if outcome.get("error"):
        figures["reader_error"] = outcome["error"]
    return figures
