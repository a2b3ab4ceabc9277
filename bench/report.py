"""The report: per dataset, candidate and tasks.max the median, min and max of every run's figures;
the ratios Mirrorplane/MM2 and Mirrorplane/raw paired per repetition; the perf tools' upper bounds;
MM2's tasks.max search; latency per rate; cost; the benchmark's goals (report_markdown.py renders it)."""

from __future__ import annotations

from collections import defaultdict

from bench.options import of_maximum
from bench.stats import median, paired_ratios, spread

TITLES = {"mirrorplane": "Mirrorplane", "mirrorplane-own-driver": "Mirrorplane (own driver)", "mm2": "MirrorMaker 2",
          "mm2-stock": "MirrorMaker 2 (stock JVM)", "raw": "raw Java copy",
          "direct": "no mirror (the source read directly)"}
FIGURES = ("records_per_second", "mb_per_second", "steady_records_per_second", "steady_mb_per_second", "seconds",
           "first_record_seconds", "cpu_seconds", "cpu_seconds_per_mb", "peak_rss_mb", "control_plane_cpu_seconds",
           "broker_cpu_seconds")
RATIO_FIGURES = ("records_per_second", "steady_records_per_second")
PAIRS = (("mirrorplane", "mm2"), ("mirrorplane", "mm2-stock"), ("mirrorplane", "raw"),
         ("mirrorplane", "mirrorplane-own-driver"))
LATENCY_FIGURES = ("p50_ms", "p95_ms", "p99_ms", "max_ms", "achieved_rate", "cpu_seconds_measured",
                   "control_plane_cpu_seconds_measured", "machine_busy_pct", "broker_jit_cpu_seconds")
GOAL_STEADY_VS_MM2 = 1.3
GOAL_STEADY_VS_RAW = 0.85
GOAL_FIRST_RECORD_SECONDS = 2.0
GOAL_P50_MS = 20.0
GOAL_P50_LEVEL = "5000"
GOAL_SCALE_SECONDS = 60.0
GOAL_SCALE_PARTITIONS = 1000


# -- summaries ---------------------------------------------------------------------------------

def summarize(runs: list[dict]) -> dict[str, dict[str, dict]]:
    """`{candidate: {tasks: {"runs", "failed", "effective_tasks", figure: spread}}}` over successful runs."""
    grouped: dict[tuple[str, int], list[dict]] = defaultdict(list)
    for run in runs:
        grouped[(run["candidate"], run["tasks"])].append(run)
    summary: dict[str, dict[str, dict]] = {}
    for (candidate, tasks), items in sorted(grouped.items()):
        good = [run for run in items if not run.get("error")]
        entry: dict = {"runs": len(good), "failed": len(items) - len(good),
                       "effective_tasks": sorted({r["effective_tasks"] for r in good if r.get("effective_tasks")})}
        for figure in FIGURES:
            values = [run[figure] for run in good if run.get(figure) is not None]
            if values:
                entry[figure] = spread(values)
        summary.setdefault(candidate, {})[str(tasks)] = entry
    return summary


def _by_repetition(runs: list[dict], candidate: str, tasks: int, figure: str) -> dict[int, float]:
    return {run["repetition"]: run[figure] for run in runs if run["candidate"] == candidate
            and run["tasks"] == tasks and not run.get("error") and run.get(figure) is not None}


def best_tasks(summary: dict, candidate: str, preferred: int | None = None) -> int | None:
    """`preferred` (MM2's search result) when the candidate ran at it, else its fastest median."""
    entries = summary.get(candidate, {})
    if preferred is not None and "records_per_second" in entries.get(str(preferred), {}):
        return preferred
    medians = {int(t): e["records_per_second"]["median"] for t, e in entries.items() if "records_per_second" in e}
    return max(medians, key=medians.__getitem__) if medians else None


def _ratio_entry(runs: list[dict], ours: tuple[str, int], theirs: tuple[str, int]) -> dict | None:
    entry: dict = {"tasks": [ours[1], theirs[1]]}
    for figure in RATIO_FIGURES:
        values = paired_ratios(_by_repetition(runs, *ours, figure), _by_repetition(runs, *theirs, figure))
        entry[figure] = _rounded(spread(values))
        entry.setdefault("pairs", len(values))
    return entry if entry["pairs"] else None


def ratios(runs: list[dict], mm2_best: int | None = None) -> dict[str, dict[str, dict]]:
    """Per pair, at every tasks.max both ran and between each one's best tasks.max ("best"): the ratio of
    each repetition's figures (end-to-end and steady-state records/s), as median, min and max."""
    summary = summarize(runs)
    table: dict[str, dict[str, dict]] = {}
    for ours, theirs in PAIRS:
        if ours not in summary or theirs not in summary:
            continue
        rows: dict[str, dict] = {}
        for tasks in sorted(set(summary[ours]) & set(summary[theirs]), key=int):
            if entry := _ratio_entry(runs, (ours, int(tasks)), (theirs, int(tasks))):
                rows[tasks] = entry
        best_ours = best_tasks(summary, ours)
        best_theirs = best_tasks(summary, theirs, mm2_best if theirs.startswith("mm2") else None)
        if best_ours and best_theirs and (entry := _ratio_entry(runs, (ours, best_ours), (theirs, best_theirs))):
            rows["best"] = entry
        table[f"{ours}/{theirs}"] = rows
    return table


def upper_summary(upper: list[dict]) -> dict[str, dict[str, dict]]:
    """`{dataset: {tool: {"records_per_second": spread, ...}}}` of the perf tools' successful runs."""
    grouped: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for result in upper:
        grouped[(result["dataset"], result["tool"])].append(result)
    table: dict[str, dict[str, dict]] = {}
    for (dataset, tool), items in grouped.items():
        good = [r for r in items if not r.get("error")]
        entry: dict = {"runs": len(good), "failed": len(items) - len(good)}
        for figure in ("records_per_second", "mb_per_second", "fetch_records_per_second", "cpu_seconds"):
            values = [r[figure] for r in good if r.get(figure) is not None]
            if values:
                entry[figure] = spread(values)
        table.setdefault(dataset, {})[tool] = entry
    return table


def latency_table(latency: list[dict]) -> dict[str, dict[str, dict]]:
    """`{candidate: {level: {"rate", "repetitions", "failed", "missing", figure: spread}}}`."""
    grouped: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for result in latency:
        grouped[(result["candidate"], result.get("level", str(result.get("rate"))))].append(result)
    table: dict[str, dict[str, dict]] = {}
    for (candidate, level), items in grouped.items():
        good = [r for r in items if not r.get("error") and r.get("p99_ms") is not None]
        entry: dict = {"rate": _median([r["rate"] for r in items if r.get("rate")]),
                       "tasks": items[0].get("tasks"), "repetitions": len(good), "failed": len(items) - len(good),
                       "missing": sum(r.get("missing", 0) for r in good),
                       "errors": [r["error"] for r in items if r.get("error")]}
        for figure in LATENCY_FIGURES:
            values = [r[figure] for r in good if r.get(figure) is not None]
            if values:
                entry[figure] = spread(values)
        resolution = [r["reader_resolution_us"] for r in good if (r.get("reader_resolution_us") or {}).get("p50_us")]
        if resolution:
            entry["reader_resolution_us"] = {key: _median([r[key] for r in resolution])
                                             for key in ("p50_us", "p99_us", "max_us", "queued_share")}
        entry["tails"] = [r["tail"] for r in good if (r.get("tail") or {}).get("records")]
        if breakdown := machine_breakdown_summary([r["machine_cpu_seconds"] for r in good
                                                   if r.get("machine_cpu_seconds")]):
            entry["machine_cpu_seconds"] = breakdown
        table.setdefault(candidate, {})[level] = entry
    return table


def machine_breakdown_summary(breakdowns: list[dict[str, float]]) -> dict[str, dict]:
    """Per part of the machine's busy CPU seconds (bench.latency `machine_breakdown`), its spread over the runs."""
    names = dict.fromkeys(name for breakdown in breakdowns for name in breakdown)
    spreads = {name: spread([b[name] for b in breakdowns if b.get(name) is not None]) for name in names}
    return {name: values for name, values in spreads.items() if values is not None}


def goals(ratio_table: dict, latency: dict, scale: dict | None = None, summary: dict | None = None,
          dataset: str = "the main dataset") -> list[dict]:
    """The benchmark's goals with the measured figure and whether it holds: on `dataset` (its ratio
    table and summary) steady-state backfill against MM2's best and the raw copy, and the first
    record after the POST; per latency level p99 against MM2's, p50 and CPU per minute; the scale check."""
    rows = []
    for pair, target, whom in (("mirrorplane/mm2", GOAL_STEADY_VS_MM2, "MM2"),
                               ("mirrorplane/raw", GOAL_STEADY_VS_RAW, "the raw copy")):
        if pair in ratio_table:
            value = _median_of(ratio_table[pair].get("best") or {}, "steady_records_per_second")
            rows.append(_goal(f"steady-state backfill on {dataset} >= {target:g}x {whom} (each at its best "
                              f"tasks.max)", value, "x", value is not None and value >= target))
    ours = (summary or {}).get("mirrorplane", {})
    tasks = best_tasks(summary or {}, "mirrorplane")
    if tasks is not None:
        first = _median_of(ours[str(tasks)], "first_record_seconds")
        rows.append(_goal(f"first record on {dataset} <= {GOAL_FIRST_RECORD_SECONDS:g} s after the POST", first,
                          "s", first is not None and first <= GOAL_FIRST_RECORD_SECONDS))
    for level, entry in latency.get("mirrorplane", {}).items():
        theirs = latency.get("mm2", {}).get(level, {})
        where = format_level(level, entry)
        p99, mm2_p99 = _median_of(entry, "p99_ms"), _median_of(theirs, "p99_ms")
        rows.append(_goal(f"p99 latency <= MM2's at {where} (ours / MM2's)", _ratio(p99, mm2_p99), "x",
                          p99 is not None and mm2_p99 is not None and p99 <= mm2_p99))
        if level == GOAL_P50_LEVEL:
            p50 = _median_of(entry, "p50_ms")
            floor = _median_of(latency.get("direct", {}).get(level, {}), "p50_ms")
            without_mirror = "" if floor is None else f" (no mirror at all, the source read directly: {floor:g} ms)"
            rows.append(_goal(f"p50 latency <= {GOAL_P50_MS:g} ms at {where}{without_mirror}", p50, "ms",
                              p50 is not None and p50 <= GOAL_P50_MS))
            cpu, mm2_cpu = _median_of(entry, "cpu_seconds_measured"), _median_of(theirs, "cpu_seconds_measured")
            rows.append(_goal(f"CPU seconds per minute <= MM2's at {where} (ours / MM2's)", _ratio(cpu, mm2_cpu),
                              "x", cpu is not None and mm2_cpu is not None and cpu <= mm2_cpu))
    if scale is not None:
        seconds = scale.get("all_partitions_seconds")
        big_enough = scale.get("partitions", 0) >= GOAL_SCALE_PARTITIONS
        rows.append({"goal": f"{scale.get('partitions', 0):,} partitions all replicating within "
                             f"{GOAL_SCALE_SECONDS:g} s", "measured": seconds, "unit": "s",
                     "met": None if not big_enough else seconds is not None and seconds <= GOAL_SCALE_SECONDS})
    return rows


def _goal(goal: str, measured: float | None, unit: str, met: bool) -> dict:
    """A goal's row; `met` is None (not known) when nothing was measured."""
    return {"goal": goal, "measured": measured, "unit": unit, "met": None if measured is None else met}


def _median_of(entry: dict, figure: str) -> float | None:
    return (entry.get(figure) or {}).get("median")


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else round(ours / theirs, 3)


def dataset_names(settings: dict, runs: list[dict]) -> list[str]:
    names = [d["name"] for d in settings.get("datasets", [])]
    return names + [n for n in dict.fromkeys(r.get("dataset", "main") for r in runs) if n not in names]


def build(machine: dict, settings: dict, runs: list[dict], latency: list[dict], complete: bool,
          scale: dict | None = None, sweep: list[dict] | None = None, upper: list[dict] | None = None,
          lead_ins: list[dict] | None = None) -> dict:
    """The report; `lead_ins`: latency runs that warmed the brokers up, kept apart from the figures."""
    mm2_best = settings.get("mm2_best_tasks")
    names = dataset_names(settings, runs)
    per_dataset = {name: [r for r in runs if r.get("dataset", "main") == name] for name in names}
    summary = {name: summarize(items) for name, items in per_dataset.items() if items}
    ratio_table = {name: ratios(items, mm2_best) for name, items in per_dataset.items() if items}
    latency_summary = latency_table(latency)
    main = names[0] if names else None
    return {"complete": complete, "machine": machine, "settings": settings, "summary": summary,
            "ratios": ratio_table, "upper_bounds": upper_summary(upper or []), "mm2_search": sweep or [],
            "latency_summary": latency_summary, "scale": scale,
            "goals": goals(ratio_table.get(main, {}) if main is not None else {}, latency_summary, scale,
                           summary.get(main, {}) if main is not None else {}, _dataset_title(settings, main)),
            "runs": runs, "latency": latency, "latency_lead_ins": lead_ins or [], "upper_runs": upper or []}


# -- text shared with the markdown ---------------------------------------------------------

def format_number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


def format_level(level: str, entry: dict) -> str:
    """A latency level: `<n>%` of the candidate's maximum rate, or a rate in records/s."""
    rate = entry.get("rate")
    if of_maximum(level):
        return f"{level} of its maximum ({format_number(rate)} records/s)"
    return f"{format_number(rate)} records/s"


def _dataset_title(settings: dict, name: str | None) -> str:
    """`<records> x <size> B`, or the dataset's name when the settings do not describe it."""
    for dataset in settings.get("datasets", []):
        if dataset.get("name") == name and dataset.get("records") and dataset.get("record_bytes"):
            return f"{dataset['records']:,} x {dataset['record_bytes']:,} B"
    return name or "the main dataset"


def _median(values: list[float]) -> float | None:
    return median(values) if values else None


def _rounded(values: dict | None) -> dict | None:
    return None if values is None else {key: round(value, 3) for key, value in values.items()}
