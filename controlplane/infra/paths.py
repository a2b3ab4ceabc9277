"""Where downloads and local state live: a cache outside the git work tree."""

from __future__ import annotations

import os
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
