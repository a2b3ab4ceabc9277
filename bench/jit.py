"""CPU the brokers' JIT compilers use, read from their compiler threads in /proc.

A broker that has not yet compiled the paths of a latency run's traffic (small produce batches
waiting in the produce purgatory, long-polled fetches, fetch sessions) compiles them with C2 while
the candidate runs: single compilations of 0.9-1.2 s each took a core of the two in a measured
minute, and the records of that second were the run's slowest. Each latency run reports the brokers'
compiler CPU over its measured seconds, so a tail of that making is told from the mirror's own.

The thread's name (`comm`) is cut at 15 characters: "C2 CompilerThre". On two cores a JVM runs one
C1 and one C2 compiler thread for its whole life, so no compiler thread's CPU leaves with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bench.measure import CLOCK_TICKS

COMPILER_THREADS = ("C1 CompilerThre", "C2 CompilerThre")


def thread_cpu_ms(stat: str, clock_ticks: int = CLOCK_TICKS) -> tuple[str, float]:
    """(name, user + system CPU in ms) of one `/proc/<pid>/task/<tid>/stat` line."""
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()  # fields[0] is the state, the third field of the line
    return name, (int(fields[11]) + int(fields[12])) * 1000 / clock_ticks


def compiler_cpu_seconds(pids: Iterable[int], proc: Path = Path("/proc")) -> float:
    """CPU seconds the JIT compiler threads of these JVMs used since they started (0 for a process gone)."""
    total_ms = 0.0
    for pid in pids:
        try:
            tasks = list((proc / str(pid) / "task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                name, cpu_ms = thread_cpu_ms((task / "stat").read_text())
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended between the listing and the read
            if name.startswith(COMPILER_THREADS):
                total_ms += cpu_ms
    return round(total_ms / 1000, 3)
