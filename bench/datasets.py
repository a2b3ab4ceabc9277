"""The datasets of one invocation: the main one, then size and compression variants.

The main dataset (`--records` of `--record-bytes`, uncompressed) carries the headline figures: every
`--tasks` value, `--repetitions` repetitions, MM2's tasks.max search and the latency rates derived
from it. Each variant (another value size, or the main size in a compressed source topic) is copied at
the first `--tasks` value (and MM2 at its best) `--variant-repetitions` times; its records are
`--variant-records`, by default `--records` capped at `--variant-max-mb` of values.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.options import Options

MAIN_TOPIC = "bench"


@dataclass(frozen=True)
class Dataset:
    name: str  # "1024B", "100B", "1024B-lz4"
    records: int
    record_bytes: int
    compression: str  # "none" or the source topic's codec
    repetitions: int
    tasks: tuple[int, ...]
    main: bool = False

    @property
    def topic(self) -> str:
        return MAIN_TOPIC if self.main else f"{MAIN_TOPIC}-{self.name.lower()}"

    @property
    def topic_config(self) -> dict[str, str] | None:
        """The source topic's configuration: its codec, which the mirrors copy to the remote topic."""
        return None if self.compression == "none" else {"compression.type": self.compression}


def name(record_bytes: int, compression: str) -> str:
    return f"{record_bytes}B" + ("" if compression == "none" else f"-{compression}")


def variant_records(options: Options, record_bytes: int) -> int:
    if options.variant_records:
        return options.variant_records
    return max(1, min(options.records, options.variant_max_mb * 1_000_000 // record_bytes))


def datasets(options: Options) -> list[Dataset]:
    """The main dataset first, then the size variants, then the compressed ones."""
    main = Dataset(name(options.record_bytes, "none"), options.records, options.record_bytes, "none",
                   options.repetitions, options.tasks, main=True)
    variants = [(size, "none") for size in options.record_sizes if size != options.record_bytes]
    variants += [(options.record_bytes, codec) for codec in options.compressions]
    return [main] + [Dataset(name(size, codec), variant_records(options, size), size, codec,
                             options.variant_repetitions, options.tasks[:1]) for size, codec in variants]
