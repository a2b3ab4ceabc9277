"""The throughput and tasks samples the application loop records (spark_runtime/samples.py)."""

from __future__ import annotations

from spark_runtime.samples import Sampler, Totals, tasks_point, throughput_point, totals


def source(records: int, bytes_: int, offsets: dict | None = None, state: str = "RUNNING", tasks: int = 1) -> dict:
    return {"state": state, "tasks": [{"id": i, "state": state} for i in range(tasks)],
            "metrics": {"records": records, "bytes": bytes_, "batches": 1, "last_batch": None},
            "partitions": [{"topic": t, "partition": p, "remote_topic": f"east.{t}", "last_upstream_offset": last,
                            "last_downstream_offset": last} for (t, p), last in (offsets or {}).items()]}


def test_rates_are_deltas_of_the_cumulative_counters_over_the_elapsed_time():
    before = totals({"source": source(100, 10_000, {("a", 0): 49, ("a", 1): 49, ("b", 0): 9})}, at=1000.0)
    after = totals({"source": source(400, 40_000, {("a", 0): 149, ("a", 1): 249, ("b", 0): 9, ("c", 0): 5,
                                                   ("b", 1): 3})}, at=1002.0)
    assert throughput_point(before, after) == {
        "records_per_s": 150.0, "bytes_per_s": 15_000.0, "records": 400, "bytes": 40_000,
        # b:1 and c:0 have no earlier position: their topics' rates are unknown until the next sample
        "topics": {"a": 150.0, "b": None, "c": None}}


def test_no_partition_written_yet_means_no_topics_and_zero_rates():
    before, after = Totals(10.0, 0, 0), Totals(12.5, 0, 0)
    assert throughput_point(before, after) == {"records_per_s": 0.0, "bytes_per_s": 0.0, "records": 0, "bytes": 0}


def test_no_elapsed_time_gives_no_point_and_counters_never_go_negative():
    assert throughput_point(Totals(5.0, 10, 10), Totals(5.0, 20, 20)) is None
    assert throughput_point(Totals(5.0, 10, 10), Totals(7.0, 4, 4))["records_per_s"] == 0.0


def test_a_misconfigured_source_without_metrics_counts_as_zero():
    assert totals({"source": {"state": "FAILED", "error": "bad", "tasks": [], "restart": 0}}, 1.0) == Totals(1.0, 0, 0)
    assert totals({}, 1.0) == Totals(1.0, 0, 0)


def test_tasks_are_counted_by_state_over_every_connector():
    connectors = {
        "source": source(0, 0, state="RUNNING", tasks=3),
        "checkpoint": {"state": "PAUSED", "tasks": [{"id": 0, "state": "PAUSED"}]},
        "heartbeat": {"state": "RUNNING", "tasks": [{"id": 0, "state": "RUNNING"}]},
    }
    assert tasks_point(connectors) == {"PAUSED": 1, "RUNNING": 4}


def test_a_connector_without_tasks_counts_only_when_failed_and_running_is_always_there():
    connectors = {
        "source": {"state": "FAILED", "error": "cannot list topics", "tasks": []},  # failed before it had tasks
        "checkpoint": {"state": "RUNNING", "tasks": []},  # no group matches: nothing to do
        "heartbeat": {"state": "STOPPED", "tasks": []},
    }
    assert tasks_point(connectors) == {"FAILED": 1, "RUNNING": 0}
    assert tasks_point({}) == {"RUNNING": 0}
    failed_task = {"source": {"state": "FAILED", "tasks": [{"id": 0, "state": "FAILED"}, {"id": 1, "state": "FAILED"}]}}
    assert tasks_point(failed_task) == {"FAILED": 2, "RUNNING": 0}


def test_sampler_samples_every_interval_and_starts_throughput_at_the_second_sample():
    sampler = Sampler(interval=2.0)
    first = sampler.sample({"source": source(0, 0)}, now=100.0)
    assert first == {"tasks": {"RUNNING": 1}}  # the baseline: no rate yet
    assert sampler.sample({"source": source(50, 500)}, now=101.0) == {}  # too early
    second = sampler.sample({"source": source(100, 1000)}, now=102.0)
    assert second["tasks"] == {"RUNNING": 1}
    assert second["throughput"] == {"records_per_s": 50.0, "bytes_per_s": 500.0, "records": 100, "bytes": 1000}
    third = sampler.sample({"source": source(100, 1000)}, now=104.5)
    assert third["throughput"]["records_per_s"] == 0.0


def test_sampler_samples_at_once_when_the_clock_is_set_back():
    sampler = Sampler(interval=2.0)
    sampler.sample({"source": source(0, 0)}, now=100.0)
    points = sampler.sample({"source": source(10, 10)}, now=50.0)
    assert "tasks" in points and "throughput" not in points  # no negative elapsed time
