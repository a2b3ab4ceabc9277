"""Which latency runs an invocation makes, in what order, and at what rate a level of "50%" runs."""

from __future__ import annotations

from bench.candidates.direct import DirectRead
from bench.options import of_maximum
from bench.stats import median


def derived_max_rate(runs: list[dict], candidate: str, tasks: int) -> tuple[float | None, str]:
    """A candidate's maximum sustainable rate from this invocation's main-dataset runs at `tasks`: the
    median steady-state rate, else the median end-to-end rate; with where it came from."""
    good = [r for r in runs if r["candidate"] == candidate and r["tasks"] == tasks and r.get("phase") == "main"
            and r.get("main_dataset") and not r.get("error")]
    for figure, source in (("steady_records_per_second", "median steady-state records/s"),
                           ("records_per_second", "median end-to-end records/s")):
        values = [r[figure] for r in good if r.get(figure)]
        if values:
            return median(values), f"{source} of {len(values)} backfill run(s) at tasks.max {tasks}"
    return None, "no successful backfill run"


def latency_plan(names: tuple[str, ...], levels: tuple[str, ...], repetitions: int,
                 floor: bool) -> list[tuple[int, str, str]]:
    """The latency runs in order, as (repetition, level, candidate): every level in each repetition,
    the candidates' order reversed every other repetition; with `floor`, each fixed-rate level (the
    same rate for every candidate) starts with a run without a mirror, "direct"."""
    runs = []
    for repetition in range(1, repetitions + 1):
        order = names if repetition % 2 else tuple(reversed(names))
        for level in levels:
            first = (DirectRead.name,) if floor and not of_maximum(level) else ()
            runs += [(repetition, level, name) for name in first + order]
    return runs


def lead_in_plan(names: tuple[str, ...], levels: tuple[str, ...], floor: bool) -> list[tuple[str, str]]:
    """The lead-in runs before the measured latency runs, as (level, candidate): each candidate once at each
    level (after the run without a mirror where the level has one), so that the brokers have compiled that
    traffic's paths before any candidate is measured (the candidate measured first otherwise paid for it:
    bench.jit)."""
    return [(level, name) for _, level, name in latency_plan(names, levels, 1, floor)]
