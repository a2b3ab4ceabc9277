"""The benchmark report: summaries, paired ratios, upper bounds, latency, goals and the markdown."""

from __future__ import annotations

import pytest

from bench import report, report_markdown


def _run(candidate: str, tasks: int, repetition: int, rate: float, error: str | None = None,
         dataset: str = "1024B", **extra) -> dict:
    return {"label": f"r{repetition}-{candidate}-t{tasks}-{dataset}", "candidate": candidate, "tasks": tasks,
            "repetition": repetition, "dataset": dataset, "error": error,
            "records_per_second": None if error else rate, "mb_per_second": None if error else rate / 1000,
            "steady_records_per_second": None if error else rate * 1.5,
            "steady_mb_per_second": None if error else rate * 1.5 / 1000, "seconds": 10.0,
            "first_record_seconds": 2.0, "cpu_seconds": 12.0, "cpu_seconds_per_mb": 0.012, "peak_rss_mb": 800.0,
            "broker_cpu_seconds": 30.0, "effective_tasks": min(tasks, 2) if candidate == "mirrorplane" else tasks,
            **extra}


RUNS = [
    _run("mirrorplane", 2, 1, 90_000, control_plane_cpu_seconds=0.4), _run("mirrorplane", 2, 2, 100_000),
    _run("mirrorplane", 2, 3, 120_000), _run("mirrorplane", 2, 4, 0, error="timed out"),
    _run("mm2", 2, 1, 80_000), _run("mm2", 2, 2, 50_000), _run("mm2", 2, 3, 100_000), _run("mm2", 2, 4, 70_000),
    _run("mm2", 4, 1, 100_000), _run("mm2", 4, 2, 100_000), _run("mm2", 4, 3, 100_000),
    _run("raw", 2, 1, 150_000), _run("raw", 2, 2, 200_000), _run("raw", 2, 3, 200_000),
]
LATENCY = [
    {"candidate": c, "level": level, "rate": rate, "tasks": 2, "repetition": r, "seconds": 60, "error": None,
     "p50_ms": p50 + r, "p95_ms": p50 * 2, "p99_ms": p50 * 3 + r, "max_ms": p50 * 5, "records": 300_000,
     "missing": 0, "achieved_rate": rate - 1, "cpu_seconds_measured": 10.0, "machine_busy_pct": 60.0 + r,
     "broker_jit_cpu_seconds": 0.1 * r,
     "reader_resolution_us": {"p50_us": 20.0, "p99_us": 300.0, "max_us": 900.0, "queued_share": 0.9}}
    | ({"control_plane_cpu_seconds_measured": 3.0 + r} if c == "mirrorplane" else {})
    | {"machine_cpu_seconds": {"machine": 70.0 + r, "candidate": 10.0, "standby": 0.5, "control_plane": 3.0,
                               "source_broker": 30.0 + r, "target_broker": 20.0, "redis": 0.2, "rest": 6.3}}
    for c, p50 in (("mirrorplane", 200.0), ("mm2", 20.0)) for level, rate in (("5000", 5000), ("50%", 60_000))
    for r in (1, 2, 3)
]
SETTINGS = {"records": 2_000_000, "record_bytes": 1024, "key_bytes": 16, "partitions": 8, "repetitions": 4,
            "dataset_mb": 2100.0, "latency_seconds": 60, "mm2_best_tasks": 4,
            "datasets": [{"name": "1024B", "records": 2_000_000, "record_bytes": 1024, "compression": "none"},
                         {"name": "1024B-lz4", "records": 500_000, "record_bytes": 1024, "compression": "lz4"}],
            "latency_max_rates": {"mirrorplane": {"records_per_second": 120_000.0, "source": "median steady"}},
            "brokers": {"jvm": "-Xms512m -Xmx512m -XX:+UseG1GC", "storage": "memory"},
            "broker_warm_ups": [{"dataset": "1024B", "records": 1_000_000, "seconds": 14.2, "errors": []}],
            "mirrorplane": {"spark_master": "local[2]", "driver_memory": "1g", "driver_java_release": 25,
                            "driver_java_options": "-XX:+UseParallelGC", "standby_drivers": 1},
            "mm2": {"jvm": "-Xmx2G -XX:+UseParallelGC", "class_archive": "/x.jsa",
                    "effective_producer": {"acks": "-1", "linger.ms": "5", "batch.size": "262144",
                                           "send.buffer.bytes": "131072"},
                    "effective_consumers": {"backlog": {"max.poll.records": "10000", "fetch.min.bytes": "1",
                                                        "receive.buffer.bytes": "65536"},
                                            "steady": {"max.poll.records": "500", "fetch.min.bytes": "1"}}}}
MACHINE = {"cpu_model": "Test CPU", "cores": 2, "memory_gb": 23.4, "kafka": "4.3.1", "spark": "4.0.0",
           "java": "openjdk version 17.0.1", "candidates_java": "openjdk version 25.0.3",
           "load_average_at_start": [0.5, 1.0, 1.5],
           "load_average_at_end": [19.7, 18.0, 15.0]}


def test_summary_uses_only_successful_runs_and_keeps_effective_tasks():
    summary = report.summarize(RUNS)
    ours = summary["mirrorplane"]["2"]
    assert ours["runs"] == 3 and ours["failed"] == 1
    assert ours["records_per_second"] == {"median": 100_000, "min": 90_000, "max": 120_000}
    assert ours["steady_records_per_second"]["median"] == 150_000
    assert ours["control_plane_cpu_seconds"]["median"] == 0.4
    assert ours["effective_tasks"] == [2]
    assert summary["mm2"]["4"]["effective_tasks"] == [4]
    assert "control_plane_cpu_seconds" not in summary["mm2"]["2"]


def test_ratios_are_paired_per_repetition():
    table = report.ratios(RUNS, mm2_best=4)
    at_two = table["mirrorplane/mm2"]["2"]
    # repetitions 1-3 pair (the 4th Mirrorplane run failed): 90/80, 100/50, 120/100
    assert at_two["pairs"] == 3
    assert at_two["records_per_second"] == {"median": 1.2, "min": 1.125, "max": 2.0}
    assert at_two["steady_records_per_second"]["median"] == 1.2
    assert "4" not in table["mirrorplane/mm2"], "Mirrorplane did not run at 4"
    best = table["mirrorplane/mm2"]["best"]
    assert best["tasks"] == [2, 4] and best["records_per_second"] == {"median": 1.0, "min": 0.9, "max": 1.2}
    raw = table["mirrorplane/raw"]["2"]["records_per_second"]
    assert raw == {"median": 0.6, "min": 0.5, "max": 0.6}
    assert "mirrorplane/mm2-stock" not in table


def test_best_tasks_prefers_the_searched_value_when_it_ran():
    summary = report.summarize(RUNS)
    assert report.best_tasks(summary, "mm2", preferred=4) == 4
    assert report.best_tasks(summary, "mm2", preferred=8) == 4, "not run at 8: the fastest median"
    assert report.best_tasks(summary, "mm2") == 4
    assert report.best_tasks(summary, "nobody") is None


def test_upper_bounds_and_latency_tables():
    upper = [{"dataset": "1024B", "tool": "producer", "records_per_second": r, "mb_per_second": r / 1000,
              "cpu_seconds": 5.0, "error": None} for r in (900_000.0, 1_000_000.0)]
    upper.append({"dataset": "1024B", "tool": "consumer", "error": "exit 1: boom"})
    table = report.upper_summary(upper)
    assert table["1024B"]["producer"]["records_per_second"]["median"] == 950_000
    assert table["1024B"]["consumer"] == {"runs": 0, "failed": 1}
    latency = report.latency_table(LATENCY)
    ours = latency["mirrorplane"]["50%"]
    assert ours["rate"] == 60_000 and ours["repetitions"] == 3
    assert ours["p99_ms"] == {"median": 602.0, "min": 601.0, "max": 603.0}
    assert ours["reader_resolution_us"]["p99_us"] == 300.0
    assert ours["machine_cpu_seconds"]["source_broker"] == {"median": 32.0, "min": 31.0, "max": 33.0}
    assert ours["machine_cpu_seconds"]["rest"]["median"] == 6.3


def test_the_machine_table_tells_where_the_busy_seconds_went():
    text = report_markdown.render_markdown(_report())
    assert ("| candidate | rate | machine | the mirror | Mirrorplane's next standby | control plane | source broker "
            "| target broker | Redis | the rest: producer, reader, system |") in text
    row = ("| Mirrorplane | 5,000 records/s | 72.0 (71.0-73.0) | 10.0 | 0.5 | 3.0 | 32.0 (31.0-33.0) | 20.0 | 0.2 "
           "| 6.3 |")
    assert row in text


def test_goals_on_the_main_dataset():
    data = report.build(MACHINE, SETTINGS, RUNS, LATENCY, complete=True)
    goals = {g["goal"]: g for g in data["goals"]}
    # steady state each at its best tasks.max: Mirrorplane at 2 against MM2 at 4, then against raw at 2
    vs_mm2 = goals["steady-state backfill on 2,000,000 x 1,024 B >= 1.3x MM2 (each at its best tasks.max)"]
    assert vs_mm2["measured"] == 1.0 and vs_mm2["met"] is False
    vs_raw = goals["steady-state backfill on 2,000,000 x 1,024 B >= 0.85x the raw copy (each at its best tasks.max)"]
    assert vs_raw["measured"] == 0.6 and vs_raw["met"] is False
    first = goals["first record on 2,000,000 x 1,024 B <= 2 s after the POST"]
    assert first["measured"] == 2.0 and first["met"] is True
    p99 = goals["p99 latency <= MM2's at 5,000 records/s (ours / MM2's)"]
    assert p99["measured"] == 9.71 and p99["met"] is False, "602 ms against 62 ms"
    assert goals["p99 latency <= MM2's at 50% of its maximum (60,000 records/s) (ours / MM2's)"]["met"] is False
    p50 = goals["p50 latency <= 20 ms at 5,000 records/s"]
    assert p50["measured"] == 202.0 and p50["met"] is False
    cpu = goals["CPU seconds per minute <= MM2's at 5,000 records/s (ours / MM2's)"]
    assert cpu["measured"] == 1.0 and cpu["met"] is True
    assert not any("p50" in goal and "50%" in goal for goal in goals), "p50 and CPU only at 5,000 records/s"


def test_goals_without_a_measurement_are_not_known():
    lone = [run for run in RUNS if run["candidate"] == "mirrorplane"]
    latency = [entry for entry in LATENCY if entry["candidate"] == "mirrorplane"]
    goals = {g["goal"]: g for g in report.build(MACHINE, SETTINGS, lone, latency, complete=True)["goals"]}
    assert not any("MM2 (each" in goal or "raw copy" in goal for goal in goals), "no pair, no goal"
    assert goals["p99 latency <= MM2's at 5,000 records/s (ours / MM2's)"]["met"] is None
    assert goals["p50 latency <= 20 ms at 5,000 records/s"]["met"] is False


def _report(complete: bool = True) -> dict:
    lz4 = [_run(c, 2, 1, 50_000, dataset="1024B-lz4", compression="lz4",
                target_compression={"topic_config": "lz4", "batches": {"lz4": 40}}) for c in ("mirrorplane", "mm2")]
    search = [_run("mm2", t, 1, 1000.0 * t, phase="search") for t in (1, 2, 4)]
    upper = [{"dataset": "1024B", "tool": tool, "records_per_second": 900_000.0, "mb_per_second": 900.0,
              "error": None, "repetition": 1} for tool in ("producer", "consumer")]
    upper[1]["fetch_records_per_second"] = 950_000.0
    lead_in = {"level": "5000", "lead_in": True, "error": None}
    lead_ins = [lead_in | {"candidate": "mirrorplane", "label": "lat-mirrorplane-5000-lead-in", "p99_ms": 480.0,
                           "broker_jit_cpu_seconds": 6.25},
                lead_in | {"candidate": "mm2", "label": "lat-mm2-5000-lead-in", "error": "no steady replication",
                           "p99_ms": None}]
    return report.build(MACHINE, SETTINGS | {"latency_lead_in_seconds": 30.0}, RUNS + lz4, LATENCY,
                        complete=complete, sweep=search, upper=upper, lead_ins=lead_ins) | {
                            "generated_at": "2030-01-01 UTC"}


def test_markdown_tables():
    text = report_markdown.render_markdown(_report())
    assert text.startswith("# Benchmark: Mirrorplane vs Apache MirrorMaker 2 vs the raw limit\n")
    assert "Main dataset: 2,000,000 records of 1024 B with 16-byte keys" in text
    assert ("Load average (1 min) at the start 0.5 and at the end 19.7 (at the end it includes the benchmark's own "
            "processes; well above 2 means other work shared the cores).") in text
    assert ("Kafka 4.3.1 (one KRaft broker per cluster, same host, openjdk version 17.0.1), Spark 4.0.0, the "
            "candidates on openjdk version 25.0.3.") in text
    assert "## Backfill 1024B: 2,000,000 records of 1,024 B, compression none" in text
    assert ("| Mirrorplane | 2 | 2 | 150,000 (135,000-180,000) | 150.0 (135.0-180.0) | 100,000 (90,000-120,000) "
            "| 10.0 | 2.0 | 12.0 | 0.012 | 800 | 30.0 | 3 (1 failed) |") in text
    assert "| MirrorMaker 2 | 4 | 4 |" in text
    assert "| MirrorMaker 2 / raw Java copy |" not in text
    assert "| Mirrorplane / MirrorMaker 2 | 2 | 1.20x (1.12-2.00) | 1.20x (1.12-2.00) | 3 |" in text
    assert "| Mirrorplane / MirrorMaker 2 | best: 2 vs 4 | 1.00x (0.90-1.20) |" in text
    assert "| Mirrorplane / raw Java copy | 2 | 0.60x (0.50-0.60) |" in text
    assert ("kafka-producer-perf-test 900,000 records/s (900.0 MB/s); kafka-consumer-perf-test 950,000 records/s "
            "without its group join (900,000 with it); the raw copy (fastest tasks.max) 300,000 records/s at steady "
            "state, 200,000 end to end.") in text
    assert "web app and Celery worker used 0.40 CPU s per run besides" in text
    assert "## Backfill 1024B-lz4: 500,000 records of 1,024 B, compression lz4" in text
    assert "Mirrorplane remote topic compression.type lz4, batches lz4 40" in text
    assert "## MM2's tasks.max on this machine (one run each on the main dataset; best: 4)" in text
    assert "| MirrorMaker 2 | 4 | 4 | 6,000 | 4,000 |" in text
    assert ("| Mirrorplane | 50% of its maximum (60,000 records/s) | 59,999 | 202 (201-203) | 400 | 602 (601-603) "
            "| 1,000 | 3 | 0 | 10.0 | 62.0 (61.0-63.0) | 0.20 (0.10-0.30) | 20 / 300 |") in text
    assert ("each candidate ran once at each rate as a lead-in (30 s measured after the same warm-up, not in the "
            "figures above), so that the brokers compiled the paths of that traffic before any candidate was "
            "measured: Mirrorplane at 5000: p99 480 ms, the brokers' JIT 6.25 CPU s; MirrorMaker 2 at 5000: failed "
            "(no steady replication).") in text
    assert "- lat-mm2-5000-lead-in: no steady replication" in text  # among the failed runs
    assert "Mirrorplane 120,000 records/s (median steady)" in text
    assert ("Mirrorplane's web app and Celery worker (its control plane, reconciling every few seconds) used besides, "
            "per measured run: 5,000 records/s 5.0 (4.0-6.0); 50% of its maximum (60,000 records/s) 5.0 (4.0-6.0) "
            "CPU s.") in text
    assert "- MirrorMaker 2: JVM `-Xmx2G -XX:+UseParallelGC`, class archive yes" in text
    assert "- Mirrorplane: local[2], driver 1g on Java 25, JVM `-XX:+UseParallelGC`, class archive none" in text
    assert "standby drivers 1, `replication.mode` auto; producer" in text
    assert ("- Brokers (one KRaft broker per cluster): JVM `-Xms512m -Xmx512m -XX:+UseG1GC`, partitions in memory "
            "(tmpfs)\n  - warmed up before 1024B's first run (untimed, 14.2 s): kafka-consumer-perf-test read "
            "1,000,000 of its records from the source, kafka-producer-perf-test wrote 1,000,000 to a scratch topic "
            "on the target\n") in text
    assert ("producer in effect (from its log): `acks=-1`, `linger.ms=5`, `batch.size=262144`, "
            "`send.buffer.bytes=131072`\n") in text
    assert ("consumer in effect for a backlog (from its log): `max.poll.records=10000`, `fetch.min.bytes=1`, "
            "`receive.buffer.bytes=65536`\n"
            "  - consumer in effect under steady traffic (from its log): `max.poll.records=500`") in text
    assert "| p50 latency <= 20 ms at 5,000 records/s | 202 ms | **no** |" in text
    assert "## Failed runs\n\n- r4-mirrorplane-t2-1024B: timed out" in text
    assert "Incomplete" not in text
    assert "Incomplete: the benchmark was interrupted" in report_markdown.render_markdown(_report(complete=False))


def test_markdown_names_the_source_connector_properties_measured():
    measured = _report()
    measured["settings"]["mirrorplane"] = SETTINGS["mirrorplane"] | {
        "replication_mode": "real-time", "source_properties": "consumer.fetch.min.bytes=262144"}
    assert ("standby drivers 1, `replication.mode` real-time, source connector `consumer.fetch.min.bytes=262144`; "
            "producer") in report_markdown.render_markdown(measured)


def test_markdown_without_latency_or_ratios():
    settings = {"records": 10, "record_bytes": 1, "key_bytes": 1, "partitions": 1, "repetitions": 1,
                "dataset_mb": 0.0, "datasets": [{"name": "1B", "records": 10, "record_bytes": 1,
                                                 "compression": "none"}]}
    data = report.build({}, settings, [_run("raw", 2, 1, 5.0, dataset="1B")], [], complete=True)
    text = report_markdown.render_markdown(data)
    assert "| raw Java copy | 2 | 2 | 8 | 0.0 | 5 |" in text
    assert "Latency" not in text and "Mirrorplane / MirrorMaker 2" not in text
    assert "Failed runs" not in text
    settings |= {"dataset_errors": {"100B": "RuntimeError: no room"}, "upper_bounds_error": "MavenError: offline"}
    text = report_markdown.render_markdown(report.build({}, settings, [], [], complete=True))
    assert "## Failed runs\n\n- dataset 100B: RuntimeError: no room\n- upper bounds: MavenError: offline\n" in text


SCALE = {"candidate": "mirrorplane", "topics": 100, "partitions_per_topic": 10, "partitions": 1000,
         "records_per_partition": 10, "tasks": 2, "error": None, "partitions_complete": 1000,
         "first_partition_seconds": 9.5, "p50_partition_seconds": 14.2, "all_partitions_seconds": 21.7,
         "peak_rss_mb": 1234.0, "cpu_seconds": 40.0}


def test_scale_goal_and_table():
    goals = {g["goal"]: g for g in report.goals({}, {}, SCALE)}
    assert goals["1,000 partitions all replicating within 60 s"] | {} == {
        "goal": "1,000 partitions all replicating within 60 s", "measured": 21.7, "unit": "s", "met": True}
    text = report_markdown.render_markdown(report.build({}, SETTINGS, RUNS, LATENCY, complete=True, scale=SCALE))
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


@pytest.mark.parametrize("values,text", [(None, "n/a"), ({"median": 2.0, "min": 2.0, "max": 2.0}, "2.00x"),
                                         ({"median": 1.5, "min": 1.0, "max": 2.0}, "1.50x (1.00-2.00)")])
def test_ratio_cells(values, text):
    assert report_markdown._ratio(values) == text


def test_the_p50_goal_names_the_latency_without_a_mirror():
    direct = [{"candidate": "direct", "level": "5000", "rate": 5000, "tasks": 2, "repetition": r, "seconds": 60,
               "error": None, "p50_ms": 9.0 + r, "p95_ms": 20.0, "p99_ms": 40.0, "max_ms": 90.0, "records": 300_000,
               "missing": 0, "achieved_rate": 4999, "cpu_seconds_measured": 0.0} for r in (1, 2, 3)]
    data = report.build(MACHINE, SETTINGS, RUNS, LATENCY + direct, complete=True)
    goals = {g["goal"]: g for g in data["goals"]}
    p50 = goals["p50 latency <= 20 ms at 5,000 records/s (no mirror at all, the source read directly: 11 ms)"]
    assert p50["measured"] == 202.0 and p50["met"] is False
    assert not any("direct" in goal and "p99" in goal for goal in goals), "the floor is no candidate"
    text = report_markdown.render_markdown(data)
    assert "| no mirror (the source read directly) | 5,000 records/s | 4,999 | 11 (10-12) |" in text
