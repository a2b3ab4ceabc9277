"""One backfill run: the run order, each run's names, the timed copy of a dataset by one candidate,
and the figures of a finished run (throughput, cost, the remote topic's compression)."""

from __future__ import annotations

import time
from collections.abc import Iterator

from bench.candidates.base import Candidate, Environment, RunSpec
from bench.cluster import EndOffsets, Progress, delete_topics, topic_codecs, topic_config
from bench.datasets import Dataset
from bench.measure import ResourceSampler
from bench.stats import steady_rate
from bench.writeback import write_back

SHORT = {"mirrorplane": "mp", "mirrorplane-own-driver": "mo", "mm2": "mm", "mm2-stock": "ms", "raw": "raw",
         "direct": "dr"}
POLL_SECONDS = 0.05
SERVICES = ("control_plane", "brokers")


def plan(repetitions: int, tasks: dict[str, tuple[int, ...]], candidates: tuple[str, ...]
         ) -> Iterator[tuple[int, int, str]]:
    """(repetition, tasks.max, candidate) in run order: every tasks.max value in turn, each candidate
    at the values it runs at; the candidates' order reverses every repetition."""
    values = list(dict.fromkeys(value for name in candidates for value in tasks[name]))
    for repetition in range(1, repetitions + 1):
        order = candidates if repetition % 2 else tuple(reversed(candidates))
        for tasks_max in values:
            for candidate in order:
                if tasks_max in tasks[candidate]:
                    yield repetition, tasks_max, candidate


def run_spec(repetition: int, tasks_max: int, candidate: str, dataset: Dataset, partitions: int,
             variant: int = 0) -> RunSpec:
    """A run's names: the alias (and so the remote topic) is new on the target for every run."""
    suffix = f"v{variant}" if variant else ""
    label = f"r{repetition}-{candidate}-t{tasks_max}" + (f"-{dataset.name.lower()}" if variant else "")
    return RunSpec(label=label, alias=f"{SHORT[candidate]}{repetition}t{tasks_max}{suffix}", topic=dataset.topic,
                   partitions=partitions, tasks=tasks_max, compression=dataset.compression)


def backfill(candidate: Candidate, spec: RunSpec, env: Environment, expected: int, payload_bytes: int,
             timeout: float, control_plane: list[int], brokers: list[int]) -> dict:
    """One timed copy of the dataset; the remote topic is deleted afterwards. A run that cannot finish
    (the candidate failed, timed out or could not start) is recorded with its error."""
    run: dict = {"label": spec.label, "candidate": candidate.name, "tasks": spec.tasks, "alias": spec.alias,
                 "remote_topic": spec.remote_topic, "expected": expected, "error": None,
                 "writeback_before": write_back()}
    candidate.prepare(spec)
    watcher = EndOffsets(env.target, spec.remote_topic)
    sampler = ResourceSampler({"candidate": candidate.process_groups, "control_plane": lambda: control_plane,
                               "brokers": lambda: brokers}, services=SERVICES)
    progress = Progress()
    total, first, now = 0, None, 0.0
    sampler.start()
    started = time.monotonic()
    try:
        candidate.start(spec)
        while True:
            total, now = watcher.total(), time.monotonic() - started
            progress.add(now, total)
            if total and first is None:
                first = now
            if total >= expected:
                break
            if (why := candidate.failure()) or now > timeout:
                run["error"] = why or f"timed out after {timeout:.0f} s with {total:,} of {expected:,} records"
                break
            time.sleep(POLL_SECONDS)
    except Exception as error:  # noqa: BLE001 - one failed run must not end the benchmark
        run["error"] = f"{type(error).__name__}: {error}"
    try:
        usage = sampler.snapshot()
        run |= {"records": total, "duplicates": max(total - expected, 0), "seconds": round(now, 3),
                "first_record_seconds": None if first is None else round(first, 3)}
        if not run["error"]:
            run |= throughput_figures(expected, payload_bytes, now, progress.samples)
        run |= cost_figures(usage, payload_bytes, bool(control_plane))
        run["details"] = candidate.details()
        run["effective_tasks"] = run["details"].get("effective_tasks")
        run["target_compression"] = target_compression(env, spec.remote_topic)
    finally:
        sampler.stop()
        candidate.stop()
        watcher.close()
    delete_topics(env.target, f"{spec.alias}.")
    return run


def throughput_figures(expected: int, payload_bytes: int, seconds: float, samples: list[tuple[float, int]]) -> dict:
    """End-to-end and steady-state (10% to 90% of the records on the target) rates of a finished run."""
    steady = steady_rate(samples, expected)
    return {"records_per_second": round(expected / seconds, 1),
            "mb_per_second": round(payload_bytes / seconds / 1e6, 2),
            "steady_records_per_second": None if steady is None else round(steady, 1),
            "steady_mb_per_second": None if steady is None else round(steady * payload_bytes / expected / 1e6, 2),
            "progress_samples": len(samples)}


def cost_figures(usage: dict, payload_bytes: int, with_control_plane: bool) -> dict:
    """CPU seconds, CPU seconds per MB of payload and peak RSS of the candidate (and the services)."""
    megabytes = payload_bytes / 1e6
    cpu = usage["candidate"]["cpu_seconds"]
    figures = {"cpu_seconds": cpu, "peak_rss_mb": usage["candidate"]["peak_rss_mb"],
               "broker_cpu_seconds": usage["brokers"]["cpu_seconds"]}
    if with_control_plane:
        figures["control_plane_cpu_seconds"] = usage["control_plane"]["cpu_seconds"]
        cpu += usage["control_plane"]["cpu_seconds"]
    figures["cpu_seconds_per_mb"] = round(cpu / megabytes, 4) if megabytes else None
    return figures


def target_compression(env: Environment, topic: str) -> dict:
    """The remote topic's compression.type and the codecs of the batches the target broker stored."""
    batches = topic_codecs(env.target_log_dir, topic) if env.target_log_dir else {}
    return {"topic_config": topic_config(env.target, topic, "compression.type"), "batches": batches}
