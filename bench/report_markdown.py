"""The benchmark's report (bench/report.py `build`) as markdown: per dataset the throughput table, the
ratios, compression, MM2's tasks.max search, latency per rate, fairness notes, scale and the goals."""

from __future__ import annotations

from collections import defaultdict

from bench.candidates.mm2 import KEY_CONSUMER_SETTINGS, KEY_PRODUCER_SETTINGS
from bench.disk import DISK_STALL_MS, WRITEBACK_BURST_MB
from bench.report import TITLES
from bench.report import format_level as _level
from bench.report import format_number as _number
from bench.stats import median


def _spread(values: dict | None, digits: int = 0) -> str:
    if not values:
        return "n/a"
    if values["min"] == values["max"]:
        return _number(values["median"], digits)
    return f"{_number(values['median'], digits)} ({_number(values['min'], digits)}-{_number(values['max'], digits)})"


def _range(entry: dict, figure: str, digits: int = 0) -> str:
    return _spread(entry.get(figure), digits)


def _ratio(values: dict | None) -> str:
    if not values:
        return "n/a"
    if values["min"] == values["max"]:
        return f"{values['median']:.2f}x"
    return f"{values['median']:.2f}x ({values['min']:.2f}-{values['max']:.2f})"


def _row(cells: list) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def render_markdown(report: dict) -> str:
    lines = _header(report)
    settings = report["settings"]
    datasets = {d["name"]: d for d in settings.get("datasets", [])}
    for name, summary in report["summary"].items():
        lines += _throughput_lines(name, datasets.get(name), summary, report)
    if report.get("mm2_search"):
        lines += _search_lines(report["mm2_search"], settings.get("mm2_best_tasks"))
    if report.get("latency_summary"):
        lines += _latency_lines(report["latency_summary"], settings)
    if report.get("latency_lead_ins"):
        lines += _lead_in_lines(report["latency_lead_ins"], settings)
    if report.get("scale"):
        lines += _scale_lines(report["scale"])
    lines += _fairness_lines(settings)
    if report.get("goals"):
        lines += ["", "## Goals", "", "| goal | measured | met |", "|---|---:|---|"]
        for goal in report["goals"]:
            met = {True: "yes", False: "**no**", None: "n/a"}[goal["met"]]
            lines.append(f"| {goal['goal']} | {_goal_figure(goal['measured'], goal['unit'])} | {met} |")
    failures = [run for run in report["runs"] + report.get("mm2_search", []) + report.get("latency_lead_ins", [])
                + report.get("latency", [])
                + report.get("upper_runs", []) if run.get("error")]
    problems = [f"- dataset {name}: {error}" for name, error in settings.get("dataset_errors", {}).items()]
    if settings.get("upper_bounds_error"):
        problems.append(f"- upper bounds: {settings['upper_bounds_error']}")
    problems += [f"- {run.get('label') or run.get('tool')}: {run['error']}" for run in failures]
    if problems:
        lines += ["", "## Failed runs", "", *problems]
    return "\n".join(lines) + "\n"


def _header(report: dict) -> list[str]:
    s, m = report["settings"], report["machine"]
    lines = [
        "# Benchmark: Mirrorplane vs Apache MirrorMaker 2 vs the raw limit",
        "",
        f"Main dataset: {s['records']:,} records of {s['record_bytes']} B with {s['key_bytes']}-byte keys and one "
        f"header ({s['dataset_mb']:,.0f} MB of payload), {s['partitions']} partitions, {s['repetitions']} "
        f"repetition(s), the candidates' order alternating. Machine: {m.get('cpu_model', '?')}, "
        f"{m.get('cores', '?')} cores, {m.get('memory_gb', '?')} GB; Kafka {m.get('kafka', '?')} (one KRaft broker "
        f"per cluster, same host, {m.get('java', '?')}), Spark {m.get('spark', '?')}, the candidates on "
        f"{m.get('candidates_java') or m.get('java', '?')}. "
        f"{report.get('generated_at', '')}",
    ]
    loads = [(when, m[key][0]) for when, key in (("start", "load_average_at_start"), ("end", "load_average_at_end"))
             if m.get(key)]
    if loads:
        measured = " and at the ".join(f"{when} {value:.1f}" for when, value in loads)
        lines += ["", f"Load average (1 min) at the {measured} (at the end it includes the benchmark's own "
                      f"processes; well above {m.get('cores', '?')} means other work shared the cores)."]
    if not report.get("complete", True):
        lines += ["", "**Incomplete: the benchmark was interrupted; these are the runs so far.**"]
    return lines


def _throughput_lines(name: str, dataset: dict | None, summary: dict, report: dict) -> list[str]:
    what = (f"{dataset['records']:,} records of {dataset['record_bytes']:,} B, compression {dataset['compression']}"
            if dataset else name)
    lines = ["", f"## Backfill {name}: {what}", "",
             "| candidate | tasks.max | effective tasks | steady records/s (10-90%) | steady MB/s | end-to-end "
             "records/s | seconds | first record (s) | CPU s | CPU s/MB | peak RSS MB | brokers' CPU s | runs |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for candidate, by_tasks in summary.items():
        for tasks, e in sorted(by_tasks.items(), key=lambda item: int(item[0])):
            failed = f" ({e['failed']} failed)" if e["failed"] else ""
            effective = ", ".join(str(t) for t in e.get("effective_tasks", [])) or "?"
            lines.append(_row([TITLES.get(candidate, candidate), tasks, effective,
                               _range(e, "steady_records_per_second"), _range(e, "steady_mb_per_second", 1),
                               _range(e, "records_per_second"), _range(e, "seconds", 1),
                               _range(e, "first_record_seconds", 1), _range(e, "cpu_seconds", 1),
                               _range(e, "cpu_seconds_per_mb", 3), _range(e, "peak_rss_mb"),
                               _range(e, "broker_cpu_seconds", 1), f"{e['runs']}{failed}"]))
    bounds = report.get("upper_bounds", {}).get(name, {})
    if bounds:
        lines += ["", "Upper bounds on the same brokers: " + "; ".join(
            _bound(tool, entry) for tool, entry in sorted(bounds.items(), reverse=True))
            + f"; the raw copy (fastest tasks.max) {_best_raw(summary, 'steady_records_per_second')} records/s at "
              f"steady state, {_best_raw(summary, 'records_per_second')} end to end."]
    lines += _ratio_lines(report.get("ratios", {}).get(name, {}))
    lines += _compression_lines(name, report)
    control = [e["control_plane_cpu_seconds"]["median"] for e in summary.get("mirrorplane", {}).values()
               if e.get("control_plane_cpu_seconds")]
    lines += ["", "CPU and peak RSS are the candidate's own processes (Mirrorplane: the mirror's Spark application; "
              f"its web app and Celery worker used {_number(median(control) if control else None, 2)} CPU s per run "
              "besides, included "
              "in Mirrorplane's CPU s/MB). CPU s/MB is per MB of payload (keys, values, header)."]
    return lines


def _bound(tool: str, entry: dict) -> str:
    if tool == "consumer" and entry.get("fetch_records_per_second"):
        return (f"kafka-consumer-perf-test {_range(entry, 'fetch_records_per_second')} records/s without its "
                f"group join ({_range(entry, 'records_per_second')} with it)")
    if not entry.get("records_per_second"):
        return f"kafka-{tool}-perf-test failed"
    return (f"kafka-{tool}-perf-test {_range(entry, 'records_per_second')} records/s "
            f"({_range(entry, 'mb_per_second', 1)} MB/s)")


def _best_raw(summary: dict, figure: str) -> str:
    medians = [e[figure]["median"] for e in summary.get("raw", {}).values() if figure in e]
    return _number(max(medians)) if medians else "n/a"


def _ratio_lines(table: dict) -> list[str]:
    if not any(table.values()):
        return []
    lines = ["", "| ratio | tasks.max | end-to-end, median (min-max) | steady state, median (min-max) | pairs |",
             "|---|---:|---:|---:|---:|"]
    for pair, rows in table.items():
        ours, theirs = pair.split("/")
        for tasks, entry in rows.items():
            at = f"best: {entry['tasks'][0]} vs {entry['tasks'][1]}" if tasks == "best" else tasks
            lines.append(_row([f"{TITLES[ours]} / {TITLES[theirs]}", at, _ratio(entry.get("records_per_second")),
                               _ratio(entry.get("steady_records_per_second")), entry["pairs"]]))
    lines += ["", "Ratios are taken per repetition (the two runs of the same repetition) and shown as their median "
                  "with min-max."]
    return lines


def _compression_lines(name: str, report: dict) -> list[str]:
    found: dict[str, dict[str, set]] = defaultdict(lambda: {"topic": set(), "batches": set()})
    compressions = set()
    for run in report["runs"]:
        if run.get("dataset") != name or not run.get("target_compression"):
            continue
        compressions.add(run.get("compression", "none"))
        found[run["candidate"]]["topic"].add(str(run["target_compression"].get("topic_config")))
        found[run["candidate"]]["batches"].add(", ".join(f"{codec} {count:,}" for codec, count in
                                                         sorted(run["target_compression"]["batches"].items())))
    if not found or compressions == {"none"}:
        return []
    return ["", "On the target: " + "; ".join(
        f"{TITLES.get(c, c)} remote topic compression.type {'/'.join(sorted(v['topic']))}, batches "
        f"{' / '.join(sorted(v['batches'])) or 'n/a'}" for c, v in found.items()) + "."]


def _search_lines(search: list[dict], best: int | None) -> list[str]:
    lines = ["", f"## MM2's tasks.max on this machine (one run each on the main dataset; best: {best})", "",
             "| candidate | tasks.max | effective tasks | steady records/s | end-to-end records/s | CPU s | error |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for run in search:
        lines.append(_row([TITLES.get(run["candidate"], run["candidate"]), run["tasks"],
                           run.get("effective_tasks") or "?", _number(run.get("steady_records_per_second")),
                           _number(run.get("records_per_second")), _number(run.get("cpu_seconds"), 1),
                           run.get("error") or ""]))
    return lines


def _tail(tail: dict) -> str:
    worst = (tail.get("worst_seconds") or [{}])[0]
    paused = tail.get("after_reader_pause")
    reader = (f"; {paused:,} handed over after a reader pause of up to {_number(tail.get('reader_pause_max_ms'))} ms"
              if paused else "; none after a reader pause" if paused == 0 else "")
    during = tail.get("during_disk_stall")
    disk = (f"; {during:,} in seconds the disk stalled every task for {DISK_STALL_MS:g} ms or more (up to "
            f"{_number(tail.get('disk_stall_max_ms'))} ms)" if during
            else "; none in a second the disk stalled" if during == 0 else "")
    worst_disk = (f", disk: {_number(worst['io_stall_ms'])} ms stalled, {_number(worst['written_mb'])} MB written back"
                  if "io_stall_ms" in worst else "")
    if worst.get("cpu_wait_ms"):
        worst_disk += f", a task waiting for a core {_number(worst['cpu_wait_ms'])} ms"
    bursts = tail.get("writeback_bursts")
    if bursts is not None:
        disk += "; written back: " + (", ".join(f"{_number(mb)} MB in second {second}" for second, mb in bursts)
                                      or f"no second of {WRITEBACK_BURST_MB:g} MB or more")
    return (f"{tail['records']:,} records in {tail['seconds']} s over {tail['partitions']} partitions "
            f"(second {worst.get('second')}: {worst.get('records', 0):,}, "
            f"max {_number(worst.get('max_ms'))} ms{worst_disk}{reader}{disk})")


def _latency_lines(table: dict, settings: dict) -> list[str]:
    steady = settings.get("latency_steady_seconds")
    after = f", after {steady:g} s of keeping up" if steady else ""
    lines = ["", f"## Latency: record timestamp to arrival on the target, {settings.get('latency_seconds', 0):g} s "
                 f"measured per run{after}", "",
             "| candidate | rate | achieved records/s | p50 ms | p95 ms | p99 ms | max ms | runs | missing | CPU s "
             "| machine busy % | brokers' JIT CPU s | reader resolution p50 / p99 µs |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for candidate, levels in table.items():
        for level, e in levels.items():
            resolution = e.get("reader_resolution_us") or {}
            failed = f" ({e['failed']} failed)" if e["failed"] else ""
            lines.append(_row([TITLES.get(candidate, candidate), _level(level, e), _range(e, "achieved_rate"),
                               _range(e, "p50_ms"), _range(e, "p95_ms"), _range(e, "p99_ms"), _range(e, "max_ms"),
                               f"{e['repetitions']}{failed}", f"{e['missing']:,}",
                               _range(e, "cpu_seconds_measured", 1), _range(e, "machine_busy_pct", 1),
                               _range(e, "broker_jit_cpu_seconds", 2),
                               f"{_number(resolution.get('p50_us'))} / {_number(resolution.get('p99_us'))}"]))
    tails = [f"{TITLES.get(candidate, candidate)} at {_level(level, e)}: " + ", ".join(_tail(t) for t in e["tails"])
             for candidate, levels in table.items() for level, e in levels.items() if e.get("tails")]
    if tails:
        lines += ["", "Where the slowest 1% of records fell, per run (distinct seconds of their timestamps, "
                      "partitions, the second holding most of them, and how many the reader handed over after a "
                      "pause of its own of 20 ms or more with records queued, which it then added to their "
                      "latency, how many fell in a second in which the machine's disk stalled every task: "
                      "the kernel writing the brokers' files back, and the seconds in which it wrote "
                      f"{WRITEBACK_BURST_MB:g} MB or more back: one broker's files, or both brokers' at once):", ""]
        lines += [f"- {line}" for line in tails]
    control = [f"{_level(level, e)} {_range(e, 'control_plane_cpu_seconds_measured', 1)}"
               for level, e in table.get("mirrorplane", {}).items() if e.get("control_plane_cpu_seconds_measured")]
    if control:
        lines += ["", "CPU s is the mirror's own processes. Mirrorplane's web app and Celery worker (its control "
                      "plane, reconciling every few seconds) used besides, per measured run: " + "; ".join(control)
                  + " CPU s. MM2 runs without a process of that kind."]
    lines += _machine_lines(table)
    maxima = settings.get("latency_max_rates") or {}
    if maxima:
        lines += ["", "Maximum sustainable rates for the percentage levels: " + "; ".join(
            f"{TITLES.get(c, c)} {_number(m.get('records_per_second'))} records/s ({m.get('source')})"
            for c, m in maxima.items()) + "."]
    lines += ["", "Medians over the runs with min-max; the candidates' order alternates between repetitions. Each "
                  "record is timed as the reader's client hands it over: records already fetched are taken without "
                  "waiting, and the reader waits for one record only when none is queued; its resolution is the time "
                  "between two such calls for records that were queued (they arrived at most that long before). "
                  "Machine busy % is the share of all cores' time the whole machine was busy during the measured "
                  "seconds: the candidate, the brokers, the producer and the reader. The brokers' JIT CPU s is what "
                  "their compiler threads used in those seconds: a broker compiling a path of the run's traffic "
                  "takes a core for up to a second at a time."]
    return lines


# The parts of the machine's busy seconds in a latency run, as bench.latency `machine_breakdown` names them.
MACHINE_PARTS = (("candidate", "the mirror"), ("standby", "Mirrorplane's next standby"),
                 ("control_plane", "control plane"), ("source_broker", "source broker"),
                 ("target_broker", "target broker"), ("redis", "Redis"),
                 ("rest", "the rest: producer, reader, system"))


def _machine_lines(table: dict) -> list[str]:
    rows = [(candidate, level, e["machine_cpu_seconds"]) for candidate, levels in table.items()
            for level, e in levels.items() if e.get("machine_cpu_seconds")]
    if not rows:
        return []
    lines = ["", "Where the machine's CPU went in the measured seconds, CPU s (medians over the runs, min-max). "
                 "Mirrorplane's control plane (web app, Celery worker and beat), its next standby driver (waiting "
                 "or starting) and Redis serve Mirrorplane, and run through every candidate's minutes:", "",
             _row(["candidate", "rate", "machine", *(title for _, title in MACHINE_PARTS)]),
             "|---|---|" + "---:|" * (1 + len(MACHINE_PARTS))]
    for candidate, level, parts in rows:
        entry = table[candidate][level]
        lines.append(_row([TITLES.get(candidate, candidate), _level(level, entry), _spread(parts.get("machine"), 1),
                           *(_spread(parts.get(name), 1) for name, _ in MACHINE_PARTS)]))
    return lines


def _lead_in_lines(lead_ins: list[dict], settings: dict) -> list[str]:
    """The lead-in runs: each candidate once per rate before the measured runs, while the brokers compile."""
    runs = "; ".join(
        f"{TITLES.get(r['candidate'], r['candidate'])} at {r.get('level')}: "
        + (f"failed ({r['error']})" if r.get("error") else
           f"p99 {_number(r.get('p99_ms'))} ms, the brokers' JIT {_number(r.get('broker_jit_cpu_seconds'), 2)} CPU s")
        for r in lead_ins)
    seconds = settings.get("latency_lead_in_seconds")
    return ["", f"Before the measured runs, each candidate ran once at each rate as a lead-in ({_number(seconds)} s "
                "measured after the same warm-up, not in the figures above), so that the brokers compiled the "
                f"paths of that traffic before any candidate was measured: {runs}."]


def _fairness_lines(settings: dict) -> list[str]:
    lines = ["", "## Settings in effect", ""]
    brokers = settings.get("brokers")
    if brokers:
        storage = ", partitions in memory (tmpfs)" if brokers.get("storage") == "memory" else ""
        lines.append(f"- Brokers (one KRaft broker per cluster): JVM `{brokers.get('jvm')}`{storage}")
    for warm_up in settings.get("broker_warm_ups") or []:
        failed = f"; failed: {'; '.join(warm_up['errors'])}" if warm_up.get("errors") else ""
        lines.append(f"  - warmed up before {warm_up['dataset']}'s first run (untimed, {warm_up['seconds']} s): "
                     f"kafka-consumer-perf-test read {warm_up['records']:,} of its records from the source, "
                     f"kafka-producer-perf-test wrote {warm_up['records']:,} to a scratch topic on the target{failed}")
    mp = settings.get("mirrorplane")
    if mp:
        threads = f" with {mp['local_task_threads']} task threads" if mp.get("local_task_threads") else ""
        java = f" on Java {mp['driver_java_release']}" if mp.get("driver_java_release") else ""
        extra = f", source connector `{mp['source_properties']}`" if mp.get("source_properties") else ""
        lines.append(f"- Mirrorplane: {mp.get('spark_master')}{threads}, driver {mp.get('driver_memory')}{java}, JVM "
                     f"`{mp.get('driver_java_options')}`, class archive "
                     f"{'yes' if mp.get('driver_class_archive') else 'none'}, standby drivers "
                     f"{mp.get('standby_drivers', 0)}, `replication.mode` {mp.get('replication_mode') or 'auto'}"
                     f"{extra}; producer in real-time mode "
                     f"{_pairs(mp.get('producer'))}, in micro-batches {_pairs(mp.get('micro_batch_producer'))} "
                     f"(compressed datasets: their codec)"
                     + (f", consumer in real-time mode {_pairs(mp['consumer'])}" if mp.get("consumer") else "")
                     + (f", consumer in micro-batches {_pairs(mp['micro_batch_consumer'])}"
                        if mp.get("micro_batch_consumer") else ""))
    for name in ("mm2", "mm2-stock", "raw"):
        entry = settings.get(name)
        if not entry:
            continue
        archive = "yes" if entry.get("class_archive") else "none"
        lines.append(f"- {TITLES[name]}: JVM `{entry.get('jvm')}`, class archive {archive}")
        effective = entry.get("effective_producer")
        if effective:
            lines.append("  - producer in effect (from its log): "
                         f"{_pairs({k: effective.get(k) for k in KEY_PRODUCER_SETTINGS})}")
        consumers = entry.get("effective_consumers") or {}
        for traffic, title in (("backlog", "for a backlog"), ("steady", "under steady traffic")):
            if consumers.get(traffic):
                lines.append(f"  - consumer in effect {title} (from its log): "
                             f"{_pairs({k: consumers[traffic].get(k) for k in KEY_CONSUMER_SETTINGS})}")
    return lines


def _pairs(values: dict | None) -> str:
    return ", ".join(f"`{key}={value}`" for key, value in (values or {}).items() if value is not None) or "n/a"


def _scale_lines(scale: dict) -> list[str]:
    cells = [_number(scale.get("first_partition_seconds"), 1), _number(scale.get("p50_partition_seconds"), 1),
             _number(scale.get("all_partitions_seconds"), 1), f"{scale.get('partitions_complete', 0):,}",
             _number(scale.get("peak_rss_mb")), _number(scale.get("cpu_seconds"), 1), scale.get("error") or ""]
    return ["", f"## Scale: one mirror of {scale['topics']} topics x {scale['partitions_per_topic']} partitions "
                f"({scale['partitions']:,} partitions, {scale['records_per_partition']} records each)", "",
            "| first partition complete (s) | median partition (s) | all partitions (s) | partitions complete "
            "| peak RSS MB (driver JVM and Python) | CPU s | error |",
            "|---:|---:|---:|---:|---:|---:|---|",
            _row(cells),
            "", "Timed from the POST creating the mirror until each remote partition's end offset reaches its "
                "source partition's."]


def _goal_figure(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:,.1f} s" if unit == "s" else f"{value:,.0f} ms"
