"""The benchmark from start to report: clusters, dataset, backfill runs in alternating order, latency."""

from __future__ import annotations

import json
import shutil
import signal
import time
from collections.abc import Iterator
from datetime import UTC, datetime

from bench import machine, report
from bench.candidates import Candidate, Environment, RunSpec, build
from bench.cluster import (
    BenchClusters,
    EndOffsets,
    create_topic,
    dataset_payload_bytes,
    delete_topics,
    load_dataset,
    say,
    wait_for_total,
)
from bench.latency import measure
from bench.measure import ResourceSampler
from bench.options import LATENCY_CANDIDATES, Options
from bench.scale import measure_scale

DATASET_TOPIC = "bench"
SHORT = {"mirrorplane": "mp", "mm2": "mm", "raw": "raw"}
POLL_SECONDS = 0.1
SETTLE_SECONDS = 3.0


def plan(repetitions: int, tasks: tuple[int, ...], candidates: tuple[str, ...]) -> Iterator[tuple[int, int, str]]:
    """(repetition, tasks.max, candidate) in run order: the candidates' order reverses every repetition."""
    for repetition in range(1, repetitions + 1):
        order = candidates if repetition % 2 else tuple(reversed(candidates))
        for tasks_max in tasks:
            for candidate in order:
                yield repetition, tasks_max, candidate


def run_spec(repetition: int, tasks_max: int, candidate: str, partitions: int) -> RunSpec:
    return RunSpec(label=f"r{repetition}-{candidate}-t{tasks_max}", alias=f"{SHORT[candidate]}{repetition}t{tasks_max}",
                   topic=DATASET_TOPIC, partitions=partitions, tasks=tasks_max)


def backfill(candidate: Candidate, spec: RunSpec, env: Environment, expected: int, payload_bytes: int,
             timeout: float, control_plane: list[int], brokers: list[int]) -> dict:
    """One timed copy of the dataset; the remote topic is deleted afterwards. A run that cannot finish
    (the candidate failed, timed out or could not start) is recorded with its error."""
    run: dict = {"label": spec.label, "candidate": candidate.name, "tasks": spec.tasks, "alias": spec.alias,
                 "remote_topic": spec.remote_topic, "expected": expected, "error": None}
    candidate.prepare(spec)
    watcher = EndOffsets(env.target, spec.remote_topic)
    sampler = ResourceSampler({"candidate": candidate.process_groups, "control_plane": lambda: control_plane,
                               "brokers": lambda: brokers})
    total, first, now = 0, None, 0.0
    sampler.start()
    started = time.monotonic()
    try:
        candidate.start(spec)
        while True:
            total, now = watcher.total(), time.monotonic() - started
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
            run |= {"records_per_second": round(expected / now, 1),
                    "mb_per_second": round(payload_bytes / now / 1e6, 2),
                    "steady_records_per_second": round(expected / (now - first), 1) if now > first else None}
        run |= {"cpu_seconds": usage["candidate"]["cpu_seconds"], "peak_rss_mb": usage["candidate"]["peak_rss_mb"]}
        if control_plane:
            run["control_plane_cpu_seconds"] = usage["control_plane"]["cpu_seconds"]
        run["broker_cpu_seconds"] = usage["brokers"]["cpu_seconds"]
        run["details"] = candidate.details()
    finally:
        sampler.stop()
        candidate.stop()
        watcher.close()
    delete_topics(env.target, f"{spec.alias}.")
    return run


def _write(options: Options, data: dict) -> None:
    options.out.parent.mkdir(parents=True, exist_ok=True)
    for path, text in ((options.out, json.dumps(data, indent=2) + "\n"),
                       (options.markdown_out, report.render_markdown(data))):
        partial = path.with_name(path.name + ".tmp")
        partial.write_text(text)
        partial.replace(path)


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(options: Options) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    work = options.work_dir.resolve()
    for folder in ("controlplane", "mm2", "raw"):
        shutil.rmtree(work / folder, ignore_errors=True)
    facts = machine.facts()
    payload = dataset_payload_bytes(options.records, options.key_bytes, options.record_bytes)
    settings = {
        "records": options.records, "record_bytes": options.record_bytes, "key_bytes": options.key_bytes,
        "partitions": options.partitions, "repetitions": options.repetitions, "tasks": list(options.tasks),
        "latency_rate": options.latency_rate, "latency_seconds": options.latency_seconds,
        "candidates": list(options.only), "dataset_mb": round(payload / 1e6, 1),
        "scale": None if options.skip_scale else {"topics": options.scale_topics,
                                                   "partitions": options.scale_partitions,
                                                   "records": options.scale_records},
        "timing": "from the candidate's start (Mirrorplane: the POST creating the mirror; MM2 and the raw copy: "
                  "process start) until the remote topic's end offsets sum to the dataset size, polled every "
                  f"{POLL_SECONDS} s",
    }
    runs: list[dict] = []
    latency: dict[str, dict] = {}
    scale: dict | None = None
    candidates: dict[str, Candidate] = {}
    clusters = None
    completed = False
    try:
        say(f"starting two Kafka clusters and Redis in {work / 'stack'}")
        clusters = BenchClusters.start(work / "stack")
        env = Environment(source=clusters.source, target=clusters.target, redis_url=clusters.redis_url, work_dir=work)
        create_topic(env.source, DATASET_TOPIC, options.partitions)
        say(f"loading {options.records:,} records ({payload / 1e6:,.0f} MB) into {DATASET_TOPIC} on east")
        seconds = load_dataset(env.source, DATASET_TOPIC, options.records, options.key_bytes, options.record_bytes,
                               options.partitions, progress=say)
        if wait_for_total(env.source, DATASET_TOPIC, options.records, 60) != options.records:
            raise RuntimeError("the source topic does not hold the dataset")
        settings["load_seconds"] = round(seconds, 1)
        for name in options.only:
            say(f"setting up {name}")
            candidates[name] = candidate = build(name, env)
            candidate.setup()
            settings[name] = candidate.settings()
        control_plane = candidates["mirrorplane"].control_plane_groups() if "mirrorplane" in candidates else []
        total_runs = options.repetitions * len(options.tasks) * len(options.only)
        for index, (repetition, tasks_max, name) in enumerate(
                plan(options.repetitions, options.tasks, options.only), start=1):
            spec = run_spec(repetition, tasks_max, name, options.partitions)
            say(f"run {index}/{total_runs}: {candidates[name].title}, tasks.max {tasks_max}, repetition {repetition}")
            run = backfill(candidates[name], spec, env, options.records, payload, options.run_timeout,
                           control_plane if name == "mirrorplane" else [], clusters.broker_groups())
            run |= {"index": index, "repetition": repetition}
            runs.append(run)
            say(_describe(run))
            _write(options, report.build(facts, settings, runs, latency, complete=False, scale=scale) | _stamp())
            time.sleep(SETTLE_SECONDS)
        if not options.skip_latency:
            for name in (n for n in LATENCY_CANDIDATES if n in candidates):
                spec = RunSpec(label=f"lat-{name}", alias=f"{SHORT[name]}lat", topic=f"latency-{name}",
                               partitions=options.partitions, tasks=options.tasks[0])
                say(f"latency of {candidates[name].title}: {options.latency_rate:,} records/s for "
                    f"{options.latency_seconds:g} s (tasks.max {spec.tasks})")
                latency[name] = result = measure(candidates[name], spec, env, options.latency_rate,
                                                 options.latency_seconds, options.key_bytes, options.record_bytes, say)
                say(f"  p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, p99 {result['p99_ms']} ms"
                    + (f"; error: {result['error']}" if result["error"] else ""))
                time.sleep(SETTLE_SECONDS)
        if not options.skip_scale and "mirrorplane" in candidates:
            scale = measure_scale(candidates["mirrorplane"], env, options.scale_topics, options.scale_partitions,
                                  options.scale_records, options.tasks[0], say)
            say(_describe_scale(scale))
        completed = True
    except KeyboardInterrupt:
        say("interrupted: stopping everything the benchmark started")
    finally:
        for candidate in candidates.values():
            try:
                candidate.teardown()
            except Exception as error:  # noqa: BLE001 - the others must still stop
                say(f"stopping {candidate.name} failed: {error}")
        if clusters is not None:
            clusters.down()
    data = report.build(facts, settings, runs, latency, complete=completed, scale=scale) | _stamp()
    _write(options, data)
    print()
    print(report.render_markdown(data))
    say(f"report: {options.out} and {options.markdown_out}")
    return 0 if completed else 1


def _stamp() -> dict:
    return {"generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _describe(run: dict) -> str:
    if run.get("error"):
        return f"  failed: {run['error']}"
    return (f"  {run['records_per_second']:,.0f} records/s ({run['mb_per_second']:.1f} MB/s) "
            f"in {run['seconds']:.1f} s, first record after {run['first_record_seconds']:.1f} s; "
            f"CPU {run['cpu_seconds']:.1f} s, peak RSS {run['peak_rss_mb']:,.0f} MB")


def _describe_scale(scale: dict) -> str:
    if scale.get("error"):
        return f"  scale: {scale['error']}"
    return (f"  scale: all {scale['partitions']:,} partitions replicating after {scale['all_partitions_seconds']} s "
            f"(first {scale['first_partition_seconds']} s, median {scale['p50_partition_seconds']} s); "
            f"peak RSS {scale['peak_rss_mb']:,.0f} MB")
