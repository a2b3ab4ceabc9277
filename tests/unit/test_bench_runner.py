"""The run order, run names, figures of a run and the rates derived for the latency test."""

from __future__ import annotations

import pytest

from bench.backfill import cost_figures, plan, run_spec, throughput_figures
from bench.datasets import Dataset
from bench.latency_plan import derived_max_rate, latency_plan, lead_in_plan
from bench.runner import best_tasks

MAIN = Dataset("1024B", 1000, 1024, "none", 3, (2, 4), main=True)
LZ4 = Dataset("1024B-lz4", 500, 1024, "lz4", 1, (2,))


def test_run_order_alternates_between_repetitions():
    tasks = {"mirrorplane": (2, 4), "mm2": (2, 4), "raw": (2, 4)}
    order = list(plan(3, tasks, ("mirrorplane", "mm2", "raw")))
    assert order[:6] == [(1, 2, "mirrorplane"), (1, 2, "mm2"), (1, 2, "raw"),
                         (1, 4, "mirrorplane"), (1, 4, "mm2"), (1, 4, "raw")]
    assert order[6:9] == [(2, 2, "raw"), (2, 2, "mm2"), (2, 2, "mirrorplane")]
    assert order[12:15] == [(3, 2, "mirrorplane"), (3, 2, "mm2"), (3, 2, "raw")]
    assert len(order) == 18


def test_mm2_also_runs_at_its_best_tasks_max():
    order = list(plan(2, {"mirrorplane": (2,), "mm2": (2, 8)}, ("mirrorplane", "mm2")))
    assert order == [(1, 2, "mirrorplane"), (1, 2, "mm2"), (1, 8, "mm2"),
                     (2, 2, "mm2"), (2, 2, "mirrorplane"), (2, 8, "mm2")]


def test_every_run_gets_a_fresh_alias_and_remote_topic():
    tasks = {"mirrorplane": (2, 4), "mm2": (2, 4), "mm2-stock": (2, 4), "raw": (2, 4)}
    specs = [run_spec(r, t, c, MAIN, 8) for r, t, c in plan(3, tasks, tuple(tasks))]
    specs += [run_spec(r, t, c, LZ4, 8, variant=1) for r, t, c in plan(1, tasks, tuple(tasks))]
    assert len({s.remote_topic for s in specs}) == len(specs)
    assert len({s.label for s in specs}) == len(specs)
    assert specs[0].remote_topic == "mp1t2.bench" and specs[0].label == "r1-mirrorplane-t2"
    assert specs[-1].remote_topic == "raw1t4v1.bench-1024b-lz4" and specs[-1].compression == "lz4"
    assert specs[-1].label == "r1-raw-t4-1024b-lz4" and specs[-1].partitions == 8


def test_throughput_figures_of_a_run():
    samples = [(0.0, 0), (2.0, 0), (3.0, 100), (4.0, 500), (5.0, 900), (6.0, 1000)]
    figures = throughput_figures(1000, 2_000_000, 6.0, samples)
    assert figures["records_per_second"] == pytest.approx(166.7, abs=0.1)
    assert figures["mb_per_second"] == pytest.approx(0.33, abs=0.01)
    assert figures["steady_records_per_second"] == 400.0 and figures["steady_mb_per_second"] == 0.8
    assert throughput_figures(1000, 2_000_000, 6.0, [(6.0, 1000)])["steady_records_per_second"] is None


def test_cost_figures_count_the_control_plane_for_mirrorplane():
    usage = {"candidate": {"cpu_seconds": 9.0, "peak_rss_mb": 800.0}, "brokers": {"cpu_seconds": 4.0},
             "control_plane": {"cpu_seconds": 1.0}}
    assert cost_figures(usage, 100_000_000, True) == {"cpu_seconds": 9.0, "peak_rss_mb": 800.0,
                                                      "broker_cpu_seconds": 4.0, "control_plane_cpu_seconds": 1.0,
                                                      "cpu_seconds_per_mb": 0.1}
    assert cost_figures(usage, 100_000_000, False)["cpu_seconds_per_mb"] == 0.09


def _run(candidate: str, tasks: int, steady: float | None, rate: float, **extra) -> dict:
    return {"candidate": candidate, "tasks": tasks, "steady_records_per_second": steady, "records_per_second": rate,
            "phase": "main", "main_dataset": True, "error": None} | extra


def test_the_maximum_rate_comes_from_the_same_invocations_runs():
    runs = [_run("mm2", 2, 300.0, 200.0), _run("mm2", 2, 500.0, 250.0), _run("mm2", 4, 900.0, 800.0),
            _run("mm2", 2, 9999.0, 1.0, main_dataset=False), _run("mm2", 2, 9999.0, 1.0, error="boom"),
            _run("mirrorplane", 2, None, 120.0)]
    assert derived_max_rate(runs, "mm2", 2) == (400.0, "median steady-state records/s of 2 backfill run(s) at "
                                                       "tasks.max 2")
    assert derived_max_rate(runs, "mirrorplane", 2)[0] == 120.0
    assert derived_max_rate(runs, "raw", 2) == (None, "no successful backfill run")


def test_best_tasks_of_the_search():
    search = [{"tasks": 1, "records_per_second": 100.0}, {"tasks": 4, "records_per_second": 300.0},
              {"tasks": 8, "records_per_second": 900.0, "error": "timed out"}]
    assert best_tasks(search) == 4
    assert best_tasks([]) is None


def test_each_fixed_rate_level_starts_with_a_run_without_a_mirror():
    plan_ = latency_plan(("mirrorplane", "mm2"), ("5000", "50%"), 2, floor=True)
    assert plan_ == [(1, "5000", "direct"), (1, "5000", "mirrorplane"), (1, "5000", "mm2"),
                     (1, "50%", "mirrorplane"), (1, "50%", "mm2"),
                     (2, "5000", "direct"), (2, "5000", "mm2"), (2, "5000", "mirrorplane"),
                     (2, "50%", "mm2"), (2, "50%", "mirrorplane")]
    assert all(name != "direct" for _, _, name in latency_plan(("mm2",), ("5000",), 3, floor=False))


def test_lead_ins_run_each_candidate_once_per_level_before_any_measured_run():
    assert lead_in_plan(("mirrorplane", "mm2"), ("5000", "50%"), floor=True) == [
        ("5000", "direct"), ("5000", "mirrorplane"), ("5000", "mm2"), ("50%", "mirrorplane"), ("50%", "mm2")]
    assert lead_in_plan(("mm2",), ("5000",), floor=False) == [("5000", "mm2")]
