"""The report: per candidate and tasks.max the median, min and max of every run's figures, the ratios
Mirrorplane/MM2 and Mirrorplane/raw, the latency percentiles, the benchmark's goals, and its markdown."""

from __future__ import annotations

from collections import defaultdict

from bench.stats import ratio, spread

TITLES = {"mirrorplane": "Mirrorplane", "mm2": "MirrorMaker 2", "raw": "raw Java copy"}
FIGURES = ("records_per_second", "mb_per_second", "seconds", "first_record_seconds", "steady_records_per_second",
           "cpu_seconds", "peak_rss_mb", "control_plane_cpu_seconds", "broker_cpu_seconds")
RATIO_KEYS = ("mirrorplane/mm2", "mirrorplane/raw", "mirrorplane/raw_best")
GOAL_VS_MM2 = 1.2
GOAL_VS_RAW = 0.7
GOAL_P99_MS = 1500.0
GOAL_SCALE_SECONDS = 60.0
GOAL_SCALE_PARTITIONS = 1000


def summarize(runs: list[dict]) -> dict[str, dict[str, dict]]:
    """`{candidate: {tasks: {"runs", "failed", figure: {"median", "min", "max"}}}}` over successful runs."""
    grouped: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for run in runs:
        grouped[(run["candidate"], run["tasks"])].append(run)
    summary: dict[str, dict[str, dict]] = {}
    for (candidate, tasks), items in sorted(grouped.items()):
        good = [run for run in items if not run.get("error")]
        entry: dict = {"runs": len(good), "failed": len(items) - len(good)}
        for figure in FIGURES:
            values = [run[figure] for run in good if run.get(figure) is not None]
            if values:
                entry[figure] = spread(values)
        summary.setdefault(candidate, {})[str(tasks)] = entry
    return summary


def _median(summary: dict, candidate: str, tasks: str, figure: str = "records_per_second") -> float | None:
    return ((summary.get(candidate, {}).get(tasks) or {}).get(figure) or {}).get("median")


def ratios(summary: dict) -> dict[str, dict[str, float | None]]:
    """Median throughput ratios per tasks.max: vs MM2 at the same tasks.max, vs the raw copy with as many
    threads, and vs the best raw median of any thread count (the machine's limit)."""
    raw_best = max((s["records_per_second"]["median"] for s in summary.get("raw", {}).values()
                    if "records_per_second" in s), default=None)
    result: dict[str, dict[str, float | None]] = {"mirrorplane/mm2": {}, "mirrorplane/raw": {},
                                                   "mirrorplane/raw_best": {}}
    for tasks in summary.get("mirrorplane", {}):
        ours = _median(summary, "mirrorplane", tasks)
        result["mirrorplane/mm2"][tasks] = _round(ratio(ours, _median(summary, "mm2", tasks)))
        result["mirrorplane/raw"][tasks] = _round(ratio(ours, _median(summary, "raw", tasks)))
        result["mirrorplane/raw_best"][tasks] = _round(ratio(ours, raw_best))
    return result


def goals(ratio_table: dict, latency: dict, scale: dict | None = None) -> list[dict]:
    """The benchmark's goals with the measured figure and whether it holds (None: not measured)."""
    rows = []
    for tasks, value in ratio_table.get("mirrorplane/mm2", {}).items():
        rows.append({"goal": f"backfill Mirrorplane >= {GOAL_VS_MM2}x MM2 at tasks.max {tasks}",
                     "measured": value, "unit": "x", "met": None if value is None else value >= GOAL_VS_MM2})
    for tasks, value in ratio_table.get("mirrorplane/raw_best", {}).items():
        rows.append({"goal": f"backfill Mirrorplane (tasks.max {tasks}) >= {GOAL_VS_RAW}x the raw limit",
                     "measured": value, "unit": "x", "met": None if value is None else value >= GOAL_VS_RAW})
    p99 = (latency.get("mirrorplane") or {}).get("p99_ms")
    if latency.get("mirrorplane") is not None:
        rows.append({"goal": f"Mirrorplane p99 latency <= {GOAL_P99_MS / 1000:g} s", "measured": p99, "unit": "ms",
                     "met": None if p99 is None else p99 <= GOAL_P99_MS})
    if scale is not None:
        seconds = scale.get("all_partitions_seconds")
        big_enough = scale.get("partitions", 0) >= GOAL_SCALE_PARTITIONS
        rows.append({"goal": f"{scale.get('partitions', 0):,} partitions all replicating within "
                             f"{GOAL_SCALE_SECONDS:g} s", "measured": seconds, "unit": "s",
                     "met": None if not big_enough else seconds is not None and seconds <= GOAL_SCALE_SECONDS})
    return rows


def build(machine: dict, settings: dict, runs: list[dict], latency: dict, complete: bool,
          scale: dict | None = None) -> dict:
    summary = summarize(runs)
    ratio_table = ratios(summary)
    return {"complete": complete, "machine": machine, "settings": settings, "summary": summary,
            "ratios": ratio_table, "latency": latency, "scale": scale, "goals": goals(ratio_table, latency, scale),
            "runs": runs}


# -- markdown --------------------------------------------------------------------------------

def _number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def _range(entry: dict, figure: str, digits: int = 0) -> str:
    values = entry.get(figure)
    if not values:
        return "n/a"
    if values["min"] == values["max"]:
        return _number(values["median"], digits)
    return f"{_number(values['median'], digits)} ({_number(values['min'], digits)}-{_number(values['max'], digits)})"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def render_markdown(report: dict) -> str:
    s, m = report["settings"], report["machine"]
    lines = [
        "# Benchmark: Mirrorplane vs Apache MirrorMaker 2 vs the raw limit",
        "",
        f"{s['records']:,} records of {s['record_bytes']} B with {s['key_bytes']}-byte keys and one header "
        f"({s['dataset_mb']:,.0f} MB of payload), {s['partitions']} partitions, {s['repetitions']} repetition(s), "
        f"order alternating. Machine: {m.get('cpu_model', '?')}, {m.get('cores', '?')} cores, "
        f"{m.get('memory_gb', '?')} GB; Kafka {m.get('kafka', '?')} (one KRaft broker per cluster, same host), "
        f"Spark {m.get('spark', '?')}, {m.get('java', '?')}. {report.get('generated_at', '')}",
    ]
    if not report.get("complete", True):
        lines += ["", "**Incomplete: the benchmark was interrupted; these are the runs so far.**"]
    lines += [
        "",
        "## Backfill: from the candidate's start until the last record is on the target",
        "",
        "| candidate | tasks.max | records/s median (min-max) | MB/s | seconds | first record after (s) "
        "| records/s after the first | CPU s | peak RSS MB | brokers' CPU s | runs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for candidate, by_tasks in report["summary"].items():
        for tasks, e in sorted(by_tasks.items(), key=lambda item: int(item[0])):
            failed = f" ({e['failed']} failed)" if e["failed"] else ""
            cells = [TITLES.get(candidate, candidate), tasks, _range(e, "records_per_second"),
                     _range(e, "mb_per_second", 1), _range(e, "seconds", 1), _range(e, "first_record_seconds", 1),
                     _range(e, "steady_records_per_second"), _range(e, "cpu_seconds", 1), _range(e, "peak_rss_mb"),
                     _range(e, "broker_cpu_seconds", 1), f"{e['runs']}{failed}"]
            lines.append("| " + " | ".join(str(cell) for cell in cells) + " |")
    r = report["ratios"]
    if r.get("mirrorplane/mm2"):
        lines += ["", "| tasks.max | Mirrorplane / MM2 | Mirrorplane / raw (same threads) | Mirrorplane / raw (best) |",
                  "|---:|---:|---:|---:|"]
        for tasks in sorted(r["mirrorplane/mm2"], key=int):
            cells = [_ratio(r[key].get(tasks)) for key in RATIO_KEYS]
            lines.append(f"| {tasks} | " + " | ".join(cells) + " |")
    lines += ["", "Ratios of median records/s. CPU seconds and peak RSS are those of the candidate's own processes "
              "(Mirrorplane: the mirror's Spark application; its web app and Celery worker used "
              f"{_control_plane(report)} CPU s per run besides); the brokers' CPU is that of both clusters "
              "during the run."]
    latency = report.get("latency") or {}
    if latency:
        first = next(iter(latency.values()))
        lines += ["", f"## Latency: {first['rate']:,} records/s for {first['seconds']:g} s, record timestamp to "
                      "arrival on the target", "",
                  "| candidate | tasks.max | p50 ms | p95 ms | p99 ms | max ms | records | missing | CPU s | error |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for candidate, e in latency.items():
            lines.append(f"| {TITLES.get(candidate, candidate)} | {e['tasks']} | {_number(e.get('p50_ms'))} "
                         f"| {_number(e.get('p95_ms'))} | {_number(e.get('p99_ms'))} | {_number(e.get('max_ms'))} "
                         f"| {e.get('records', 0):,} | {e.get('missing', 0):,} "
                         f"| {_number(e.get('cpu_seconds_measured'), 1)} | {e.get('error') or ''} |")
    if report.get("scale"):
        lines += _scale_lines(report["scale"])
    if report.get("goals"):
        lines += ["", "## Goals", "", "| goal | measured | met |", "|---|---:|---|"]
        for goal in report["goals"]:
            measured = goal["measured"]
            text = _goal_figure(measured, goal["unit"])
            met = {True: "yes", False: "**no**", None: "n/a"}[goal["met"]]
            lines.append(f"| {goal['goal']} | {text} | {met} |")
    failures = [run for run in report["runs"] if run.get("error")]
    if failures:
        lines += ["", "## Failed runs", ""]
        lines += [f"- {run['label']}: {run['error']}" for run in failures]
    return "\n".join(lines) + "\n"


def _scale_lines(scale: dict) -> list[str]:
    cells = [_number(scale.get("first_partition_seconds"), 1), _number(scale.get("p50_partition_seconds"), 1),
             _number(scale.get("all_partitions_seconds"), 1), f"{scale.get('partitions_complete', 0):,}",
             _number(scale.get("peak_rss_mb")), _number(scale.get("cpu_seconds"), 1), scale.get("error") or ""]
    return ["", f"## Scale: one mirror of {scale['topics']} topics x {scale['partitions_per_topic']} partitions "
                f"({scale['partitions']:,} partitions, {scale['records_per_partition']} records each)", "",
            "| first partition complete (s) | median partition (s) | all partitions (s) | partitions complete "
            "| peak RSS MB (driver JVM and Python) | CPU s | error |",
            "|---:|---:|---:|---:|---:|---:|---|",
            "| " + " | ".join(cells) + " |",
            "", "Timed from the POST creating the mirror until each remote partition's end offset reaches its "
                "source partition's."]


def _goal_figure(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:,.1f} s" if unit == "s" else f"{value:,.0f} ms"


def _control_plane(report: dict) -> str:
    entry = next(iter(report["summary"].get("mirrorplane", {}).values()), {})
    return _number((entry.get("control_plane_cpu_seconds") or {}).get("median"), 1)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
