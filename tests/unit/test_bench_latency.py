"""Latency levels and the reader's accounting and resolution."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys

import pytest

from bench import latency, options, report_markdown
from bench.candidates.base import Environment, RunSpec
from bench.candidates.direct import DirectRead
from bench.candidates.mirrorplane import settling_reason
from bench.candidates.raw import RawCopy
from bench.latency import (
    ReaderState,
    _account,
    _outcome,
    level_label,
    machine_breakdown,
    resolution_summary,
    resolve_rate,
)
from bench.tail import tail_summary


def test_rates_of_the_levels():
    assert resolve_rate("5000", None) == 5000
    assert resolve_rate("5000", 80_000.0) == 5000
    assert resolve_rate("50%", 123_457.0) == 61_728
    assert resolve_rate("12.5%", 1000.0) == 125
    assert resolve_rate("50%", None) is None
    assert level_label("50%") == "50pct" and level_label("12.5%") == "12-5pct" and level_label("5000") == "5000"


def test_resolution_summary():
    summary = resolution_summary([float(v) for v in range(1, 101)], 0.75)
    assert summary == {"p50_us": 50.5, "p99_us": 99.0, "max_us": 100.0, "calls": 100, "queued_share": 0.75}
    assert resolution_summary([], 0.0)["p50_us"] is None


class _Message:
    def __init__(self, key: bytes, timestamp: int, error: object = None) -> None:
        self._key, self._timestamp, self._error = key, timestamp, error

    def key(self) -> bytes:
        return self._key

    def timestamp(self) -> tuple[int, int]:
        return 1, self._timestamp

    def error(self) -> object:
        return self._error

    def partition(self) -> int:
        return 0


def test_each_record_is_timed_with_the_time_it_was_handed_over():
    from array import array

    state = ReaderState(multiprocessing.get_context("spawn"))
    latencies, stamps, partitions, gaps = array("d"), array("d"), array("i"), array("d")
    _account([_Message(b"w1", 900), _Message(b"m1", 950), _Message(b"m2", 990), _Message(b"m3", 0, error="x")],
             1000.0, latencies, state, stamps, partitions, gaps, 25.0)
    assert list(latencies) == [50.0, 10.0]
    assert (list(stamps), list(partitions), list(gaps)) == ([950.0, 990.0], [0, 0], [25.0, 25.0])
    assert (state.warm.value, state.measured.value) == (1, 2)
    first = state.first_arrival.value
    assert first > 0
    _account([], 2000.0, latencies, state, stamps, partitions, gaps, 0.0)
    assert state.first_arrival.value == first


def test_the_machine_breakdown_leaves_what_no_sampled_set_used_to_the_rest():
    before = {"candidate": {"cpu_seconds": 5.0}, "source_broker": {"cpu_seconds": 100.0}, "redis": {"cpu_seconds": 1.0}}
    after = {"candidate": {"cpu_seconds": 23.0}, "source_broker": {"cpu_seconds": 130.5},
             "redis": {"cpu_seconds": 1.25}, "appeared_later": {"cpu_seconds": 2.0}}
    breakdown = machine_breakdown(before, after, (1000.0, 5000.0), (1070.0, 5120.0))
    assert breakdown == {"machine": 70.0, "candidate": 18.0, "source_broker": 30.5, "redis": 0.25, "rest": 21.25}


def test_outcome_counts_the_missing_against_what_was_produced():
    figures = _outcome({"latencies": {"records": 90, "missing": 0, "p99_ms": 12.0}, "resolution": {"p50_us": 3.0},
                        "error": None}, expected=100)
    assert figures["missing"] == 10 and figures["p99_ms"] == 12.0 and figures["reader_resolution_us"]["p50_us"] == 3.0
    failed = _outcome({"error": "the latency reader sent no result"}, expected=100)
    assert failed["missing"] == 100 and failed["p99_ms"] is None and failed["reader_error"]


@pytest.mark.parametrize("text", ["0", "-5", "150%", "fast", "0%"])
def test_bad_rate_levels(text):
    import argparse

    from bench.options import rate_level

    with pytest.raises(argparse.ArgumentTypeError):
        rate_level(text)


def test_tail_summary_tells_a_pause_from_noise():
    stamps = [float(i * 10) for i in range(1000)]  # 10 s of records, 100 a second
    latencies = [5.0] * 1000
    for i in range(300, 310):  # one pause: ten records of second 3 held back
        latencies[i] = 200.0
    tail = tail_summary(stamps, latencies, [i % 4 for i in range(1000)])
    assert (tail["records"], tail["seconds"], tail["partitions"], tail["start_ms"]) == (10, 1, 4, 0.0)
    assert tail["worst_seconds"][0] == {"second": 3, "records": 10, "max_ms": 200.0}
    assert tail["after_reader_pause"] == 0
    assert tail_summary([], [], [])["records"] == 0


def test_tail_summary_counts_the_slowest_records_the_reader_held_back():
    stamps = [float(i * 10) for i in range(1000)]
    latencies = [5.0] * 1000
    gaps = [0.0] * 1000
    for i in range(500, 506):  # the reader stalled 120 ms with these six queued
        latencies[i], gaps[i] = 130.0, 120.0
    for i in range(700, 704):  # slow on their own: the reader took them 2 ms after its previous call
        latencies[i], gaps[i] = 140.0, 2.0
    tail = tail_summary(stamps, latencies, [0] * 1000, gaps)
    assert (tail["records"], tail["after_reader_pause"], tail["reader_pause_max_ms"]) == (10, 6, 120.0)


@pytest.mark.parametrize(("replication_mode", "settled"), [
    ({}, False),
    ({"setting": "auto", "mode": "micro-batch", "reason": "backlog 87,131 records, above 50,000"},
     False),
    ({"setting": "auto", "mode": "real-time", "reason": "backlog 2,000 records, within 50,000"}, True),
    ({"setting": "auto", "mode": "micro-batch", "reason": "24 partitions, more than the 16 task slots"}, True),
    ({"setting": "micro-batch", "mode": "micro-batch", "reason": "replication.mode is micro-batch"}, True),
])
def test_a_mirror_copying_its_start_up_backlog_is_not_settled(replication_mode, settled):
    assert (settling_reason(replication_mode) is None) == settled


class _Starting:
    """A candidate whose start ends when `started` is set, in the steady state unless `settling`."""

    def __init__(self, settling: str | None = None) -> None:
        self.started, self.settling_reason = False, settling

    def starting(self) -> str | None:
        return None if self.started else "the next standby driver is not ready yet"

    def settling(self) -> str | None:
        return self.settling_reason


def test_the_warm_up_waits_for_the_candidate_start_without_a_grace_period():
    candidate = _Starting()
    wait = latency.SteadyWait(candidate, rate=5000)
    # keeping up for long past the settling grace: still starting, so not measured
    assert not wait.reached(sent=500_000, elapsed=100, first_arrival=1.0, received=499_000, now=100.0)
    candidate.started = True
    assert not wait.reached(sent=505_000, elapsed=101, first_arrival=1.0, received=504_000, now=101.0)
    assert wait.reached(sent=555_000, elapsed=111, first_arrival=1.0, received=554_000, now=111.0)
    candidate.started = False
    with pytest.raises(TimeoutError, match="standby driver is not ready"):
        wait.reached(sent=2_000_000, elapsed=latency.WARMUP_TIMEOUT_SECONDS + 1, first_arrival=1.0,
                     received=1_999_000, now=400.0)


def test_the_warm_up_measures_a_settling_candidate_after_the_grace_period():
    candidate = _Starting(settling="copying its start-up backlog in micro-batches")
    candidate.started = True
    wait = latency.SteadyWait(candidate, rate=5000)
    assert not wait.reached(sent=100_000, elapsed=20, first_arrival=1.0, received=99_000, now=20.0)
    assert not wait.reached(sent=100_000, elapsed=70, first_arrival=1.0, received=90_000, now=70.0), "behind"
    assert wait.reached(sent=300_000, elapsed=70, first_arrival=1.0, received=299_000, now=70.0)


def test_a_longer_steady_warm_up_holds_the_measurement_back_in_either_state():
    candidate = _Starting()
    candidate.started = True
    wait = latency.SteadyWait(candidate, rate=5000, steady_seconds=90)
    assert not wait.reached(sent=100_000, elapsed=20, first_arrival=1.0, received=99_000, now=20.0)
    assert not wait.reached(sent=500_000, elapsed=100, first_arrival=1.0, received=499_000, now=100.0)
    assert wait.reached(sent=550_000, elapsed=110, first_arrival=1.0, received=549_000, now=110.0)
    settling = _Starting(settling="copying its start-up backlog in micro-batches")
    settling.started = True
    wait = latency.SteadyWait(settling, rate=5000, steady_seconds=90)
    assert not wait.reached(sent=300_000, elapsed=70, first_arrival=1.0, received=299_000, now=70.0)
    assert wait.reached(sent=500_000, elapsed=95, first_arrival=1.0, received=499_000, now=95.0)
    assert wait.timeout == latency.WARMUP_TIMEOUT_SECONDS + 90 - latency.WARMUP_STEADY_SECONDS


def test_the_steady_warm_up_is_an_option_kept_in_the_report():
    assert options.parse([]).latency_steady_seconds == 60.0
    assert options.parse(["--latency-steady-seconds", "90"]).latency_steady_seconds == 90.0
    heading = report_markdown._latency_lines({}, {"latency_seconds": 60.0, "latency_steady_seconds": 90.0})[1]
    assert heading.endswith("60 s measured per run, after 90 s of keeping up")


def test_the_warm_up_looks_at_the_candidate_at_most_every_check_interval():
    wait = latency.SteadyWait(_Starting(), rate=5000)
    assert wait.due(10.0)
    assert not wait.due(10.0 + latency.CHECK_SECONDS / 2)
    assert wait.due(10.0 + latency.CHECK_SECONDS)


def test_the_floor_reads_the_source_topic_and_a_mirror_its_remote_topic(tmp_path):
    env = Environment(source="east:9092", target="west:9092", redis_url="redis://x", work_dir=tmp_path)
    spec = RunSpec(label="lat-direct-5000-r1", alias="drl5000r1", topic="latency-5000", partitions=8, tasks=2)
    assert DirectRead(env).reader_endpoint(spec) == ("east:9092", "latency-5000")
    assert DirectRead(env).process_groups() == []
    assert RawCopy(env).reader_endpoint(spec) == ("west:9092", "drl5000r1.latency-5000")


def test_the_waiting_standby_is_counted_apart_from_the_driver_this_run_claimed(tmp_path, monkeypatch):
    from bench.candidates.mirrorplane import Mirrorplane
    from mirrorcore import standby_folder

    env = Environment(source="east:9092", target="west:9092", redis_url="redis://x", work_dir=tmp_path)
    claimed, waiting = tmp_path / "standby-1", tmp_path / "standby-2"
    for folder in (claimed, waiting):
        folder.mkdir()
    standby_folder.write_claim(claimed, standby_folder.Claim(mirror="lat-mirrorplane-5000-r1", config="c.json"))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        mirrorplane = Mirrorplane(env)
        monkeypatch.setattr(mirrorplane, "_standbys", lambda: [(claimed, [os.getpid()]), (waiting, [sleeper.pid])])
        monkeypatch.setattr(mirrorplane, "_marker", lambda: "no-driver-of-its-own")
        mirrorplane.spec = RunSpec(label="lat-mirrorplane-5000-r1", alias="m1", topic="t", partitions=8, tasks=2)
        assert mirrorplane.waiting_groups() == [sleeper.pid], "the unclaimed standby, in a session of its own"
        assert mirrorplane.process_groups() == [os.getpgid(os.getpid())], "the claimed one drives this run"
    finally:
        sleeper.kill()
        sleeper.wait()
