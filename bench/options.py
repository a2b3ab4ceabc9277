"""Command-line options of `python -m bench`."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

CANDIDATES = ("mirrorplane", "mm2", "raw")
LATENCY_CANDIDATES = ("mirrorplane", "mm2")  # the raw copy is a one-shot backfill, not a service
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "latest.json"


@dataclass(frozen=True)
class Options:
    records: int = 2_000_000
    record_bytes: int = 512
    key_bytes: int = 16
    partitions: int = 8
    repetitions: int = 3
    tasks: tuple[int, ...] = (2, 4)
    latency_rate: int = 5000
    latency_seconds: float = 60.0
    only: tuple[str, ...] = CANDIDATES
    skip_latency: bool = False
    scale_topics: int = 100
    scale_partitions: int = 10
    scale_records: int = 10
    skip_scale: bool = False
    out: Path = DEFAULT_OUT
    work_dir: Path = Path("var/bench")
    run_timeout: float = 900.0

    @property
    def markdown_out(self) -> Path:
        return self.out.with_suffix(".md")


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, not {text!r}")
    return value


def _tasks(text: str) -> tuple[int, ...]:
    values = tuple(_positive(part.strip()) for part in text.split(",") if part.strip())
    if not values:
        raise argparse.ArgumentTypeError("expected a comma-separated list of tasks.max values such as 2,4")
    return tuple(dict.fromkeys(values))


def _candidates(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.strip().lower() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in CANDIDATES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown candidate(s) {unknown or [text]}: use {', '.join(CANDIDATES)}")
    return tuple(name for name in CANDIDATES if name in names)  # the canonical order


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Backfill throughput, steady-state latency and resource use of Mirrorplane, Apache "
                    "MirrorMaker 2 and a tuned raw Java copy on the same two local Kafka clusters and data.")
    d = Options()
    p.add_argument("--records", type=_positive, default=d.records, help="dataset size in records (%(default)s)")
    p.add_argument("--record-bytes", type=_positive, default=d.record_bytes, help="value size (%(default)s)")
    p.add_argument("--key-bytes", type=_positive, default=d.key_bytes, help="key size (%(default)s)")
    p.add_argument("--partitions", type=_positive, default=d.partitions, help="source partitions (%(default)s)")
    p.add_argument("--repetitions", type=_positive, default=d.repetitions,
                   help="runs per candidate and tasks.max; the candidates' order alternates (%(default)s)")
    p.add_argument("--tasks", type=_tasks, default=d.tasks, help="tasks.max values, comma-separated (2,4)")
    p.add_argument("--latency-rate", type=_positive, default=d.latency_rate,
                   help="records/s produced during the latency test (%(default)s)")
    p.add_argument("--latency-seconds", type=_positive_float, default=d.latency_seconds,
                   help="measured seconds of the latency test (%(default)s)")
    p.add_argument("--only", type=_candidates, default=d.only,
                   help=f"a subset of {','.join(CANDIDATES)} (default: all)")
    p.add_argument("--skip-latency", action="store_true", help="no latency test")
    p.add_argument("--scale-topics", type=_positive, default=d.scale_topics,
                   help="topics of the scale check's mirror (%(default)s)")
    p.add_argument("--scale-partitions", type=_positive, default=d.scale_partitions,
                   help="partitions of each scale topic (%(default)s)")
    p.add_argument("--scale-records", type=_positive, default=d.scale_records,
                   help="records in each scale partition before the mirror starts (%(default)s)")
    p.add_argument("--skip-scale", action="store_true", help="no scale check (it needs the mirrorplane candidate)")
    p.add_argument("--out", type=Path, default=d.out, help="JSON report; the markdown goes beside it as .md "
                                                           "(bench/results/latest.json)")
    p.add_argument("--work-dir", type=Path, default=d.work_dir,
                   help="clusters, control plane, logs of this run (%(default)s; emptied first)")
    p.add_argument("--run-timeout", type=_positive_float, default=d.run_timeout,
                   help="seconds a single run may take before it counts as failed (%(default)s)")
    return p


def parse(argv: list[str] | None = None) -> Options:
    args = parser().parse_args(argv)
    return Options(records=args.records, record_bytes=args.record_bytes, key_bytes=args.key_bytes,
                   partitions=args.partitions, repetitions=args.repetitions, tasks=args.tasks,
                   latency_rate=args.latency_rate, latency_seconds=args.latency_seconds, only=args.only,
                   skip_latency=args.skip_latency, scale_topics=args.scale_topics,
                   scale_partitions=args.scale_partitions, scale_records=args.scale_records,
                   skip_scale=args.skip_scale, out=args.out, work_dir=args.work_dir,
                   run_timeout=args.run_timeout)
