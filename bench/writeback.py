"""Dirty page cache written back before a timed run.

A run that follows the dataset's load (or another run's writes) would otherwise share the cores and
the disk with the kernel writing those pages back. Each run records what was pending: about 200 MB
after a 5 GB load on a host with 24 GB, so the kernel's own writeback keeps up, and this only makes
every run start from the same state.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

MEMINFO = Path("/proc/meminfo")


def pending_kb(meminfo: str) -> int:
    """Dirty plus under-writeback kB in a /proc/meminfo text (0 when neither line is there)."""
    fields = dict(line.split(":", 1) for line in meminfo.splitlines() if ":" in line)
    return sum(int(fields[name].split()[0]) for name in ("Dirty", "Writeback") if name in fields)


def write_back() -> dict:
    """Write every dirty page back (sync); the MB that were pending and the seconds it took."""
    before = pending_kb(MEMINFO.read_text()) if MEMINFO.exists() else 0
    started = time.monotonic()
    os.sync()
    return {"pending_mb": round(before / 1024, 1), "seconds": round(time.monotonic() - started, 2)}
