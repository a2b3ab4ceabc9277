"""Resource use of a candidate's processes, sampled with psutil: peak RSS and CPU seconds.

A candidate is a set of process groups (each candidate process is started in a session of its own,
so its children share its group). Every `interval` the sampler reads the CPU times, memory and ids of
every process once and keeps those in the candidate's groups.

CPU seconds are counted per process: user + system time (psutil's `cpu_times()`) of every process
seen, from its reading at the first sample (or 0 for a process started later) to its last reading, so
a process that left keeps what it used while sampled. A candidate's groups (`reaped=True`) also count
children_user + children_system, the children they reaped: every child of a candidate is in its
group, and a short-lived one (a launcher JVM) may never be sampled; the child's own last reading is
then not counted twice. A long-running service's groups (the control plane, the brokers) count only
their own processes' user + system time: their parents may reap processes of other groups (the control
plane's worker reaps the Spark applications it started, whose CPU would otherwise be counted as the
control plane's). Processes living less than one interval outside a candidate are missed. Peak RSS is
the largest sum of the group's resident set sizes over the samples.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import psutil

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    pgid: int
    state: str  # psutil's status: "running", "sleeping", "zombie", ...
    ticks: int  # user + system time, in clock ticks
    child_ticks: int  # children_user + children_system: children this process has reaped
    rss_pages: int


def _ticks(seconds: float) -> int:
    return round(seconds * CLOCK_TICKS)


def read(process: psutil.Process) -> ProcStat:
    """One process's ids, CPU times and resident set size; psutil.Error or OSError when it is gone."""
    with process.oneshot():
        times = process.cpu_times()
        return ProcStat(
            pid=process.pid,
            ppid=process.ppid(),
            pgid=os.getpgid(process.pid),
            state=process.status(),
            ticks=_ticks(times.user + times.system),
            child_ticks=_ticks(times.children_user + times.children_system),
            rss_pages=process.memory_info().rss // PAGE_SIZE,
        )


def read_all() -> list[ProcStat]:
    """Every process's figures (processes that vanish while reading are skipped)."""
    stats = []
    for process in psutil.process_iter():
        try:
            stats.append(read(process))
        except (psutil.Error, OSError):
            continue
    return stats


class Usage:
    """Accumulates samples of one set of processes into CPU seconds and peak RSS."""

    def __init__(self, reaped: bool = True) -> None:
        self.reaped = reaped
        self.last: dict[int, ProcStat] = {}
        self.baseline: dict[int, int] = {}  # ticks at the first sample of the processes present then
        self.gone_ticks = 0
        self.peak_rss_bytes = 0
        self.samples = 0

    def _own(self, stat: ProcStat) -> int:
        return stat.ticks + (stat.child_ticks if self.reaped else 0)

    def update(self, stats: Iterable[ProcStat]) -> None:
        current = {s.pid: s for s in stats}
        for pid, old in self.last.items():
            reaped_in_group = self.reaped and old.ppid in current
            if pid in current:
                continue
            if reaped_in_group:  # now in its parent's children times, with what it used before sampling began
                self.gone_ticks -= self.baseline.get(pid, 0)
            else:
                self.gone_ticks += self._own(old) - self.baseline.get(pid, 0)
        if self.samples == 0:
            self.baseline = {pid: self._own(stat) for pid, stat in current.items()}
        self.last = current
        self.peak_rss_bytes = max(self.peak_rss_bytes, sum(s.rss_pages for s in current.values()) * PAGE_SIZE)
        self.samples += 1

    def _ticks(self) -> int:
        return self.gone_ticks + sum(self._own(s) - self.baseline.get(pid, 0) for pid, s in self.last.items())

    @property
    def cpu_seconds(self) -> float:
        return self._ticks() / CLOCK_TICKS

    @property
    def peak_rss_mb(self) -> float:
        return self.peak_rss_bytes / 2**20

    def snapshot(self) -> dict:
        return {"cpu_seconds": round(self.cpu_seconds, 2), "peak_rss_mb": round(self.peak_rss_mb, 1),
                "processes": len(self.last), "samples": self.samples}


def in_groups(stats: Iterable[ProcStat], groups: set[int]) -> list[ProcStat]:
    """The processes of the given process groups. Zombies stay (their RSS is 0, their CPU time final)
    until reaped: then their time moves to the parent's children times, or to `gone_ticks` without one."""
    return [s for s in stats if s.pgid in groups]


class ResourceSampler:
    """Samples named sets of process groups in a thread; `groups` callables are asked every tick, so a
    candidate whose processes appear later (a Spark driver submitted by the control plane) is found."""

    def __init__(self, groups: dict[str, Callable[[], Iterable[int]]], interval: float = 0.5,
                 services: Iterable[str] = ()) -> None:
        """`services`: names of the sets whose reaped children are not theirs (see the module)."""
        self.groups = groups
        self.interval = interval
        self.usage = {name: Usage(reaped=name not in set(services)) for name in groups}
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="resource-sampler", daemon=True)

    def start(self) -> ResourceSampler:
        self.sample()
        self._thread.start()
        return self

    def sample(self) -> None:
        stats = read_all()
        with self._lock:
            for name, groups in self.groups.items():
                self.usage[name].update(in_groups(stats, set(groups())))

    def snapshot(self) -> dict[str, dict]:
        """Takes a sample now and returns every set's usage so far."""
        self.sample()
        with self._lock:
            return {name: usage.snapshot() for name, usage in self.usage.items()}

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()


def machine_cpu() -> tuple[float, float]:
    """The whole machine's CPU time so far, over all cores: (busy, total) seconds."""
    times = psutil.cpu_times()
    total = sum(times)
    return total - times.idle - getattr(times, "iowait", 0.0), total


def busy_share(before: tuple[float, float], after: tuple[float, float]) -> float | None:
    """The share of all cores' time the machine spent busy between two `machine_cpu()` readings, in %."""
    total = after[1] - before[1]
    return round(100 * (after[0] - before[0]) / total, 1) if total > 0 else None
