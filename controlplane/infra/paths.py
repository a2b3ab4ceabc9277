"""Where downloads and local state live: a cache outside the git work tree."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    """Root of every download and build artefact (`MIRRORPLANE_CACHE`, default ~/.cache/mirrorplane)."""
    root = Path(os.environ.get("MIRRORPLANE_CACHE", Path.home() / ".cache" / "mirrorplane"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def devstack_dir() -> Path:
    """State of the stack started by `./manage.py devstack up` (`MIRRORPLANE_DEVSTACK_DIR`)."""
    path = Path(os.environ.get("MIRRORPLANE_DEVSTACK_DIR", cache_dir() / "devstack"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def built_once(target: Path, build: Callable[[Path], None]) -> Path:
    """`target`, made by `build(target)` unless it exists; a file lock beside it keeps concurrent
    processes (tests, workers, the demo) from building it twice."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            build(target)
    return target
