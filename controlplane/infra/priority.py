"""CPU priority of the processes we start: a standby driver starts and waits at a lower priority, so that
its start yields the cores to running mirrors, and runs at full priority once a mirror claims it.

Linux keeps a nice value per thread, and a new thread inherits its creator's: a process started under
`nice` runs niced in every thread, and giving it its priority back means renicing each of its threads.
Lowering a nice value needs root (CAP_SYS_NICE) or an RLIMIT_NICE that allows it (systemd's LimitNICE=);
without either a standby is started at full priority, as it could never be given its priority back.
"""

from __future__ import annotations

import logging
import os
import resource
from collections.abc import Iterable, Sequence
from pathlib import Path

import psutil

log = logging.getLogger(__name__)


def own_niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


def can_restore(niceness: int | None = None) -> bool:
    """Whether this process may set a thread back to its own nice value (`niceness`, by default its own)."""
    if os.geteuid() == 0:
        return True
    target = own_niceness() if niceness is None else niceness
    soft, _ = resource.getrlimit(resource.RLIMIT_NICE)
    return soft == resource.RLIM_INFINITY or target >= 20 - soft


def lowered(argv: Sequence[str], increment: int) -> list[str]:
    """`argv` run `increment` nice levels below this process; as it is when 0 or when it could not be
    given its priority back."""
    if increment <= 0:
        return list(argv)
    if not can_restore():
        log.info("processes start at full priority: lowering a nice value needs root or RLIMIT_NICE (LimitNICE=)")
        return list(argv)
    return ["nice", "-n", str(increment), *argv]


def with_descendants(pids: Iterable[int]) -> set[int]:
    """`pids` and every live process started under them."""
    found = set(pids)
    for pid in list(found):
        try:
            found.update(child.pid for child in psutil.Process(pid).children(recursive=True))
        except psutil.Error:
            continue
    return found


def threads(pid: int) -> list[int]:
    try:
        return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return []


def niceness_of(tid: int) -> int | None:
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


def niceness_by_thread(pids: Iterable[int]) -> dict[int, int]:
    """The nice value of every live thread of `pids` and of their descendants, by thread id."""
    found = {tid: niceness_of(tid) for pid in with_descendants(pids) for tid in threads(pid)}
    return {tid: nice for tid, nice in found.items() if nice is not None}


def restore(pids: Iterable[int], passes: int = 3) -> int:
    """Set every thread of `pids` and of their descendants to this process's nice value; returns how many
    threads it changed.

    A thread started during a pass by a thread still niced would inherit the lower priority: passes
    repeat until one finds nothing left to change."""
    target = own_niceness()
    pids = list(pids)
    changed = 0
    for _ in range(passes):
        this_pass = 0
        for tid, current in niceness_by_thread(pids).items():
            if current == target:
                continue
            try:
                os.setpriority(os.PRIO_PROCESS, tid, target)
                this_pass += 1
            except ProcessLookupError:
                continue  # the thread ended
            except PermissionError:
                log.warning("could not give thread %d its priority back (nice %d to %d): not permitted",
                            tid, current, target)
                return changed + this_pass
        changed += this_pass
        if this_pass == 0:
            break
    return changed
