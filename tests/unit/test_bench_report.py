"""The benchmark report: summaries, ratios, goals, the run order and the markdown."""

from __future__ import annotations

import pytest

from bench import report
from bench.options import parse
from bench.runner import plan, run_spec


def _run(candidate: str, tasks: int, rate: float, error: str | None = None, **extra) -> dict:
    return {"label": f"{candidate}-{tasks}-{rate}", "candidate": candidate, "tasks": tasks, "error": error,
            "records_per_second": None if error else rate, "mb_per_second": None if error else rate / 2000,
            "seconds": 10.0, "first_record_seconds": 2.0, "cpu_seconds": 12.0, "peak_rss_mb": 800.0,
            "broker_cpu_seconds": 30.0, **extra}


RUNS = [
    _run("mirrorplane", 2, 90_000, control_plane_cpu_seconds=1.5), _run("mirrorplane", 2, 100_000),
    _run("mirrorplane", 2, 120_000), _run("mirrorplane", 2, 0, error="timed out"),
    _run("mm2", 2, 80_000), _run("mm2", 2, 75_000), _run("mm2", 2, 85_000),
    _run("raw", 2, 150_000), _run("raw", 4, 200_000), _run("raw", 4, 180_000),
]
LATENCY = {"mirrorplane": {"tasks": 2, "rate": 5000, "seconds": 60, "p50_ms": 400.0, "p95_ms": 900.0,
                           "p99_ms": 1200.0, "max_ms": 1900.0, "records": 300000, "missing": 0, "error": None},
           "mm2": {"tasks": 2, "rate": 5000, "seconds": 60, "p50_ms": 20.0, "p95_ms": 60.0, "p99_ms": 110.0,
                   "max_ms": 400.0, "records": 300000, "missing": 0, "error": None}}


def test_summary_uses_only_successful_runs():
    summary = report.summarize(RUNS)
    ours = summary["mirrorplane"]["2"]
    assert ours["runs"] == 3 and ours["failed"] == 1
    assert ours["records_per_second"] == {"median": 100_000, "min": 90_000, "max": 120_000}
    assert ours["control_plane_cpu_seconds"]["median"] == 1.5
    assert summary["raw"]["4"]["records_per_second"]["median"] == 190_000
    assert "control_plane_cpu_seconds" not in summary["mm2"]["2"]


def test_ratios_against_mm2_raw_and_the_best_raw():
    ratios = report.ratios(report.summarize(RUNS))
    assert ratios["mirrorplane/mm2"] == {"2": 1.25}
    assert ratios["mirrorplane/raw"] == {"2": pytest.approx(0.667, abs=1e-3)}
    assert ratios["mirrorplane/raw_best"] == {"2": pytest.approx(0.526, abs=1e-3)}


def test_ratio_is_none_without_the_other_candidate():
    ratios = report.ratios(report.summarize([r for r in RUNS if r["candidate"] == "mirrorplane"]))
    assert ratios["mirrorplane/mm2"] == {"2": None}
    assert ratios["mirrorplane/raw_best"] == {"2": None}


def test_goals_of_issue_7():
    goals = {g["goal"]: g for g in report.goals(report.ratios(report.summarize(RUNS)), LATENCY)}
    assert goals["backfill Mirrorplane >= 1.2x MM2 at tasks.max 2"]["met"] is True
    assert goals["backfill Mirrorplane (tasks.max 2) >= 0.7x the raw limit"]["met"] is False
    assert goals["Mirrorplane p99 latency <= 1.5 s"] | {} == {
        "goal": "Mirrorplane p99 latency <= 1.5 s", "measured": 1200.0, "unit": "ms", "met": True}


def _report(complete: bool = True) -> dict:
    settings = {"records": 2_000_000, "record_bytes": 512, "key_bytes": 16, "partitions": 8, "repetitions": 3,
                "dataset_mb": 1088.0}
    machine = {"cpu_model": "Test CPU", "cores": 2, "memory_gb": 23.4, "kafka": "4.3.1", "spark": "4.0.0",
               "java": "openjdk version 17.0.1"}
    return report.build(machine, settings, RUNS, LATENCY, complete=complete) | {"generated_at": "2030-01-01 UTC"}


def test_markdown_tables():
    text = report.render_markdown(_report())
    assert text.startswith("# Benchmark: Mirrorplane vs Apache MirrorMaker 2 vs the raw limit\n")
    assert "2,000,000 records of 512 B with 16-byte keys" in text
    assert "| Mirrorplane | 2 | 100,000 (90,000-120,000) | 50.0 (45.0-60.0) | 10.0 | 2.0 |" in text
    assert "| 12.0 | 800 | 30.0 | 3 (1 failed) |" in text
    assert "| MirrorMaker 2 | 2 | 80,000 (75,000-85,000) |" in text
    assert "| raw Java copy | 4 | 190,000 (180,000-200,000) |" in text
    assert "| 2 | 1.25x | 0.67x | 0.53x |" in text
    assert "| Mirrorplane | 2 | 400 | 900 | 1,200 | 1,900 | 300,000 | 0 |" in text
    assert "| backfill Mirrorplane >= 1.2x MM2 at tasks.max 2 | 1.25x | yes |" in text
    assert "| backfill Mirrorplane (tasks.max 2) >= 0.7x the raw limit | 0.53x | **no** |" in text
    assert "| Mirrorplane p99 latency <= 1.5 s | 1,200 ms | yes |" in text
    assert "## Failed runs\n\n- mirrorplane-2-0: timed out" in text
    assert "Incomplete" not in text
    assert "Incomplete: the benchmark was interrupted" in report.render_markdown(_report(complete=False))


def test_markdown_without_latency_or_ratios():
    data = report.build({}, {"records": 10, "record_bytes": 1, "key_bytes": 1, "partitions": 1, "repetitions": 1,
                             "dataset_mb": 0.0}, [_run("raw", 2, 5.0)], {}, complete=True)
    text = report.render_markdown(data)
    assert "| raw Java copy | 2 | 5 |" in text
    assert "Latency" not in text and "Mirrorplane / MM2" not in text


def test_run_order_alternates_between_repetitions():
    order = list(plan(3, (2, 4), ("mirrorplane", "mm2", "raw")))
    assert order[:6] == [(1, 2, "mirrorplane"), (1, 2, "mm2"), (1, 2, "raw"),
                         (1, 4, "mirrorplane"), (1, 4, "mm2"), (1, 4, "raw")]
    assert order[6:9] == [(2, 2, "raw"), (2, 2, "mm2"), (2, 2, "mirrorplane")]
    assert order[12:15] == [(3, 2, "mirrorplane"), (3, 2, "mm2"), (3, 2, "raw")]
    assert len(order) == 18


def test_every_run_gets_a_fresh_alias_and_remote_topic():
    specs = [run_spec(r, t, c, 8) for r, t, c in plan(3, (2, 4), ("mirrorplane", "mm2", "raw"))]
    assert len({s.remote_topic for s in specs}) == len(specs)
    assert len({s.label for s in specs}) == len(specs)
    assert specs[0].remote_topic == "mp1t2.bench" and specs[0].label == "r1-mirrorplane-t2"


def test_options():
    options = parse([])
    assert (options.records, options.record_bytes, options.key_bytes, options.partitions) == (2_000_000, 512, 16, 8)
    assert options.tasks == (2, 4) and options.repetitions == 3 and options.only == ("mirrorplane", "mm2", "raw")
    assert str(options.out).endswith("bench/results/latest.json")
    assert str(options.markdown_out).endswith("bench/results/latest.md")
    options = parse(["--records", "200_000", "--tasks", "4, 2,4", "--only", "raw,mirrorplane", "--skip-latency"])
    assert options.records == 200_000 and options.tasks == (4, 2) and options.only == ("mirrorplane", "raw")
    assert options.skip_latency


@pytest.mark.parametrize("argv", [["--records", "0"], ["--tasks", ""], ["--only", "kafka"],
                                  ["--latency-seconds", "-1"]])
def test_bad_options_exit_with_the_reason(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    assert "error: argument" in capsys.readouterr().err


SCALE = {"candidate": "mirrorplane", "topics": 100, "partitions_per_topic": 10, "partitions": 1000,
         "records_per_partition": 10, "tasks": 2, "error": None, "partitions_complete": 1000,
         "first_partition_seconds": 9.5, "p50_partition_seconds": 14.2, "all_partitions_seconds": 21.7,
         "peak_rss_mb": 1234.0, "cpu_seconds": 40.0}


def test_scale_goal_and_table():
    goals = {g["goal"]: g for g in report.goals({}, {}, SCALE)}
    assert goals["1,000 partitions all replicating within 60 s"] | {} == {
        "goal": "1,000 partitions all replicating within 60 s", "measured": 21.7, "unit": "s", "met": True}
    text = report.render_markdown(report.build({}, _report()["settings"], RUNS, LATENCY, complete=True, scale=SCALE))
    assert "## Scale: one mirror of 100 topics x 10 partitions (1,000 partitions, 10 records each)" in text
    assert "| 9.5 | 14.2 | 21.7 | 1,000 | 1,234 | 40.0 |  |" in text
    assert "| 1,000 partitions all replicating within 60 s | 21.7 s | yes |" in text


def test_scale_goal_not_met_when_partitions_are_missing_and_unmeasured_below_its_size():
    incomplete = SCALE | {"partitions_complete": 990, "all_partitions_seconds": None, "error": "timed out"}
    assert report.goals({}, {}, incomplete)[0]["met"] is False
    small = SCALE | {"topics": 10, "partitions": 100}
    assert report.goals({}, {}, small)[0]["met"] is None
    slow = SCALE | {"all_partitions_seconds": 75.0}
    assert report.goals({}, {}, slow)[0]["met"] is False


def test_scale_summary_of_partition_arrivals():
    from bench.scale import summary

    assert summary([3.0, 1.0, 2.0], total=3) == {"partitions_complete": 3, "first_partition_seconds": 1.0,
                                                 "p50_partition_seconds": 2.0, "all_partitions_seconds": 3.0}
    assert summary([3.0, 1.0], total=3)["all_partitions_seconds"] is None
    assert summary([], total=3)["partitions_complete"] == 0
