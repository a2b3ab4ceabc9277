"""The benchmark from start to report: clusters, datasets, MM2's tasks.max search, backfill runs in
alternating order (each run: bench/backfill.py) with the perf tools' upper bounds, latency at fixed and
derived rates, scale."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from bench import machine, report, report_markdown
from bench.backfill import POLL_SECONDS, SHORT, backfill, plan, run_spec
from bench.candidates import build
from bench.candidates.base import Candidate, Environment, RunSpec
from bench.candidates.direct import DirectRead
from bench.cluster import (
    TARGET,
    BenchClusters,
    create_topic,
    dataset_payload_bytes,
    delete_topics,
    load_dataset,
    say,
    wait_for_total,
)
from bench.datasets import Dataset, datasets
from bench.latency import level_label, measure, resolve_rate
from bench.latency_plan import derived_max_rate, latency_plan, lead_in_plan
from bench.options import LATENCY_CANDIDATES, MEMORY_STORAGE, MM2_CANDIDATES, Options, of_maximum
from bench.scale import measure_scale
from bench.upper import UpperBounds

SETTLE_SECONDS = 3.0
LEAD_IN_SECONDS = 30.0  # measured seconds of a lead-in run, after its warm-up (bench.latency)


def best_tasks(sweep: list[dict]) -> int | None:
    """The tasks.max of the fastest successful search run (end-to-end records/s)."""
    good = [run for run in sweep if not run.get("error") and run.get("records_per_second")]
    return max(good, key=lambda run: run["records_per_second"])["tasks"] if good else None


class Benchmark:
    """One invocation: what it started, what it measured, and the report written after every step."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.work = options.work_dir.resolve()
        self.facts = machine.facts()
        self.datasets = datasets(options)
        self.settings = self._settings()
        self.runs: list[dict] = []
        self.sweep: list[dict] = []
        self.upper: list[dict] = []
        self.latency: list[dict] = []
        self.lead_ins: list[dict] = []  # latency runs that warm the brokers up, not in the figures
        self.scale: dict | None = None
        self.candidates: dict[str, Candidate] = {}
        self.clusters: BenchClusters | None = None
        self.env: Environment | None = None
        self.tools: UpperBounds | None = None  # Kafka's perf tools: the brokers' warm-up
        self.bounds: UpperBounds | None = None  # the same, measured as upper bounds unless skipped
        self.mm2_best: int | None = None

    def _env(self) -> Environment:
        if self.env is None:
            raise RuntimeError("the clusters are not started")
        return self.env

    def _clusters(self) -> BenchClusters:
        if self.clusters is None:
            raise RuntimeError("the clusters are not started")
        return self.clusters

    def _settings(self) -> dict:
        o = self.options
        main = self.datasets[0]
        return {
            "records": o.records, "record_bytes": o.record_bytes, "key_bytes": o.key_bytes,
            "partitions": o.partitions, "repetitions": o.repetitions, "tasks": list(o.tasks),
            "mm2_tasks_searched": list(o.mm2_tasks), "variant_repetitions": o.variant_repetitions,
            "latency_rates": list(o.latency_rates), "latency_seconds": o.latency_seconds,
            "latency_steady_seconds": o.latency_steady_seconds,
            "latency_repetitions": o.latency_repetitions, "latency_floor": not o.skip_latency_floor,
            "latency_lead_in_seconds": None if o.skip_latency_lead_in else LEAD_IN_SECONDS,
            "candidates": list(o.only),
            "dataset_mb": round(dataset_payload_bytes(main.records, o.key_bytes, main.record_bytes) / 1e6, 1),
            "datasets": [{"name": d.name, "records": d.records, "record_bytes": d.record_bytes,
                          "compression": d.compression, "repetitions": d.repetitions, "tasks": list(d.tasks),
                          "payload_mb": round(dataset_payload_bytes(d.records, o.key_bytes, d.record_bytes) / 1e6, 1)}
                         for d in self.datasets],
            "scale": None if o.skip_scale else {"topics": o.scale_topics, "partitions": o.scale_partitions,
                                                 "records": o.scale_records},
            "timing": "from the candidate's start (Mirrorplane: the POST creating the mirror; MM2 and the raw copy: "
                      "process start) until the remote topic's end offsets sum to the dataset size, polled every "
                      f"{POLL_SECONDS} s; steady state: records/s while the target went from 10% to 90% of the "
                      "dataset (crossings interpolated between polls)",
        }

    def write(self, complete: bool = False) -> dict:
        data = report.build(self.facts, self.settings, self.runs, self.latency, complete=complete, scale=self.scale,
                            sweep=self.sweep, upper=self.upper, lead_ins=self.lead_ins) | _stamp()
        out = self.options.out
        out.parent.mkdir(parents=True, exist_ok=True)
        for path, text in ((out, json.dumps(data, indent=2) + "\n"),
                           (self.options.markdown_out, report_markdown.render_markdown(data))):
            partial = path.with_name(path.name + ".tmp")
            partial.write_text(text)
            partial.replace(path)
        return data

    # -- setting up ---------------------------------------------------------------------------

    def start(self) -> None:
        stack = self._stack_dir()
        say(f"starting two Kafka clusters and Redis in {stack}")
        self.clusters = BenchClusters.start(stack)
        self.settings["brokers"] = {"jvm": self.clusters.broker_jvm(), "storage": self.options.broker_storage}
        self.env = env = Environment(source=self.clusters.source, target=self.clusters.target,
                                     redis_url=self.clusters.redis_url, work_dir=self.work,
                                     target_log_dir=self.clusters.log_dir(TARGET), producer=self.options.producer)
        create_topic(env.source, env.training_topic, 1)
        load_dataset(env.source, env.training_topic, env.training_records, self.options.key_bytes, 1024, 1,
                     progress=lambda _: None)
        for name in self.options.only:
            say(f"setting up {name}")
            self.candidates[name] = candidate = build(name, env)
            candidate.setup()
            self.settings[name] = candidate.settings()
        tools = UpperBounds(env.source, env.target, self.work, self.options.run_timeout)
        try:
            tools.setup()
            self.tools = tools
            self.bounds = None if self.options.skip_upper_bounds else tools
        except Exception as error:  # noqa: BLE001 - the candidates are still measured
            self.settings["upper_bounds_error"] = f"{type(error).__name__}: {error}"
            say(f"no upper bounds and no warm-up of the brokers: {error}")

    def load(self, dataset: Dataset) -> None:
        o, env = self.options, self._env()
        payload = dataset_payload_bytes(dataset.records, o.key_bytes, dataset.record_bytes)
        create_topic(env.source, dataset.topic, o.partitions, dataset.topic_config)
        say(f"loading {dataset.records:,} records of {dataset.record_bytes:,} B ({payload / 1e6:,.0f} MB, "
            f"compression {dataset.compression}) into {dataset.topic} on east")
        seconds = load_dataset(env.source, dataset.topic, dataset.records, o.key_bytes, dataset.record_bytes,
                               o.partitions, progress=say, compression=dataset.compression)
        if wait_for_total(env.source, dataset.topic, dataset.records, 60) != dataset.records:
            raise RuntimeError(f"the source topic {dataset.topic} does not hold the dataset")
        entry = next(d for d in self.settings["datasets"] if d["name"] == dataset.name)
        entry["load_seconds"] = round(seconds, 1)
        if dataset.main:
            self.settings["load_seconds"] = round(seconds, 1)

    # -- backfill -----------------------------------------------------------------------------

    def copy(self, name: str, spec: RunSpec, dataset: Dataset) -> dict:
        o = self.options
        payload = dataset_payload_bytes(dataset.records, o.key_bytes, dataset.record_bytes)
        control_plane = self.candidates["mirrorplane"].control_plane_groups() if "mirrorplane" in self.candidates \
            else []
        run = backfill(self.candidates[name], spec, self._env(), dataset.records, payload, o.run_timeout,
                       control_plane if name == "mirrorplane" else [], self._clusters().broker_groups())
        run |= {"dataset": dataset.name, "main_dataset": dataset.main, "compression": dataset.compression,
                "record_bytes": dataset.record_bytes}
        say(_describe(run))
        return run

    def search_mm2(self, dataset: Dataset) -> None:
        """MM2 once at every --mm2-tasks value; the fastest is run in every repetition besides --tasks."""
        name = next((n for n in MM2_CANDIDATES if n in self.candidates), None)
        if name is None or not self.options.mm2_tasks:
            return
        for tasks_max in self.options.mm2_tasks:
            spec = RunSpec(label=f"search-{name}-t{tasks_max}", alias=f"{SHORT[name]}s{tasks_max}",
                           topic=dataset.topic, partitions=self.options.partitions, tasks=tasks_max,
                           compression=dataset.compression)
            say(f"search: {self.candidates[name].title} at tasks.max {tasks_max}")
            self.sweep.append(self.copy(name, spec, dataset) | {"phase": "search"})
            self.write()
            time.sleep(SETTLE_SECONDS)
        self.mm2_best = best_tasks(self.sweep)
        self.settings["mm2_best_tasks"] = self.mm2_best
        say(f"MM2's best tasks.max on this machine: {self.mm2_best}")

    def tasks_of(self, dataset: Dataset) -> dict[str, tuple[int, ...]]:
        tasks = dict.fromkeys(self.options.only, dataset.tasks)
        for name in MM2_CANDIDATES:
            if name in tasks and self.mm2_best and self.mm2_best not in tasks[name]:
                tasks[name] = (*tasks[name], self.mm2_best)
        return tasks

    def _services(self, candidate: Candidate) -> dict[str, Callable[[], Iterable[int]]]:
        """What else runs on the machine in a run of `candidate`, by name: the brokers, Redis, and
        Mirrorplane's waiting standby and (in another candidate's runs) its control plane."""
        services = self._clusters().services()
        mirrorplane = self.candidates.get("mirrorplane")
        if mirrorplane is not None:
            services["standby"] = mirrorplane.waiting_groups
            if candidate is not mirrorplane:
                services["control_plane"] = mirrorplane.control_plane_groups
        return services

    def warm_up_brokers(self, dataset: Dataset) -> None:
        if self.tools is not None:
            self.settings.setdefault("broker_warm_ups", []).append(
                self.tools.warm_up(dataset, self.options.partitions, say))
            time.sleep(SETTLE_SECONDS)

    def backfills(self, dataset: Dataset, variant: int) -> None:
        names = tuple(self.candidates)
        order = list(plan(dataset.repetitions, self.tasks_of(dataset), names))
        for index, (repetition, tasks_max, name) in enumerate(order, start=1):
            say(f"{dataset.name} run {index}/{len(order)}: {self.candidates[name].title}, tasks.max {tasks_max}, "
                f"repetition {repetition}")
            spec = run_spec(repetition, tasks_max, name, dataset, self.options.partitions, variant)
            self.runs.append(self.copy(name, spec, dataset) | {"index": index, "repetition": repetition,
                                                                "phase": "main"})
            self.write()
            time.sleep(SETTLE_SECONDS)
            last_of_repetition = index == len(order) or order[index][0] != repetition
            if last_of_repetition and self.bounds is not None:
                self.upper_bounds(self.bounds, dataset, repetition)

    def upper_bounds(self, bounds: UpperBounds, dataset: Dataset, repetition: int) -> None:
        label = f"r{repetition}-{dataset.name.lower()}"
        base = {"dataset": dataset.name, "main_dataset": dataset.main, "repetition": repetition,
                "records_expected": dataset.records}
        say(f"upper bounds of {dataset.name}, repetition {repetition}: producer and consumer perf tools")
        producer = bounds.producer(label, dataset.records, dataset.record_bytes, self.options.partitions,
                                   dataset.compression)
        consumer = bounds.consumer(label, dataset.topic, dataset.records)
        for tool, result in (("producer", producer), ("consumer", consumer)):
            self.upper.append(base | {"tool": tool} | result)
            say(f"  {tool}: " + (f"{result['records_per_second']:,.0f} records/s" if not result["error"]
                                 else f"failed: {result['error']}"))
        self.write()
        time.sleep(SETTLE_SECONDS)

    # -- latency --------------------------------------------------------------------------------

    def latencies(self) -> None:
        o = self.options
        names = tuple(n for n in LATENCY_CANDIDATES if n in self.candidates)
        tasks = o.tasks[0]
        maxima = {name: derived_max_rate(self.runs, name, tasks) for name in names}
        if o.latency_max_rate:
            maxima = {name: (value, source) if value else (float(o.latency_max_rate), "--latency-max-rate")
                      for name, (value, source) in maxima.items()}
        self.settings["latency_max_rates"] = {name: {"records_per_second": value, "source": source}
                                              for name, (value, source) in maxima.items()}
        floor = DirectRead(self._env())
        lead_ins = [] if o.skip_latency_lead_in else [
            (0, level, name) for level, name in lead_in_plan(names, o.latency_rates, floor=not o.skip_latency_floor)]
        for repetition, level, name in lead_ins + latency_plan(names, o.latency_rates, o.latency_repetitions,
                                                               floor=not o.skip_latency_floor):
            candidate, maximum = (floor, (None, "")) if name == floor.name else (self.candidates[name], maxima[name])
            result = self.latency_run(candidate, level, repetition, tasks, maximum)
            (self.lead_ins if result["lead_in"] else self.latency).append(result)
            self.write()
            time.sleep(SETTLE_SECONDS)

    def latency_run(self, candidate: Candidate, level: str, repetition: int, tasks: int,
                    maximum: tuple[float | None, str]) -> dict:
        """One latency run; repetition 0 is the candidate's lead-in at this level (`lead_in_plan`)."""
        o, name = self.options, candidate.name
        lead_in = repetition == 0
        seconds = LEAD_IN_SECONDS if lead_in else o.latency_seconds
        rate = resolve_rate(level, maximum[0])
        base = {"candidate": name, "level": level, "repetition": repetition, "tasks": tasks, "lead_in": lead_in,
                "max_rate": maximum[0], "max_rate_source": maximum[1] if of_maximum(level) else None}
        if rate is None:
            return base | {"rate": None, "seconds": seconds, "error": f"no maximum rate: {maximum[1]}"}
        run = "lead-in" if lead_in else f"r{repetition}"
        label = f"lat-{name}-{level_label(level)}-{run}"
        spec = RunSpec(label=label, alias=f"{SHORT[name]}l{level_label(level).replace('-', '')}r{repetition}",
                       topic=f"latency-{name}-{level_label(level)}-{run}", partitions=o.partitions,
                       tasks=tasks, steady=True)
        what = ("lead-in (warms the brokers up, not in the figures)" if lead_in
                else f"{repetition}/{o.latency_repetitions}")
        say(f"latency {what} of {candidate.title} at {level} = {rate:,} records/s for {seconds:g} s "
            f"(tasks.max {tasks})")
        result = measure(candidate, spec, self._env(), rate, seconds, o.key_bytes, o.record_bytes, say,
                         steady_seconds=o.latency_steady_seconds, control_plane=candidate.control_plane_groups(),
                         brokers=self._clusters().broker_groups(), services=self._services(candidate))
        result |= base
        jit = result.get("broker_jit_cpu_seconds")
        say(f"  p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms, p99 {result['p99_ms']} ms at "
            f"{result.get('achieved_rate') or 0:,.0f} records/s"
            + (f"; the brokers' JIT compilers used {jit:g} CPU s meanwhile" if jit is not None else "")
            + (f"; error: {result['error']}" if result["error"] else ""))
        return result

    # -- the whole ------------------------------------------------------------------------------

    def run(self) -> None:
        self.start()
        for variant, dataset in enumerate(self.datasets):
            try:
                self.load(dataset)
                self.warm_up_brokers(dataset)
                if dataset.main:
                    self.search_mm2(dataset)
                self.backfills(dataset, variant)
            except KeyboardInterrupt:
                raise
            except Exception as error:
                if dataset.main:
                    raise
                self.settings.setdefault("dataset_errors", {})[dataset.name] = f"{type(error).__name__}: {error}"
                say(f"dataset {dataset.name} failed: {error}")
            delete_topics(self._env().source, dataset.topic)
        if not self.options.skip_latency:
            self.latencies()
        if not self.options.skip_scale and "mirrorplane" in self.candidates:
            self.scale = measure_scale(self.candidates["mirrorplane"], self._env(), self.options.scale_topics,
                                       self.options.scale_partitions, self.options.scale_records,
                                       self.options.tasks[0], say)
            say(_describe_scale(self.scale))

    def stop(self) -> None:
        self.facts["load_average_at_end"] = list(os.getloadavg())
        for name, candidate in self.candidates.items():
            try:
                self.settings[name] = candidate.settings()  # with what the runs revealed (MM2's producer)
                candidate.teardown()
            except Exception as error:  # noqa: BLE001 - the others must still stop
                say(f"stopping {candidate.name} failed: {error}")
        if self.clusters is not None:
            self.clusters.down()
            if self.options.broker_storage == "memory":
                shutil.rmtree(self.clusters.stack.root, ignore_errors=True)  # it holds memory

    def _stack_dir(self) -> Path:
        """The clusters' and Redis's folder: the work dir's `stack`, or with memory storage a folder on
        tmpfs that `stack` links to (it goes when the run ends)."""
        stack = self.work / "stack"
        if self.options.broker_storage == "disk":
            return stack
        memory = MEMORY_STORAGE / f"mirrorplane-bench-{os.getpid()}"
        if stack.is_symlink() or stack.is_file():
            stack.unlink()
        shutil.rmtree(stack, ignore_errors=True)
        stack.parent.mkdir(parents=True, exist_ok=True)
        stack.symlink_to(memory, target_is_directory=True)
        return memory


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(options: Options) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    work = options.work_dir.resolve()
    for folder in ("controlplane", "mm2", "raw", "upper", "logs"):
        shutil.rmtree(work / folder, ignore_errors=True)
    bench = Benchmark(options)
    completed = False
    try:
        bench.run()
        completed = True
    except KeyboardInterrupt:
        say("interrupted: stopping everything the benchmark started")
    finally:
        bench.stop()
    data = bench.write(complete=completed)
    print()
    print(report_markdown.render_markdown(data))
    say(f"report: {options.out} and {options.markdown_out}")
    return 0 if completed else 1


def _stamp() -> dict:
    return {"generated_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}


def _describe(run: dict) -> str:
    if run.get("error"):
        return f"  failed: {run['error']}"
    steady = run.get("steady_records_per_second")
    return (f"  {run['records_per_second']:,.0f} records/s end to end ({run['mb_per_second']:.1f} MB/s) in "
            f"{run['seconds']:.1f} s, steady state " + (f"{steady:,.0f}" if steady else "n/a") +
            f" records/s, first record after {run['first_record_seconds']:.1f} s; effective tasks "
            f"{run.get('effective_tasks') or '?'}; CPU {run['cpu_seconds']:.1f} s "
            f"({run['cpu_seconds_per_mb']:.3f} s/MB), peak RSS {run['peak_rss_mb']:,.0f} MB")


def _describe_scale(scale: dict) -> str:
    if scale.get("error"):
        return f"  scale: {scale['error']}"
    return (f"  scale: all {scale['partitions']:,} partitions replicating after {scale['all_partitions_seconds']} s "
            f"(first {scale['first_partition_seconds']} s, median {scale['p50_partition_seconds']} s); "
            f"peak RSS {scale['peak_rss_mb']:,.0f} MB")

