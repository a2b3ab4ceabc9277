"""The folder through which the control plane hands a mirror to a standby driver.

A standby driver is a mirror application's process started before any mirror needs it: its Spark
session is up, and it waits for a claim. Its folder holds:

- `launch-key`: written by the control plane before it starts the process, the launch key (a hash of
  what the process was started with: master, memory, jars, JVM options, application code), so a
  mirror is handed only to a standby started as its own application would be;
- `ready`: written by the driver once its Spark session is up and warmed up;
- `claim.json`: written by the control plane, once and whole, naming the mirror and its
  configuration file; the driver then runs that mirror's application, and exits with it;
- `warm-up.json`: written by the control plane into a ready standby's folder, at most once: the
  connection of a cluster it knows (`ClusterConnection` fields), against which the driver warms up its
  Java Kafka clients and Spark's Kafka source before any mirror waits for them
  (spark_runtime/kafka_warm_up.py); the driver deletes it on reading;
- `warmed`: written by the driver when that warm-up is over, saying how it went;
- `driver.log`: the process's output (the claimed mirror's folder links to it).

Both sides import these names from here.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAUNCH_KEY = "launch-key"
READY = "ready"
CLAIM = "claim.json"
LOG = "driver.log"
WARM_UP = "warm-up.json"
WARMED = "warmed"
WARMING_UP = "under way"  # how `warmed` begins while the warm-up runs
FLAG = "--standby="
# Beside the standbys' folders, in their root: written while the next standby waits for idle cores,
# "<epoch s> <busy %>".
REFILL_DEFERRED = "refill-deferred"


@dataclass(frozen=True)
class Claim:
    mirror: str
    config: str


def marker(folder: Path | str) -> str:
    """The argument on a standby driver's command line that names its folder."""
    return f"{FLAG}{folder}"


def folder_on_command_line(line: str) -> Path | None:
    """The standby folder a process's command line names, if it is a standby driver."""
    if FLAG not in line:
        return None
    value = line.split(FLAG, 1)[1].split(" ", 1)[0]
    return Path(value) if value else None


def read_claim(folder: Path) -> Claim | None:
    """The claim written into `folder`, None while there is none (or it cannot be read whole)."""
    try:
        data = json.loads((folder / CLAIM).read_text())
        return Claim(mirror=str(data["mirror"]), config=str(data["config"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_claim(folder: Path, claim: Claim) -> bool:
    """Write the claim whole and only if `folder` has none: True when this call made it.

    The content goes to a private file first, hard-linked to its name, which fails if the name
    exists: of two claimants, one wins, and the driver never reads half a claim.
    """
    partial = folder / f".{CLAIM}.{os.getpid()}.partial"
    try:
        partial.write_text(json.dumps({"mirror": claim.mirror, "config": claim.config}))
        os.link(partial, folder / CLAIM)
        return True
    except (FileExistsError, FileNotFoundError):  # claimed already, or the folder was removed
        return False
    finally:
        partial.unlink(missing_ok=True)


def write_warm_up(folder: Path, connection: dict[str, Any]) -> None:
    """Hand the driver a cluster to warm Kafka up against (readable by this user only: it may hold
    credentials)."""
    partial = folder / f".{WARM_UP}.partial"
    partial.touch(mode=0o600)
    partial.write_text(json.dumps(connection))
    partial.replace(folder / WARM_UP)


def take_warm_up(folder: Path) -> dict[str, Any] | None:
    """The connection handed over in `folder`, deleted as it is read; None when there is none."""
    path = folder / WARM_UP
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    finally:
        path.unlink(missing_ok=True)
    return data if isinstance(data, dict) else None


def warm_up_outcome(folder: Path) -> str | None:
    """What the driver's warm-up did, once it is over; None before it began and while it runs."""
    try:
        note = (folder / WARMED).read_text().strip()
    except OSError:
        return None
    return None if note.startswith(WARMING_UP) else note


@dataclass(frozen=True)
class RefillDeferral:
    at: float  # epoch seconds of the pool's last look
    busy_pct: float | None  # how busy the host's cores were then; None: it waits out a mirror's first minutes


def defer_refill(root: Path, busy_pct: float | None, now: float) -> None:
    """Say, in the standby root, that the next standby waits (looked at `now`): for idle cores, `busy_pct`
    being how busy they were, or, with None, for a mirror application's first minutes to pass."""
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(root / REFILL_DEFERRED, f"{now:.3f} {'-' if busy_pct is None else f'{busy_pct:.0f}'}")


def end_refill_deferral(root: Path) -> None:
    (root / REFILL_DEFERRED).unlink(missing_ok=True)


def refill_deferral(root: Path) -> RefillDeferral | None:
    """The pool's last word that the next standby waits, None when it does not (or it cannot be read)."""
    try:
        at, busy = (root / REFILL_DEFERRED).read_text().split()
        return RefillDeferral(at=float(at), busy_pct=None if busy == "-" else float(busy))
    except (OSError, ValueError):
        return None


def write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)
