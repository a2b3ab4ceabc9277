"""The machine's disk during a latency run: how long every runnable task waited on I/O, and how much the
kernel wrote back, per second, so that the latency tail can say which of its seconds the disk held up;
beside it, how long some runnable task waited for a core.

Linux's pressure stall information (`/proc/pressure/io`) counts, in microseconds, the time in which
some task waited on I/O ("some") and in which every non-idle task did ("full"); `/proc/vmstat`'s
`pgpgout` counts the kilobytes written to disk. On a single disk the brokers of both clusters share, the
kernel writes their dirty pages back in bursts (a file's pages once they have been dirty for
`vm.dirty_expire_centisecs`, 30 s by default): in such a second a broker's appends wait, and every
mirror's records in flight wait with them. Whether the two brokers' bursts fall in the same second
depends on when each broker's files were first dirtied after their last writeback: a mirror that
starts writing to the target within a second of the producer's first records to the source has both
written back at once (about twice the data, every task stalled longer), one that starts 12 s later
has them apart. The latency run therefore writes everything back before its measured seconds
(bench.latency), and each run reports its bursts (`writeback_bursts`).
`/proc/pressure/cpu`'s "some" counts the time in which a runnable task waited for a core.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.stats import median

PRESSURE = Path("/proc/pressure/io")
CPU_PRESSURE = Path("/proc/pressure/cpu")
VMSTAT = Path("/proc/vmstat")
DISK_STALL_MS = 20.0  # a second in which every task waited on I/O this long: the disk held the pipeline up
WRITEBACK_BURST_MB = 20.0  # a second in which the kernel wrote this much back: one of its periodic bursts


@dataclass(frozen=True)
class DiskSample:
    at_ms: float  # epoch milliseconds
    waiting_us: int  # some task waited on I/O
    stalled_us: int  # every non-idle task waited on I/O
    written_kb: int
    cpu_waiting_us: int = 0  # some runnable task waited for a core


def read_sample() -> DiskSample | None:
    """The counters now; None on a kernel without pressure stall information."""
    try:
        totals = _pressure_totals(PRESSURE)
        written = next(int(line.split()[1]) for line in VMSTAT.read_text().splitlines()
                       if line.startswith("pgpgout "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return DiskSample(time.time() * 1000, totals.get("some", 0), totals.get("full", 0), written, _cpu_waiting_us())


def _pressure_totals(path: Path) -> dict[str, int]:
    """A pressure file's cumulative stall times in µs by line ("some", "full")."""
    return {line.split()[0]: int(line.rsplit("total=", 1)[1]) for line in path.read_text().splitlines()}


def _cpu_waiting_us() -> int:
    try:
        return _pressure_totals(CPU_PRESSURE).get("some", 0)
    except (OSError, ValueError, IndexError):
        return 0


class DiskSampler:
    """Samples the counters every `interval` seconds in a thread."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.samples: list[DiskSample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="disk-sampler", daemon=True)

    def start(self) -> DiskSampler:
        self._thread.start()
        return self

    def stop(self) -> list[DiskSample]:
        self._stop.set()
        if self._thread.ident is not None:  # started
            self._thread.join(timeout=5)
        return self.samples

    def _loop(self) -> None:
        while not self._stop.is_set():
            sample = read_sample()
            if sample is None:
                return
            self.samples.append(sample)
            self._stop.wait(self.interval)


def per_second(samples: Sequence[DiskSample], start_ms: float) -> dict[int, dict]:
    """Each second since `start_ms` (second 0 begins there): I/O stall and wait in ms, MB written back, and
    CPU wait in ms; each interval between two samples counts in the second its end falls in."""
    seconds: dict[int, dict] = {}
    for before, after in itertools.pairwise(samples):
        if after.at_ms < start_ms:
            continue
        second = seconds.setdefault(int((after.at_ms - start_ms) // 1000),
                                    {"io_stall_ms": 0.0, "io_wait_ms": 0.0, "written_mb": 0.0, "cpu_wait_ms": 0.0})
        second["io_stall_ms"] += (after.stalled_us - before.stalled_us) / 1000
        second["io_wait_ms"] += (after.waiting_us - before.waiting_us) / 1000
        second["written_mb"] += (after.written_kb - before.written_kb) / 1024
        second["cpu_wait_ms"] += (after.cpu_waiting_us - before.cpu_waiting_us) / 1000
    return {key: {name: round(value, 1) for name, value in figures.items()} for key, figures in seconds.items()}


def attribute(tail: dict, samples: Sequence[DiskSample]) -> dict:
    """`tail` (bench.tail.tail_summary's) with the disk's figures: those of each of its worst seconds, of
    the median second of the run, and how many of the slowest records fell in a second in which the
    disk stalled every task for DISK_STALL_MS or more (`during_disk_stall`; the longest such stall), and the
    measured seconds in which the kernel wrote WRITEBACK_BURST_MB or more back (`writeback_bursts`:
    [second, MB])."""
    if not tail or "start_ms" not in tail or len(samples) < 2:
        return tail
    seconds = per_second(samples, tail["start_ms"])
    span = int(tail.get("span_seconds") or 0)
    measured = [seconds[s] for s in range(span) if s in seconds] or list(seconds.values())
    stalled = {s for s, figures in seconds.items() if figures["io_stall_ms"] >= DISK_STALL_MS}
    slow = dict(tail.get("slow_per_second") or [])
    during = sum(count for second, count in slow.items() if second in stalled)
    return tail | {
        "worst_seconds": [w | seconds.get(w["second"], {}) for w in tail.get("worst_seconds", [])],
        "disk_median_second": {name: median([s[name] for s in measured]) for name in
                               ("io_stall_ms", "io_wait_ms", "written_mb", "cpu_wait_ms")} if measured else None,
        "during_disk_stall": during,
        "disk_stall_max_ms": max((seconds[s]["io_stall_ms"] for s in stalled if s in slow), default=None),
        "writeback_bursts": [[s, seconds[s]["written_mb"]] for s in sorted(seconds)
                             if (s < span or not span) and seconds[s]["written_mb"] >= WRITEBACK_BURST_MB],
    }
