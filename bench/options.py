"""Command-line options of `python -m bench`."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

# "mm2" runs with Mirrorplane's collector and a class-data-sharing archive of its own (the same JVM
# settings as Mirrorplane's driver); "mm2-stock" with the options of Kafka's connect-mirror-maker.sh.
# "mirrorplane-own-driver": Mirrorplane whose mirrors each launch a driver (no standby drivers); not run
# unless named in --only.
CANDIDATES = ("mirrorplane", "mirrorplane-own-driver", "mm2", "mm2-stock", "raw")
DEFAULT_CANDIDATES = ("mirrorplane", "mm2", "mm2-stock", "raw")
MM2_CANDIDATES = ("mm2", "mm2-stock")
# The raw copy is a one-shot backfill, not a service.
LATENCY_CANDIDATES = ("mirrorplane", "mirrorplane-own-driver", "mm2", "mm2-stock")
CODECS = ("lz4", "zstd", "gzip", "snappy")
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "latest.json"


MEMORY_STORAGE = Path("/dev/shm")  # noqa: S108 - tmpfs on purpose: memory, not a temporary file


@dataclass(frozen=True)
class Options:
    records: int = 10_000_000
    record_bytes: int = 1024
    key_bytes: int = 16
    partitions: int = 8
    repetitions: int = 5
    tasks: tuple[int, ...] = (2, 4)
    mm2_tasks: tuple[int, ...] = (1, 2, 4, 8)
    record_sizes: tuple[int, ...] = (100, 10240)
    compressions: tuple[str, ...] = ("lz4", "zstd")
    variant_records: int | None = None
    variant_max_mb: int = 2000
    variant_repetitions: int = 3
    latency_rates: tuple[str, ...] = ("5000", "50%")
    latency_seconds: float = 60.0
    latency_steady_seconds: float = 60.0  # why a minute: the note at bench.latency.WARMUP_STEADY_SECONDS
    latency_repetitions: int = 3
    latency_max_rate: int | None = None
    skip_latency_floor: bool = False
    skip_latency_lead_in: bool = False
    producer: tuple[tuple[str, str], ...] = ()  # over the producer defaults every mirror candidate uses
    only: tuple[str, ...] = DEFAULT_CANDIDATES
    skip_latency: bool = False
    skip_upper_bounds: bool = False
    scale_topics: int = 100
    scale_partitions: int = 10
    scale_records: int = 10
    skip_scale: bool = False
    out: Path = DEFAULT_OUT
    work_dir: Path = Path("var/bench")
    broker_storage: str = "disk"  # or "memory": the brokers' partitions on tmpfs
    run_timeout: float = 1800.0

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


def _parts(text: str) -> list[str]:
    """Comma-separated parts; "none" (or nothing) is the empty list."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    return [] if parts == ["none"] else parts


def _integers(text: str, allow_empty: bool = False) -> tuple[int, ...]:
    values = tuple(dict.fromkeys(_positive(part) for part in _parts(text)))
    if not values and not allow_empty:
        raise argparse.ArgumentTypeError("expected a comma-separated list of positive integers such as 2,4")
    return values


def _tasks(text: str) -> tuple[int, ...]:
    return _integers(text)


def _optional_integers(text: str) -> tuple[int, ...]:
    return _integers(text, allow_empty=True)


def _codecs(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.lower() for part in _parts(text)))
    unknown = [name for name in names if name not in CODECS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown codec(s) {unknown}: use {', '.join(CODECS)} or none")
    return names


def _producer_settings(text: str) -> tuple[tuple[str, str], ...]:
    settings = []
    for part in _parts(text):
        key, equals, value = part.partition("=")
        if not equals or not re.fullmatch(r"[a-z][a-z0-9.]*", key.strip()) or not value.strip():
            raise argparse.ArgumentTypeError(f"expected producer settings such as linger.ms=0, got {part!r}")
        if key.strip() == "compression.type":  # else Mirrorplane would take it and MM2 the dataset's codec
            raise argparse.ArgumentTypeError("compression.type is each dataset's codec: use --compressions")
        settings.append((key.strip(), value.strip()))
    return tuple(settings)


def of_maximum(level: str) -> bool:
    """A latency level given as a share of each candidate's maximum rate ("50%"), not in records/s."""
    return level.endswith("%")


def rate_level(text: str) -> str:
    """A latency rate: records/s ("5000") or a share of the candidate's maximum ("50%")."""
    text = text.strip().replace("_", "")
    share = of_maximum(text)
    try:
        value = float(text[:-1]) if share else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected records/s or a percentage such as 50%, not {text!r}") from None
    if not value > 0 or (share and value > 100):
        raise argparse.ArgumentTypeError(f"expected records/s or a percentage within 0..100%, not {text!r}")
    return f"{value:g}%" if share else str(value)


def _rates(text: str) -> tuple[str, ...]:
    values = tuple(dict.fromkeys(rate_level(part) for part in _parts(text)))
    if not values:
        raise argparse.ArgumentTypeError("expected latency rates such as 5000,50%")
    return values


def _candidates(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.lower() for part in _parts(text)))
    unknown = [name for name in names if name not in CANDIDATES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown candidate(s) {unknown or [text]}: use {', '.join(CANDIDATES)}")
    return tuple(name for name in CANDIDATES if name in names)  # the canonical order


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="Backfill throughput, latency, upper bounds and resource use of Mirrorplane, Apache "
                    "MirrorMaker 2 and a tuned raw Java copy on the same two local Kafka clusters and data.")
    d = Options()
    p.add_argument("--records", type=_positive, default=d.records,
                   help="records of the main dataset (%(default)s)")
    p.add_argument("--record-bytes", type=_positive, default=d.record_bytes,
                   help="value size of the main dataset (%(default)s)")
    p.add_argument("--key-bytes", type=_positive, default=d.key_bytes, help="key size (%(default)s)")
    p.add_argument("--partitions", type=_positive, default=d.partitions, help="source partitions (%(default)s)")
    p.add_argument("--repetitions", type=_positive, default=d.repetitions,
                   help="runs per candidate and tasks.max on the main dataset; the candidates' order "
                        "alternates (%(default)s)")
    p.add_argument("--tasks", type=_tasks, default=d.tasks, help="tasks.max values, comma-separated (2,4)")
    p.add_argument("--mm2-tasks", type=_optional_integers, default=d.mm2_tasks,
                   help="tasks.max values MM2 is tried at (one run each) before the repetitions; the best is "
                        "run in every repetition besides --tasks (1,2,4,8; none: no search)")
    p.add_argument("--record-sizes", type=_optional_integers, default=d.record_sizes,
                   help="further value sizes, uncompressed (100,10240; none: no size variants)")
    p.add_argument("--compressions", type=_codecs, default=d.compressions,
                   help="compressed source topics at --record-bytes, the codec passed through to the target "
                        "(lz4,zstd; none: no compression variants)")
    p.add_argument("--variant-records", type=_positive, default=None,
                   help="records of each size or compression variant (default: --records, at most "
                        "--variant-max-mb of values)")
    p.add_argument("--variant-max-mb", type=_positive, default=d.variant_max_mb,
                   help="largest value volume of a variant in MB (%(default)s)")
    p.add_argument("--variant-repetitions", type=_positive, default=d.variant_repetitions,
                   help="repetitions of each variant, at the first --tasks value (%(default)s)")
    p.add_argument("--skip-variants", action="store_true", help="no size or compression variants")
    p.add_argument("--latency-rates", type=_rates, default=d.latency_rates,
                   help="rates of the latency test: records/s, or a percentage of the candidate's maximum "
                        "sustainable rate from this invocation's throughput runs (5000,50%%)")
    p.add_argument("--latency-seconds", type=_positive_float, default=d.latency_seconds,
                   help="measured seconds of each latency test (%(default)s)")
    p.add_argument("--latency-steady-seconds", type=_positive_float, default=d.latency_steady_seconds,
                   help="seconds each candidate keeps up at the rate before the measured seconds begin "
                        "(%(default)s: by then both JVMs have compiled most of their copy path)")
    p.add_argument("--latency-repetitions", type=_positive, default=d.latency_repetitions,
                   help="latency tests per candidate and rate; the order alternates (%(default)s)")
    p.add_argument("--latency-max-rate", type=_positive, default=None,
                   help="maximum sustainable rate for percentage rates when no throughput run measured one")
    p.add_argument("--skip-latency-lead-in", action="store_true",
                   help="no lead-in run of each candidate at each latency rate before the measured ones (the "
                        "lead-ins warm the brokers' JIT up for that traffic; their figures are reported apart)")
    p.add_argument("--skip-latency-floor", action="store_true",
                   help="no latency run without a mirror (the source topic read directly) at the fixed rates")
    p.add_argument("--producer", type=_producer_settings, default=d.producer,
                   help="producer settings every mirror uses over the defaults they share, e.g. linger.ms=0 "
                        "(Mirrorplane as producer.override.*, MM2 as its target cluster's producer.*)")
    p.add_argument("--only", type=_candidates, default=d.only,
                   help=f"a subset of {','.join(CANDIDATES)} (default: {','.join(DEFAULT_CANDIDATES)})")
    p.add_argument("--skip-latency", action="store_true", help="no latency test")
    p.add_argument("--skip-upper-bounds", action="store_true",
                   help="no kafka-producer-perf-test / kafka-consumer-perf-test runs")
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
    p.add_argument("--broker-storage", choices=("disk", "memory"), default=d.broker_storage,
                   help="where the brokers keep their partitions: in the work dir (%(default)s), or in memory "
                        f"(tmpfs under {MEMORY_STORAGE}): the kernel's writeback of their files then cannot stall "
                        "the brokers, which lengthens both candidates' latency tail alike")
    p.add_argument("--run-timeout", type=_positive_float, default=d.run_timeout,
                   help="seconds a single run may take before it counts as failed (%(default)s)")
    return p


def parse(argv: list[str] | None = None) -> Options:
    args = parser().parse_args(argv)
    variants = not args.skip_variants
    return Options(records=args.records, record_bytes=args.record_bytes, key_bytes=args.key_bytes,
                   partitions=args.partitions, repetitions=args.repetitions, tasks=args.tasks,
                   mm2_tasks=args.mm2_tasks,
                   record_sizes=tuple(s for s in args.record_sizes if s != args.record_bytes) if variants else (),
                   compressions=args.compressions if variants else (), variant_records=args.variant_records,
                   variant_max_mb=args.variant_max_mb, variant_repetitions=args.variant_repetitions,
                   latency_rates=args.latency_rates, latency_seconds=args.latency_seconds,
                   latency_steady_seconds=args.latency_steady_seconds,
                   latency_repetitions=args.latency_repetitions, latency_max_rate=args.latency_max_rate,
                   skip_latency_floor=args.skip_latency_floor,
                   skip_latency_lead_in=args.skip_latency_lead_in, producer=args.producer,
                   only=args.only, skip_latency=args.skip_latency, skip_upper_bounds=args.skip_upper_bounds,
                   scale_topics=args.scale_topics, scale_partitions=args.scale_partitions,
                   scale_records=args.scale_records, skip_scale=args.skip_scale, out=args.out,
                   work_dir=args.work_dir, broker_storage=args.broker_storage, run_timeout=args.run_timeout)
