"""Resource use of a candidate's processes, sampled from /proc: peak RSS and CPU seconds.

A candidate is a set of process groups (each candidate process is started in a session of its own,
so its children share its group). Every `interval` the sampler reads /proc/<pid>/stat of every
process once and keeps those in the candidate's groups.

CPU seconds are utime + stime of the live processes plus cutime + cstime (children they already
reaped), plus the last reading of processes that left without a parent in the group to reap them
(e.g. the group leader, reaped by the harness), less what the processes present at the first sample
had already used: the CPU spent while sampling. Peak RSS is the largest sum of the group's resident
set sizes over the samples.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    pgid: int
    state: str
    ticks: int  # utime + stime
    child_ticks: int  # cutime + cstime: children this process has reaped
    rss_pages: int


def parse_stat(text: str) -> ProcStat:
    """One /proc/<pid>/stat line (see proc(5)); the command name may hold spaces and parentheses."""
    head, _, rest = text.rpartition(")")
    pid = int(head.split("(", 1)[0])
    fields = rest.split()
    # fields[0] is field 3 (state) of proc(5)
    return ProcStat(
        pid=pid,
        state=fields[0],
        ppid=int(fields[1]),
        pgid=int(fields[2]),
        ticks=int(fields[11]) + int(fields[12]),
        child_ticks=int(fields[13]) + int(fields[14]),
        rss_pages=int(fields[21]),
    )


def read_all(proc: Path = Path("/proc")) -> list[ProcStat]:
    """Every process's stat (processes that vanish while reading are skipped)."""
    stats = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                stats.append(parse_stat((entry / "stat").read_text()))
            except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
                continue
    return stats


class Usage:
    """Accumulates samples of one set of processes into CPU seconds and peak RSS."""

    def __init__(self) -> None:
        self.last: dict[int, ProcStat] = {}
        self.gone_ticks = 0
        self.baseline_ticks: int | None = None
        self.peak_rss_bytes = 0
        self.samples = 0

    def update(self, stats: Iterable[ProcStat]) -> None:
        current = {s.pid: s for s in stats}
        for pid, old in self.last.items():
            if pid not in current and old.ppid not in current:
                self.gone_ticks += old.ticks + old.child_ticks  # nobody in the group will account for it
        self.last = current
        if self.baseline_ticks is None:
            self.baseline_ticks = self._ticks()
        self.peak_rss_bytes = max(self.peak_rss_bytes, sum(s.rss_pages for s in current.values()) * PAGE_SIZE)
        self.samples += 1

    def _ticks(self) -> int:
        return self.gone_ticks + sum(s.ticks + s.child_ticks for s in self.last.values())

    @property
    def cpu_seconds(self) -> float:
        return (self._ticks() - (self.baseline_ticks or 0)) / CLOCK_TICKS

    @property
    def peak_rss_mb(self) -> float:
        return self.peak_rss_bytes / 2**20

    def snapshot(self) -> dict:
        return {"cpu_seconds": round(self.cpu_seconds, 2), "peak_rss_mb": round(self.peak_rss_mb, 1),
                "processes": len(self.last), "samples": self.samples}


def in_groups(stats: Iterable[ProcStat], groups: set[int]) -> list[ProcStat]:
    """The processes of the given process groups. Zombies stay (their RSS is 0, their CPU time final)
    until reaped: then their time moves to the parent's cutime, or to `gone_ticks` without one."""
    return [s for s in stats if s.pgid in groups]


class ResourceSampler:
    """Samples named sets of process groups in a thread; `groups` callables are asked every tick, so a
    candidate whose processes appear later (a Spark driver submitted by the control plane) is found."""

    def __init__(self, groups: dict[str, Callable[[], Iterable[int]]], interval: float = 0.5) -> None:
        self.groups = groups
        self.interval = interval
        self.usage = {name: Usage() for name in groups}
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
